#!/usr/bin/python3
"""Ranked top-k latency, every query word optional, bitsift against its peers in one run on the
same queries: bitsift --any --limit K, Xapian's get_mset(0, K) with OP_OR and BM25Weight, and
SQLite FTS5's bm25() (MATCH '"w1" OR "w2" ...' ORDER BY rank LIMIT K).

usage: run.py BITSIFT_INDEX XAPIAN_DB QUERIES [BITSIFT] [N] [K] [--fts5 DB]

Every engine answers the N queries twice in one process and the second pass is reported (warm:
the index's pages mapped or cached, as a server that answers many queries has them). bitsift
is timed by its own --stats (total_us of each line of one --queries run over the queries
twice); Xapian and FTS5 in-process around the query call. Prints p50, p95 and mean in ms. The
Xapian and FTS5 databases are the ones bench/run builds (bench/xapian_driver.cc: TermGenerator,
no stemmer; bench/fts5_peer.py: contentless, unicode61, detail=full).
"""
import json
import sqlite3
import statistics
import subprocess
import sys
import time


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def bitsift_times(bitsift, index, queries, k):
    text = "".join(q + "\n" for q in queries) * 2
    proc = subprocess.run([bitsift, "query", "--index", index, "--all", "--no-check", "--any",
                           "--limit", str(k), "--queries", "-", "--stats"],
                          input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"bitsift failed: {proc.stderr[-2000:]}")
    times = [json.loads(line)["total_us"] / 1000 for line in proc.stderr.splitlines()
             if line.startswith("{")]
    return times[len(queries):]


def xapian_times(db, queries, k):
    import xapian  # python3-xapian
    database = xapian.Database(db)
    qp = xapian.QueryParser()
    qp.set_database(database)
    qp.set_default_op(xapian.Query.OP_OR)
    enquire = xapian.Enquire(database)
    enquire.set_weighting_scheme(xapian.BM25Weight())
    for _ in range(2):
        times = []
        for q in queries:
            t0 = time.perf_counter()
            enquire.set_query(qp.parse_query(q))
            enquire.get_mset(0, k)
            times.append((time.perf_counter() - t0) * 1000)
    return times


def fts5_times(db, queries, k):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    sql = f"SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT {k}"
    exprs = [" OR ".join('"' + w.replace('"', '""') + '"' for w in q.split()) for q in queries]
    for _ in range(2):
        times = []
        for expr in exprs:
            t0 = time.perf_counter()
            try:
                con.execute(sql, (expr,)).fetchall()
            except sqlite3.OperationalError:
                pass  # a word FTS5 finds no token in: an empty answer
            times.append((time.perf_counter() - t0) * 1000)
    return times


def main(argv):
    fts5 = None
    if "--fts5" in argv:
        at = argv.index("--fts5")
        fts5 = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    if len(argv) < 4:
        sys.exit(__doc__)
    index, db, qfile = argv[1], argv[2], argv[3]
    bitsift = argv[4] if len(argv) > 4 else "build/bitsift"
    n = int(argv[5]) if len(argv) > 5 else 300
    k = int(argv[6]) if len(argv) > 6 else 10
    with open(qfile, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()][:n]
    rows = [("bitsift --any", bitsift_times(bitsift, index, queries, k)),
            ("Xapian OP_OR BM25", xapian_times(db, queries, k))]
    if fts5:
        rows.append(("FTS5 bm25() OR", fts5_times(fts5, queries, k)))
    print(f"{len(queries)} queries, top {k}, every word optional, second of two passes")
    print("| engine | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|")
    for name, times in rows:
        print(f"| {name} | {percentile(times, 0.5):.3f} | {percentile(times, 0.95):.3f} | "
              f"{statistics.mean(times):.3f} |")


if __name__ == "__main__":
    main(sys.argv)
