#!/usr/bin/env python3
"""bench/phrase_queries.py DOCS_DIR LISTFILE OUT [--seed N] [--n N]

Writes a query file in bitsift's query language that every peer reads the same way: N phrase
queries (2 or 3 words that stand next to each other, separated by one space, in a sampled
line of a sampled document; ASCII letters only, so every engine's tokenizer agrees on them),
N reversed phrases (the same words in the opposite order: the words co-occur, the phrase
mostly does not), and N OR queries ("a OR b" of two words sampled from different documents).
Each line is tagged in OUT.kinds (phrase, reversed, or) in the same order.

With --cjk the phrases are 3 or 4 consecutive Han characters of a sampled line (what FTS5's
trigram tokenizer and Xapian's CJK n-grams can answer: at least 3 characters), and the OR
queries join two runs of 3 Han characters from different lines.
"""
import argparse
import random
import re

WORD = re.compile(r"[A-Za-z]{3,}")
HAN = re.compile(r"[\u4e00-\u9fff]{3,}")


def cjk_phrase(rng, line, words):
    """3 or 4 consecutive Han characters of line (None if it has no run of 3), and a run of 3
    added to words."""
    runs = HAN.findall(line)
    if not runs:
        return None
    run = rng.choice(runs)
    words.append(run[:3])
    n = min(len(run), rng.choice((3, 4)))
    i = rng.randrange(len(run) - n + 1)
    return list(run[i:i + n])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("docs")
    ap.add_argument("listfile")
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--cjk", action="store_true")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with open(a.listfile, encoding="utf-8") as f:
        paths = [l.rstrip("\n") for l in f if l.strip()]
    phrases, words = [], []
    while len(phrases) < a.n:
        p = rng.choice(paths)
        try:
            with open(f"{a.docs}/{p}", encoding="utf-8") as f:
                lines = f.read(1 << 20).split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        line = rng.choice(lines)
        if a.cjk:
            ph = cjk_phrase(rng, line, words)
            if ph is not None:
                phrases.append(ph)
            continue
        toks = line.split(" ")
        run = [t for t in toks if WORD.fullmatch(t)]
        words.extend(w.lower() for w in run[:3])
        n = rng.choice((2, 3))
        starts = [i for i in range(len(toks) - n + 1)
                  if all(WORD.fullmatch(t) for t in toks[i:i + n])]
        if not starts:
            continue
        i = rng.choice(starts)
        phrases.append([t.lower() for t in toks[i:i + n]])
    out, kinds = [], []
    sep = "" if a.cjk else " "
    for ph in phrases:
        out.append('"' + sep.join(ph) + '"')
        kinds.append("phrase")
    for ph in phrases:
        out.append('"' + sep.join(reversed(ph)) + '"')
        kinds.append("reversed")
    for _ in range(a.n):
        out.append(f"{rng.choice(words)} OR {rng.choice(words)}")
        kinds.append("or")
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("".join(q + "\n" for q in out))
    with open(a.out + ".kinds", "w") as f:
        f.write("".join(k + "\n" for k in kinds))


if __name__ == "__main__":
    main()
