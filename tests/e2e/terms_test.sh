#!/usr/bin/env bash
# End-to-end: what a term is (README "What is a term"). Words with punctuation inside are found
# by their parts (stdio finds <stdio.h>), Latin diacritics fold (jose finds José) unless the
# index keeps them, from every query form: words, phrases, OR, exclusion, prefix, --words,
# --queries, and --lines, whose colour and JSON spans cover the part that matched.
# Usage: terms_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"
mkdir -p "$WORK/t"
cd "$WORK/t" || exit 2
# One file for each row of the problem the contract solves, and files that tell the readings
# apart: a bare "stdio", another header, "stdio h" as two words.
printf '#include <stdio.h>\nint main(void) { return 0; }\n' > inc.c
printf '#include <stdlib.h>\n' > lib.c
printf 'the stdio library\n' > bare.txt
printf 'stdio h are two words here\n' > apart.txt
printf 'for the terms, see LICENSE.txt\n' > readme.txt
printf 'visit www.example.com\n' > site.md
printf 'x = obj.method(x)\n' > call.py
printf 'we met today.Then we left\n' > typo.txt
printf 'José Saramago wrote a résumé at the CAFÉ\n' > cafe.txt
"$BITSIFT" index . -q || { echo "index failed"; exit 2; }
q() { "$BITSIFT" query --all "$@"; }

# The rows: each finds its file by the part a person types.
check "stdio finds <stdio.h>" "$(lines apart.txt bare.txt inc.c)" "$(q stdio)"
check "license finds LICENSE.txt" "readme.txt" "$(q license)"
check "example finds www.example.com" "site.md" "$(q example)"
check "method finds obj.method(x)" "call.py" "$(q method)"
check "today finds today.Then" "typo.txt" "$(q today)"
for w in jose resume cafe José JOSE Résumé café; do
  check "$w finds José, résumé, CAFÉ" "cafe.txt" "$(q "$w")"
done
# A word is its whole term: exactly the files holding it.
check "stdio.h finds only stdio.h" "inc.c" "$(q stdio.h)"
check "LICENSE.txt" "readme.txt" "$(q LICENSE.txt)"
check "www.example.com" "site.md" "$(q www.example.com)"
check "obj.method(x) is the phrase of its parts" "call.py" "$(q 'obj.method(x)')"
check "resume.pdf finds nothing" "" "$(q resume.pdf)"
# Phrases run over parts.
check "phrase \"stdio h\": the header and the two words" "$(lines apart.txt inc.c)" "$(q '"stdio h"')"
check "phrase \"include stdio\"" "inc.c" "$(q '"include stdio"')"
check "phrase \"www example com\"" "site.md" "$(q '"www example com"')"
check "phrase \"today then we\"" "typo.txt" "$(q '"today then we"')"
check "phrase \"jose saramago\"" "cafe.txt" "$(q '"jose saramago"')"
check "phrase across parts in the wrong order" "" "$(q '"h stdio"')"
# OR, exclusion, prefix.
check "stdio OR license" "$(lines apart.txt bare.txt inc.c readme.txt)" "$(q 'stdio OR license')"
check "include -stdio" "lib.c" "$(q 'include -stdio')"
check "include -- -stdio" "lib.c" "$(q include -- -stdio)"
check "stdio -h" "bare.txt" "$(q stdio -- -h)"
check "licen* reaches LICENSE.txt" "readme.txt" "$(q 'licen*')"
check "exam* reaches www.example.com" "site.md" "$(q 'exam*')"
check "std* reaches stdio and stdlib" "$(lines apart.txt bare.txt inc.c lib.c)" "$(q 'std*')"
check "caf* reaches CAFÉ" "cafe.txt" "$(q 'caf*')"
check "stdio.* is the prefix stdio" "$(lines apart.txt bare.txt inc.c)" "$(q 'stdio.*')"
# --words and --queries read the same terms.
check "--words stdio method" "" "$(q --words stdio method)"
check "--words stdio include" "$(lines inc.c)" "$(q --words stdio include)"
check "--queries: one term per row" \
  "$(printf '1\tapart.txt\n1\tbare.txt\n1\tinc.c\n2\treadme.txt\n3\tsite.md\n4\tcall.py\n5\ttypo.txt\n6\tcafe.txt\n7\tcafe.txt\n8\tcafe.txt')" \
  "$(printf 'stdio\nlicense\nexample\nmethod\ntoday\njose\nresume\ncafe\n' | q --queries -)"
check "--count" "3" "$(q --count stdio)"

# --lines: the part is what is coloured and what the JSON span covers.
check "--lines stdio" "inc.c:1:#include <stdio.h>" "$(q --lines stdio --in inc.c)"
check "--lines colours the part" $'inc.c:1:#include <\e[1;31mstdio\e[0m.h>' \
  "$(q --lines --color always stdio --in inc.c | sed 's/\x1b\[35m//g; s/\x1b\[32m//g; s/\x1b\[0m:/:/g')"
json=$(q --lines --json stdio --in inc.c)
has "--lines --json: the span is the part" '"spans":[[10,15]]' "$json"
json=$(q --lines --json stdio.h --in inc.c)
has "--lines --json: a whole word's span is the word" '"spans":[[10,17]]' "$json"
json=$(q --lines --json jose --in cafe.txt)
has "--lines --json: a folded word's span is its bytes" '"spans":[[0,5]]' "$json"
json=$(q --lines --json '"stdio h"' --in inc.c)
has "--lines --json: a phrase of parts" '"spans":[[10,17]]' "$json"

# An index that keeps diacritics: josé is not jose. The rule is stored with the index.
"$BITSIFT" index . --index "$WORK/keep" --keep-diacritics -q || { echo "index failed"; exit 2; }
k() { "$BITSIFT" query --index "$WORK/keep" --all "$@"; }
check "keep: jose finds nothing" "" "$(k jose)"
check "keep: josé finds José" "cafe.txt" "$(k josé)"
check "keep: JOSÉ finds José" "cafe.txt" "$(k JOSÉ)"
check "keep: café" "cafe.txt" "$(k café)"
check "keep: parts still" "$(lines apart.txt bare.txt inc.c)" "$(k stdio)"
check "keep: --queries" "$(printf '2\tcafe.txt')" "$(printf 'jose\njosé\n' | k --queries -)"
has "keep: --lines --json span" '"spans":[[0,5]]' "$(k --lines --json josé --in cafe.txt)"
check "keep: an update keeps the rule" "" \
  "$("$BITSIFT" index . --index "$WORK/keep" -q && k jose)"
check "two indexes that read words differently are refused: exit 2" 2 \
  "$("$BITSIFT" query --index "$WORK/keep" --index .bitsift --all stdio > /dev/null 2>&1; echo $?)"
has "two indexes that read words differently: the reason" "read words differently" \
  "$("$BITSIFT" query --index "$WORK/keep" --index .bitsift --all stdio 2>&1)"
err=$("$BITSIFT" index . --index "$WORK/keep" --rebuild 2>&1 > /dev/null)
check "--rebuild without --keep-diacritics folds again" "cafe.txt" "$(k jose)"
# Changing the rule of an existing index rebuilds it, and says so.
err=$("$BITSIFT" index . --keep-diacritics 2>&1 > /dev/null)
has "a changed rule: the note" "indexed every file again: its setting tokens.keep_diacritics changed" "$err"
check "a changed rule: applied" "" "$(q jose)"

finish
