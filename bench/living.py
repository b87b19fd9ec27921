#!/usr/bin/env python3
"""bench/living CORPUS: the living-index table of issue 10, one run.

Needs `bench/run CORPUS` to have run (corpus, queries, the peers' rows and the Xapian database
for quest). Prints a Markdown table and writes it to DATA/bench/CORPUS/living.md:

  full build     bitsift with default settings (wall s, peak RSS, index bytes) beside the
                 FTS5 and Xapian rows of the last `bench/run` (same documents);
  updates        on a scratch copy of the tree: 1 file, 1% and 10% of the files changed
                 (appended, rewritten, deleted, added, renamed; fixed seed), each `bitsift
                 index` (incremental) against `bitsift index --rebuild` of the same tree, and
                 the query set answered identically by both;
  one-shot       whole-process wall time and peak RSS of `bitsift query --count TERMS` and of
                 Xapian's `quest` (-s none -o and -m 1000000, the same no-stemming AND) for 20
                 queries of the set, warm page cache;
  segments       in-process latency of the query set on the index right after the 10% update
                 (several segments) and after `bitsift compact`.
"""
import json, os, random, shutil, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "corpora"))
import corpuslib as cl  # noqa: E402

DATA = os.environ.get("BITSIFT_DATA", "/work/data")


def timed(cmd, **kw):
    t = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True, **kw)
    wall, rss = t.stderr.strip().splitlines()[-1].split()
    return t.returncode, float(wall), int(rss) / 1024, t.stdout


def du(path):
    return int(subprocess.run(["du", "-sb", path], capture_output=True, text=True).stdout.split()[0])


def latencies(bitsift, idx, qfile):
    r = subprocess.run([bitsift, "query", "--index", idx, "--queries", qfile, "--stats", "--count"],
                       capture_output=True, text=True)
    v = sorted(json.loads(l)["total_us"] for l in r.stderr.splitlines() if l.startswith("{"))
    p = lambda q: v[min(len(v) - 1, int(q * len(v)))]
    return dict(p50=p(0.5), p95=p(0.95), p99=p(0.99), mean=statistics.mean(v))


def answers(bitsift, idx, qfile):
    return subprocess.run([bitsift, "query", "--index", idx, "--queries", qfile],
                          capture_output=True, text=True).stdout


def change(tree, files, fraction, rng, tag):
    """Changes max(1, fraction * len(files)) files; returns the new file list."""
    n = max(1, int(len(files) * fraction))
    picks = rng.sample(files, min(n, len(files)))
    keep = set(files)
    for i, rel in enumerate(picks):
        path = os.path.join(tree, rel)
        kind = i % 5 if n > 1 else 0
        if kind == 0:    # append a new word
            with open(path, "a") as f:
                f.write(f"\nlivingword{tag}x{i}\n")
        elif kind == 1:  # rewrite: reverse the lines
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            with open(path, "w") as f:
                f.write("\n".join(reversed(lines)) + f"\nrewritten{tag}\n")
        elif kind == 2:  # delete
            os.remove(path)
            keep.discard(rel)
        elif kind == 3:  # add a new file
            new = rel + f".new{tag}"
            with open(os.path.join(tree, new), "w") as f:
                f.write(f"added file {tag} {i} livingword{tag}\n")
            keep.add(new)
        else:            # rename
            new = rel + f".renamed{tag}"
            os.rename(path, os.path.join(tree, new))
            keep.discard(rel)
            keep.add(new)
    return sorted(keep)


