#!/usr/bin/env bash
# End-to-end: the command line in the shell around it. Paths that open from where the user stands
# (a sibling, a parent, a subfolder, far away; -0; names with spaces, a leading dash, bytes that
# are not UTF-8), scope by folder (--all, --in, --limit inside a scope), stale hits (a
# file deleted and one changed after indexing), `status`, strict numbers, a clean `git status`,
# and the words of messages (plurals, "not found" naming where, damaged indexes naming the repair,
# OS errors with their reason, `tokenize`).
# Usage: shell_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"

# --- The tree -----------------------------------------------------------------------------------
T=$WORK/tree
mkdir -p "$T/sub/deep" "$T/other" "$WORK/sibling" "$WORK/far/a/b/c/d/e/f/g/h/i/j"
echo "alpha common" > "$T/a.txt"
echo "beta common" > "$T/sub/b.txt"
echo "gamma common" > "$T/sub/deep/c.txt"
echo "delta common" > "$T/other/d.txt"
echo "dash common" > "$T/-dash.txt"
echo "space common" > "$T/space name.txt"
printf 'latin common\n' > "$T/caf$(printf '\351').txt"  # a Latin-1 name: not UTF-8
(cd "$T" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm tree) ||
  { echo "git is needed"; exit 2; }

# --- 5. Tidy in a work tree; 6. plurals in the summary -------------------------------------------
out=$(cd "$T" && "$BITSIFT" index . 2>&1); code=$?
check "index exit" 0 "$code"
has "summary counts documents" "indexed 7 documents" "$out"
check "git status is clean with the default index" "" "$(cd "$T" && git status --porcelain)"
check "the index holds a .gitignore of *" "*" "$(cat "$T/.bitsift/.gitignore")"
check "the index is not indexed" 1 "$(cd "$T" && status "$BITSIFT" query --all gitignore)"
mkdir -p "$WORK/one" && echo "solo" > "$WORK/one/x.txt"
has "one document, singular" "indexed 1 document in" "$("$BITSIFT" index "$WORK/one")"
has "an update does not report the index itself as skipped" "skipped: none" \
  "$("$BITSIFT" index "$WORK/one")"
check "--index '' is refused, naming the option" 2 "$(status "$BITSIFT" query --index '' solo)"
has "--index '': the message" "--index: an empty path" \
  "$("$BITSIFT" query --index '' solo 2>&1)"
has "check: 1 document" "ok (1 document)" "$("$BITSIFT" check --index "$WORK/one/.bitsift")"
has "status: 1 document, 1 file" "1 document" "$("$BITSIFT" status --index "$WORK/one/.bitsift")"
has "status: 1 file unchanged" "up to date: 1 file unchanged" \
  "$("$BITSIFT" status --index "$WORK/one/.bitsift")"

# --- 1. Paths a shell can use ------------------------------------------------------------------
all=$(lines "./-dash.txt" a.txt "caf$(printf '\351').txt" other/d.txt "space name.txt" sub/b.txt \
  sub/deep/c.txt)
check "from the root" "$all" "$(cd "$T" && "$BITSIFT" query common)"
check "from a sibling" "$(sed 's#^\./#../tree/#; t; s#^#../tree/#' <<<"$all")" \
  "$(cd "$WORK/sibling" && "$BITSIFT" query --index ../tree/.bitsift common)"
check "from the parent" "$(sed 's#^\./#tree/#; t; s#^#tree/#' <<<"$all")" \
  "$(cd "$WORK" && "$BITSIFT" query --index tree/.bitsift common)"
check "from a subfolder with --all" "$(lines ../-dash.txt ../a.txt "../caf$(printf '\351').txt" \
  ../other/d.txt "../space name.txt" b.txt deep/c.txt)" "$(cd "$T/sub" && "$BITSIFT" query --all common)"
check "the same index twice (another spelling) answers once" \
  "$(sed 's#^\./#tree/#; t; s#^#tree/#' <<<"$all")" \
  "$(cd "$WORK" && "$BITSIFT" query --index tree/.bitsift --index "$T/./.bitsift" common)"
check "the same index twice counts once" 7 \
  "$(cd "$WORK" && "$BITSIFT" query --count --index tree/.bitsift --index tree/.bitsift common)"
