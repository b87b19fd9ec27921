#!/usr/bin/env bash
# End-to-end: what a new user trips on. One rule for the command line (the arguments joined with
# spaces are one query; after -- everything is query text), trees that move or are copied,
# wildcards that are either exact or refused, --no-check, and --count, --json and --index that
# agree with the listing.
# Usage: newcomer_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"
mkdir -p "$WORK/t/sub"
cd "$WORK/t" || exit 2
printf 'released under the gpl\n' > gpl.txt
printf 'released under the bsd license\n' > bsd.txt
printf 'dual gpl and bsd\n' > both.txt
printf 'gpl bsd side by side\n' > sub/adjacent.txt
printf 'readline and rereadline and realine and readlines\n' > rl.txt
printf 'the license and licenses and licence\n' > lic.txt
"$BITSIFT" index . -q || { echo "index failed"; exit 2; }
q() { "$BITSIFT" query --all "$@"; }

# 1. The same text means one thing: quoted or not, from arguments, --queries and -- alike.
check "gpl bsd: AND" "$(lines both.txt sub/adjacent.txt)" "$(q gpl bsd)"
check "'gpl bsd': the same AND" "$(lines both.txt sub/adjacent.txt)" "$(q 'gpl bsd')"
check "a phrase needs its quotes" "sub/adjacent.txt" "$(q '"gpl bsd"')"
check "--queries reads the line the same way" "$(printf '1\tboth.txt\n1\tsub/adjacent.txt')" \
  "$(printf 'gpl bsd\n' | q --queries -)"
# 2. Unquoted OR.
check "gpl OR bsd unquoted" "$(lines both.txt bsd.txt gpl.txt sub/adjacent.txt)" "$(q gpl OR bsd)"
check "OR split over arguments" "$(q 'gpl OR bsd')" "$(q gpl OR bsd)"
# 3. After --, everything is query text.
check "-- \"\$q\"" "$(q gpl bsd)" "$(q -- "gpl bsd")"
check "-- -word excludes" "gpl.txt" "$(q gpl -- -bsd)"
check "gpl -- bsd is the AND, not a folder" "$(q gpl bsd)" "$(q gpl -- bsd)"
check "-- with nothing after: no terms" "2" "$(status q --)"
check "folders are given with --in" "sub/adjacent.txt" "$(q --in sub gpl)"

# Random queries: the arguments, the joined string and a --queries line give one answer.
words=(gpl bsd released under the license dual side readline '"gpl bsd"' 'gpl OR bsd' -the 'lic*')
RANDOM=7
for round in $(seq 1 25); do
  n=$((RANDOM % 3 + 1)) args=()
  for _ in $(seq 1 $n); do args+=("${words[RANDOM % ${#words[@]}]}"); done
  [ "${args[0]:0:1}" == "-" ] && args=(released "${args[@]}")
  joined="${args[*]}"
  a=$(q -- "${args[@]}"; echo "exit $?")
  b=$(q -- "$joined"; echo "exit $?")
  c=$(printf '%s\n' "$joined" | q --queries - | cut -f2)
  check "random $round: arguments = string ($joined)" "$a" "$b"
  check "random $round: string = --queries ($joined)" "$(sed '$d' <<<"$a")" "$c"
done

# 5. Wildcards: a trailing * is a prefix; any other * or ? is refused, saying what works.
check "readl* is a prefix" "rl.txt" "$(q 'readl*')"
for w in '*readline' 're*line' 'readlin?' 'licen**' '?'; do
  check "$w is refused" "2" "$(status q "$w")"
  has "$w: the message says what is supported" "only at the end of a word" "$(q "$w" 2>&1)"
done

# 9. --no-check: answers without looking at the files (a vanished file is then listed).
printf 'ephemeral words\n' > gone.txt
"$BITSIFT" index . -q
rm gone.txt
check "checked: the vanished file is left out" "" "$(q ephemeral 2>/dev/null)"
check "--no-check: listed as indexed" "gone.txt" "$(q --no-check ephemeral 2>/dev/null)"
# 10. --count agrees with the listing on stale files.
check "--count leaves the vanished file out" "0" "$(q --count ephemeral 2>/dev/null)"
check "--count exit 1 like the listing" "1" "$(status q --count ephemeral)"
check "--count --no-check counts what the index holds" "1" "$(q --count --no-check ephemeral)"
"$BITSIFT" index . -q
# --json: the file's size and the text's.
printf '<html><body><p>sizes &amp; more</p></body></html>\n' > page.html
"$BITSIFT" index . -q
j=$(q --json sizes)
has "--json file_size" "\"file_size\":$(stat -c %s page.html)" "$j"
has "--json text_size" "\"text_size\":" "$j"
# --index DIR uses DIR/.bitsift.
check "--index DIR finds DIR/.bitsift" "$(lines t/both.txt t/sub/adjacent.txt)" \
  "$(cd "$WORK" && "$BITSIFT" query --index t gpl bsd)"

# 4. A tree that moves keeps its index; a copy answers with its own files.
cd "$WORK" || exit 2
cp -r t copy
check "a copy answers with its own files" "copy/gpl.txt" \
  "$("$BITSIFT" query --index copy/.bitsift -- gpl -bsd 2>/dev/null)"
(cd copy && printf 'only in the copy\n' > mine.txt)
check "from inside the copy: its own paths" "gpl.txt" "$(cd copy && "$BITSIFT" query gpl -- -bsd 2>/dev/null)"
mv t moved
check "a moved tree still answers" "gpl.txt" "$(cd moved && "$BITSIFT" query gpl -- -bsd)"
check "status of a moved tree: nothing vanished" "0" "$(cd moved && status "$BITSIFT" status)"
has "an update of a moved tree reads nothing again" "0 added, 0 changed, 0 removed" \
  "$(cd moved && "$BITSIFT" index . 2>&1)"
check "and answers from where it is" "gpl.txt" "$(cd moved && "$BITSIFT" query gpl -- -bsd)"
# An index kept elsewhere keeps its recorded root; when that is gone it says so and names a
# command that works.
mkdir -p "$WORK/far" && printf 'far away words\n' > "$WORK/far/a.txt"
"$BITSIFT" index "$WORK/far" --index "$WORK/far.idx" -q
mv "$WORK/far" "$WORK/farther"
out=$("$BITSIFT" query --index "$WORK/far.idx" away 2>&1)
has "a gone root is named" "$WORK/far" "$out"
has "a command that works is named" "bitsift index" "$out"
finish
