"""Brute-force oracle for bench/run, exact by construction with bitsift's token contract.

Every document is tokenized once with `bitsift tokenize --set --file PATH` (the contract's token
set, NFKC_Casefold + ICU words + CJK bigrams, of the text indexing reads: decompressed, decoded
to UTF-8, a man page's or HTML file's text); each query line once with
`bitsift tokenize --set TERMS...`. Where `tokenize_files` was built beside bitsift (bench/,
the same public Tokenize in one process for many files), documents go through it instead,
after it agreed with `bitsift tokenize` on the first documents: a process per document costs
~8 ms of start-up, 2.6 hours for linux-paras' 1.2M paragraphs.
A document matches when its token set contains every query token. No part of bitsift's index
or query code is involved, only its document reader and tokenizer.

The per-document token sets are cached (gzip TSV: PATH<TAB>TOKEN<SPACE>TOKEN...) under
DATA/NAME/, keyed by the document list (paths, sizes, mtimes) and by the tokenizer's output on a
probe text, so rebuilding bitsift without touching the tokenizer keeps the cache.
"""
import array
import concurrent.futures
import gzip
import hashlib
import os
import subprocess
import sys
import time

PROBE = ("Kennedy's spin_lock() 3.14 U.S.A. e-mail Straße ﬁle ＡＢＣ Ⅻ naïve 布隆过滤器 東京タワー "
         "ひらがな 한국어 Ελληνικά Поиск x86_64 0x1F 1,000 can't")


def _tokens(bitsift, args):
    r = subprocess.run([bitsift, "tokenize", "--set"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode not in (0, 1):  # 1 = no tokens
        raise RuntimeError(f"bitsift tokenize {args[:2]} failed: "
                           f"{r.stderr.decode(errors='replace').strip()}")
    return [t for t in r.stdout.decode("utf-8").split("\n") if t]


def _batch_tool(bitsift):
    tool = os.path.join(os.path.dirname(os.path.abspath(bitsift)), "tokenize_files")
    return tool if os.access(tool, os.X_OK) else None


def _tokens_batch(tool, docs_dir, part):
    """[(rel, tokens)] for the documents `part`, from one tokenize_files process."""
    r = subprocess.run([tool, docs_dir], input=("\n".join(part) + "\n").encode("utf-8"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError(f"{tool} failed: {r.stderr.decode(errors='replace').strip()}")
    lines = r.stdout.decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for rel, line in zip(part, lines):
        got, _, toks = line.partition("\t")
        if got != rel:
            raise RuntimeError(f"{tool}: expected {rel!r}, got {got!r}")
        out.append((rel, [t for t in toks.split(" ") if t]))
    if len(out) != len(part):
        raise RuntimeError(f"{tool}: {len(out)} lines for {len(part)} documents")
    return out


def tokenizer_key(bitsift):
    return hashlib.sha1("\n".join(_tokens(bitsift, [PROBE])).encode()).hexdigest()[:12]


def doclist_key(docs_dir, docs):
    h = hashlib.sha1()
    for rel in docs:
        st = os.stat(os.path.join(docs_dir, rel))
        h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:12]


def token_cache(bitsift, docs_dir, docs, cache_dir, log=print, tool=None):
    """Path of the token-set cache for these documents, building it if needed. `tool`: a
    tokenize_files binary (default: the one beside bitsift, if any)."""
    os.makedirs(cache_dir, exist_ok=True)
    # ("text": token sets of the documents' text as indexing reads it, not of their raw bytes)
    key = f"{doclist_key(docs_dir, docs)}-{tokenizer_key(bitsift)}-text"
    path = os.path.join(cache_dir, f"tokens-{key}.tsv.gz")
    if os.path.exists(path):
        return path
    for old in os.listdir(cache_dir):  # stale caches of this corpus
        if old.startswith("tokens-") and old.endswith(".tsv.gz"):
            os.remove(os.path.join(cache_dir, old))
    t0 = time.time()
    tool = tool or _batch_tool(bitsift)
    log(f"  oracle: tokenizing with {tool or 'a bitsift process per document'}")
    if tool is not None:
        sample = docs[:16]
        if _tokens_batch(tool, docs_dir, sample) != [
                (r, _tokens(bitsift, ["--file", os.path.join(docs_dir, r)])) for r in sample]:
            raise RuntimeError(f"{tool} and `bitsift tokenize --set` disagree")
    workers = (os.cpu_count() or 2) if tool else 2 * (os.cpu_count() or 2)
    tmp = path + ".tmp"
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=3) as out, \
            concurrent.futures.ThreadPoolExecutor(max_workers=workers) as ex:
        step = 4096 if tool is None else 16384
        for s in range(0, len(docs), step):
            part = docs[s:s + step]
            if tool is not None:  # a process per worker's slice of the step
                n = (len(part) + workers - 1) // workers
                slices = [part[i:i + n] for i in range(0, len(part), n)]
                pairs = [p for got in ex.map(lambda sl: _tokens_batch(tool, docs_dir, sl), slices)
                         for p in got]
            else:  # process start-up dominates: overlap it
                pairs = zip(part, ex.map(
                    lambda r: _tokens(bitsift, ["--file", os.path.join(docs_dir, r)]), part))
            for rel, toks in pairs:
                out.write(rel + "\t" + " ".join(toks) + "\n")
            done = s + len(part)
            if len(docs) > 20000 and (done // step) % (25 if tool is None else 6) == 0:
                el = time.time() - t0
                log(f"  oracle: tokenized {done}/{len(docs)} documents, {el:.0f} s, "
                    f"about {el / done * (len(docs) - done):.0f} s left")
    os.replace(tmp, path)
    log(f"  oracle: tokenized {len(docs)} documents in {time.time() - t0:.1f} s")
    return path


def query_tokens(bitsift, lines):
    """Token set of each query line (None for a line without tokens)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 2)) as ex:
        return [set(t) or None for t in ex.map(
            lambda l: _tokens(bitsift, l.split()) if l.split() else [], lines)]


def expected(cache_path, doc_index, qtokens):
    """For each query, the sorted array of matching document ids (ids from doc_index, a dict
    path -> id). Only postings of tokens that occur in some query are kept in memory."""
    wanted = set()
    for q in qtokens:
        if q:
            wanted |= q
    postings = {t: array.array("I") for t in wanted}
    with gzip.open(cache_path, "rt", encoding="utf-8") as f:
        for line in f:
            rel, _, toks = line.rstrip("\n").partition("\t")
            d = doc_index.get(rel)
            if d is None:
                continue
            for t in toks.split(" "):
                p = postings.get(t)
                if p is not None:
                    p.append(d)
    out = []
    for q in qtokens:
        if not q:
            out.append(None)
            continue
        lists = sorted((postings[t] for t in q), key=len)
        if not lists[0]:
            out.append(array.array("I"))
            continue
        s = set(lists[0])
        for p in lists[1:]:
            s.intersection_update(p)
            if not s:
                break
        out.append(array.array("I", sorted(s)))
    return out


if __name__ == "__main__":
    sys.exit("oracle.py is a module used by bench/harness.py")
