#!/usr/bin/env bash
# End-to-end: bitsift-mpi under mpirun with 1, 2, 3 and 4 ranks against one index of the same
# tree: every query form (words, phrases, OR, exclusions, prefixes, --lines, --count, --json,
# --rank and --any with --limit, --queries, a query in a subfolder) prints exactly what
# `bitsift query` prints on a single index, before and after an update that adds, changes,
# deletes and renames files (a rename moves a file between shards); `bitsift query` reads the
# sharded index without MPI; a slow rank changes nothing; a missing or damaged shard, or a rank
# that dies (SIGSEGV, SIGKILL), ends the run with exit 2 and a message naming the shard.
# Usage: mpi_test.sh BITSIFT BITSIFT_MPI MPIEXEC
source "$(dirname "$0")/lib.sh" "$1"
BITSIFT_MPI=$(realpath "$2")
MPIEXEC=$3
# Local ranks on a small machine (oversubscribed: ranks yield when idle, or 4 spinning ranks
# starve each other on 2 cores); as root Open MPI wants to be told; -q: no notice from mpirun
# when the run exits 1 (no match).
mpi() {
  local np=$1
  shift
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1 \
    "$MPIEXEC" -q --oversubscribe -np "$np" "$BITSIFT_MPI" "$@"
}

# A tree of 300 files from a small vocabulary (deterministic), in nested folders.
mkdir -p "$WORK/tree"
python3 - "$WORK/tree" <<'EOF'
import os, random, sys
root = sys.argv[1]
random.seed(7)
words = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda bloom filter "
         "signature shard rank merge query index license licence licensed free software "
         "copyright gpl bsd mit apache").split()
for i in range(300):
    d = os.path.join(root, "d%d" % (i % 7), "s%d" % (i % 3))
    os.makedirs(d, exist_ok=True)
    lines = []
    for _ in range(random.randint(1, 12)):
        lines.append(" ".join(random.choice(words) for _ in range(random.randint(2, 14))))
    if i % 10 == 0:
        lines.append("free software is the point")
    with open(os.path.join(d, "f%03d.txt" % i), "w") as f:
        f.write("\n".join(lines) + "\n")
EOF
cat > "$WORK/queries" <<'EOF'
bloom filter
"free software"
gpl OR bsd
copyright -gpl
licen*
(alpha OR beta) -(gamma delta)
shard rank merge
zzzabsentzzz
theta
EOF
cd "$WORK" || exit 2

# compare NAME NP ARGS...: bitsift-mpi on sharded/ with NP ranks, and bitsift on sharded/ alone,
# each against bitsift on one/ (output and exit status).
compare() {
  local name=$1 np=$2
  shift 2
  local want got plain
  want=$("$BITSIFT" query --index one "$@" 2>&1; echo "exit $?")
  got=$(mpi "$np" query --index sharded "$@" 2>&1; echo "exit $?")
  check "$name ($np ranks)" "$want" "$got"
  if [ "$np" = 2 ]; then
    plain=$("$BITSIFT" query --index sharded "$@" 2>&1; echo "exit $?")
    check "$name (bitsift on the sharded index)" "$want" "$plain"
  fi
}

all_forms() {
  local np=$1 when=$2
  compare "$when: --queries" "$np" --queries queries
  compare "$when: --queries --json" "$np" --queries queries --json
  compare "$when: --queries --count" "$np" --queries queries --count
  compare "$when: --queries --lines -C1" "$np" --queries queries --lines -C1
  compare "$when: --queries --rank --limit 7" "$np" --queries queries --rank --limit 7
  compare "$when: --queries --any --limit 5 --json" "$np" --queries queries --any --limit 5 --json
  compare "$when: --queries --rank --lines" "$np" --queries queries --rank --lines --limit 4
  compare "$when: --limit 3 in path order" "$np" --limit 3 alpha beta
  compare "$when: --words --any, whole ranking" "$np" --words --any 'what of the bloom in shard'
  compare "$when: --in a folder" "$np" --in tree/d3 --count alpha
  compare "$when: no match" "$np" zzzabsentzzz
}

