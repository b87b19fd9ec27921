#!/usr/bin/env bash
# End-to-end: the real `bitsift` binary on corpora/sample. Usage: cli_test.sh BITSIFT SAMPLE_DIR
source "$(dirname "$0")/lib.sh" "$1"
SAMPLE=$2

cp -r "$SAMPLE" "$WORK/sample"
cd "$WORK/sample" || exit 2

# Indexing: default location, summary, skips.
out=$("$BITSIFT" index . 2>&1); code=$?
check "index exit" 0 "$code"
check "index directory exists" yes "$([ -d .bitsift ] && [ -f .bitsift/MANIFEST ] && echo yes)"
check "summary counts binary skip" 1 "$(grep -c 'binary 1' <<<"$out")"
check "summary counts hidden skip" 1 "$(grep -c 'hidden [0-9]' <<<"$out")"

# Queries from the index found in a parent directory (--all: the whole tree, not only en/;
# paths are printed from the current directory).
check "bloom filter" "$(printf '../de/uebersetzung.txt\n../docs/overview.md\nbloom_filters.txt\nsearch_engines.txt\nsignature_files.txt')" \
  "$(cd en && "$BITSIFT" query --all bloom filter)"
check "exit 0 on match" 0 "$(status "$BITSIFT" query bloom)"
check "exit 1 on no match" 1 "$(status "$BITSIFT" query zzzunknownzzz)"
check "hidden file not indexed" 1 "$(status "$BITSIFT" query hiddenword)"
check "Straße = STRASSE" "$("$BITSIFT" query STRASSE)" "$("$BITSIFT" query straße)"
check "Chinese word" "$(printf 'zh/bulong_guolvqi.txt\nzh/shuju_jiegou.txt\nzh/sousuo_yinqing.txt')" "$("$BITSIFT" query 布隆过滤器)"
check "count" 5 "$("$BITSIFT" query --count bloom filter)"
check "limit" 2 "$("$BITSIFT" query --limit 2 bloom filter | wc -l)"
check "json lines" 5 "$("$BITSIFT" query --json bloom filter | grep -c '^{"path":"')"
stats=$("$BITSIFT" query --stats bloom 2>&1 >/dev/null)
check "stats candidates" 1 "$(grep -c 'candidates' <<<"$stats")"

# Batch mode: line numbers, blank lines skipped, a bad line reported.
printf 'bloom filter\n\nzzzunknownzzz\n布隆过滤器\n' > "$WORK/queries.txt"
out=$("$BITSIFT" query --queries "$WORK/queries.txt" --count)
check "batch count" "$(printf '1\t5\n3\t0\n4\t3')" "$out"
check "batch from stdin" "$out" "$(printf 'bloom filter\n\nzzzunknownzzz\n布隆过滤器\n' | "$BITSIFT" query --queries - --count)"
check "batch stats json" 3 "$("$BITSIFT" query --queries "$WORK/queries.txt" --stats 2>&1 >/dev/null | grep -c '"line":')"
printf 'bloom\n!!!\n' > "$WORK/bad-queries.txt"
check "batch with a bad line exits 2" 2 "$(status "$BITSIFT" query --queries "$WORK/bad-queries.txt")"
# --jobs: queries answered on several threads, printed as one at a time prints them (more
# queries than one window of 4 x jobs, bad and blank lines among them).
for i in 1 2 3 4 5 6 7; do printf 'bloom filter\n\nzzzunknownzzz\n布隆过滤器\nsearch\n!!!\nthe\n'; done > "$WORK/many.txt"
for mode in "" --count --json --lines; do
  one=$("$BITSIFT" query --all --queries "$WORK/many.txt" $mode 2>"$WORK/one.err"); one_code=$?
  three=$("$BITSIFT" query --all --queries "$WORK/many.txt" $mode --jobs 3 2>"$WORK/three.err")
  three_code=$?
  check "batch --jobs 3 ${mode:-paths} output" "$one" "$three"
  check "batch --jobs 3 ${mode:-paths} errors" "$(cat "$WORK/one.err")" "$(cat "$WORK/three.err")"
  check "batch --jobs 3 ${mode:-paths} exit" "$one_code" "$three_code"
done
check "batch --jobs stats lines" 35 "$("$BITSIFT" query --queries "$WORK/many.txt" -j 2 --stats 2>&1 >/dev/null | grep -c '"line":')"
check "--jobs without --queries" 2 "$(status "$BITSIFT" query --jobs 2 bloom)"
check "--jobs 0" 2 "$(status "$BITSIFT" query --queries "$WORK/many.txt" --jobs 0)"

