#!/usr/bin/env bash
# End-to-end: ranked answers (--rank, --any, --limit, --json score, --queries, snippets with
# --lines) and English stems (index --stem): best first, scores that do not depend on how the
# index is split, each document's best lines, word forms found by unquoted words while quoted
# words stay exact.
# Usage: ranking_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"
mkdir -p "$WORK/t"
cd "$WORK/t" || exit 2
printf 'heat conduction in composite slabs\nheat heat heat\n' > heat.txt
printf 'conduction of heat in a long story of many other words\n' > cond.txt
printf 'composite materials and their slabs are strong\n' > slabs.txt
printf 'nothing about it at all here\n' > none.txt
printf 'models of the sea\n' > models.txt
printf 'a modelling approach\n' > modelling.txt
"$BITSIFT" index . -q || { echo "index failed"; exit 2; }
q() { "$BITSIFT" query --all "$@"; }

# heat.txt holds heat four times in 8 words; cond.txt once in 11: BM25 puts heat.txt first.
check "--rank: best first" "$(lines heat.txt cond.txt)" "$(q --rank heat conduction)"
check "without --rank: path order" "$(lines cond.txt heat.txt)" "$(q heat conduction)"
check "--any: any word, best first (two words in 7 before two in 11)" "$(lines heat.txt slabs.txt cond.txt)" \
  "$(q --any heat conduction composite slabs)"
check "--any --limit 1" "heat.txt" "$(q --any --limit 1 heat conduction composite slabs)"
check "--any keeps exclusions" "slabs.txt" "$(q --any conduction slabs -- -heat)"
# The question's rare words (heat, conduction, composite, slabs) outweigh its common ones.
check "--words --any reads a pasted question" "heat.txt" \
  "$(q --words --any 'What problems of heat conduction in composite slabs have been solved?' |
    head -1)"
check "--words --any: documents with only common words come last" "models.txt" \
  "$(q --words --any 'What problems of heat conduction in composite slabs have been solved?' |
    tail -1)"
j=$(q --any --json heat slabs)
has "--json score" '"score":' "$j"
check "--queries: best first within a query" "$(printf '1\theat.txt\n1\tcond.txt')" \
  "$(printf 'heat conduction\n' | q --rank --queries -)"
check "--count --any counts every match" "3" "$(q --count --any heat slabs)"
# The same scores from an index in several segments and from two indexes as one.
scores() { q --any --json "$@" | grep -o '"path":"[^"]*","index_path":"[^"]*".*"score":[0-9.e+-]*' |
  sed 's/"root".*"score"/"score"/; s/"index_path":"[^"]*",//'; }
one=$(scores heat conduction slabs)
printf 'more heat here\n' > extra.txt
"$BITSIFT" index . -q && rm extra.txt && "$BITSIFT" index . -q
check "an update in several segments gives the same scores" "$one" "$(scores heat conduction slabs)"
# Snippets: ranked --lines prints each document's best lines (most distinct query terms, ties
# to the earlier line), in file order; unranked --lines prints every matching line. A tree of
# its own, so that the scores above do not change.
mkdir -p "$WORK/s" && cd "$WORK/s" || exit 2
long='alpha beta gamma together, and then a long tail of words that goes on and on'
lines 'alpha on the first line' 'alpha again' 'beta alone' "$long" 'nothing here' \
  'alpha and beta' 'gamma only' 'beta alpha' > snip.txt
printf 'gamma\n' > other.txt
"$BITSIFT" index . -q || { echo "index failed"; exit 2; }
check "--any --lines: three lines, those with most terms, in file order" \
  "$(lines "snip.txt:4:$long" 'snip.txt:6:alpha and beta' 'snip.txt:8:beta alpha')" \
  "$(q --any --lines alpha beta gamma | grep '^snip')"
check "--rank --lines: ties go to the earlier lines" \
  "$(lines 'snip.txt:1:alpha on the first line' 'snip.txt:2:alpha again' "snip.txt:4:$long")" \
  "$(q --rank --lines alpha)"
check "--lines without --rank prints every matching line" \
  "$(lines 'snip.txt:1:alpha on the first line' 'snip.txt:2:alpha again' "snip.txt:4:$long" \
    'snip.txt:6:alpha and beta' 'snip.txt:8:beta alpha')" "$(q --lines alpha)"
check "--snippet-lines 1" "snip.txt:4:$long" \
  "$(q --any --lines --snippet-lines 1 alpha beta gamma | grep '^snip')"
check "--snippet-lines 0: every matching line" "7" \
  "$(q --any --lines --snippet-lines 0 alpha beta gamma | grep -c '^snip')"
check "--max-columns cuts a snippet's line" "snip.txt:4:alpha beta gamma tog[...]" \
  "$(q --any --lines --max-columns 20 --snippet-lines 1 alpha beta gamma | grep '^snip')"
check "snippets come document by document, best first" "$(q --any alpha beta gamma)" \
  "$(q --any --lines alpha beta gamma | cut -d: -f1 | uniq)"
has "--color highlights a snippet" $'\e[1;31mgamma\e[0m' \
  "$(q --any --lines --color always alpha beta gamma | grep together)"
check "--json carries the same lines" "4 6 8" \
  "$(q --any --lines --json alpha beta gamma | grep '"path":"snip.txt"' |
    grep -o '"line":[0-9]*' | cut -d: -f2 | paste -sd' ')"
check "--queries: snippets per query" "$(printf '1\tsnip.txt:4:%s' "$long")" \
  "$(printf 'alpha beta gamma\n' | q --any --lines --snippet-lines 1 --queries - | grep snip)"
check "--snippet-lines needs --rank or --any" "2" "$(status q --lines --snippet-lines 2 alpha)"
check "--snippet-lines needs --lines" "2" "$(status q --rank --snippet-lines 2 alpha)"
cd "$WORK/t" || exit 2
# English stems.
check "no stems: model finds only model" "" "$(q model)"
"$BITSIFT" index . -q --stem
check "--stem: model finds its forms" "$(lines modelling.txt models.txt)" "$(q model)"
check "--stem: a quoted word stays exact" "models.txt" "$(q '"models"')"
check "--stem is kept by updates" "$(lines modelling.txt models.txt)" \
  "$("$BITSIFT" index . -q; q model)"
check "--stem: --lines marks the forms" "$(lines 'modelling.txt:1:a modelling approach' 'models.txt:1:models of the sea')" \
  "$(q --lines model)"
check "--rebuild without --stem drops them" "" "$("$BITSIFT" index . -q --rebuild; q model)"
finish