check "far away: absolute, shorter than ../../.." "$T/a.txt" \
  "$(cd "$WORK/far/a/b/c/d/e/f/g/h/i/j" && "$BITSIFT" query --index "$T/.bitsift" alpha)"
for from in "$T" "$T/sub" "$WORK/sibling" "$WORK" "$WORK/far/a/b/c/d/e/f/g/h/i/j"; do
  opened=$(cd "$from" && "$BITSIFT" query --all --index "$T/.bitsift" common |
    xargs -d '\n' grep -h common | wc -l)
  check "every printed path opens from $from" 7 "$opened"
done
check "-0 with xargs -0" 7 "$(cd "$WORK/sibling" && "$BITSIFT" query -0 --index ../tree/.bitsift common |
  xargs -0 grep -l common | wc -l)"
check "-0 ends each path with NUL" 7 "$(cd "$T" && "$BITSIFT" query -0 common | tr -cd '\0' | wc -c)"
check "-0 with --count is refused" 2 "$(cd "$T" && status "$BITSIFT" query -0 --count common)"
json=$(cd "$WORK/sibling" && "$BITSIFT" query --json --index ../tree/.bitsift alpha)
check "--json: printed path, path in the index, root" \
  "{\"path\":\"../tree/a.txt\",\"index_path\":\"a.txt\",\"root\":\"$T\"," "${json%%\"size\"*}"
has "--json: a name that is not UTF-8 as U+FFFD" '"index_path":"caf�.txt"' \
  "$(cd "$T" && "$BITSIFT" query --json latin)"

# The pipeline of the README: from a subfolder, into grep.
check "query | xargs grep -n from a subfolder" "$(lines "b.txt:1:beta common" \
  "deep/c.txt:1:gamma common")" "$(cd "$T/sub" && "$BITSIFT" query common | xargs grep -n common)"
check "query | xargs -d '\\n' grep -n, names with spaces" "$(lines "space name.txt:1:space common")" \
  "$(cd "$T" && "$BITSIFT" query space | xargs -d '\n' grep -Hn common)"
check "query | xargs grep -n from a sibling" "../tree/sub/b.txt:1:beta common" \
  "$(cd "$WORK/sibling" && "$BITSIFT" query --index ../tree/.bitsift beta | xargs grep -Hn beta)"

# --- 2. Scope by folder ------------------------------------------------------------------------
check "a subfolder answers for itself" "$(lines b.txt deep/c.txt)" \
  "$(cd "$T/sub" && "$BITSIFT" query common)"
check "a deeper subfolder" "c.txt" "$(cd "$T/sub/deep" && "$BITSIFT" query common)"
check "--limit inside the scope (not a post-filter)" "b.txt" \
  "$(cd "$T/sub" && "$BITSIFT" query --limit 1 common)"
check "--count inside the scope" 2 "$(cd "$T/sub" && "$BITSIFT" query --count common)"
check "--in a folder" "deep/c.txt" "$(cd "$T/sub" && "$BITSIFT" query --in deep common)"
check "--in PATH" "deep/c.txt" "$(cd "$T/sub" && "$BITSIFT" query common --in deep)"
check "--in PATH outside the subfolder" "../other/d.txt" \
  "$(cd "$T/sub" && "$BITSIFT" query common --in ../other)"
check "--in a file and a folder" "$(lines ../a.txt ../other/d.txt)" \
  "$(cd "$T/sub" && "$BITSIFT" query --in ../a.txt --in ../other common)"
check "--in twice: either" "$(lines ../tree/a.txt ../tree/sub/b.txt)" \
  "$(cd "$WORK/sibling" && "$BITSIFT" query --index ../tree/.bitsift --in ../tree/a.txt common --in ../tree/sub/b.txt)"
