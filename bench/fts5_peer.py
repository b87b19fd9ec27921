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
      --raw: each line is passed to MATCH as it is, in FTS5's own syntax ("a b" phrases,
      a OR b), for bench/phrases.
  fts5_peer.py update DB DOCDIR MAPFILE CHANGES
      Applies one batch of changes in one transaction (bench/living). MAPFILE maps rowids to
      paths in LISTFILE's format (line i = rowid i; an empty line is a deleted rowid); it starts
      as a copy of the LISTFILE the database was indexed from and is rewritten by each update.
      CHANGES has one line per operation: "-<TAB>PATH<TAB>OLDFILE" (the document is gone or
      changed; OLDFILE holds its text as it was indexed) or "+<TAB>PATH" (index DOCDIR/PATH).
      A contentless table cannot DELETE a row in SQLite 3.40: a row is removed with FTS5's
      'delete' command, which needs the indexed text again (OLDFILE). A changed document is a
      'delete' of its rowid followed by an INSERT under the same rowid; a new one gets the next
      rowid. The database keeps SQLite's default durability (rollback journal, synchronous=FULL),
      unlike the bulk build. Prints a JSON line.
"""
import json
import os
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


def update(db, docdir, mapfile, changes):
    t0 = time.perf_counter()
    with open(mapfile, encoding="utf-8") as f:
        paths = f.read().split("\n")
    if paths and paths[-1] == "":
        paths.pop()
    rowid_of = {p: i for i, p in enumerate(paths, 1) if p}
    removed, added = [], []
    with open(changes, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "-" and len(parts) == 3:
                removed.append((parts[1], parts[2]))
            elif parts[0] == "+" and len(parts) == 2:
                added.append(parts[1])
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN")
    free = {}
    for rel, oldfile in removed:
        rowid = rowid_of.pop(rel)
        with open(oldfile, "rb") as f:
            old = f.read().decode("utf-8", errors="replace")
        con.execute("INSERT INTO docs(docs, rowid, body) VALUES ('delete', ?, ?)", (rowid, old))
        free[rel] = rowid
        paths[rowid - 1] = ""
    n_rep = n_add = 0
    for rel in added:
        with open(f"{docdir}/{rel}", "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        rowid = free.pop(rel, None)
        if rowid is None:
            paths.append(rel)
            rowid = len(paths)
            n_add += 1
        else:
            paths[rowid - 1] = rel
            n_rep += 1
        rowid_of[rel] = rowid
        con.execute("INSERT INTO docs(rowid, body) VALUES (?, ?)", (rowid, text))
    con.execute("COMMIT")
    con.close()
    with open(mapfile + ".tmp", "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in paths))
    os.replace(mapfile + ".tmp", mapfile)
    print(json.dumps({"documents": len(rowid_of), "deleted": len(free), "replaced": n_rep,
                      "added": n_add, "seconds": time.perf_counter() - t0}))


def fts_query(line):
    return " AND ".join('"' + t.replace('"', '""') + '"' for t in line.split())


def query(db, listfile, qfile, outfile, timefile, repeat, raw=False):
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
            q = line if raw else fts_query(line)
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
    raw = "--raw" in a
    if raw:
        a.remove("--raw")
    if len(a) == 5 and a[0] == "index":
        index(*a[1:])
    elif len(a) == 6 and a[0] == "query":
        query(*a[1:], repeat, raw)
    elif len(a) == 5 and a[0] == "update":
        update(*a[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
