#!/usr/bin/env python3
"""Run each engine over a prepared collection, write TREC runs, and print the table.

usage: engines.py COLLECTION_DIR WORK_DIR [BITSIFT]

COLLECTION_DIR is prepare.py's OUT_DIR (docs/, queries.tsv, qrels.txt). Every
engine indexes the same files docs/<docno>.txt and answers the same queries:
the query text lower-cased and split into its runs of letters and digits, the
words joined as optional terms (OR), top 1000 by the engine's BM25.

  fts5         python3 sqlite3: CREATE VIRTUAL TABLE d USING fts5(body) (unicode61),
               MATCH '"w1" OR "w2" ...' ORDER BY rank LIMIT 1000 (bm25(), k1 1.2, b 0.75)
  xapian       TermGenerator without stemmer; QueryParser default_op OP_OR, no
               stemmer; BM25Weight() defaults (k1 1, b 0.5); get_mset(0, 1000)
  xapian-stem  TermGenerator and QueryParser with Stem("english"), STEM_SOME
  bitsift      bitsift index DOCS --index WORK/bitsift; bitsift query --queries FILE
               --any --json --limit 1000 (plus --rank where the binary has it)

Writes WORK_DIR/<engine>.run (TREC format, sim = the engine's score, higher =
better; FTS5's rank is negated) and WORK_DIR/<engine>.json (index bytes,
timings), then prints a Markdown table evaluated with evaluate.py.

queries/s: the query set answered twice, the second pass timed. fts5 and xapian
are timed in-process (perf_counter around parse, search and reading the top
1000 of each query); bitsift is the wall time of one `bitsift query --queries`
process (start-up, index open and printing 1000 JSON objects a query included).
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import evaluate  # noqa: E402

DEPTH = 1000
WORD = re.compile(r"[^\W_]+")


def query_words(text):
    return WORD.findall(text.lower())


def load_collection(cdir):
    docs_dir = os.path.join(cdir, "docs")
    names = sorted((n for n in os.listdir(docs_dir) if n.endswith(".txt")),
                   key=lambda n: (len(n), n))
    docs = []
    for n in names:
        with open(os.path.join(docs_dir, n), encoding="utf-8") as f:
            docs.append((n[:-4], f.read()))
    queries = []
    with open(os.path.join(cdir, "queries.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                qid, text = line.split("\t", 1)
                queries.append((qid, text))
    return docs_dir, docs, queries


def dir_bytes(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(root, f))
    return total


def write_run(path, name, results):
    """results: [(qid, [(docno, score), ...]), ...] in the engine's order."""
    with open(path, "w", encoding="utf-8") as f:
        for qid, hits in results:
            for rank, (docno, score) in enumerate(hits, 1):
                f.write(f"{qid} Q0 {docno} {rank} {score!r} {name}\n")


def timed_passes(answer, queries):
    """Answer every query twice; return the second pass's results and seconds."""
    for qid, text in queries:
        answer(text)
    results = []
    total = 0.0
    for qid, text in queries:
        t0 = time.perf_counter()
        hits = answer(text)
        total += time.perf_counter() - t0
        results.append((qid, hits))
    return results, total


def run_fts5(docs, queries, work):
    path = os.path.join(work, "fts5.sqlite")
    if os.path.exists(path):
        os.unlink(path)
    con = sqlite3.connect(path)
    con.execute("CREATE VIRTUAL TABLE d USING fts5(body)")
    t0 = time.perf_counter()
    with con:
        con.executemany("INSERT INTO d(rowid, body) VALUES (?, ?)",
                        ((i + 1, text) for i, (_, text) in enumerate(docs)))
    build = time.perf_counter() - t0
    con.close()
    size = dir_bytes(path)
    con = sqlite3.connect(path)
    docnos = [d for d, _ in docs]
    sql = f"SELECT rowid, rank FROM d WHERE d MATCH ? ORDER BY rank LIMIT {DEPTH}"

    def answer(text):
        words = query_words(text)
        if not words:
            return []
        expr = " OR ".join(f'"{w}"' for w in words)
        return [(docnos[rowid - 1], -rank) for rowid, rank in con.execute(sql, (expr,))]

    results, secs = timed_passes(answer, queries)
    con.close()
    return results, {"index_bytes": size, "build_s": build, "query_s": secs,
                     "settings": "fts5(body), unicode61, bm25() k1 1.2 b 0.75"}


def run_xapian(docs, queries, work, stem):
    import xapian
    name = "xapian-stem" if stem else "xapian"
    path = os.path.join(work, name + ".db")
    shutil.rmtree(path, ignore_errors=True)
    t0 = time.perf_counter()
    db = xapian.WritableDatabase(path, xapian.DB_CREATE_OR_OVERWRITE)
    tg = xapian.TermGenerator()
    if stem:
        tg.set_stemmer(xapian.Stem("english"))
        tg.set_stemming_strategy(xapian.TermGenerator.STEM_SOME)
    for _, text in docs:
        doc = xapian.Document()
        tg.set_document(doc)
        tg.index_text(text)
        db.add_document(doc)  # docid i+1 for docs[i]
    db.commit()
    db.close()
    build = time.perf_counter() - t0
    size = dir_bytes(path)
    db = xapian.Database(path)
    enquire = xapian.Enquire(db)
    enquire.set_weighting_scheme(xapian.BM25Weight())
    qp = xapian.QueryParser()
    qp.set_database(db)
    qp.set_default_op(xapian.Query.OP_OR)
    if stem:
        qp.set_stemmer(xapian.Stem("english"))
        qp.set_stemming_strategy(xapian.QueryParser.STEM_SOME)
    docnos = [d for d, _ in docs]

    def answer(text):
        words = query_words(text)
        if not words:
            return []
        enquire.set_query(qp.parse_query(" ".join(words)))
        return [(docnos[m.docid - 1], m.weight) for m in enquire.get_mset(0, DEPTH)]

    results, secs = timed_passes(answer, queries)
    db.close()
    return results, {"index_bytes": size, "build_s": build, "query_s": secs,
                     "settings": "BM25Weight() k1 1 b 0.5, OP_OR"
                                 + (", Stem(english) STEM_SOME" if stem else ", no stemmer")}