err=$(cd "$T/sub" && "$BITSIFT" query alpha 2>&1 >/dev/null); code=$?
check "a match outside the subfolder only: exit 1" 1 "$code"
has "...says where it looked and how to search everything" "no match under $T/sub" "$err"
has "...--all" "--all" "$err"
check "--all from the subfolder finds it" "../a.txt" "$(cd "$T/sub" && "$BITSIFT" query --all alpha)"
err=$(cd "$T/sub" && "$BITSIFT" query alpha --in deep --in nowhere 2>&1 >/dev/null); code=$?
check "no match under the PATHs given: exit 1" 1 "$code"
check "...names them, and which do not exist" \
  "bitsift: no match under $T/sub/deep, $T/sub/nowhere (No such file or directory)" "$err"

# --- 3. Stale hits -------------------------------------------------------------------------------
rm "$T/other/d.txt"
echo "alpha common, edited after indexing" >> "$T/a.txt"
out=$(cd "$T" && "$BITSIFT" query common 2>"$WORK/err"); code=$?
err=$(cat "$WORK/err")
check "a vanished file is not printed" "$(grep -av other/d.txt <<<"$all")" "$out"
check "exit 0 with the other matches" 0 "$code"
check "one warning" 1 "$(grep -c 'warning' <<<"$err")"
has "the warning counts" "2 matches are out of date (1 file changed, 1 vanished since indexing" "$err"
has "names the changed file" "changed: a.txt" "$err"
has "names the vanished file" "vanished: other/d.txt" "$err"
has "says how to update" "run 'bitsift index $T' to update the index" "$err"
check "--json marks the changed file" '"stale":true' \
  "$(cd "$T" && "$BITSIFT" query --json alpha 2>/dev/null | grep -o '"stale":true')"
check "--limit still fills with current matches" 3 \
  "$(cd "$T" && "$BITSIFT" query --limit 3 common 2>/dev/null | wc -l)"
check "only the vanished match: exit 1" 1 "$(cd "$T" && status "$BITSIFT" query delta)"
printf 'common\nalpha\ndelta\n' > "$WORK/q.txt"
err=$(cd "$T" && "$BITSIFT" query --queries "$WORK/q.txt" 2>&1 >/dev/null)
check "--queries: reported once for the run" 1 "$(grep -c 'warning' <<<"$err")"
check "--queries: each stale file listed once" 1 "$(grep -c 'changed: a.txt' <<<"$err")"
check "--queries --stats: the look at files timed apart" 3 \
  "$(cd "$T" && "$BITSIFT" query --queries "$WORK/q.txt" --stats 2>&1 >/dev/null | grep -c '"total_us":[0-9.]*,"files_us":')"
check "a current hit gives no warning" "" "$(cd "$T" && "$BITSIFT" query beta 2>&1 >/dev/null)"

# bitsift status: added / changed / removed, as the next update would see them.
echo "epsilon new" > "$T/sub/new.txt"
out=$(cd "$T/sub" && "$BITSIFT" status); code=$?
check "status behind: exit 1" 1 "$code"
has "status counts" "behind the tree: 1 added, 1 changed, 1 removed (5 unchanged)" "$out"
has "status names the update" "run 'bitsift index $T' to update it" "$out"
out=$(cd "$T/sub" && "$BITSIFT" status --verbose)
has "status -v: added, from where the user is" "added:   new.txt" "$out"
has "status -v: changed" "changed: ../a.txt" "$out"
has "status -v: removed" "removed: ../other/d.txt" "$out"
has "update" "1 added, 1 changed, 1 removed, 5 unchanged" "$(cd "$T" && "$BITSIFT" index .)"
out=$(cd "$T" && "$BITSIFT" status); code=$?
check "status after the update: exit 0" 0 "$code"
has "status up to date" "up to date: 7 files unchanged" "$out"
check "no warning after the update" "" "$(cd "$T" && "$BITSIFT" query common 2>&1 >/dev/null)"
check "git status still clean" "$(lines ' M a.txt' ' D other/d.txt' '?? sub/new.txt')" \
  "$(cd "$T" && git status --porcelain)"

# --- 4. Strict numbers: each rejected value, exit 2, the option named ----------------------------
rejected() {  # rejected OPTION VALUE COMMAND...: runs COMMAND... OPTION VALUE
  local option=$1 value=$2
  shift 2
  local err code
  err=$("$@" "$option" "$value" 2>&1 >/dev/null); code=$?
  check "$* $option $value: exit 2" 2 "$code"
  has "$* $option $value: names the option" "$option must be" "$err"
}
cd "$T" || exit 2
for v in -1 -5 abc 1.5 " 3" 4294967296 99999999999999999999999 ""; do
  rejected --limit "$v" "$BITSIFT" query common
