#!/usr/bin/python3
"""Ranked top-k latency, every query word optional: bitsift --any --limit K against Xapian's
get_mset(0, K) with OP_OR and BM25Weight, in one run, on the same queries.

usage: run.py BITSIFT_INDEX XAPIAN_DB QUERIES [BITSIFT] [N] [K]

bitsift is timed in-process by its own --stats (total_us, a --queries run of N lines); Xapian
in-process around get_mset. Prints p50, p95 and mean in ms for each engine. The Xapian database
is the one bench/run builds (bench/xapian_driver.cc: TermGenerator, no stemmer).
"""
import json
import statistics
import subprocess
import sys
import time


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    index, db, qfile = argv[1], argv[2], argv[3]
    bitsift = argv[4] if len(argv) > 4 else "build/bitsift"
    n = int(argv[5]) if len(argv) > 5 else 300
    k = int(argv[6]) if len(argv) > 6 else 10
    with open(qfile, encoding="utf-8") as f:
        queries = [line.rstrip("\n") for line in f if line.strip()][:n]
    text = "".join(q + "\n" for q in queries)
    proc = subprocess.run([bitsift, "query", "--index", index, "--all", "--no-check", "--any",
                           "--limit", str(k), "--queries", "-", "--stats"],
                          input=text, capture_output=True, text=True)
    ours = [json.loads(line)["total_us"] / 1000 for line in proc.stderr.splitlines()
            if line.startswith("{")]
    import xapian  # python3-xapian
    database = xapian.Database(db)
    qp = xapian.QueryParser()
    qp.set_database(database)
    qp.set_default_op(xapian.Query.OP_OR)
    enquire = xapian.Enquire(database)
    enquire.set_weighting_scheme(xapian.BM25Weight())
    theirs = []
    for q in queries:
        t0 = time.perf_counter()
        enquire.set_query(qp.parse_query(q))
        enquire.get_mset(0, k)
        theirs.append((time.perf_counter() - t0) * 1000)
    print(f"{len(queries)} queries, top {k}, every word optional")
    print("| engine | p50 ms | p95 ms | mean ms |")
    print("|---|---|---|---|")
    for name, times in (("bitsift --any", ours), ("Xapian OP_OR BM25", theirs)):
        print(f"| {name} | {percentile(times, 0.5):.3f} | {percentile(times, 0.95):.3f} | "
              f"{statistics.mean(times):.3f} |")


if __name__ == "__main__":
    main(sys.argv)
