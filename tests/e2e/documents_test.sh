#!/usr/bin/env bash
# End-to-end: what `bitsift index` reads as documents, through the real binary: legacy
# encodings, BOMs, HTML, man pages, PDFs, compressed files, a decompression bomb, ignore rules
# and the flags --no-ignore, --glob, --hidden, --encoding; the line numbers --lines prints for
# each kind. Test files are made here with iconv, gzip, xz, bzip2, zstd and tests/data/make-pdf.
# Usage: documents_test.sh BITSIFT
source "$(dirname "$0")/lib.sh" "$1"
for tool in iconv gzip xz bzip2 zstd; do
  command -v "$tool" >/dev/null || { echo "missing $tool (scripts/install-deps)"; exit 2; }
done

q() { "$BITSIFT" query "$@" 2>&1 | tr '\n' ' ' | sed 's/ $//'; }

D=$WORK/docs
mkdir -p "$D/enc" "$D/web" "$D/packed"
cd "$D" || exit 2

# Texts kept in legacy encodings (each long enough for ICU's detector).
zh="布隆过滤器是一种空间效率很高的概率数据结构，用来判断一个元素是否在一个集合中。搜索引擎在建立索引的时候经常使用这种数据结构。"
ja="ブルームフィルタは、ある要素が集合に含まれているかどうかを調べるための確率的なデータ構造です。東京の図書館で古い新聞を探す。"
ru="Фильтр Блума - это вероятностная структура данных, которая позволяет проверить, принадлежит ли элемент множеству. Москва славится библиотеками."
de="Ein Bloom-Filter ist eine probabilistische Datenstruktur, mit der man prüfen kann, ob ein Element zu einer Menge gehört. Die Straße vor der Bücherei."
printf '%s\n' "$zh" > enc/zh-utf8.txt
printf '%s\n' "$zh" | iconv -t GB18030 > enc/zh-gb18030.txt
printf '%s\n' "$ja" | iconv -t SHIFT_JIS > enc/ja-sjis.txt
printf '%s\n' "$ja" | iconv -t EUC-JP > enc/ja-eucjp.txt
printf '%s\n' "$ru" | iconv -t KOI8-R > enc/ru-koi8r.txt
printf '%s\n' "$ru" | iconv -t CP1251 > enc/ru-cp1251.txt
printf '%s\n' "$de" | iconv -t ISO-8859-1 > enc/de-latin1.txt
printf '%s\n' "$ru" | iconv -t UTF-16 > enc/ru-utf16.txt  # with a byte-order mark
printf '%s\n' "$zh" | iconv -t UTF-32 > enc/zh-utf32.txt

# HTML: what a reader sees.
cat > web/page.html <<'HTML'
<!DOCTYPE html><html><head><title>Pagetitle</title>
<style>.styleclass { color: red }</style>
<script>var scriptvariable = "<p>scripttext</p>";</script></head>
<body class="bodyclass"><!-- commentword -->
<p>Caf&eacute; &amp; friends &quot;quoted&quot;</p><p>first</p><p>second</p>
<a href="http://hrefword.example/" title="attrword">linktext</a>
</body></html>
HTML
printf '<html><head><meta charset="windows-1251"></head><body><p>%s</p></body></html>\n' "$ru" |
  iconv -t CP1251 > web/ru-cp1251.html

# Compressed single files.
echo "gzipped plainword" | gzip > packed/notes.txt.gz
echo "xzipped plainword" | xz > packed/notes.txt.xz
echo "bzipped plainword" | bzip2 > packed/notes.txt.bz2
echo "zstded plainword" | zstd -q > packed/notes.txt.zst
gzip -c web/page.html > packed/page.html.gz
head -c 5000000 /dev/zero | tr '\0' 'a' | gzip > packed/bomb.txt.gz
echo "not really gzip" > packed/broken.gz

