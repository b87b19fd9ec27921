#!/usr/bin/env bash
# Ranking quality of bitsift and its peers on one prepared collection.
#
# usage: bench/ranking/run.sh COLLECTION_DIR [BITSIFT]
#
# COLLECTION_DIR is the OUT_DIR of prepare.py (docs/, queries.tsv, qrels.txt);
# BITSIFT defaults to /work/main/build/bitsift. Indexes and runs go to
# $RANKING_WORK (default: a new temporary directory, kept and named on stderr).
# Needs python3 with the xapian module (Debian: apt-get install -y python3-xapian)
# and sqlite3 with FTS5 (Debian's python3). Prints one Markdown table:
# engine | MAP | P@10 | nDCG@10 | index bytes | queries/s.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 COLLECTION_DIR [BITSIFT]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
collection=$1
bitsift=${2:-/work/main/build/bitsift}

# Debian's python3-xapian installs for /usr/bin/python3; another python3 on PATH may lack it.
python=${PYTHON:-}
if [[ -z $python ]]; then
    for p in /usr/bin/python3 python3; do
        if "$p" -c 'import xapian, sqlite3' 2>/dev/null; then python=$p; break; fi
    done
fi
if [[ -z $python ]]; then
    echo "no python3 with the xapian module: apt-get install -y python3-xapian" >&2
    exit 2
fi
"$python" - <<'PY'
import sqlite3, sys
try:
    sqlite3.connect(":memory:").execute("CREATE VIRTUAL TABLE t USING fts5(b)")
except sqlite3.OperationalError as e:
    sys.exit("sqlite3 without FTS5: %s" % e)
PY

for f in queries.tsv qrels.txt docs; do
    if [[ ! -e $collection/$f ]]; then
        echo "$collection/$f missing: run bench/ranking/prepare.py first" >&2
        exit 2
    fi
done

work=${RANKING_WORK:-$(mktemp -d /tmp/ranking.XXXXXX)}
echo "work directory: $work" >&2
exec "$python" "$here/engines.py" "$collection" "$work" "$bitsift"
