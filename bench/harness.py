#!/usr/bin/env python3
"""bench/harness.py: one corpus through bitsift and every peer, one Markdown report.

Entry point: bench/run CORPUS [options] (CORPUS: sample, kjv, zh, cjk, linux-files, linux-paras).
See bench/README.md for what is measured and how.
"""
import argparse
import array
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, os.path.join(REPO, "corpora"))
sys.path.insert(0, HERE)
import corpuslib as cl  # noqa: E402
import oracle  # noqa: E402

CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]")
ENGINES = ("bitsift", "fts5", "xapian", "rg")
DEBS = ("ripgrep", "sqlite3", "libxapian-dev", "time", "g++", "python3-matplotlib")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run_timed(cmd, stdout=None, stderr=None, cwd=None):
    """Run cmd under /usr/bin/time -v; return (returncode, wall seconds, max RSS bytes)."""
    tf = os.path.join(WORK, "time-v.txt")
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", "-o", tf] + cmd, stdout=stdout, stderr=stderr,
                       cwd=cwd, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    rss = 0
    with open(tf) as f:
        for line in f:
            if "Maximum resident set size" in line:
                rss = int(line.rsplit(":", 1)[1]) * 1024
    return r.returncode, wall, rss


def settle(seconds=15):
    """Writes back what a build or a results pass left dirty, then lets the machine settle,
    before any query is timed (every engine alike).

    On a 2-core guest, queries timed within seconds of a large write ran slower with nothing to
    see in the guest (vmstat idle, nothing left to write back): linux-paras' absent-term p50
    was 5.6-9.9 us within 5 s of printing 660 MB of results, 2.0-2.9 us after 10-20 s (3.2-3.8
    us right after a build, 1.7-2.0 in a quiet process)."""
    os.sync()
    time.sleep(seconds)