def bitsift_flags(bitsift):
    """The ranked-query flags the binary has, or None if it has no --any."""
    try:
        out = subprocess.run([bitsift, "query", "--help"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    help_text = out.stdout + out.stderr
    if "--any" not in help_text:
        return None
    flags = ["--any", "--json", "--limit", str(DEPTH)]
    if "--rank" in help_text:
        flags.insert(0, "--rank")
    return flags


def parse_bitsift(output, queries):
    """Lines "N<TAB>{json}" (or JSON objects with a "line" field) -> per-query hits."""
    hits = {i: [] for i in range(1, len(queries) + 1)}
    for line in output.splitlines():
        if not line.strip():
            continue
        num = None
        if not line.lstrip().startswith("{"):
            num_text, line = line.split("\t", 1)
            num = int(num_text)
        obj = json.loads(line)
        if num is None:
            num = int(obj["line"])
        if "score" not in obj:
            raise ValueError("bitsift --json output has no \"score\": " + line[:200])
        docno = os.path.basename(obj["path"])
        if docno.endswith(".txt"):
            docno = docno[:-4]
        hits[num].append((docno, float(obj["score"])))
    return [(qid, hits[i]) for i, (qid, _) in enumerate(queries, 1)]


def bitsift_stems(bitsift):
    """Whether the binary's index command has --stem."""
    try:
        out = subprocess.run([bitsift, "index", "--help"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--stem" in out.stdout + out.stderr


def run_bitsift(docs_dir, queries, work, bitsift, flags, stem=False):
    idx = os.path.join(work, "bitsift-stem" if stem else "bitsift")
    shutil.rmtree(idx, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([bitsift, "index", docs_dir, "--index", idx, "--quiet"] +
                   (["--stem"] if stem else []), check=True)
    build = time.perf_counter() - t0
    size = dir_bytes(idx)
    qfile = os.path.join(work, "bitsift.queries")
    with open(qfile, "w", encoding="utf-8") as f:
        for _, text in queries:
            f.write(" ".join(query_words(text)) + "\n")
    cmd = [bitsift, "query", "--index", idx, "--all", "--no-check", "--queries", qfile] + flags
    out = None
    secs = 0.0
    for _ in range(2):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
        secs = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[:500]}")
        out = proc.stdout
    return parse_bitsift(out, queries), {
        "index_bytes": size, "build_s": build, "query_s": secs,
        "settings": " ".join((["bitsift index --stem;"] if stem else []) +
                             ["bitsift query"] + flags)}


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit("usage: engines.py COLLECTION_DIR WORK_DIR [BITSIFT]")
    cdir, work = argv[1], argv[2]
    bitsift = argv[3] if len(argv) == 4 else "/work/main/build/bitsift"
    os.makedirs(work, exist_ok=True)
    docs_dir, docs, queries = load_collection(cdir)
    qrels = evaluate.read_qrels(os.path.join(cdir, "qrels.txt"))
    print(f"{os.path.basename(os.path.normpath(cdir))}: {len(docs)} documents, "
          f"{len(queries)} queries, {len(qrels)} judged queries", file=sys.stderr)

    engines = [
        ("bitsift", None),
        ("bitsift-stem", None),
        ("fts5", lambda: run_fts5(docs, queries, work)),
        ("xapian", lambda: run_xapian(docs, queries, work, stem=False)),
        ("xapian-stem", lambda: run_xapian(docs, queries, work, stem=True)),
    ]
    flags = bitsift_flags(bitsift)
    rows = []
    for name, fn in engines:
        if name.startswith("bitsift"):
            stem = name == "bitsift-stem"
            if flags is None or (stem and not bitsift_stems(bitsift)):
                rows.append((name, None, "not available (no --any)" if flags is None
                             else "not available (no --stem)"))
                continue
            fn = lambda stem=stem: run_bitsift(  # noqa: E731
                docs_dir, queries, work, bitsift, flags, stem)
        print(f"running {name} ...", file=sys.stderr)
        results, info = fn()
        run_path = os.path.join(work, name + ".run")
        write_run(run_path, name, results)
        means, _ = evaluate.evaluate(evaluate.read_run(run_path), qrels)
        info.update(means)
        info["queries"] = len(queries)
        info["queries_with_results"] = sum(1 for _, h in results if h)
        info["qps"] = len(queries) / info["query_s"] if info["query_s"] > 0 else float("inf")
        with open(os.path.join(work, name + ".json"), "w", encoding="utf-8") as f:
            json.dump(info, f, indent=1, sort_keys=True)
        rows.append((name, info, None))

    print("| engine | MAP | P@10 | nDCG@10 | index bytes | queries/s |")
    print("|---|---|---|---|---|---|")
    for name, info, note in rows:
        if info is None:
            print(f"| {name}: {note} | | | | | |")
            continue
        print(f"| {name} | {info['map']:.4f} | {info['P_10']:.4f} | {info['ndcg_cut_10']:.4f} "
              f"| {info['index_bytes']:,} | {info['qps']:,.0f} |")
    for name, info, _ in rows:
        if info is not None:
            print(f"{name}: {info['settings']}; {info['queries_with_results']}/{info['queries']} "
                  f"queries answered; build {info['build_s']:.2f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
