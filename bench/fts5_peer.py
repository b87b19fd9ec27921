#!/usr/bin/env python3
"""SQLite FTS5 peer for bench/run (python3's sqlite3 module = Debian's libsqlite3 3.40).

  fts5_peer.py index DB DOCDIR LISTFILE TOKENIZER
      Contentless table (content='': the index alone, no copy of the text), default
      detail=full, rowid = line number in LISTFILE. TOKENIZER: unicode61 (run as
      'unicode61 remove_diacritics 0') or trigram (for Chinese). One transaction,
      journal_mode=OFF, synchronous=OFF (a bulk load). Prints a JSON line.
  fts5_peer.py query DB LISTFILE QUERYFILE OUTFILE TIMINGFILE [--repeat N]
      Opens the database once. Each query line becomes '"t1" AND "t2" ...' (every term quoted,
      so FTS5 syntax characters in terms are literal; a term that FTS5 splits into several
      tokens becomes a phrase). Timed in-process with perf_counter around execute + fetchall.
      The set runs N times; the last pass is reported. An FTS5 error (e.g. a term with no
      tokens) counts as an empty result. OUTFILE: LINENO<TAB>PATH; TIMINGFILE:
      LINENO<TAB>MATCHES<TAB>MICROSECONDS.
"""
import json
import sqlite3
import sys
import time

TOKENIZERS = {"unicode61": "unicode61 remove_diacritics 0", "trigram": "trigram"}


def index(db, docdir, listfile, tok):
    t0 = time.perf_counter()
    con = sqlite3.connect(db, isolation_level=None)  # explicit transactions only
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute("DROP TABLE IF EXISTS docs")
    con.execute(f"CREATE VIRTUAL TABLE docs USING fts5(body, content='', tokenize=\"{TOKENIZERS[tok]}\")")
    n = nbytes = 0

    def rows():
        nonlocal n, nbytes
        with open(listfile, encoding="utf-8") as lf:
            for i, rel in enumerate(lf, 1):
                rel = rel.rstrip("\n")
                with open(f"{docdir}/{rel}", "rb") as f:
                    raw = f.read()
                n += 1
                nbytes += len(raw)
                yield i, raw.decode("utf-8", errors="replace")

    con.execute("BEGIN")
    con.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", rows())
    con.execute("COMMIT")
    con.execute("INSERT INTO docs(docs) VALUES ('optimize')")  # autocommit: one merged b-tree
    con.close()
    print(json.dumps({"documents": n, "bytes": nbytes, "seconds": time.perf_counter() - t0}))


def fts_query(line):
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in line.split())


def query(db, listfile, qfile, outfile, timefile, repeat):
    with open(listfile, encoding="utf-8") as lf:
        paths = [None] + [l.rstrip("\n") for l in lf]
    with open(qfile, encoding="utf-8") as qf:
        queries = qf.read().split("\n")
    if queries and queries[-1] == "":
        queries.pop()
    con = sqlite3.connect(db, isolation_level=None)
    sql = "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid"
    results = [None] * len(queries)
    micros = [0.0] * len(queries)
    errors = 0
    for _ in range(repeat):
        errors = 0
        for i, line in enumerate(queries):
            q = fts_query(line)
            t0 = time.perf_counter()
            try:
                rows = con.execute(sql, (q,)).fetchall() if q else []
            except sqlite3.Error:
                rows = []
                errors += 1
            micros[i] = (time.perf_counter() - t0) * 1e6
            results[i] = rows
    with open(outfile, "w", encoding="utf-8") as out, open(timefile, "w") as tim:
        for i, rows in enumerate(results):
            for (rowid,) in rows:
                out.write(f"{i + 1}\t{paths[rowid]}\n")
            tim.write(f"{i + 1}\t{len(rows)}\t{micros[i]:.2f}\n")
    print(json.dumps({"queries": len(queries), "errors": errors}))


def main():
    a = sys.argv[1:]
    repeat = 1
    if "--repeat" in a:
        k = a.index("--repeat")
        repeat = max(1, int(a[k + 1]))
        del a[k:k + 2]
    if len(a) == 5 and a[0] == "index":
        index(*a[1:])
    elif len(a) == 6 and a[0] == "query":
        query(*a[1:], repeat)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