def main():
    corpus = sys.argv[1]
    bitsift = os.path.abspath(os.path.join(HERE, "..", "build", "bitsift"))
    work = os.path.join(DATA, "bench", corpus)
    qfile = os.path.join(cl.corpus_dir(corpus), "queries.txt")
    docs = os.path.join(cl.corpus_dir(corpus), "docs")
    peers = json.load(open(os.path.join(work, "results.json"))) if os.path.exists(
        os.path.join(work, "results.json")) else {}
    scratch = os.path.join(work, "living")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    tree, idx, fresh = (os.path.join(scratch, x) for x in ("tree", "idx", "fresh"))
    print(f"copying {docs} ...", file=sys.stderr)
    shutil.copytree(docs, tree, symlinks=True)
    files = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs)
    rows = []
    rc, full_s, full_rss, _ = timed([bitsift, "index", tree, "--index", idx, "-q"])
    assert rc == 0
    full_bytes = du(idx)
    rows.append(("full build", "bitsift (default --memory 256MiB)", f"{full_s:.1f} s", f"{full_rss:.0f} MB",
                 f"{full_bytes / 1e6:.1f} MB"))
    for eng in ("fts5", "xapian"):
        r = peers.get("engines", {}).get(eng) or peers.get(eng)
        if r:
            rows.append(("full build", eng, f"{r.get('build_s', 0):.1f} s", f"{r.get('build_rss', 0):.0f} MB",
                         f"{r.get('index_bytes', 0) / 1e6:.1f} MB"))
    rng = random.Random(1729)
    upd = []
    for frac, label in ((0, "1 file"), (0.01, "1%"), (0.10, "10%")):
        files = change(tree, files, frac, rng, label.replace("%", "pct").replace(" ", ""))
        rc, u_s, u_rss, out = timed([bitsift, "index", tree, "--index", idx])
        assert rc == 0, out
        summary = out.splitlines()[0] if out else ""
        shutil.rmtree(fresh, ignore_errors=True)
        rc, f_s, f_rss, _ = timed([bitsift, "index", tree, "--index", fresh, "-q", "--rebuild"])
        same = answers(bitsift, idx, qfile) == answers(bitsift, fresh, qfile)
        upd.append((label, u_s, u_rss, f_s, same, summary))
    segs_lat = latencies(bitsift, idx, qfile)
    segs_lat = latencies(bitsift, idx, qfile)
    nsegs = sum(1 for f in os.listdir(idx) if f.endswith(".bsg"))
    subprocess.run([bitsift, "compact", "--index", idx, "-q"], check=True)
    comp_lat = latencies(bitsift, idx, qfile)
    comp_lat = latencies(bitsift, idx, qfile)
    # One-shot processes.
    queries = [l.split() for l in open(qfile, encoding="utf-8") if l.strip()]
    sample = random.Random(7).sample(queries, min(20, len(queries)))
    xdb = os.path.join(work, "xapian.db")
    one = {"bitsift": [], "quest": []}
    for q in sample:
        subprocess.run([bitsift, "query", "--index", idx, "--count"] + q, capture_output=True)
        _, w, m, _ = timed([bitsift, "query", "--index", idx, "--count"] + q)
        one["bitsift"].append((w, m))
        if os.path.isdir(xdb) and shutil.which("quest"):
            cmd = ["quest", "-d", xdb, "-s", "none", "-o", "and", "-m", "1000000", " ".join(q)]
            subprocess.run(cmd, capture_output=True)
            _, w, m, _ = timed(cmd)
            one["quest"].append((w, m))
    out = [f"## {corpus}: the living index (one run)\n",
           "| phase | engine | time | peak RSS | index |", "|---|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows]
    out += ["", "| change | update s | update RSS MB | rebuild s | update / rebuild | answers identical | summary |",
            "|---|---|---|---|---|---|---|"]
    out += [f"| {l} | {u:.2f} | {r:.0f} | {f:.2f} | {u / f:.3f} | {'yes' if s else 'NO'} | {m} |"
            for l, u, r, f, s, m in upd]
    out += ["", "| one-shot query (20 queries, warm) | p50 wall ms | max wall ms | max RSS MB |", "|---|---|---|---|"]
    for eng, v in one.items():
        if v:
            ws = sorted(x[0] for x in v)
            out.append(f"| {eng} | {1000 * ws[len(ws) // 2]:.0f} | {1000 * ws[-1]:.0f} | {max(x[1] for x in v):.0f} |")
    out += ["", "| index state | segments | p50 us | p95 us | p99 us | mean us |", "|---|---|---|---|---|---|"]
    out.append(f"| after the 10% update | {nsegs} | " + " | ".join(f"{segs_lat[k]:.0f}" for k in ("p50", "p95", "p99", "mean")) + " |")
    out.append("| compacted | 1 | " + " | ".join(f"{comp_lat[k]:.0f}" for k in ("p50", "p95", "p99", "mean")) + " |")
    out.append(f"\nmean ratio segments / compacted: {segs_lat['mean'] / comp_lat['mean']:.2f}, "
               f"p50 ratio {segs_lat['p50'] / comp_lat['p50']:.2f}")
    text = "\n".join(out) + "\n"
    print(text)
    with open(os.path.join(work, "living.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