for np in 1 2 3 4; do
  rm -rf one sharded tree.orig
  cp -r tree tree.orig
  "$BITSIFT" index tree --index one -q || { echo "index failed"; exit 2; }
  check "build with $np ranks" "0" "$(status mpi "$np" index tree --index sharded -q)"
  check "a shard map of $np shards" "count $np" "$(grep '^count' sharded/SHARDS)"
  check "$np shard directories" "$np" "$(ls -d sharded/shard-* | wc -l)"
  all_forms "$np" "built"

  # An update: 5 added, 5 changed, 5 deleted, 10 renamed (to other names, so other shards).
  for i in 1 2 3 4 5; do echo "new file $i bloom filter alpha" > "tree/d$i/new$i.txt"; done
  for i in 011 022 033 044 055; do echo "changed gpl text" >> tree/d*/s*/f$i.txt; done
  rm -f tree/d*/s*/f10[0-4].txt
  for i in 200 201 202 203 204 205 206 207 208 209; do
    f=$(ls tree/d*/s*/f$i.txt)
    mv "$f" "$(dirname "$f")/renamed-$i.txt"
  done
  "$BITSIFT" index tree --index one -q
  out=$(mpi "$np" index tree --index sharded)
  has "update with $np ranks: 5 added + 10 renamed in" "15 added" "$out"
  has "update with $np ranks: 5 deleted + 10 renamed out" "15 removed" "$out"
  all_forms "$np" "updated"
  check "bitsift status on the sharded index after the update" \
    "$("$BITSIFT" status --index one | tail -n +2)" "$("$BITSIFT" status --index sharded | tail -n +2)"
  rm -rf tree
  mv tree.orig tree
done

# A query from a subfolder answers for it, as `bitsift query` does there.
rm -rf one sharded
"$BITSIFT" index tree --index one -q
mpi 3 index tree --index sharded -q
want=$(cd tree/d2 && "$BITSIFT" query --index ../../one alpha)
got=$(cd tree/d2 && mpi 2 query --index ../../sharded alpha)
check "a subfolder's answer, relative paths" "$want" "$got"

# An update writes only to the shards whose files changed.
before=$(md5sum sharded/shard-*/MANIFEST)
mpi 3 index tree --index sharded -q
check "a no-op update changes no shard" "$before" "$(md5sum sharded/shard-*/MANIFEST)"
echo "one more bloom" > tree/d1/one-more.txt
mpi 3 index tree --index sharded -q
check "an update with one new file changes one shard" "1" \
  "$(diff <(echo "$before") <(md5sum sharded/shard-*/MANIFEST) | grep -c '^>')"
rm tree/d1/one-more.txt
mpi 3 index tree --index sharded -q

# A slow rank: the same answer.
want=$("$BITSIFT" query --index one --queries queries --rank --limit 5)
got=$(BITSIFT_MPI_SLOW_RANK=1 mpi 3 query --index sharded --queries queries --rank --limit 5)
check "a slow rank changes nothing" "$want" "$got"

# Faults: exit 2 and the shard named, never a partial answer.
cp -r sharded broken
rm -rf broken/shard-001
out=$(mpi 3 query --index broken alpha 2>&1)
code=$?
check "a missing shard: exit 2" "2" "$code"
has "a missing shard is named" "shard-001" "$out"
check "a missing shard: no answer printed" "" "$(mpi 3 query --index broken alpha 2>/dev/null)"
check "a missing shard, bitsift alone: exit 2" "2" "$(status "$BITSIFT" query --index broken alpha)"
rm -rf broken
cp -r sharded broken
seg=$(ls broken/shard-002/seg-*.bsg | head -1)
printf 'garbage' | dd of="$seg" bs=1 seek=100 conv=notrunc 2>/dev/null
out=$(mpi 3 query --index broken --count alpha 2>&1)
code=$?
check "a damaged shard: exit 2" "2" "$code"
has "a damaged shard is named" "shard-002" "$out"
rm -rf broken

# A rank that dies (a crash, `kill`, even `kill -9`): exit 2, its shards named, and only whole
# answers printed (each query's answer waits for every rank). Under mpirun a rank's MPI process
# is the child of the process mpirun started, which reports its death.
for _ in $(seq 40); do echo "alpha"; done > many
one=$("$BITSIFT" query --index one alpha | wc -l)
# The MPI process of rank 1 of the run answering `many`: the one whose parent is rank 1 too.
is_rank1() { tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1; }
rank_process() {
  local p
  for p in $(pgrep -f "bitsift-mpi query --index sharded --queries many"); do
    if is_rank1 "$p" && is_rank1 "$(ps -o ppid= -p "$p" | tr -d ' ')"; then
      echo "$p"
      return
    fi
  done
}
for signal in SEGV KILL; do
  BITSIFT_MPI_SLOW_RANK=1 mpi 3 query --index sharded --queries many > died.out 2> died.err &
  job=$!
  victim=""
  for _ in $(seq 200); do
    victim=$(rank_process)
    [ -n "$victim" ] && break
    sleep 0.05
  done
  sleep 1  # a few queries answered, the rank waits in the next one
  kill -"$signal" "$victim"
  wait "$job"
  code=$?
  word=crashed
  [ "$signal" = KILL ] && word="was killed"
  check "a rank killed by SIG$signal: exit 2" "2" "$code"
  has "a rank killed by SIG$signal names its shards" "rank 1 (shards sharded/shard-001) $word" \
    "$(cat died.err)"
  check "a rank killed by SIG$signal: whole answers only" "0" "$(($(wc -l < died.out) % one))"
done
check "no rank process is left" "" "$(pgrep -f 'bitsift-mpi query --index sharded --queries many')"
finish
