#!/usr/bin/env bash
# Faults of the `bitsift` program: kill -9 at many moments of a rebuild, a full disk / file-size
# limit, files and directories without permission, bad queries on the command line, --verbose
# naming every skip. Usage: cli_faults_test.sh BITSIFT
set -u
BITSIFT=$1
WORK=$(mktemp -d)
chmod 755 "$WORK"
MOUNTED=""
cleanup() {
  [ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null
  chmod -R u+rwx "$WORK" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
pass=0 fail=0

check() {  # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"; fi
}
status() { "$@" >/dev/null 2>&1; echo $?; }
note() { echo "NOTE: $*"; }

# A corpus of N files of generated words (awk: no other tool needed).
make_corpus() {  # make_corpus DIR FILES SEED
  mkdir -p "$1"
  awk -v dir="$1" -v n="$2" -v seed="$3" 'BEGIN {
    srand(seed);
    for (f = 0; f < n; f++) {
      path = sprintf("%s/d%02d/f%05d.txt", dir, f % 20, f);
      if (f < 20) system("mkdir -p " dir sprintf("/d%02d", f));
      line = "";
      words = 20 + int(rand() * 400);
      for (w = 0; w < words; w++) line = line sprintf("w%d ", int(rand() * rand() * 20000));
      print line "seed" seed > path;
      close(path);
    }
  }'
}

answers() {  # the answers of a few queries against index $1
  for q in w1 w17 "w2 w3" w19999 seed1 seed2; do
    # shellcheck disable=SC2086
    printf '%s=%s ' "$q" "$("$BITSIFT" query --index "$1" --count $q 2>&1)"
  done
}

# --- kill -9 at many moments of an update and of a rebuild over an existing index -------------
# The index is a directory; its state is its MANIFEST: after any kill it must be the old state
# (answers as before) or the new one (complete), never a mix.
make_corpus "$WORK/c" 4000 1
"$BITSIFT" index "$WORK/c" -q || { echo "FAIL initial index"; exit 1; }
old_answers=$(answers "$WORK/c/.bitsift")
old_sum=$(cksum < "$WORK/c/.bitsift/MANIFEST")
cp -a "$WORK/c/.bitsift" "$WORK/old.bitsift"
make_corpus "$WORK/c/more" 1500 2   # the update adds these
# Kill points spread over the first 3/4 of the time a full rebuild takes here (a loaded machine
# may build faster later than when timed), plus three while a file is being written.
t0=$(date +%s%N)
"$BITSIFT" index "$WORK/c" -q --threads 2 --index "$WORK/timing.idx" >/dev/null 2>&1
build_ns=$(($(date +%s%N) - t0))
rm -rf "$WORK/timing.idx"
delays=$(awk -v ns="$build_ns" 'BEGIN { for (i = 0; i < 12; i++) printf "%.3f ", ns * i / 16 / 1e9 }')
echo "a full rebuild takes $((build_ns / 1000000)) ms; kill points (s): $delays tmp tmp tmp"
kills=0 left_temporaries=0 round=0
for delay in $delays tmp tmp tmp; do
  round=$((round + 1))
  mode=""
  [ $((round % 2)) -eq 0 ] && mode="--rebuild"   # alternate updates and rebuilds
  "$BITSIFT" index "$WORK/c" -q --threads 2 $mode >/dev/null 2>&1 &
  pid=$!
  if [ "$delay" == tmp ]; then
    # The moment a file of the new state is being written: poll until one appears or the run
    # ends (bounded by time, not by a count of polls, which a loaded machine could outlast).
    deadline=$((SECONDS + 120))
    while [ $SECONDS -lt $deadline ]; do
      compgen -G "$WORK/c/.bitsift/*.tmp.*" >/dev/null && break
      kill -0 "$pid" 2>/dev/null || break
    done
  else
    sleep "$delay"
  fi
  kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
  wait "$pid" 2>/dev/null
  compgen -G "$WORK/c/.bitsift/*.tmp.*" >/dev/null && left_temporaries=$((left_temporaries + 1))
  check "index opens and checks after kill at $delay" 0 "$(status "$BITSIFT" check --index "$WORK/c/.bitsift")"
  if [ "$(cksum < "$WORK/c/.bitsift/MANIFEST")" == "$old_sum" ]; then
    check "old index answers as before after kill at $delay" "$old_answers" "$(answers "$WORK/c/.bitsift")"
  else
    # The run finished before the kill: the new state, complete. Put the old one back.
    check "new index complete after kill at $delay" 1 "$(grep -c 'seed2=1500' <<<"$(answers "$WORK/c/.bitsift")")"
    rm -rf "$WORK/c/.bitsift" && cp -a "$WORK/old.bitsift" "$WORK/c/.bitsift"
  fi
done
echo "kill -9: $kills runs killed, $left_temporaries left a temporary file"
check "most runs were killed mid-way" 1 "$([ "$kills" -ge 10 ] && echo 1)"
check "some kills left a temporary to clean" 1 "$([ "$left_temporaries" -ge 1 ] && echo 1)"
check "next update succeeds" 0 "$(status "$BITSIFT" index "$WORK/c" -q)"
check "no temporary left after the next update" 0 "$(ls -a "$WORK/c/.bitsift" | grep -c '\.tmp\.')"
check "only the segments the manifest names are left" \
  "$("$BITSIFT" stats --index "$WORK/c/.bitsift" | grep -c '^ *seg-[0-9]*\.bsg ')" \
  "$(ls "$WORK/c/.bitsift" | grep -c '^seg-.*\.bsg$')"
check "updated index is sound" 0 "$(status "$BITSIFT" check --index "$WORK/c/.bitsift")"
check "updated index answers the new tree" 1 "$(grep -c 'seed2=1500' <<<"$(answers "$WORK/c/.bitsift")")"

# --- a full disk / a file-size limit while writing the index --------------------------------
mkdir -p "$WORK/small"
make_corpus "$WORK/tiny" 30 3
"$BITSIFT" index "$WORK/tiny" -q --index "$WORK/fsize.idx"
tiny_answers=$(answers "$WORK/fsize.idx")
tiny_sum=$(cat "$WORK"/fsize.idx/* | cksum)
# RLIMIT_FSIZE: the write fails with EFBIG (SIGXFSZ is ignored by bitsift).
err=$( (ulimit -f 64; "$BITSIFT" index "$WORK/c" -q --index "$WORK/fsize.idx") 2>&1 >/dev/null); code=$?
check "file-size limit: exit 2" 2 "$code"
check "file-size limit: one clear line" 1 "$(grep -c 'bitsift: error: .*fsize.idx.*File too large' <<<"$err")"
check "file-size limit: old index untouched" "$tiny_sum" "$(cat "$WORK"/fsize.idx/* | cksum)"
check "file-size limit: old index answers" "$tiny_answers" "$(answers "$WORK/fsize.idx")"
check "file-size limit: no temporary left" 0 "$(ls -a "$WORK/fsize.idx" | grep -c 'tmp')"
# A really full file system, when this sandbox may mount a small tmpfs.
if mount -t tmpfs -o size=1m tmpfs "$WORK/small" 2>/dev/null; then
  MOUNTED="$WORK/small"
  "$BITSIFT" index "$WORK/tiny" -q --index "$WORK/small/idx"
  small_sum=$(cat "$WORK"/small/idx/* | cksum)
  dd if=/dev/zero of="$WORK/small/filler" bs=4k 2>/dev/null  # fill the rest
  err=$("$BITSIFT" index "$WORK/c" -q --index "$WORK/small/idx" 2>&1 >/dev/null); code=$?
  check "full disk: exit 2" 2 "$code"
  check "full disk: one clear line" 1 "$(grep -c 'bitsift: error: .*No space left on device' <<<"$err")"
  check "full disk: old index untouched" "$small_sum" "$(cat "$WORK"/small/idx/* | cksum)"
  check "full disk: old index sound" 0 "$(status "$BITSIFT" check --index "$WORK/small/idx")"
  check "full disk: no temporary left" 0 "$(ls -a "$WORK/small/idx" | grep -c 'tmp')"
else
  note "cannot mount a tmpfs here: the full-disk case is covered by the file-size limit only"
fi

# --- files and directories without permission ------------------------------------------------
mkdir -p "$WORK/perm/locked" "$WORK/perm/noexec" "$WORK/out"
echo "visible words" > "$WORK/perm/ok.txt"
echo "secret words" > "$WORK/perm/secret.txt"
echo "locked words" > "$WORK/perm/locked/inner.txt"
echo "noexec words" > "$WORK/perm/noexec/inner.txt"
chmod 000 "$WORK/perm/secret.txt" "$WORK/perm/locked"
chmod 644 "$WORK/perm/noexec"
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  # Root reads everything: run bitsift as nobody, for whom the permission bits count.
  if command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$BITSIFT" --version >/dev/null 2>&1; then
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
  elif command -v runuser >/dev/null && runuser -u nobody -- "$BITSIFT" --version >/dev/null 2>&1; then
    as_user=(runuser -u nobody --)
  else
    as_user=(none)
  fi
  chown nobody "$WORK/out" 2>/dev/null
fi
if [ "${as_user[0]:-}" == none ]; then
  note "running as root and cannot run bitsift as nobody: permission cases skipped"
else
  err=$("${as_user[@]}" "$BITSIFT" index "$WORK/perm" --index "$WORK/out/idx" --verbose 2>&1 >"$WORK/perm.out"); code=$?
  check "permissions: indexing completes" 0 "$code"
  check "permissions: three unreadable entries counted" 1 "$(grep -c 'unreadable 3' "$WORK/perm.out")"
  check "permissions: the file is named" 1 "$(grep -c 'skipped secret.txt (unreadable: Permission denied)' <<<"$err")"
  check "permissions: the directory is named" 1 "$(grep -c 'skipped locked (unreadable: Permission denied)' <<<"$err")"
  check "permissions: a file in an untraversable directory is named" 1 "$(grep -c 'skipped noexec/inner.txt (unreadable' <<<"$err")"
  check "permissions: the rest is searchable" "ok.txt" "$(cd "$WORK/perm" && "$BITSIFT" query --index "$WORK/out/idx" words)"
fi

# --- --verbose names every skip; the summary counts them by reason ---------------------------
mkdir -p "$WORK/odd/sub"
echo "fine words" > "$WORK/odd/fine.txt"
printf 'bin\0ary' > "$WORK/odd/blob.bin"
echo "hidden" > "$WORK/odd/.hidden"
mkfifo "$WORK/odd/fifo"
ln -s loop2 "$WORK/odd/loop1"; ln -s loop1 "$WORK/odd/loop2"
printf 'x%.0s' $(seq 1 2000) > "$WORK/odd/sub/big.txt"
out=$("$BITSIFT" index "$WORK/odd" --verbose --max-file-size 1000 2>"$WORK/odd.err"); code=$?
check "verbose: exit 0" 0 "$code"
check "verbose: summary by reason" "skipped: hidden 1, symlink 2, special 1, binary 1, too-large 1" "$(grep '^skipped:' <<<"$out")"
for name in .hidden loop1 loop2 fifo blob.bin sub/big.txt; do
  check "verbose names $name" 1 "$(grep -c "skipped $name (" "$WORK/odd.err")"
done

# --- bad queries on the command line ----------------------------------------------------------
IDX="$WORK/c/.bitsift"
check "empty query: exit 2" 2 "$(status "$BITSIFT" query --index "$IDX" '')"
check "empty query: message" 1 "$("$BITSIFT" query --index "$IDX" '' 2>&1 | grep -c 'no terms')"
check "punctuation: exit 2" 2 "$(status "$BITSIFT" query --index "$IDX" '!!!' '...' '—')"
check "control characters: exit 2" 2 "$(status "$BITSIFT" query --index "$IDX" "$(printf '\001\002\033\177')")"
check "control characters around a word" "$("$BITSIFT" query --index "$IDX" --count w1)" \
  "$("$BITSIFT" query --index "$IDX" --count "$(printf '\001w1\002')")"
check "encoded surrogate: exit 2" 2 "$(status "$BITSIFT" query --index "$IDX" "$(printf '\355\240\200')")"
check "script mix: no match, exit 1" 1 "$(status "$BITSIFT" query --index "$IDX" 'θάλασσα' '東京' 'привет' 'नमस्ते' 'ภาษาไทย')"
# Batch lines: 10,000 terms, 1 MB, NUL bytes, invalid UTF-8, surrogates, only punctuation.
{
  seq -f 'w%g' 1 10000 | tr '\n' ' '; echo
  head -c 1048576 /dev/zero | tr '\0' 'a'; echo
  printf 'w1\0w17\n'
  printf '\377\376 w17 \355\240\200\n'
  echo '!!! ... ;;'
  printf '%.0sw1 ' $(seq 1 200000); echo
} > "$WORK/bad-queries.txt"
out=$("$BITSIFT" query --index "$IDX" --count --queries "$WORK/bad-queries.txt" 2>"$WORK/bq.err"); code=$?
check "bad batch: exit 2 (one line has no terms)" 2 "$code"
check "bad batch: five lines answered" 5 "$(wc -l <<<"$out")"
check "bad batch: 10,000 terms" "$(printf '1\t0')" "$(sed -n 1p <<<"$out")"
check "bad batch: 1 MB term" "$(printf '2\t0')" "$(sed -n 2p <<<"$out")"
check "bad batch: the no-term line is named" 1 "$(grep -c 'query line 5: .*no terms' "$WORK/bq.err")"
check "bad batch: 200,000 repeats of one term" "$(printf '6\t%s' "$("$BITSIFT" query --index "$IDX" --count w1)")" "$(sed -n 5p <<<"$out")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