# Errors: exit 2 and one clear line.
check "no terms" 2 "$(status "$BITSIFT" query '!!!')"
err=$("$BITSIFT" query '!!!' 2>&1 >/dev/null)
check "no terms message" 1 "$(grep -c 'no terms' <<<"$err")"
check "unknown flag" 2 "$(status "$BITSIFT" query --bogus x)"
check "unknown command" 2 "$(status "$BITSIFT" frobnicate)"
check "bad fp rate" 2 "$(status "$BITSIFT" index . --fp-rate 2)"
check "missing dir" 2 "$(status "$BITSIFT" index "$WORK/nope")"
check "missing index" 2 "$(cd "$WORK" && status "$BITSIFT" query bloom)"
err=$(cd "$WORK" && "$BITSIFT" query --index "$WORK/none.idx" bloom 2>&1)
check "missing index names path" 1 "$(grep -c "$WORK/none.idx" <<<"$err")"

# Damaged indexes: a truncated or flipped segment file, another format. Exit 2, no crash.
seg=$(ls .bitsift/seg-*.bsg | head -1)
size=$(stat -c %s "$seg")
cp -r .bitsift "$WORK/truncated.idx"
head -c $((size / 2)) "$seg" > "$WORK/truncated.idx/$(basename "$seg")"
check "truncated index" 2 "$(status "$BITSIFT" query --index "$WORK/truncated.idx" bloom)"
err=$("$BITSIFT" query --index "$WORK/truncated.idx" bloom 2>&1)
check "truncated message" 1 "$(grep -c 'truncated\|does not match the index manifest' <<<"$err")"
# Large sections are verified per 4 KiB chunk when a query first reads them: a flip in a chunk
# the query reads gives exit 2; a flip elsewhere lets the query answer exactly (from undamaged
# chunks), and then `check` must find it and name the repair.
good_bloom=$("$BITSIFT" query bloom)
for pos in 10 100 $((size / 3)) $((size / 2)) $((size - 10)); do
  rm -rf "$WORK/flipped.idx" && cp -r .bitsift "$WORK/flipped.idx"
  byte=$(od -An -tu1 -j "$pos" -N1 "$seg" | tr -d ' ')
  printf "$(printf '\\%03o' $(((byte + 1) % 256)))" | dd of="$WORK/flipped.idx/$(basename "$seg")" bs=1 seek="$pos" conv=notrunc 2>/dev/null
  answer=$("$BITSIFT" query --index "$WORK/flipped.idx" bloom 2>/dev/null); code=$?
  if [ "$code" == 2 ]; then
    check "flipped byte at $pos: query refuses" 2 "$code"
  else
    check "flipped byte at $pos: untouched, exact answer" "$good_bloom" "$answer"
    check "flipped byte at $pos: check finds it" 2 "$(status "$BITSIFT" check --index "$WORK/flipped.idx")"
    err=$("$BITSIFT" check --index "$WORK/flipped.idx" 2>&1)
    check "flipped byte at $pos: check names the repair" 1 "$(grep -c 'rebuild' <<<"$err")"
  fi
done
echo "not an index" > "$WORK/other.idx"
check "other format" 2 "$(status "$BITSIFT" query --index "$WORK/other.idx" bloom)"
mkdir -p "$WORK/otherdir.idx" && echo "not a manifest" > "$WORK/otherdir.idx/MANIFEST"
check "damaged manifest" 2 "$(status "$BITSIFT" query --index "$WORK/otherdir.idx" bloom)"
check "stats on a good index" 0 "$(status "$BITSIFT" stats)"

# Re-indexing while the old index is in use: a batch reader keeps its answers.
mkfifo "$WORK/feed"
"$BITSIFT" query --queries "$WORK/feed" --count > "$WORK/reader.out" &
reader=$!
exec 3<>"$WORK/feed"  # read-write: never blocks, even if the reader died at start
echo "bloom filter" >&3
sleep 0.5
echo "brand new words" > en/new_file.txt
check "reindex while in use" 0 "$(status "$BITSIFT" index .)"
echo "brand" >&3
exec 3>&-
wait $reader
check "old index answered during rebuild" "$(printf '1\t5\n2\t0')" "$(cat "$WORK/reader.out")"
check "new index sees the new file" "en/new_file.txt" "$("$BITSIFT" query brand)"
check "no temporary files left" 0 "$(ls -a | grep -c '\.tmp\.')"

# Tokenize subcommand.
check "tokenize" "$(printf 'strasse\n布隆\n滤器\n过滤\n隆过')" "$("$BITSIFT" tokenize --set Straße 布隆过滤器)"

finish