# Man pages: roff source read as `man` shows it, under man1/ or named NAME.SECTION, also
# compressed; a file so named whose text is not roff stays text.
mkdir -p man/man1 man/other
cat > man/man1/finder.1 <<'ROFF'
.\" A comment: commentword
.TH FINDER 1 "2024-01-02" "finder 1.0" "User Commands"
.SH NAME
finder \- find things
.SH SYNOPSIS
\fBgrep\fR [\fIOPTION\fR] \fB\-\-colour\fP
.SH DESCRIPTION
The
.B boldword
and
.BR joined (1)
say \(lqquoted\(rq and \*(lqstringed\*(rq.
.PP
Tail\fBbold\fRmix line with manlineword.
ROFF
cp man/man1/finder.1 man/other/finder.8
gzip -c man/man1/finder.1 > man/other/packed.1.gz
printf 'not roff at all: \\fBplaintextword\\fR\n' > man/other/notes.1

# PDFs: made here from text (tests/data/make-pdf), two pages; a damaged one.
"$SOURCE_DIR/tests/data/make-pdf" pdf-doc.pdf "pdffirstpage words|second line" "other page|pdfpageword here"
mkdir -p pdfs
printf '%%PDF-1.4\nthis is not a real pdf\n' > pdfs/broken.pdf

out=$("$BITSIFT" index . --max-decompressed-size 1000000 2>"$WORK/err"); code=$?
check "index exit" 0 "$code"
check "summary: bomb skipped" 1 "$(grep -c 'decompression-limit 1' <<<"$out")"
check "summary: broken skipped" 1 "$(grep -c 'bad-compressed 1' <<<"$out")"
check "bomb is a warning" 1 "$(grep -c 'warning: skipped packed/bomb.txt.gz (decompression-limit' "$WORK/err")"

# Every encoding answers as the UTF-8 text.
check "Chinese in UTF-8, GB18030, UTF-32" "enc/zh-gb18030.txt enc/zh-utf32.txt enc/zh-utf8.txt" "$(q 布隆过滤器)"
check "Japanese in Shift_JIS, EUC-JP" "enc/ja-eucjp.txt enc/ja-sjis.txt" "$(q 東京 図書館)"
check "Russian in KOI8-R, CP1251, UTF-16, HTML" "enc/ru-cp1251.txt enc/ru-koi8r.txt enc/ru-utf16.txt web/ru-cp1251.html" "$(q Москва библиотеками)"
check "German in ISO-8859-1" "enc/de-latin1.txt" "$(q Straße Bücherei prüfen)"

# HTML: text yes, markup no.
check "html title" "packed/page.html.gz web/page.html" "$(q pagetitle)"
check "html entities" "packed/page.html.gz web/page.html" "$(q café friends quoted)"
check "html link text" "packed/page.html.gz web/page.html" "$(q linktext)"
for word in styleclass scriptvariable scripttext bodyclass commentword hrefword attrword; do
  check "html: no $word" 1 "$(status "$BITSIFT" query "$word")"
done
check "html: </p><p> is a word break" 1 "$(status "$BITSIFT" query firstsecond)"

# Man pages: the words man shows, not the roff source's.
check "man: \\fBgrep\\fR is grep" "man/man1/finder.1 man/other/finder.8 man/other/packed.1.gz" "$(q grep)"
check "man: no fbgrep" 1 "$(status "$BITSIFT" query fbgrep)"
check "man: no fr" 1 "$(status "$BITSIFT" query fr boldword)"
check "man: macro arguments" "man/man1/finder.1 man/other/finder.8 man/other/packed.1.gz" "$(q boldword '"joined 1"' quoted stringed colour)"
check "man: no macro names" 1 "$(status "$BITSIFT" query th sh boldword)"
check "man: no comments" 1 "$(status "$BITSIFT" query commentword)"
check "man: font escapes inside a word" "man/man1/finder.1 man/other/finder.8 man/other/packed.1.gz" "$(q tailboldmix)"
check "man: a name without roff is text" "man/other/notes.1" "$(q fbplaintextword)"
src=$(grep -n manlineword man/man1/finder.1 | cut -d: -f1)
check "man --lines: the source line" "man/man1/finder.1:$src:Tailboldmix line with manlineword." "$("$BITSIFT" query --lines manlineword --in man/man1)"
check "man --lines: a compressed page's decompressed line" "man/other/packed.1.gz:$src:Tailboldmix line with manlineword." "$("$BITSIFT" query --lines manlineword --in man/other/packed.1.gz)"

# PDFs: their text, the page in --lines.
check "pdf: found by its words" "pdf-doc.pdf" "$(q pdfpageword pdffirstpage)"
check "pdf --lines: page and line" "pdf-doc.pdf:p2:2:pdfpageword here" "$("$BITSIFT" query --lines pdfpageword)"
check "pdf --lines: first page" "pdf-doc.pdf:p1:1:pdffirstpage words" "$("$BITSIFT" query --lines pdffirstpage)"
json=$("$BITSIFT" query --lines --json pdfpageword)
has "pdf --json: page" '"line":2,"text_line":' "$json"
has "pdf --json: page number" '"page":2,' "$json"
check "pdf: damaged one skipped" 1 "$(grep -c 'bad-document 1' <<<"$out")"
check "pdf: damaged one is a warning" 1 "$(grep -c 'warning: skipped pdfs/broken.pdf (bad-document' "$WORK/err")"

# HTML --lines: the line of the HTML source, the text as a reader sees it.
src=$(grep -n linktext web/page.html | cut -d: -f1)
check "html --lines: the source line" "web/page.html:$src:linktext" "$("$BITSIFT" query --lines linktext --in web/page.html)"
src=$(grep -n '>second<' web/page.html | cut -d: -f1)
check "html --lines: a line of several paragraphs" "web/page.html:$src:second" "$("$BITSIFT" query --lines second --in web/page.html)"
has "html --json: text_line" '"text_line":' "$("$BITSIFT" query --lines --json linktext --in web/page.html)"
check "text --json: no text_line" 0 "$("$BITSIFT" query --lines --json plainword | grep -c text_line)"
check "gzip --lines: the decompressed line" "packed/notes.txt.gz:1:gzipped plainword" "$("$BITSIFT" query --lines gzipped)"

# Compressed files: by their content, under their own path.
check "compressed" "packed/notes.txt.bz2 packed/notes.txt.gz packed/notes.txt.xz packed/notes.txt.zst" "$(q plainword)"
check "bomb not indexed" 1 "$(status "$BITSIFT" query aaaaaaaa)"

# The encoding each document was read in: `query --json` and `stats`, through an update and a
# compaction (merges carry it), and `check`.
encs() {  # index_path=encoding of every hit
  "$BITSIFT" query --json "$@" 2>&1 |
    sed -E 's/.*"index_path":"([^"]*)".*"encoding":"([^"]*)".*/\1=\2/' | tr '\n' ' ' | sed 's/ $//'
}
stat_count() { "$BITSIFT" stats | awk -v e="$1" '/^encodings/ {on=1; next} on && NF==0 {on=0} on && $1==e {print $2}'; }
check "json: Chinese" "enc/zh-gb18030.txt=GB18030 enc/zh-utf32.txt=UTF-32LE enc/zh-utf8.txt=UTF-8" "$(encs 布隆过滤器)"
check "json: Japanese" "enc/ja-eucjp.txt=EUC-JP enc/ja-sjis.txt=Shift_JIS" "$(encs 東京 図書館)"
check "json: Russian" "enc/ru-cp1251.txt=windows-1251 enc/ru-koi8r.txt=KOI8-R enc/ru-utf16.txt=UTF-16LE web/ru-cp1251.html=windows-1251" "$(encs Москва библиотеками)"
check "json: compressed and HTML" "packed/notes.txt.bz2=UTF-8 packed/notes.txt.gz=UTF-8 packed/notes.txt.xz=UTF-8 packed/notes.txt.zst=UTF-8" "$(encs plainword)"
check "stats: GB18030" 1 "$(stat_count GB18030)"
check "stats: windows-1251" 2 "$(stat_count windows-1251)"
check "stats: KOI8-R" 1 "$(stat_count KOI8-R)"
check "stats: UTF-16LE" 1 "$(stat_count UTF-16LE)"
check "stats: every live document counted once" "$("$BITSIFT" stats | awk '/^documents/ {print $2}')" \
  "$("$BITSIFT" stats | awk '/^encodings/ {on=1; next} on && NF==0 {on=0} on {n+=$2} END {print n}')"
# Update: one file re-encoded (KOI8-R -> UTF-16), one removed, one added in Shift_JIS.
printf '%s\n' "$ru" | iconv -t UTF-16 > enc/ru-koi8r.txt
rm enc/ja-eucjp.txt
printf '%s\n' "$ja" | iconv -t SHIFT_JIS > enc/ja-sjis-2.txt
"$BITSIFT" index . --quiet --max-decompressed-size 1000000
check "update: json" "enc/ru-cp1251.txt=windows-1251 enc/ru-koi8r.txt=UTF-16LE enc/ru-utf16.txt=UTF-16LE web/ru-cp1251.html=windows-1251" "$(encs Москва библиотеками)"
check "update: json, new segment" "enc/ja-sjis-2.txt=Shift_JIS enc/ja-sjis.txt=Shift_JIS" "$(encs 東京 図書館)"
check "update: stats KOI8-R gone" "" "$(stat_count KOI8-R)"
check "update: stats EUC-JP gone" "" "$(stat_count EUC-JP)"
check "update: stats UTF-16LE" 2 "$(stat_count UTF-16LE)"
check "update: stats Shift_JIS" 2 "$(stat_count Shift_JIS)"
# The update's segment and the first one are both small: the merge policy joins them, and the
# merge carries every document's encoding (the counts above are the merged segment's).
check "update: small segments merged" 1 "$("$BITSIFT" stats | grep -c '^segments: 1$')"
check "update: check" 0 "$(status "$BITSIFT" check)"
check "compact" 0 "$(status "$BITSIFT" compact)"
check "compact: one segment" 1 "$("$BITSIFT" stats | grep -c '^segments: 1')"
check "compact: json" "enc/ru-cp1251.txt=windows-1251 enc/ru-koi8r.txt=UTF-16LE enc/ru-utf16.txt=UTF-16LE web/ru-cp1251.html=windows-1251" "$(encs Москва библиотеками)"
check "compact: stats Shift_JIS" 2 "$(stat_count Shift_JIS)"
check "compact: stats GB18030" 1 "$(stat_count GB18030)"
check "compact: check" 0 "$(status "$BITSIFT" check)"
printf '%s\n' "$ru" | iconv -t KOI8-R > enc/ru-koi8r.txt  # as it was, for what follows

# A forced encoding for the whole run.
"$BITSIFT" index enc --quiet --encoding KOI8-R
check "--encoding KOI8-R" "ru-koi8r.txt" "$(cd enc && q Москва)"
check "--encoding unknown" 2 "$(status "$BITSIFT" index enc --encoding no-such-thing)"
check "--encoding with no name" 2 "$(status "$BITSIFT" index enc --encoding "")"
rm -rf enc/.bitsift

# Ignore rules in a git work tree.
R=$WORK/repo
mkdir -p "$R/.git/info" "$R/build" "$R/src/gen" "$R/logs" "$R/.config"
cd "$R" || exit 2
printf '*.log\n!keep.log\n/build/\n' > .gitignore
printf 'gen/\n' > src/.gitignore
printf 'private.txt\n' > .git/info/exclude
printf 'draft*\n' > .ignore
for f in a.txt keep.log debug.log build/out.txt src/b.txt src/gen/c.txt private.txt draft1.txt \
         logs/x.log .config/hidden.txt .env; do
  echo "repoword" > "$f"
done
out=$("$BITSIFT" index . --verbose 2>"$WORK/err")
check "gitignore, exclude, .ignore" "a.txt keep.log src/b.txt" "$(q repoword)"
check "ignored counted" 1 "$(grep -c 'ignored 6' <<<"$out")"
check "ignored named with --verbose" 1 "$(grep -c 'skipped src/gen (ignored)' "$WORK/err")"
"$BITSIFT" index . --quiet 2>"$WORK/err"
check "ignored not named without --verbose" 0 "$(grep -c 'ignored' "$WORK/err")"
"$BITSIFT" index . --quiet --rebuild --no-ignore
check "--no-ignore" "a.txt build/out.txt debug.log draft1.txt keep.log logs/x.log private.txt src/b.txt src/gen/c.txt" "$(q repoword)"
"$BITSIFT" index . --quiet --rebuild --hidden
check "--hidden" ".config/hidden.txt .env a.txt keep.log src/b.txt" "$(q repoword)"
check "--hidden never indexes .git or the index" 1 "$(status "$BITSIFT" query gitdirword)"
# The rules are stored with the index: an update without flags applies them again.
echo "repoword" > .config/later.txt
out=$("$BITSIFT" index .)
check "an update keeps --hidden" ".config/hidden.txt .config/later.txt .env a.txt keep.log src/b.txt" "$(q repoword)"
check "an update keeps the rules: no rebuild" 1 "$(grep -c '^updated.* 1 added, 0 changed, 0 removed,' <<<"$out")"
check "status applies the stored rules" 0 "$(status "$BITSIFT" status)"
# A flag that changes the rules rebuilds with them.
out=$("$BITSIFT" index . --glob '*.txt' --glob '!src/**')
check "a new rule rebuilds" 1 "$(grep -c '^indexed' <<<"$out")"
check "--glob added to the stored rules" ".config/hidden.txt .config/later.txt a.txt draft1.txt private.txt" "$(q repoword)"
"$BITSIFT" index . --quiet --rebuild --glob '*.txt' --glob '!src/**'
check "--glob (overrides .ignore and exclude too)" "a.txt draft1.txt private.txt" "$(q repoword)"
"$BITSIFT" index . --quiet --rebuild -g '!*.log'
check "--glob exclude only" "a.txt src/b.txt" "$(q repoword)"
"$BITSIFT" index . --quiet --rebuild --glob debug.log
check "--glob overrides .gitignore" "debug.log" "$(q repoword)"
# Outside a git work tree .gitignore does not apply; .ignore does.
rm -rf .git
"$BITSIFT" index . --quiet --rebuild
check "no work tree" "a.txt build/out.txt debug.log keep.log logs/x.log private.txt src/b.txt src/gen/c.txt" "$(q repoword)"

finish