done
for v in -1 abc 1025 100000 2.5; do
  rejected --threads "$v" "$BITSIFT" index . --index "$WORK/n.idx"
  rejected --threads "$v" "$BITSIFT" compact
done
for v in -1 0 abc 1X 2T 18446744073709551616; do
  rejected --max-file-size "$v" "$BITSIFT" index . --index "$WORK/n.idx"
  rejected --max-decompressed-size "$v" "$BITSIFT" index . --index "$WORK/n.idx"
done
for v in -1 0 1M 15M 2T abc; do
  rejected --memory "$v" "$BITSIFT" index . --index "$WORK/n.idx"
done
for v in -1 0 1 2 nan inf 1e-10 abc "0.01x"; do
  rejected --fp-rate "$v" "$BITSIFT" index . --index "$WORK/n.idx"
done
check "nothing was written by a rejected run" no "$([ -e "$WORK/n.idx" ] && echo yes || echo no)"
check "--limit 0 means all" 6 "$("$BITSIFT" query --limit 0 common | wc -l)"
cores=$(nproc)
err=$("$BITSIFT" index . --threads 1000 --rebuild 2>&1 >/dev/null); code=$?
check "--threads above the cores: exit 0" 0 "$code"
check "--threads above the cores: one note, no library warning" \
  "bitsift: note: --threads 1000 is more than the $cores $([ "$cores" = 1 ] && echo core || echo cores) available; using $cores" \
  "$err"
err=$("$BITSIFT" compact --threads 1000 2>&1 >/dev/null); code=$?
check "compact --threads above the cores: exit 0" 0 "$code"
check "compact: no TBB warning" 0 "$(grep -ci 'tbb' <<<"$err")"
cd "$WORK" || exit 2

# --- 6. Words: "not found" says what and where; damaged indexes name the repair; OS reasons ----
err=$(cd "$WORK/sibling" && "$BITSIFT" query common 2>&1); code=$?
check "no index found: exit 2" 2 "$code"
has "no index found: names the directory searched" "no .bitsift in $WORK/sibling or any of its parents" "$err"
err=$(cd "$WORK/sibling" && "$BITSIFT" query --index nowhere common 2>&1)
has "--index missing: names the absolute path" "$WORK/sibling/nowhere" "$err"
err=$(cd "$WORK/sibling" && "$BITSIFT" status --index nowhere 2>&1)
has "status --index missing: names the absolute path" "$WORK/sibling/nowhere" "$err"
err=$(cd "$WORK/sibling" && "$BITSIFT" index missing-dir 2>&1)
has "index of a missing directory: absolute path and reason" \
  "$WORK/sibling/missing-dir: cannot index: No such file or directory" "$err"
err=$(cd "$WORK/sibling" && "$BITSIFT" index "$T/a.txt" 2>&1); code=$?
check "index of a file: exit 2" 2 "$code"
has "index of a file: says so" "not a directory" "$err"
err=$(cd "$WORK/sibling" && "$BITSIFT" query --index ../tree/.bitsift --queries nofile 2>&1)
has "--queries missing: path and reason" "nofile: cannot open the query file ($WORK/sibling/nofile): No such file or directory" "$err"
err=$("$BITSIFT" query --index "$T/.bitsift" --queries "$WORK" 2>&1); code=$?
check "--queries of a directory: exit 2" 2 "$code"
has "--queries of a directory: the reason" "Is a directory" "$err"
err=$("$BITSIFT" tokenize --file "$WORK" 2>&1); code=$?
check "tokenize --file of a directory: exit 2" 2 "$code"
has "tokenize --file of a directory: the reason" "Is a directory" "$err"
err=$(cd "$WORK" && "$BITSIFT" tokenize --file nonexistent 2>&1); code=$?
check "tokenize --file missing: exit 2" 2 "$code"
has "tokenize --file missing: absolute path and reason" \
  "($WORK/nonexistent): No such file or directory" "$err"
