#!/usr/bin/env python3
"""Hand-computed cases for evaluate.py (run: python3 -m unittest evaluate_test).

Every expected value below is worked out in the comment beside it from the
trec_eval definitions quoted in evaluate.py; log2(3) = 1.5849625007.
"""
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import evaluate  # noqa: E402

LOG2_3 = math.log2(3)


def write(tmp, name, lines):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path


class QueryMeasures(unittest.TestCase):
    def test_binary_three_relevant_two_found(self):
        # qrels: d1, d3, d5 relevant (gain 1); run: d1 d2 d3 d4.
        # AP = (1/1 + 2/3) / 3 = (5/3) / 3 = 5/9 = 0.5556
        # P@10 = 2 relevant in the first 10 / 10 = 0.2
        # DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5
        # IDCG = 1 + 1/log2(3) + 1/log2(4) = 1 + 0.6309 + 0.5 = 2.1309
        # nDCG@10 = 1.5 / 2.1309 = 0.7039
        ap, p10, ndcg = evaluate.query_measures(
            ["d1", "d2", "d3", "d4"], {"d1": 1, "d3": 1, "d5": 1})
        self.assertAlmostEqual(ap, 5 / 9)
        self.assertAlmostEqual(p10, 0.2)
        self.assertAlmostEqual(ndcg, 1.5 / (1.5 + 1 / LOG2_3))
        self.assertAlmostEqual(ndcg, 0.70392, places=5)

    def test_graded_gains(self):
        # qrels: a=3, b=1, c=2; run: b a x (x unjudged).
        # AP: b at rank 1 -> 1/1, a at rank 2 -> 2/2; (1 + 1) / 3 relevant = 0.6667
        # P@10 = 2/10 = 0.2
        # DCG = 1/log2(2) + 3/log2(3) = 1 + 1.8928 = 2.8928
        # IDCG = 3/1 + 2/log2(3) + 1/log2(4) = 3 + 1.2619 + 0.5 = 4.7619
        # nDCG@10 = 2.8928 / 4.7619 = 0.6075
        ap, p10, ndcg = evaluate.query_measures(["b", "a", "x"], {"a": 3, "b": 1, "c": 2})
        self.assertAlmostEqual(ap, 2 / 3)
        self.assertAlmostEqual(p10, 0.2)
        self.assertAlmostEqual(ndcg, (1 + 3 / LOG2_3) / (3 + 2 / LOG2_3 + 0.5))
        self.assertAlmostEqual(ndcg, 0.60749, places=5)

    def test_rank_two_is_discounted(self):
        # trec_eval divides rank r by log2(r + 1): rank 2 by log2(3), not by log2(2).
        # qrels: r=1 only; run: x r. DCG = 1/log2(3) = 0.6309, IDCG = 1 -> 0.6309
        # AP = (1/2) / 1 = 0.5
        ap, _, ndcg = evaluate.query_measures(["x", "r"], {"r": 1})
        self.assertAlmostEqual(ndcg, 1 / LOG2_3)
        self.assertAlmostEqual(ap, 0.5)

    def test_only_ten_count(self):
        # 11 documents, the only relevant one at rank 11:
        # P@10 = 0, nDCG@10 = 0, AP = (1/11) / 1 = 0.0909
        docs = [f"n{i}" for i in range(10)] + ["r"]
        ap, p10, ndcg = evaluate.query_measures(docs, {"r": 1})
        self.assertEqual(p10, 0.0)
        self.assertEqual(ndcg, 0.0)
        self.assertAlmostEqual(ap, 1 / 11)

    def test_ideal_uses_only_top_ten_gains(self):
        # 12 relevant documents of gain 1, run retrieves all 12 first:
        # DCG@10 = IDCG@10 (both the first ten) -> 1.0; P@10 = 10/10 = 1.0; AP = 1.0
        rel = {f"r{i:02d}": 1 for i in range(12)}
        ap, p10, ndcg = evaluate.query_measures(sorted(rel), rel)
        self.assertAlmostEqual(ndcg, 1.0)
        self.assertAlmostEqual(p10, 1.0)
        self.assertAlmostEqual(ap, 1.0)

    def test_negative_and_zero_judgments(self):
        # qrels: a=-1, b=0, c=1; run: a b c.
        # only c is relevant (num_rel 1): AP = (1/3) / 1 = 0.3333; P@10 = 0.1
        # DCG = 1/log2(4) = 0.5; IDCG = 1 (the only positive gain) -> nDCG 0.5
        ap, p10, ndcg = evaluate.query_measures(["a", "b", "c"], {"a": -1, "b": 0, "c": 1})
        self.assertAlmostEqual(ap, 1 / 3)
        self.assertAlmostEqual(p10, 0.1)
        self.assertAlmostEqual(ndcg, 0.5)

    def test_no_relevant_documents(self):
        # num_rel 0: AP is 0 (trec_eval leaves the value at 0), nDCG is DCG = 0.
        self.assertEqual(evaluate.query_measures(["a"], {"a": 0}), (0.0, 0.0, 0.0))


