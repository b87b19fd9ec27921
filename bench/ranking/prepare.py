#!/usr/bin/env python3
"""Convert a classic SMART-format test collection into the ranking bench's layout.

usage: prepare.py COLLECTION SRC_DIR OUT_DIR

COLLECTION is cranfield or cisi. SRC_DIR holds the raw files (see README.md for
where they come from); OUT_DIR receives

  OUT_DIR/docs/<docno>.txt   title and abstract of one document (.T then .W text)
  OUT_DIR/queries.tsv        qid<TAB>query text, one query a line, in file order
  OUT_DIR/qrels.txt          TREC qrels: "qid 0 docno gain", gain >= 1 = relevant

Cranfield (cran.all.1400, cran.qry, cranqrel):
  * cran.qry numbers its queries 001..365 with gaps; cranqrel numbers them 1..225
    in file order. Queries are renumbered 1..225 in file order to match cranqrel.
  * cranqrel codes are Cleverdon's 1..4 with 1 = complete answer (best) and
    4 = minimum interest, plus one line coded -1 per query. Gains are
    gain = 5 - code (code 1 -> 4, ..., code 4 -> 1), so every judged document
    with a code 1..4 is relevant for MAP and P@10 (trec_eval's relevance level 1)
    and better codes weigh more in nDCG. The -1 lines are dropped.

CISI (CISI.ALL, CISI.QRY, CISI_REL.TREC):
  * CISI_REL.TREC is already TREC qrels with binary relevance (1) and explicit
    non-relevant lines (0). Only the relevant lines are kept, so the queries
    averaged over are the 76 with at least one relevant document (queries
    without relevant documents would count 0 under trec_eval -c).
  * Documents keep .T and .W; the .A (authors), .B (source) and .X (citation
    links) fields are dropped. Queries keep .T and .W (queries 58-112 have a
    title and abstract of a paper; 1-57 only .W).

Lines are read with CR stripped (the raw files mix CRLF and LF). A field starts
at a line that is exactly a field marker (".T", ".W", ".A 1", ...); text goes
to the current field until the next marker, so stray markers inside a record
(Cranfield documents 240 and 578 have some) move the text after them to that
field.
"""
import os
import re
import sys

MARKER = re.compile(r"^\.([A-Z])(?:\s+(.*))?$")


def read_records(path):
    """Yield (id, {field: text}) for each .I record of a SMART-format file."""
    rec_id = None
    fields = {}
    cur = None
    with open(path, "r", encoding="latin-1") as f:
        for raw in f:
            line = raw.rstrip("\r\n").replace("\r", "")
            m = MARKER.match(line)
            if m:
                tag, rest = m.group(1), (m.group(2) or "").strip()
                if tag == "I":
                    if rec_id is not None:
                        yield rec_id, fields
                    rec_id = rest
                    fields = {}
                    cur = None
                    continue
                cur = tag
                fields.setdefault(cur, [])
                if rest:
                    fields[cur].append(rest)
                continue
            if cur is not None:
                fields[cur].append(line)
    if rec_id is not None:
        yield rec_id, fields


def text_of(fields, tags):
    parts = []
    for t in tags:
        lines = [l.strip() for l in fields.get(t, []) if l.strip()]
        if lines:
            parts.append(" ".join(lines))
    return parts


def write_docs(out_dir, docs):
    d = os.path.join(out_dir, "docs")
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        if old.endswith(".txt"):
            os.unlink(os.path.join(d, old))
    for docno, parts in docs:
        with open(os.path.join(d, docno + ".txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(parts) + "\n")


def write_queries(out_dir, queries):
    with open(os.path.join(out_dir, "queries.tsv"), "w", encoding="utf-8") as f:
        for qid, text in queries:
            text = " ".join(text.split())
            f.write(f"{qid}\t{text}\n")


def write_qrels(out_dir, qrels):
    with open(os.path.join(out_dir, "qrels.txt"), "w", encoding="utf-8") as f:
        for qid, docno, gain in qrels:
            f.write(f"{qid} 0 {docno} {gain}\n")


def check_unique(qrels):
    seen = set()
    for qid, docno, _ in qrels:
        if (qid, docno) in seen:
            sys.exit(f"prepare: duplicate judgment {qid} {docno}")
        seen.add((qid, docno))


def cranfield(src, out):
    docs = []
    for rid, fields in read_records(os.path.join(src, "cran.all.1400")):
        docs.append((str(int(rid)), text_of(fields, "TW")))
    queries = []
    for n, (rid, fields) in enumerate(read_records(os.path.join(src, "cran.qry")), 1):
        queries.append((str(n), " ".join(text_of(fields, "W"))))
    qrels = []
    with open(os.path.join(src, "cranqrel"), encoding="latin-1") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            qid, docno, code = parts[0], parts[1], int(parts[2])
            if code == -1:
                continue
            if not 1 <= code <= 4:
                sys.exit(f"prepare: unexpected cranqrel code {code} in {line!r}")
            qrels.append((str(int(qid)), str(int(docno)), 5 - code))
    return docs, queries, qrels


def cisi(src, out):
    docs = []
    for rid, fields in read_records(os.path.join(src, "CISI.ALL")):
        docs.append((str(int(rid)), text_of(fields, "TW")))
    queries = []
    for rid, fields in read_records(os.path.join(src, "CISI.QRY")):
        queries.append((str(int(rid)), " ".join(text_of(fields, "TW"))))
    qrels = []
    with open(os.path.join(src, "CISI_REL.TREC"), encoding="latin-1") as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            qid, docno, rel = parts[0], parts[2], int(parts[3])
            if rel > 0:
                qrels.append((str(int(qid)), str(int(docno)), rel))
    return docs, queries, qrels


COLLECTIONS = {"cranfield": cranfield, "cisi": cisi}


def main(argv):
    if len(argv) != 4 or argv[1] not in COLLECTIONS:
        sys.exit("usage: prepare.py {%s} SRC_DIR OUT_DIR" % "|".join(sorted(COLLECTIONS)))
    name, src, out = argv[1], argv[2], argv[3]
    docs, queries, qrels = COLLECTIONS[name](src, out)
    check_unique(qrels)
    docnos = {d for d, _ in docs}
    qids = {q for q, _ in queries}
    if len(docnos) != len(docs):
        sys.exit("prepare: duplicate document numbers")
    if len(qids) != len(queries):
        sys.exit("prepare: duplicate query numbers")
    for qid, docno, _ in qrels:
        if qid not in qids or docno not in docnos:
            sys.exit(f"prepare: judgment {qid} {docno} names an unknown query or document")
    os.makedirs(out, exist_ok=True)
    write_docs(out, docs)
    write_queries(out, queries)
    write_qrels(out, qrels)
    judged = len({q for q, _, _ in qrels})
    print(f"{name}: {len(docs)} documents, {len(queries)} queries, "
          f"{len(qrels)} relevance judgments over {judged} queries -> {out}")


if __name__ == "__main__":
    main(sys.argv)
