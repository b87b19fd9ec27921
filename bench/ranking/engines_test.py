#!/usr/bin/env python3
"""Tests of the bitsift side of engines.py against a stand-in binary (python3 -m unittest engines_test).

The stand-in speaks the interface the harness is written against:
`bitsift query --help` lists --any; `bitsift query --queries FILE --any --json
--limit N` prints, per match, the query's line number, a tab and a JSON object
with "path" and "score".
"""
import os
import stat
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines  # noqa: E402

FAKE = textwrap.dedent("""\
    #!{python}
    import json, os, sys
    args = sys.argv[1:]
    if args[:2] == ["query", "--help"]:
        print("usage: bitsift query {help}")
        sys.exit(0)
    if args[0] == "index":
        os.makedirs(args[args.index("--index") + 1], exist_ok=True)
        with open(os.path.join(args[args.index("--index") + 1], "seg"), "w") as f:
            f.write("x" * 100)
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(" ".join(args) + "\\n")
        sys.exit(0)
    with open(os.environ["FAKE_LOG"], "a") as f:
        f.write(" ".join(args) + "\\n")
    qfile = args[args.index("--queries") + 1]
    for n, line in enumerate(open(qfile), 1):
        words = line.split()
        # "score" = number of query words that are document names: docs "a".."c"
        for i, doc in enumerate(["c", "a", "b"]):
            if doc in words:
                print(f"{{n}}\\t" + json.dumps({{"path": f"docs/{{doc}}.txt", "score": 3.0 - i}}))
    sys.exit(0)
    """)


def make_fake(tmp, help_text):
    path = os.path.join(tmp, "bitsift")
    with open(path, "w") as f:
        f.write(FAKE.format(python=sys.executable, help=help_text))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


class QueryWords(unittest.TestCase):
    def test_split_and_lower(self):
        self.assertEqual(engines.query_words("Lift-drag ratios at Mach 5 ."),
                         ["lift", "drag", "ratios", "at", "mach", "5"])
        self.assertEqual(engines.query_words("what's (/dead air/) x_y"),
                         ["what", "s", "dead", "air", "x", "y"])


class ParseBitsift(unittest.TestCase):
    QUERIES = [("7", "q one"), ("9", "q two")]

    def test_tab_prefixed_lines(self):
        out = '1\t{"path": "d/12.txt", "score": 2.5}\n2\t{"path": "/x/d/3.txt", "score": 1}\n'
        self.assertEqual(engines.parse_bitsift(out, self.QUERIES),
                         [("7", [("12", 2.5)]), ("9", [("3", 1.0)])])

    def test_line_field_in_json(self):
        out = '{"line": 2, "path": "d/5.txt", "score": 0.5}\n'
        self.assertEqual(engines.parse_bitsift(out, self.QUERIES), [("7", []), ("9", [("5", 0.5)])])

    def test_missing_score_is_an_error(self):
        with self.assertRaises(ValueError):
            engines.parse_bitsift('1\t{"path": "d/5.txt"}\n', self.QUERIES)


class StandIn(unittest.TestCase):
    def test_absent_any_is_detected(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIsNone(engines.bitsift_flags(make_fake(tmp, "[--json] [--limit N]")))
            self.assertIsNone(engines.bitsift_flags(os.path.join(tmp, "no-such-binary")))

    def test_flags_follow_help(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertEqual(engines.bitsift_flags(make_fake(tmp, "[--any] [--json]")),
                             ["--any", "--json", "--limit", "1000"])
            self.assertEqual(engines.bitsift_flags(make_fake(tmp, "[--rank] [--any]")),
                             ["--rank", "--any", "--json", "--limit", "1000"])

    def test_run_end_to_end(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["FAKE_LOG"] = os.path.join(tmp, "log")
            fake = make_fake(tmp, "[--any]")
            docs = os.path.join(tmp, "docs")
            os.makedirs(docs)
            work = os.path.join(tmp, "work")
            os.makedirs(work)
            queries = [("1", "A b"), ("2", "nothing here"), ("3", "C")]
            results, info = engines.run_bitsift(docs, queries, work, fake,
                                                engines.bitsift_flags(fake))
            self.assertEqual(results, [("1", [("a", 2.0), ("b", 1.0)]), ("2", []),
                                       ("3", [("c", 3.0)])])
            self.assertEqual(info["index_bytes"], 100)
            with open(os.path.join(work, "bitsift.queries")) as f:
                self.assertEqual(f.read(), "a b\nnothing here\nc\n")
            with open(os.environ["FAKE_LOG"]) as f:
                log = f.read().splitlines()
            self.assertTrue(log[0].startswith("index " + docs + " --index "))
            self.assertIn("--queries", log[1])
            self.assertTrue(log[1].endswith("--any --json --limit 1000"))


if __name__ == "__main__":
    unittest.main()