def du(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for dp, _, fns in os.walk(path):
        for f in fns:
            total += os.path.getsize(os.path.join(dp, f))
    return total


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def build_tool(name, src, extra):
    """g++ -O2 a bench tool into WORKBIN unless it is up to date."""
    out = os.path.join(WORKBIN, name)
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        log(f"building {name}")
        subprocess.run(["g++", "-O2", "-std=c++17", "-o", out, src] + extra, check=True)
    return out


# ------------------------------------------------------------------------------- results I/O
def read_results(path, n_queries, doc_index):
    """Stream 'LINENO<TAB>PATH' lines into per-query id arrays; unknown paths are counted."""
    res = [array.array("I") for _ in range(n_queries + 1)]
    unknown = [0] * (n_queries + 1)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            ln, _, p = line.rstrip("\n").partition("\t")
            try:
                i = int(ln)
            except ValueError:
                continue
            if not 1 <= i <= n_queries:
                continue
            d = doc_index.get(p)
            if d is None:
                unknown[i] += 1
            else:
                res[i].append(d)
    return res, unknown


def compare(res, unknown, expect, lines):
    """Per query: identical?, false positives, false negatives (in documents)."""
    same = fp = fn = 0
    diff_lines = []
    for i in lines:
        e = expect[i - 1]
        if e is None:
            continue
        got = set(res[i])
        ex = set(e)
        f_p = len(got - ex) + unknown[i]
        f_n = len(ex - got)
        fp += f_p
        fn += f_n
        if f_p == 0 and f_n == 0:
            same += 1
        else:
            diff_lines.append(i)
    return same, fp, fn, diff_lines


# ------------------------------------------------------------------------------------ engines
def eng_bitsift(ctx):
    b = ctx["bitsift"]
    idx = os.path.join(WORK, "bitsift.idx")
    if os.path.exists(idx):
        shutil.rmtree(idx) if os.path.isdir(idx) else os.remove(idx)
    cmd = [b, "index", ctx["docs_dir"], "--index", idx, "--threads", str(os.cpu_count() or 2)]
    if ctx["max_file"]:
        cmd += ["--max-file-size", str(ctx["max_file"] + 1)]
    with open(os.path.join(WORK, "bitsift-index.out"), "w") as o:
        rc, build_s, build_rss = run_timed(cmd, stdout=o, stderr=subprocess.STDOUT)
    if rc != 0:
        raise RuntimeError(f"bitsift index exited {rc}; see {WORK}/bitsift-index.out")
    settle()
    # Run from the indexed directory: bitsift prints paths from the current directory, so there
    # they are the paths within the index that read_results looks up.
    # --words: each line is its words, all required (the oracle's and the peers' reading); in
    # the query language a CJK run of 3+ characters is a phrase, which is not the set's
    # contract (zh: 4 of 1,200 answers narrower than the oracle's, and slower).
    qcmd = [b, "query", "--index", os.path.abspath(idx), "--words", "--queries",
            os.path.abspath(ctx["qfile"]), "--stats"]
    out = os.path.join(WORK, "bitsift.results")
    err = os.path.join(WORK, "bitsift.stats")
    with open(os.devnull, "w") as dn:  # warm-up pass: page cache, index mapped once
        subprocess.run(qcmd, stdout=dn, stderr=dn, cwd=ctx["docs_dir"])
    with open(out, "w") as o, open(err, "w") as e:
        rc, q_wall, q_rss = run_timed(qcmd, stdout=o, stderr=e, cwd=ctx["docs_dir"])
    if rc not in (0, 1):
        raise RuntimeError(f"bitsift query exited {rc}; see {err}")
    # Latency as the peers' is measured: one process answers the set twice (each answer the
    # complete list of matching documents, counted rather than printed) and the second pass is
    # timed. A second process would touch every page of the index afresh, which costs 10-20 us
    # a page where a first touch traps to the hypervisor (docs/design.md, "One-shot queries");
    # that is the one-shot benchmark's business (bench/living), not this one's.
    n = ctx["n_queries"]
    twice = os.path.join(WORK, "queries-twice.txt")
    with open(ctx["qfile"], encoding="utf-8") as f:
        text = f.read()
    if text and not text.endswith("\n"):
        text += "\n"
    with open(twice, "w", encoding="utf-8") as f:
        f.write(text + text)
    settle()  # the results just written (~1 GB on linux-paras) are not written back while timed
    terr = os.path.join(WORK, "bitsift.timing")
    # --count --no-check: the engine's answer counted, no file looked at (as the peers).
    tcmd = [b, "query", "--index", os.path.abspath(idx), "--words", "--queries", twice, "--stats",
            "--count", "--no-check"]
    with open(os.devnull, "w") as dn, open(terr, "w") as e:
        rc = subprocess.run(tcmd, stdout=dn, stderr=e, cwd=ctx["docs_dir"]).returncode
    if rc not in (0, 1):
        raise RuntimeError(f"bitsift query (timing) exited {rc}; see {terr}")
    stats = {}
    with open(terr, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("{"):
                try:
                    s = json.loads(line)
                    if int(s["line"]) > n:
                        stats[int(s["line"]) - n] = s
                except (ValueError, KeyError):
                    pass
    lat = {i: s["total_us"] for i, s in stats.items()}
    return dict(build_s=build_s, build_rss=build_rss, index_bytes=du(idx), query_rss=q_rss,
                query_wall_s=q_wall, results=out, latency_us=lat, stats=stats,
                lines=list(range(1, ctx["n_queries"] + 1)),
                timing="in-process: total_us from `bitsift query --words --queries --stats --count --no-check` "
                       "(the text parsed, terms looked up, AND, verify: the complete list of matches, counted), second of "
                       "two passes in one process")


def eng_fts5(ctx):
    db = os.path.join(WORK, "fts5.db")
    if os.path.exists(db):
        os.remove(db)
    tok = "trigram" if ctx["cjk"] else "unicode61"
    peer = os.path.join(HERE, "fts5_peer.py")
    with open(os.path.join(WORK, "fts5-index.out"), "w") as o:
        rc, build_s, build_rss = run_timed(
            [sys.executable, peer, "index", db, ctx["docs_dir"], ctx["listfile"], tok], stdout=o)
    if rc != 0:
        raise RuntimeError("fts5 index failed")
    settle()
    out, tim = os.path.join(WORK, "fts5.results"), os.path.join(WORK, "fts5.times")
    with open(os.path.join(WORK, "fts5-query.out"), "w") as o:
        rc, q_wall, q_rss = run_timed([sys.executable, peer, "query", db, ctx["listfile"],
                                       ctx["qfile"], out, tim, "--repeat", "2"], stdout=o)
    if rc != 0:
        raise RuntimeError("fts5 query failed")
    return dict(build_s=build_s, build_rss=build_rss, index_bytes=du(db), query_rss=q_rss,
                query_wall_s=q_wall, results=out, latency_us=read_times(tim),
                lines=list(range(1, ctx["n_queries"] + 1)),
                timing=f"in-process (python3 sqlite3, perf_counter around execute+fetchall), "
                       f"tokenizer {tok}, second of two passes")


def eng_xapian(ctx):
    drv = build_tool("xapian_driver", os.path.join(HERE, "xapian_driver.cc"), ["-lxapian"])
    db = os.path.join(WORK, "xapian.db")
    if os.path.exists(db):
        shutil.rmtree(db)
    flags = ["--cjk"] if ctx["cjk"] else []
    with open(os.path.join(WORK, "xapian-index.out"), "w") as o:
        rc, build_s, build_rss = run_timed(
            [drv, "index", db, ctx["docs_dir"], ctx["listfile"]] + flags, stdout=o)
    if rc != 0:
        raise RuntimeError("xapian index failed")
    settle()
    out, tim = os.path.join(WORK, "xapian.results"), os.path.join(WORK, "xapian.times")
    rc, q_wall, q_rss = run_timed([drv, "query", db, ctx["qfile"], out, tim, "--repeat", "2"]
                                  + flags)
    if rc != 0:
        raise RuntimeError("xapian query failed")
    return dict(build_s=build_s, build_rss=build_rss, index_bytes=du(db), query_rss=q_rss,
                query_wall_s=q_wall, results=out, latency_us=read_times(tim),
                lines=list(range(1, ctx["n_queries"] + 1)),
                timing="in-process (C++ driver, steady_clock per query, DB opened once), "
                       "second of two passes" + (", FLAG_CJK_NGRAM" if ctx["cjk"] else ""))


def eng_rg(ctx):
    """Brute force: one `rg -uuu -l -i -F -w TERM` process per term, results intersected."""
    n = min(ctx["n_queries"], ctx["rg_queries"])
    out = os.path.join(WORK, "rg.results")
    lat = {}
    max_rss = 0
    docs = ctx["docs_dir"]
    # warm the page cache with one pass over the tree
    subprocess.run(["rg", "-uuu", "-l", "-F", "zzzqqqxxxwarm", "."], cwd=docs,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out, "w", encoding="utf-8") as o:
        for i in range(1, n + 1):
            terms = ctx["queries"][i - 1].split()
            acc = None
            t0 = time.perf_counter()
            for t in terms:
                cmd = ["rg", "-uuu", "-l", "-i", "-F", "--no-messages"]
                if not CJK.search(t):
                    cmd.append("-w")
                cmd += ["--", t, "."]
                p = subprocess.Popen(cmd, cwd=docs, stdout=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                data = p.stdout.read()
                p.stdout.close()
                _, _, ru = os.wait4(p.pid, 0)
                p.returncode = 0
                max_rss = max(max_rss, ru.ru_maxrss * 1024)
                found = set()
                for line in data.decode("utf-8", errors="replace").split("\n"):
                    if line:
                        found.add(line[2:] if line.startswith("./") else line)
                acc = found if acc is None else acc & found
            lat[i] = (time.perf_counter() - t0) * 1e6
            for p_ in sorted(acc or ()):
                o.write(f"{i}\t{p_}\n")
            if n >= 200 and i % 100 == 0:
                log(f"  rg: {i}/{n} queries")
    return dict(build_s=0.0, build_rss=0, index_bytes=0, query_rss=max_rss,
                query_wall_s=sum(lat.values()) / 1e6, results=out, latency_us=lat,
                lines=list(range(1, n + 1)),
                timing=f"wall time of the per-term rg processes, from this script "
                       f"(includes process start-up); {n} of {ctx['n_queries']} queries")


def read_times(path):
    lat = {}
    with open(path) as f:
        for line in f:
            ln, m, us = line.rstrip("\n").split("\t")
            if int(m) >= 0:
                lat[int(ln)] = float(us)
    return lat


# ------------------------------------------------------------------------------------- report
def fmt_mb(b):
    if not b:
        return "-"
    return f"{b / 1e6:.1f}" if b >= 1e6 else f"{b / 1e6:.3f}"


def main():
    global WORK, WORKBIN
    ap = argparse.ArgumentParser(description="bench/run CORPUS")
    ap.add_argument("corpus", choices=["sample", "kjv", "zh", "cjk", "linux-files", "linux-paras"])
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--bitsift", default=os.environ.get("BITSIFT") or
                    os.path.join(REPO, "build", "bitsift"))
    ap.add_argument("--rg-queries", type=int, default=None,
                    help="ripgrep runs only the first N queries (default: all when the corpus has "
                         "<= 50,000 documents, else 100)")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get missing peers")
    a = ap.parse_args()
    engines = [e for e in a.engines.split(",") if e]
    for e in engines:
        if e not in ENGINES:
            sys.exit(f"unknown engine {e}")

    if not a.no_install:
        cl.ensure_debs(*DEBS)
    data = cl.data_root()
    WORK = os.path.join(data, "bench", a.corpus)
    WORKBIN = os.path.join(data, "bench", "bin")
    os.makedirs(WORK, exist_ok=True)
    os.makedirs(WORKBIN, exist_ok=True)
    snap = os.path.join(WORKBIN, f"bitsift-{a.corpus}")
    # build only in a fresh checkout: an existing build dir may be mid-build by a developer
    if not os.access(a.bitsift, os.X_OK) and not os.path.isdir(os.path.join(REPO, "build")):
        log(f"no bitsift at {a.bitsift}: building it")
        subprocess.run(["cmake", "-S", REPO, "-B", os.path.join(REPO, "build"),
                        "-DCMAKE_BUILD_TYPE=Release"], stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", os.path.join(REPO, "build"), "-j2", "--target",
                        "bitsift_cli", "tokenize_files"], stdout=subprocess.DEVNULL)
    if not os.access(a.bitsift, os.X_OK):
        olds = sorted((os.path.join(WORKBIN, f) for f in os.listdir(WORKBIN)
                       if f.startswith("bitsift-")), key=os.path.getmtime)
        if not olds:
            sys.exit(f"no bitsift binary at {a.bitsift} and the build failed")
        a.bitsift = olds[-1]
        log(f"WARNING: build failed; using the binary snapshot of an earlier run: {a.bitsift}")
    # snapshot the binary: the whole run (queries, oracle, index, query) uses one build even if
    # build/bitsift is rebuilt meanwhile
    for attempt in range(30):
        try:
            if os.path.abspath(a.bitsift) != snap:
                shutil.copy2(a.bitsift, snap + ".tmp")
                os.replace(snap + ".tmp", snap)
            subprocess.run([snap, "tokenize", "probe"], check=True, stdout=subprocess.DEVNULL)
            break
        except (OSError, subprocess.CalledProcessError):
            time.sleep(2)  # being relinked right now
    else:
        sys.exit(f"cannot run {a.bitsift}")
    # The oracle's many-files tokenizer, built beside bitsift (bench/tokenize_files.cc), is
    # snapshot with it; without it the oracle starts a bitsift process per document.
    tool = os.path.join(os.path.dirname(os.path.abspath(a.bitsift)), "tokenize_files")
    tool_snap = None
    if os.path.abspath(a.bitsift) != snap and os.access(tool, os.X_OK):
        tool_snap = os.path.join(WORKBIN, f"tokenize_files-{a.corpus}")
        shutil.copy2(tool, tool_snap + ".tmp")
        os.replace(tool_snap + ".tmp", tool_snap)
    a.bitsift = snap
    env = dict(os.environ, BITSIFT=a.bitsift)

    # corpus and queries (idempotent builders)
    mk = [os.path.join(REPO, "corpora", "make-corpus"), a.corpus]
    subprocess.run(mk, check=True, stdout=sys.stderr, env=env)
    subprocess.run([os.path.join(REPO, "corpora", "make-queries"), a.corpus], check=True,
                   stdout=sys.stderr, env=env)
    docs_dir = cl.docs_dir_of(a.corpus)
    qfile = os.path.join(cl.corpus_dir(a.corpus), "queries.txt")
    with open(qfile, encoding="utf-8") as f:
        queries = f.read().split("\n")
    if queries and queries[-1] == "":
        queries.pop()
    kinds = {}
    with open(os.path.join(cl.corpus_dir(a.corpus), "queries.tsv"), encoding="utf-8") as f:
        next(f)
        for line in f:
            ln, kind, _ = line.rstrip("\n").split("\t", 2)
            kinds[int(ln)] = kind

    # the document universe: what `bitsift index` takes (no dot names, symlinks, NUL in 8 KiB)
    docs = []
    max_file = 0
    input_bytes = 0
    for rel in cl.walk_docs(docs_dir):
        p = os.path.join(docs_dir, rel)
        with open(p, "rb") as f:
            head = f.read(8192)
        if b"\0" in head:
            continue
        sz = os.path.getsize(p)
        docs.append(rel)
        max_file = max(max_file, sz)
        input_bytes += sz
    doc_index = {rel: i for i, rel in enumerate(docs)}
    listfile = os.path.join(WORK, "docs.list")
    with open(listfile, "w", encoding="utf-8") as f:
        f.write("".join(r + "\n" for r in docs))
    sample_toks = oracle._tokens(a.bitsift, [" ".join(queries[:200])])
    cjk = sum(1 for t in sample_toks if CJK.search(t)) > len(sample_toks) / 2
    ctx = dict(bitsift=a.bitsift, docs_dir=docs_dir, qfile=qfile, queries=queries,
               n_queries=len(queries), listfile=listfile, max_file=max_file, cjk=cjk,
               rg_queries=a.rg_queries if a.rg_queries is not None else
               (len(queries) if len(docs) <= 50000 else 100))
    log(f"{a.corpus}: {len(docs)} documents, {input_bytes} bytes, {len(queries)} queries, "
        f"work dir {WORK}")

    # oracle
    t0 = time.time()
    cache = oracle.token_cache(a.bitsift, docs_dir, docs, cl.corpus_dir(a.corpus), log=log,
                               tool=tool_snap)
    qtok = oracle.query_tokens(a.bitsift, queries)
    expect = oracle.expected(cache, doc_index, qtok)
    log(f"oracle ready in {time.time() - t0:.1f} s")
    hits = [len(e) if e is not None else 0 for e in expect]

    membw = json.loads(subprocess.run(
        [build_tool("membw", os.path.join(HERE, "membw.cc"), [])], check=True,
        stdout=subprocess.PIPE).stdout)

    # results of engines run earlier on the same documents and queries are kept and merged,
    # so `--engines X` re-runs one engine without losing the others' rows
    import hashlib
    run_key = hashlib.sha1(("\n".join(docs) + "\0" + "\n".join(queries)).encode()).hexdigest()
    results = {}
    for e in ENGINES:
        saved = os.path.join(WORK, f"result-{e}.json")
        if e not in engines and os.path.exists(saved):
            with open(saved) as f:
                old = json.load(f)
            if old.get("run_key") == run_key:
                r = old["result"]
                r["latency_us"] = {int(k): v for k, v in r["latency_us"].items()}
                if "stats" in r:
                    r["stats"] = {int(k): v for k, v in r["stats"].items()}
                results[e] = r
    for e in engines:
        log(f"running {e} ...")
        t0 = time.time()
        try:
            r = globals()["eng_" + e](ctx)
        except Exception as ex:  # report the failure, keep the other engines
            log(f"  {e} FAILED: {ex}")
            results[e] = dict(error=str(ex))
            continue
        res, unknown = read_results(r.pop("results"), len(queries), doc_index)
        same, fp, fn, diff = compare(res, unknown, expect, r["lines"])
        r.update(identical=same, compared=sum(1 for i in r["lines"] if expect[i - 1] is not None),
                 fp_docs=fp, fn_docs=fn, differing_lines=diff[:50])
        results[e] = r
        with open(os.path.join(WORK, f"result-{e}.json"), "w") as f:
            json.dump(dict(run_key=run_key, result=r), f)
        log(f"  {e}: {time.time() - t0:.1f} s, identical to oracle {same}/{r['compared']}")
    results = {e: results[e] for e in ENGINES if e in results}

    write_report(a.corpus, docs, input_bytes, queries, kinds, hits, expect, results, membw, ctx)


def write_report(corpus, docs, input_bytes, queries, kinds, hits, expect, results, membw, ctx):
    nd = len(docs)
    L = []
    L.append(f"## bench/run {corpus}: {nd:,} documents, {input_bytes / 1e6:.1f} MB, "
             f"{len(queries):,} queries ({time.strftime('%Y-%m-%d %H:%M')}, "
             f"{os.cpu_count()} cores)")
    L.append("")
    L.append("| engine | docs | input MB | build s | build MB/s | index MB | index bits/doc | "
             "peak RSS index MB | peak RSS query MB | p50 ms | p95 ms | p99 ms | mean ms | QPS | "
             "queries | identical to oracle |")
    L.append("|" + "---|" * 16)
    for e, r in results.items():
        if "error" in r:
            L.append(f"| {e} | failed: {r['error']} |" + " |" * 14)
            continue
        lat = [v / 1000.0 for v in r["latency_us"].values()]
        tot = sum(lat) / 1000.0
        qps = len(lat) / tot if tot > 0 else float("nan")
        build = f"{r['build_s']:.2f}" if r["build_s"] else "-"
        mbps = f"{input_bytes / 1e6 / r['build_s']:.1f}" if r["build_s"] else "-"
        bpd = f"{r['index_bytes'] * 8 / nd:.0f}" if r["index_bytes"] else "-"
        L.append(f"| {e} | {nd:,} | {fmt_mb(input_bytes)} | {build} | {mbps} | "
                 f"{fmt_mb(r['index_bytes'])} | {bpd} | {fmt_mb(r['build_rss'])} | "
                 f"{fmt_mb(r['query_rss'])} | {pct(lat, 50):.3f} | {pct(lat, 95):.3f} | "
                 f"{pct(lat, 99):.3f} | {statistics.mean(lat):.3f} | {qps:,.0f} | {len(lat)} | "
                 f"{r['identical']}/{r['compared']} |")
    L.append("")
    b = results.get("bitsift")
    bw = membw["best_read_GBps"] * 1e9
    if b and "error" not in b:
        st = b["stats"]
        n = max(1, len(st))

        def mean(k):
            return sum(s.get(k, 0) for s in st.values()) / n

        ratios = [s["total_us"] / (s["bytes_read"] / bw * 1e6)
                  for s in st.values() if s.get("bytes_read")]
        L.append(f"bitsift per query (mean over {len(st)} queries): candidates "
                 f"{mean('candidates'):,.1f}, false positives removed {mean('false_positives'):,.1f}, "
                 f"rows read {mean('rows_read'):,.1f}, bytes read {mean('bytes_read'):,.0f}, "
                 f"matches {mean('matches'):,.1f}; phases: parse {mean('parse_us'):.1f} us, "
                 f"AND {mean('and_us'):.1f} us, verify {mean('verify_us'):.1f} us.")
        L.append("")
        L.append(f"Correctness vs the brute-force oracle: bitsift false positives "
                 f"**{b['fp_docs']}**, false negatives **{b['fn_docs']}** (documents, summed over "
                 f"{b['compared']} queries); queries differing: {len(b['differing_lines'])}"
                 + (f" (first: {b['differing_lines'][:10]})" if b["differing_lines"] else "") + ".")
        L.append("")
        if ratios:
            L.append(f"Memory bandwidth (bench/membw, 1 GiB single-thread read): best "
                     f"{membw['best_read_GBps']:.1f} GB/s, median {membw['median_read_GBps']:.1f} "
                     f"GB/s. bitsift query time / (bytes_read at best bandwidth): median "
                     f"**{statistics.median(ratios):.1f}x** (p10 {pct(ratios, 10):.1f}x, p90 "
                     f"{pct(ratios, 90):.1f}x) over {len(ratios)} queries that read bytes.")
        L.append(f"bitsift query process wall time for the whole set: {b['query_wall_s']:.2f} s "
                 f"(includes start-up, index open and printing results).")
        L.append("")
    L.append("Peers vs the oracle (differences come from tokenization, see bench/README.md):")
    L.append("")
    L.append("| engine | identical | extra docs (FP) | missing docs (FN) | latency measured |")
    L.append("|---|---|---|---|---|")
    for e, r in results.items():
        if "error" in r:
            continue
        L.append(f"| {e} | {r['identical']}/{r['compared']} | {r['fp_docs']:,} | "
                 f"{r['fn_docs']:,} | {r['timing']} |")
    L.append("")
    by_kind = {}
    for i in range(1, len(queries) + 1):
        by_kind.setdefault(kinds.get(i, "?"), []).append(hits[i - 1])
    L.append("Query set: " + "; ".join(
        f"{k} {len(v)} (median {statistics.median(v):.0f} hits, {sum(1 for x in v if x == 0)} "
        f"with none)" for k, v in sorted(by_kind.items())) + ".")
    report = "\n".join(L) + "\n"

    # raw data + plot
    lat_tsv = os.path.join(WORK, "latency.tsv")
    with open(lat_tsv, "w") as f:
        f.write("engine\tline\tkind\tmatches\tmicroseconds\n")
        for e, r in results.items():
            if "error" in r:
                continue
            for i, us in sorted(r["latency_us"].items()):
                f.write(f"{e}\t{i}\t{kinds.get(i, '?')}\t{hits[i - 1]}\t{us:.2f}\n")
    png = os.path.join(WORK, "latency.png")
    pr = subprocess.run([os.path.join(HERE, "plot"), lat_tsv, png,
                         f"{corpus}: query latency vs matching documents"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    report += (f"\nPlot: {png}\n" if pr.returncode == 0 else
               f"\nPlot failed: {pr.stdout.strip()[-300:]}\n")
    with open(os.path.join(WORK, "report.md"), "w") as f:
        f.write(report)
    raw = {e: {k: v for k, v in r.items() if k not in ("latency_us", "stats")}
           for e, r in results.items()}
    with open(os.path.join(WORK, "results.json"), "w") as f:
        json.dump(dict(corpus=corpus, documents=nd, input_bytes=input_bytes,
                       queries=len(queries), membw=membw, engines=raw), f, indent=1)
    print(report)
    log(f"report: {os.path.join(WORK, 'report.md')}")


WORK = WORKBIN = None

if __name__ == "__main__":
    main()