# Damaged indexes, each way: the message names the command that repairs this index.
damaged() {  # damaged NAME: queries and checks $WORK/dmg (an index of $T) and wants the repair
  local err
  err=$("$BITSIFT" query --all --index "$WORK/dmg" common 2>&1 >/dev/null)
  err+=$'\n'$("$BITSIFT" check --index "$WORK/dmg" 2>&1 >/dev/null)
  has "$1: names the repair" "bitsift index --rebuild $T --index $WORK/dmg" "$err"
  check "$1: no generic DIR" 0 "$(grep -c 'rebuild DIR' <<<"$err")"
}
seg=$(ls "$T/.bitsift"/seg-*.bsg | head -1)
cp -r "$T/.bitsift" "$WORK/dmg" && head -c 100 "$seg" > "$WORK/dmg/$(basename "$seg")"
damaged "truncated segment"
rm -rf "$WORK/dmg" && cp -r "$T/.bitsift" "$WORK/dmg" && rm "$WORK/dmg/$(basename "$seg")"
damaged "missing segment"
has "missing segment: status names the repair" "bitsift index --rebuild $T --index $WORK/dmg" \
  "$("$BITSIFT" status --index "$WORK/dmg" 2>&1)"
rm -rf "$WORK/dmg" && cp -r "$T/.bitsift" "$WORK/dmg"
size=$(stat -c %s "$seg")
printf 'X' | dd of="$WORK/dmg/$(basename "$seg")" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
damaged "a changed byte"
rm -rf "$WORK/dmg" && cp -r "$T/.bitsift" "$WORK/dmg" && echo "garbage" >> "$WORK/dmg/MANIFEST"
err=$("$BITSIFT" query --all --index "$WORK/dmg" common 2>&1 >/dev/null)
has "damaged manifest: names a repair" "bitsift index --rebuild" "$err"
err=$(cd "$T" && cp .bitsift/MANIFEST "$WORK/MANIFEST.good" && echo "garbage" >> .bitsift/MANIFEST &&
  "$BITSIFT" query common 2>&1 >/dev/null)
has "damaged default index: names the repair" "bitsift index --rebuild" "$err"
cp "$WORK/MANIFEST.good" "$T/.bitsift/MANIFEST"
printf 'BITSIFT\032 and the rest of a 0.1 index' > "$WORK/old.idx"
has "a 0.1 index: names the repair" "rebuild it with 'bitsift index --rebuild DIR --index $WORK/old.idx'" \
  "$("$BITSIFT" query --index "$WORK/old.idx" x 2>&1)"
err=$("$BITSIFT" query --index "$T/a.txt" x 2>&1); code=$?
check "a file that is no index: exit 2" 2 "$code"
has "a file that is no index: says so" "$T/a.txt: a file, not a bitsift index" "$err"

mkdir -p "$WORK/gone" && echo "gone" > "$WORK/gone/g.txt" && "$BITSIFT" index "$WORK/gone" -q --index "$WORK/gone.idx"
rm -r "$WORK/gone"
err=$("$BITSIFT" status --index "$WORK/gone.idx" 2>&1); code=$?
check "status of a tree that is gone: exit 2" 2 "$code"
has "status of a tree that is gone: names it and why" \
  "$WORK/gone: cannot read the directory the index was built from: No such file or directory" "$err"

# --version: the library's version, as CMake configured it (bitsift/version.h).
check "--version" "bitsift $(sed -n 's/^project(bitsift VERSION \([0-9.]*\).*/\1/p' "$SOURCE_DIR/CMakeLists.txt")" \
  "$("$BITSIFT" --version)"

# tokenize: the tokens in text order with byte offsets; --set; extra arguments; empty results.
check "tokenize: tokens, start, end, role" "$(printf 'hello\t0\t5\tword\nstrasse\t7\t14\tword\nhello\t15\t20\tword\n布隆\t21\t27\tword\n隆过\t24\t30\tword')" \
  "$("$BITSIFT" tokenize "Hello, Straße hello" 布隆过)"
check "tokenize --set: the sorted distinct terms" "$(lines hello strasse 布隆 隆过)" \
  "$("$BITSIFT" tokenize --set "Hello, Straße hello" 布隆过)"