class Ordering(unittest.TestCase):
    def test_ties_broken_by_docno_descending_strcmp(self):
        # Equal sims: strcmp order descending is "9" > "10" > "1" ('9' > '1';
        # "10" is longer than "1"), so the ranking is 9, 10, 1 whatever the file says.
        got = evaluate.ranked([("1", 2.0), ("10", 2.0), ("9", 2.0), ("7", 3.0)])
        self.assertEqual(got, ["7", "9", "10", "1"])

    def test_sim_not_rank_orders(self):
        got = evaluate.ranked([("a", 1.0), ("b", 5.0), ("c", -2.0)])
        self.assertEqual(got, ["b", "a", "c"])

    def test_cut_at_1000(self):
        # The relevant document is the 1001st by sim: it is cut, AP = 0.
        # Had it been 1000th: AP = 1/1000.
        res = [(f"n{i:04d}", 2000.0 - i) for i in range(1000)]
        self.assertEqual(evaluate.query_measures(evaluate.ranked(res + [("r", 0.5)]), {"r": 1})[0], 0.0)
        res[-1] = ("r", res[-1][1])
        self.assertAlmostEqual(evaluate.query_measures(evaluate.ranked(res), {"r": 1})[0], 1 / 1000)

    def test_duplicate_document_is_an_error(self):
        with self.assertRaises(ValueError):
            evaluate.ranked([("a", 1.0), ("a", 0.5)])


class Files(unittest.TestCase):
    def test_mean_over_every_qrels_query(self):
        # Query 1: qrels 1/3/5 relevant, run 1 2 3 4 -> AP 5/9, P@10 0.2, nDCG 0.70392
        #   (the case of test_binary_three_relevant_two_found, rank column written backwards).
        # Query 2: only "1" relevant with gain 2; run "1", "10", "9" all sim 7 ->
        #   order 9, 10, 1: AP = (1/3)/1 = 0.3333, P@10 = 0.1, nDCG = (2/log2 4)/(2/1) = 0.5
        # Query 3: in the qrels, not in the run -> 0, 0, 0 (counted: trec_eval -c)
        # Query 99: in the run, not in the qrels -> ignored.
        # MAP = (5/9 + 1/3 + 0) / 3 = (8/9) / 3 = 0.2963
        # P@10 = (0.2 + 0.1 + 0) / 3 = 0.1
        # nDCG@10 = (0.70392 + 0.5 + 0) / 3 = 0.40131
        with tempfile.TemporaryDirectory() as tmp:
            run = write(tmp, "run", [
                "1 Q0 1 4 4.0 t", "1 Q0 2 3 3.0 t", "1 Q0 3 2 2.0 t", "1 Q0 4 1 1.0 t",
                "2 Q0 1 1 7 t", "2 Q0 10 2 7 t", "2 Q0 9 3 7 t",
                "99 Q0 1 1 1.0 t",
            ])
            qrels = write(tmp, "qrels", [
                "1 0 1 1", "1 0 3 1", "1 0 5 1",
                "2 0 1 2", "2 0 10 0",
                "3 0 7 1",
            ])
            means, per_query = evaluate.evaluate(evaluate.read_run(run), evaluate.read_qrels(qrels))
        self.assertEqual(sorted(per_query), ["1", "2", "3"])
        self.assertEqual(per_query["3"], (0.0, 0.0, 0.0))
        self.assertAlmostEqual(per_query["2"][0], 1 / 3)
        self.assertAlmostEqual(per_query["2"][2], 0.5)
        self.assertAlmostEqual(means["map"], 8 / 27)
        self.assertAlmostEqual(means["P_10"], 0.1)
        self.assertAlmostEqual(means["ndcg_cut_10"], (1.5 / (1.5 + 1 / LOG2_3) + 0.5) / 3)
        self.assertAlmostEqual(means["ndcg_cut_10"], 0.40131, places=5)

    def test_duplicate_judgment_is_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            qrels = write(tmp, "qrels", ["1 0 a 1", "1 0 a 2"])
            with self.assertRaises(ValueError):
                evaluate.read_qrels(qrels)


if __name__ == "__main__":
    unittest.main()
