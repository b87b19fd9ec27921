#!/usr/bin/env bash
# End-to-end: the query language and --lines through the real binary. Every error case of the
# language exits 2 with a clear message; --lines prints what grep -n would (line numbers
# checked against grep itself), colours, context, --max-columns, JSON spans, stale files,
# decoded, compressed and HTML documents. Usage: answers_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"
mkdir -p "$WORK/t/src" "$WORK/t/doc"
cd "$WORK/t" || exit 2
printf 'Copyright (C) 2024 Free Software Foundation\nThis program is free software: you can\nredistribute it under the GNU GPL.\n' > src/a.c
printf 'Copyright 2020 someone\nLicensed under the BSD license.\nsoftware, free of charge\n' > src/b.c
printf 'std::vector<int> v;\nvector std\nthe e-mail address\n' > src/c.cc
printf 'line one\n\nline three has free software\nline four\nline five\nline six\nline seven free\n' > doc/ctx.txt
printf '布隆过滤器是一种数据结构。\n过滤。滤器\n' > doc/zh.txt
printf '<html><head><title>Free software</title></head><body><p>first para</p>\n<p>the GPL text</p></body></html>\n' > doc/page.html
printf 'zipped line\nfree software inside gzip\n' | gzip > doc/notes.txt.gz
printf 'Gr\xfc\xdfe aus M\xfcnchen\nfree software in latin1 \xe9t\xe9\n' > doc/latin1.txt
python3 -c 'print("x" * 3000 + " needle " + "y" * 3000)' > doc/long.txt
# More files than a slice of --lines (kMatchingLinesSlice, 256): found on two threads, printed
# in path order across the slices' boundaries.
mkdir -p many
for i in $(seq -w 0 599); do
  { for l in $(seq 1 $((10#$i % 5))); do echo "filler $l"; done; echo "the pinpoint $i"; } > "many/f$i.txt"
done
"$BITSIFT" index . -q || { echo "index failed"; exit 2; }
"$BITSIFT" index . --index "$WORK/np" --no-positions -q || { echo "index failed"; exit 2; }
q() { "$BITSIFT" query --all "$@"; }

# The language.
check "phrase" "src/a.c" "$(q '"free software"' --in src)"
check "an argument with spaces is the same AND" "$(printf 'src/a.c\nsrc/b.c')" "$(q 'free software' --in src)"
check "words ANDed" "$(printf 'src/a.c\nsrc/b.c')" "$(q free software --in src)"
check "OR" "$(printf 'doc/page.html\nsrc/a.c\nsrc/b.c')" "$(q 'gpl OR bsd')"
check "exclusion after --" "src/b.c" "$(q copyright -- -gpl)"
check "exclusion in a quoted query" "src/b.c" "$(q 'copyright -gpl')"
check "prefix" "src/b.c" "$(q 'licen*')"
check "split word is a phrase" "src/c.cc" "$(q std::vector)"
check "CJK run is a substring" "doc/zh.txt" "$(q 过滤器)"
check "groups" "$(printf 'src/a.c\nsrc/b.c')" "$(q '(gpl OR bsd) copyright')"
check "--words keeps 0.1" "$(printf 'src/a.c\nsrc/b.c')" "$(q --words 'free' '"software' --in src)"
check "--words: OR is a word" 1 "$(status q --words 'gpl OR bsd')"
check "--queries lines in the language" "$(printf '1\tsrc/b.c\n2\tsrc/c.cc')" \
  "$(printf 'copyright -gpl\nstd::vector\n' | q --queries -)"

# Every error case: exit 2 and a message saying what is wrong.
for case in 'only exclusions|-gpl|only exclusions' 'unbalanced quote|"free software|unbalanced quote' \
            'lone OR|OR|OR must stand' 'OR at the end|free OR|OR must stand' \
            'lone star|*|needs letters or digits' 'unbalanced parenthesis|(free|unbalanced parenthesis' \
            'stray parenthesis|free)|unbalanced parenthesis' 'no terms|!!!|no terms' \
            'exclusion in OR|free OR -gpl|cannot be an operand of OR'; do
  IFS='|' read -r name query message <<<"$case"
  err=$(q -- "x" "$query" 2>&1 >/dev/null); code=$?
  [ "$query" = "-gpl" ] && { err=$(q -- "$query" 2>&1 >/dev/null); code=$?; }
  [ "${query:0:1}" != "-" ] && { err=$(q "$query" 2>&1 >/dev/null); code=$?; }
  check "error exit: $name" 2 "$code"
  has "error message: $name" "$message" "$err"
done
err=$(q copyright -gpl 2>&1); code=$?
check "unknown option that looks like an exclusion: exit" 2 "$code"
has "unknown option named" "unknown option '-gpl'" "$err"
has "unknown option hint" "bitsift query TERMS -- -gpl" "$err"
err=$(q free --colr 2>&1); code=$?
check "unknown long option: exit" 2 "$code"
has "unknown long option named" "unknown option '--colr'" "$err"
err=$(q 'free "soft' 2>&1)
has "caret under the place" "$(printf '  free "soft\n       ^')" "$err"
err=$(printf 'free\n"open\n' | q --queries - 2>&1 >/dev/null); code=$?
check "--queries bad line: exit" 2 "$code"
has "--queries bad line named" "query line 2: query: unbalanced quote" "$err"
check "--color needs --lines" 2 "$(status q --color=always free)"
check "bad --color" 2 "$(status q --lines --color=sometimes free)"
check "--lines with --count" 2 "$(status q --lines --count free)"
check "bad -C" 2 "$(status q --lines -C x free)"

# --lines: exactly grep -n's lines for a single word (grep -i on ASCII text).
want=$(cd src && grep -n -i -w 'free' a.c b.c | sed 's/^/src\//')
check "--lines = grep -n" "$want" "$(q --lines free --in src)"
want=$(cd many && grep -n -w pinpoint $(ls | LC_ALL=C sort) | sed 's/^/many\//')
check "--lines over 600 files = grep -n, in order" "$want" "$(q --lines pinpoint --in many)"
check "--lines over 600 files, JSON: a line each" 600 "$(q --lines --json pinpoint --in many | wc -l)"
check "--lines phrase marks only the phrase's lines (case folded)" \
  "$(printf 'src/a.c:1:Copyright (C) 2024 Free Software Foundation\nsrc/a.c:2:This program is free software: you can')" \
  "$(q --lines '"free software"' --in src/a.c)"
check "--lines phrase: not its words apart" "" "$(q --lines '"free software"' --in src/b.c)"
check "--lines exclusion marks nothing" "src/b.c:1:Copyright 2020 someone" "$(q --lines copyright -- -gpl)"
check "--lines prefix" "src/b.c:2:Licensed under the BSD license." "$(q --lines 'licen*')"
check "--lines CJK" "doc/zh.txt:1:布隆过滤器是一种数据结构。" "$(q --lines 过滤器)"
check "context" "$(printf 'doc/ctx.txt-2-\ndoc/ctx.txt:3:line three has free software\ndoc/ctx.txt-4-line four\n--\ndoc/ctx.txt-6-line six\ndoc/ctx.txt:7:line seven free')" \
  "$(q --lines -B1 -A1 free --in doc/ctx.txt)"
check "-C" "$(q --lines -C1 free --in doc/ctx.txt)" "$(q --lines -A1 -B1 free --in doc/ctx.txt)"
col=$(q --lines --color=always '"free software"' --in src/a.c | tail -1)
check "colour" $'\e[35msrc/a.c\e[0m:\e[32m2\e[0m:This program is \e[1;31mfree software\e[0m: you can' "$col"
check "auto colour off in a pipe" "src/a.c:2:This program is free software: you can" \
  "$(q --lines '"free software"' --in src/a.c | tail -1)"
check "NO_COLOR with auto" "src/a.c:2:This program is free software: you can" \
  "$(NO_COLOR=1 q --lines --color=auto '"free software"' --in src/a.c | tail -1)"
trimmed=$(q --lines --max-columns 20 needle)
check "--max-columns keeps 20 characters and marks the cuts" "doc/long.txt:1:[...]xxxx needle yyyyyyyy[...]" "$trimmed"
json=$(q --lines --json '"free software"' --in src/a.c | tail -1)
check "--json line" '{"path":"src/a.c","index_path":"src/a.c","line":2,"text":"This program is free software: you can","spans":[[16,29]]}' "$json"
json=$(q --lines --json 'Straße' 2>/dev/null; q --lines --json 'grüße' --in doc)
has "--json spans in the decoded text" '"text":"Grüße aus München","spans":[[0,7]]' "$json"
check "latin1 file: decoded lines" "doc/latin1.txt:2:free software in latin1 été" "$(q --lines latin1)"
check "gzip file: lines of the content" "doc/notes.txt.gz:2:free software inside gzip" "$(q --lines gzip)"
has "HTML file: lines of the extracted text" "doc/page.html:" "$(q --lines gpl --in doc)"
check "--queries --lines" "$(printf '1\tsrc/b.c:2:Licensed under the BSD license.')" "$(echo 'licen*' | q --lines --queries -)"

# A file changed since indexing: reported once on stderr, its lines not printed.
printf 'inserted line\nline three has free software\n' > doc/ctx.txt
touch -d '2001-01-01' doc/ctx.txt
out=$(q --lines free --in doc 2>"$WORK/err"); code=$?
check "stale: no lines from the changed file" "" "$(grep 'ctx.txt' <<<"$out")"
check "stale: other files still printed" 0 "$code"
check "stale: reported once" 1 "$(grep -c 'changed: doc/ctx.txt' "$WORK/err")"
has "stale: what happened" "the lines of changed ones are not printed" "$(cat "$WORK/err")"
# A phrase the index's positions decide is answered as indexed, as words are, and reported;
# one that needs the changed text (an index without positions) is not answered.
out=$(q '"line three"' --in doc 2>"$WORK/err"); code=$?
check "stale phrase: answered as indexed" "doc/ctx.txt" "$out"
has "stale phrase: reported out of date" "1 match is out of date" "$(cat "$WORK/err")"
out=$("$BITSIFT" query --index "$WORK/np" --all '"line three"' 2>"$WORK/err"); code=$?
check "stale phrase without positions: not answered" "" "$out"
has "stale phrase without positions: reported" "a phrase cannot be checked in changed or vanished ones" "$(cat "$WORK/err")"
rm doc/zh.txt
out=$(q --lines 过滤器 2>"$WORK/err"); code=$?
check "vanished: exit 1" 1 "$code"
check "vanished: reported once" 1 "$(grep -c 'vanished: doc/zh.txt' "$WORK/err")"

finish