check "tokenize: a word with parts gives its whole, then its parts" \
  "$(printf 'include\t1\t8\tword\nstdio.h\t10\t17\twhole\nstdio\t10\t15\tpart\nh\t16\t17\tpart')" \
  "$("$BITSIFT" tokenize '#include <stdio.h>')"
check "tokenize --set: Latin diacritics folded" "$(lines cafe jose)" "$("$BITSIFT" tokenize --set José CAFÉ)"
check "tokenize --set --keep-diacritics: kept" "$(lines café josé)" \
  "$("$BITSIFT" tokenize --set --keep-diacritics José CAFÉ)"
printf 'one two\none\n' > "$WORK/t.txt"
check "tokenize --file: offsets in the file" "$(printf 'one\t0\t3\tword\ntwo\t4\t7\tword\none\t8\t11\tword')" \
  "$("$BITSIFT" tokenize --file "$WORK/t.txt")"
check "tokenize --file -: stdin" "$(printf 'one\t0\t3\tword\ntwo\t4\t7\tword\none\t8\t11\tword')" \
  "$("$BITSIFT" tokenize --file - < "$WORK/t.txt")"
check "the offsets cut the tokens' source out of the text" "Straße" \
  "$(t="x Straße"; o=$("$BITSIFT" tokenize "$t" | sed -n 2p); b=$(cut -f2 <<<"$o"); e=$(cut -f3 <<<"$o"); printf '%s' "$t" | tail -c +$((b + 1)) | head -c $((e - b)))"
err=$("$BITSIFT" tokenize --file "$WORK/t.txt" extra 2>&1); code=$?
check "tokenize --file F extra: exit 2" 2 "$code"
has "tokenize --file F extra: names it" "extra argument 'extra'" "$err"
err=$("$BITSIFT" tokenize '!!!' 2>&1); code=$?
check "tokenize '!!!': exit 1" 1 "$code"
has "tokenize '!!!': explains" "no tokens: the text holds only spaces, punctuation or symbols" "$err"
: > "$WORK/empty.txt"
has "tokenize an empty file: explains" "no tokens: the file is empty" \
  "$("$BITSIFT" tokenize --file "$WORK/empty.txt" 2>&1)"
check "tokenize without input: exit 2" 2 "$(status "$BITSIFT" tokenize)"
# tokenize --file reads a file as `bitsift index` does (the terms a query finds it by); --raw
# takes its bytes as UTF-8.
printf '<html><body><p>Tag <b>words</b></p></body></html>\n' > "$WORK/page.html"
check "tokenize --file of HTML: its text, as indexed" "$(lines tag words)" \
  "$("$BITSIFT" tokenize --set --file "$WORK/page.html")"
has "tokenize --raw --file of HTML: the markup too" "body" \
  "$("$BITSIFT" tokenize --set --raw --file "$WORK/page.html")"
printf 'zipped words\n' | gzip > "$WORK/z.txt.gz"
check "tokenize --file of a .gz: its content" "$(lines words zipped)" \
  "$("$BITSIFT" tokenize --set --file "$WORK/z.txt.gz")"
printf 'caf\351 au lait, d\351j\340 vu\n' > "$WORK/latin1.txt"
mkdir -p "$WORK/enc" && cp "$WORK/latin1.txt" "$WORK/enc/"
"$BITSIFT" index -q "$WORK/enc"
check "tokenize --file of Latin-1: the terms the index finds it by" "enc/latin1.txt" \
  "$(cd "$WORK" && mapfile -t terms < <("$BITSIFT" tokenize --set --file "$WORK/latin1.txt") &&
      "$BITSIFT" query --index enc/.bitsift "${terms[@]}")"
printf 'a\0b' > "$WORK/bin.dat"
err=$("$BITSIFT" tokenize --file "$WORK/bin.dat" 2>&1); code=$?
check "tokenize --file of a binary file: exit 2" 2 "$code"
has "tokenize --file of a binary file: says indexing skips it" "not indexed (binary" "$err"
check "--raw without --file: exit 2" 2 "$(status "$BITSIFT" tokenize --raw x)"

finish
