"""Shared helpers for the corpus builders (corpora/kjv, corpora/zh, corpora/linux).

Layout of the data directory ($BITSIFT_DATA, default /work/data; never inside the git repo):
    DATA/NAME/docs/...        the documents, one UTF-8 file each, in a nested tree
    DATA/NAME/corpus.json     name, docs_dir, documents, bytes, max_file_bytes, builder version
    DATA/NAME/queries.txt     written by corpora/make-queries
Python 3 standard library only.
"""
import json
import os
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def data_root():
    root = os.path.abspath(os.environ.get("BITSIFT_DATA") or "/work/data")
    if root == REPO or root.startswith(REPO + os.sep):
        sys.exit(f"BITSIFT_DATA={root} is inside the git repository {REPO}; choose another place")
    os.makedirs(root, exist_ok=True)
    return root


def corpus_dir(name):
    return os.path.join(data_root(), name)


def docs_dir_of(name):
    """Document directory of a corpus name (sample = the repo's corpora/sample)."""
    if name == "sample":
        return os.path.join(REPO, "corpora", "sample")
    return os.path.join(corpus_dir(name), "docs")


_apt_updated = False


def ensure_debs(*packages):
    """Install Debian packages that are missing (apt-get update first, once)."""
    global _apt_updated
    missing = []
    for p in packages:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if "install ok installed" not in r.stdout:
            missing.append(p)
    if not missing:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print(f"installing Debian packages: {' '.join(missing)}", file=sys.stderr)
    if not _apt_updated:
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
        _apt_updated = True
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq"] + missing, check=True, env=env,
                   stdout=subprocess.DEVNULL)


def walk_docs(docs):
    """Relative paths of the regular files a directory scan sees (sorted), skipping names that
    start with '.' and symlinks, as bitsift index does."""
    out = []
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")
                       and not os.path.islink(os.path.join(dirpath, d))]
        for f in filenames:
            if f.startswith("."):
                continue
            p = os.path.join(dirpath, f)
            if os.path.islink(p) or not os.path.isfile(p):
                continue
            out.append(os.path.relpath(p, docs))
    out.sort()
    return out


def measure(docs):
    n = total = biggest = 0
    for rel in walk_docs(docs):
        s = os.path.getsize(os.path.join(docs, rel))
        n += 1
        total += s
        biggest = max(biggest, s)
    return n, total, biggest


def load_meta(name):
    p = os.path.join(corpus_dir(name), "corpus.json")
    if os.path.exists(p):
        with open(p) as f:
            return json.load(f)
    return None


def report(meta):
    print(f"corpus {meta['name']}: {meta['docs_dir']}")
    print(f"  documents: {meta['documents']}")
    print(f"  bytes:     {meta['bytes']} ({meta['bytes'] / 1e6:.1f} MB)")


def is_built(name, version):
    meta = load_meta(name)
    return bool(meta and meta.get("version") == version and os.path.isdir(meta["docs_dir"]))


class Builder:
    """Writes documents into DATA/NAME/docs.tmp, then swaps it in place of docs/ and writes
    corpus.json: an interrupted build leaves no half corpus behind."""

    def __init__(self, name, version, extra=None):
        self.name, self.version, self.extra = name, version, extra or {}
        self.dir = corpus_dir(name)
        self.final = os.path.join(self.dir, "docs")
        self.tmp = os.path.join(self.dir, "docs.tmp")
        if os.path.exists(self.tmp):
            shutil.rmtree(self.tmp)
        os.makedirs(self.tmp)
        self.count = 0
        self.bytes = 0
        self.biggest = 0
        self._made = set()

    def write(self, rel, text):
        data = text.encode("utf-8") if isinstance(text, str) else text
        path = os.path.join(self.tmp, rel)
        d = os.path.dirname(path)
        if d not in self._made:
            os.makedirs(d, exist_ok=True)
            self._made.add(d)
        with open(path, "wb") as f:
            f.write(data)
        self.count += 1
        self.bytes += len(data)
        self.biggest = max(self.biggest, len(data))

    def finish(self):
        meta_path = os.path.join(self.dir, "corpus.json")
        if os.path.exists(meta_path):
            os.remove(meta_path)
        if os.path.exists(self.final):
            old = self.final + ".old"
            if os.path.exists(old):
                shutil.rmtree(old)
            os.rename(self.final, old)
            shutil.rmtree(old)
        os.rename(self.tmp, self.final)
        meta = dict(name=self.name, docs_dir=self.final, documents=self.count, bytes=self.bytes,
                    max_file_bytes=self.biggest, version=self.version)
        meta.update(self.extra)
        with open(meta_path + ".tmp", "w") as f:
            json.dump(meta, f, indent=1)
        os.rename(meta_path + ".tmp", meta_path)
        report(meta)
        return meta


def main_wrapper(name, version, build, force):
    """Idempotent entry: reuse a finished corpus of the same builder version."""
    if not force and is_built(name, version):
        report(load_meta(name))
        return
    build()
