#!/usr/bin/env python3
"""MAP, P@10 and nDCG@10 as trec_eval computes them (trec_eval -c -M1000 -m map -m P.10 -m ndcg_cut.10).

usage: evaluate.py [--per-query] RUN QRELS

RUN is a TREC run file: "qid iter docno rank sim run_id" per line. QRELS is
"qid iter docno rel" per line. The definitions follow usnistgov/trec_eval
(form_res_rels.c, m_map.c, m_P.c, m_ndcg_cut.c, meas_avg.c):

  * A query's retrieved documents are re-sorted by sim (parsed as a double)
    descending, ties broken by docno in descending strcmp (byte) order; the run's
    rank column is ignored. Then only the first 1000 are kept (-M1000).
  * A document in the run twice for one query is an error, as in trec_eval.
  * Relevant means rel >= 1 (relevance level 1); rel values are the nDCG gains.
    Negative rel values are neither relevant nor counted as gains.
  * AP = sum over relevant retrieved documents of (relevant so far / rank),
    divided by the number of relevant documents in the qrels (0 if none).
  * P@10 = relevant documents in the first 10 / 10 (fewer retrieved still
    divides by 10).
  * nDCG@10 = DCG@10 / ideal DCG@10, with DCG = sum of gain / log2(rank + 1)
    (rank 1 undiscounted, rank 2 divided by log2 3); the ideal ranking sorts
    every judged gain of the query in the qrels descending. If the ideal DCG is
    0 the value is the DCG (0).
  * -c: the mean is over every query that has a line in the qrels (a query with
    no results scores 0); queries in the run but not in the qrels are ignored.
"""
import math
import sys
from collections import defaultdict

CUTOFF = 10
MAX_DOCS = 1000


def read_qrels(path):
    """Return {qid: {docno: rel}} in order of first appearance."""
    qrels = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 4:
                raise ValueError(f"{path}:{n}: qrels line needs 4 fields: {line!r}")
            qid, _, docno, rel = parts
            q = qrels.setdefault(qid, {})
            if docno in q:
                raise ValueError(f"{path}:{n}: duplicate judgment {qid} {docno}")
            q[docno] = int(rel)
    return qrels


def read_run(path):
    """Return {qid: [(docno, sim), ...]}."""
    run = defaultdict(list)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise ValueError(f"{path}:{n}: run line needs 6 fields: {line!r}")
            qid, _, docno, _, sim, _ = parts
            run[qid].append((docno, float(sim)))
    return dict(run)


def _bytes_desc_key(docno):
    # strcmp compares unsigned bytes; sorting by the negated byte string is not
    # possible directly, so sort ascending and reverse within equal sims.
    return docno.encode("utf-8")


def ranked(results):
    """trec_eval's order: sim descending, ties by docno descending strcmp; cut at 1000."""
    seen = set()
    for docno, _ in results:
        if docno in seen:
            raise ValueError(f"duplicate document {docno} in one query's results")
        seen.add(docno)
    order = sorted(results, key=lambda r: (r[1], _bytes_desc_key(r[0])), reverse=True)
    return [d for d, _ in order[:MAX_DOCS]]


def query_measures(docs, judged):
    """(AP, P@10, nDCG@10) of one query: docs in trec_eval order, judged = {docno: rel}."""
    num_rel = sum(1 for r in judged.values() if r >= 1)
    rel_so_far = 0
    ap_sum = 0.0
    dcg = 0.0
    for i, d in enumerate(docs):
        rel = judged.get(d, 0)
        if rel >= 1:
            rel_so_far += 1
            ap_sum += rel_so_far / (i + 1)
        if i < CUTOFF and rel > 0:
            dcg += rel / math.log2(i + 2)
    ap = ap_sum / num_rel if num_rel else 0.0
    p10 = sum(1 for d in docs[:CUTOFF] if judged.get(d, 0) >= 1) / CUTOFF
    gains = sorted((r for r in judged.values() if r > 0), reverse=True)[:CUTOFF]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ndcg = dcg / idcg if idcg > 0 else dcg
    return ap, p10, ndcg


def evaluate(run, qrels):
    """Return ({'map','P_10','ndcg_cut_10'}: mean, per_query {qid: (ap, p10, ndcg)})."""
    per_query = {}
    for qid, judged in qrels.items():
        docs = ranked(run.get(qid, []))
        per_query[qid] = query_measures(docs, judged)
    n = len(qrels)
    if n == 0:
        raise ValueError("no queries in the qrels")
    means = {
        "map": sum(v[0] for v in per_query.values()) / n,
        "P_10": sum(v[1] for v in per_query.values()) / n,
        "ndcg_cut_10": sum(v[2] for v in per_query.values()) / n,
    }
    return means, per_query


def main(argv):
    args = argv[1:]
    per_q = False
    if args and args[0] == "--per-query":
        per_q = True
        args = args[1:]
    if len(args) != 2:
        sys.exit("usage: evaluate.py [--per-query] RUN QRELS")
    means, per_query = evaluate(read_run(args[0]), read_qrels(args[1]))
    if per_q:
        for qid, (ap, p10, nd) in per_query.items():
            print(f"{qid}\tmap {ap:.4f}\tP_10 {p10:.4f}\tndcg_cut_10 {nd:.4f}")
    print(f"num_q\t{len(per_query)}")
    for k in ("map", "P_10", "ndcg_cut_10"):
        print(f"{k}\t{means[k]:.4f}")


if __name__ == "__main__":
    main(sys.argv)
