// HTML to text: what a reader sees, nothing from markup, in any pieces.
#include "documents/html.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "documents/decode.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::documents::HtmlText;
using bitsift::documents::HtmlToText;
using bitsift::documents::IsHtmlName;
using bitsift::documents::StringSink;

namespace {

// Words of the text, whitespace runs folded to one space (block separators are newlines).
std::string Words(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = true;
    } else {
      if (space && !out.empty()) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

std::string InPieces(const std::string& html, size_t piece,
                     std::vector<uint32_t>* source_lines = nullptr) {
  StringSink sink;
  HtmlToText h(sink, source_lines);
  for (size_t i = 0; i < html.size(); i += piece) h.Write(std::string_view(html).substr(i, piece));
  h.Close();
  CHECK(sink.closed);
  return sink.text;
}

}  // namespace

TEST_CASE("HTML: title and body text, nothing from markup", "[documents][html]") {
  const std::string html =
      "<!DOCTYPE html><html lang=\"en\"><head><title>Bloom &amp; Co</title>"
      "<meta name=\"keywords\" content=\"metaword\">"
      "<style>.stylerule { color: red }</style>"
      "<script>var scriptvar = \"<p>scripttext</p>\";</script></head>"
      "<body class=\"bodyclass\"><!-- commentword -->"
      "<h1 id=\"anchorid\">Heading</h1>"
      "<p>Caf&eacute; &lt;tag&gt; &quot;quoted&quot; &#x4E2D;&#25991; a&nbsp;b &copy;</p>"
      "<p>first</p><p>second</p>"
      "<div>one<br>two<hr>three</div>"
      "<p>in<b>line</b> <a href=\"http://hrefword.example\" title=\"titleattr\">link</a> "
      "<span>sp</span>an</p>"
      "<ul><li>item1</li><li>item2</li></ul>"
      "<table><tr><td>cell1</td><td>cell2</td></tr></table>"
      "<img src=\"x.png\" alt=\"altword\">"
      "<template><p>templateword</p></template>"
      "<noscript>noscriptword</noscript>"
      "</body></html>";
  const std::string text = HtmlText(html);
  CHECK(Words(text) ==
        "Bloom & Co Heading Café <tag> \"quoted\" 中文 a\u00A0b © first second one two three "
        "inline link span item1 item2 cell1 cell2 noscriptword");
  for (const char* absent :
       {"metaword", "stylerule", "scriptvar", "scripttext", "bodyclass", "commentword", "anchorid",
        "hrefword", "titleattr", "altword", "templateword", "keywords"}) {
    INFO(absent);
    CHECK(text.find(absent) == std::string::npos);
  }
  // A block boundary is a word break for the tokenizer; inline markup is not.
  auto tokens = bitsift::tokenizer::TokenSet(text);
  CHECK(std::count(tokens.begin(), tokens.end(), "first") == 1);
  CHECK(std::count(tokens.begin(), tokens.end(), "firstsecond") == 0);
  CHECK(std::count(tokens.begin(), tokens.end(), "inline") == 1);
  CHECK(std::count(tokens.begin(), tokens.end(), "span") == 1);
}

TEST_CASE("HTML: malformed markup is recovered from", "[documents][html]") {
  CHECK(Words(HtmlText("<p>unclosed <b>bold <i>italic</p><p>next")) == "unclosed bold italic next");
  CHECK(Words(HtmlText("text before any tag <p>and after")) == "text before any tag and after");
  CHECK(Words(HtmlText("<td>cell<table><tr><td>a</td><td>b</table>")) == "cell a b");
  // Unknown references stay text; "&amp" without ';' is '&', as the standard has it.
  CHECK(Words(HtmlText("a &unknown; b &amp c & d &lt;")) == "a &unknown; b & c & d <");
  CHECK(Words(HtmlText("<div <p>x</p></div>>y")).find("x") != std::string::npos);
  CHECK(Words(HtmlText("<p>open comment <!-- never closed")) == "open comment");
  CHECK(Words(HtmlText("<script>unterminated script")) == "");
  CHECK(Words(HtmlText("<SCRIPT>upper</SCRIPT><STYLE>x</STYLE><P>Shout</P>")) == "Shout");
  CHECK(Words(HtmlText("")) == "");
  CHECK(Words(HtmlText("no markup at all")) == "no markup at all");
  // Deep nesting does not crash or lose the text.
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "<div>";
  deep += "deepword";
  CHECK(HtmlText(deep).find("deepword") != std::string::npos);
}

TEST_CASE("XHTML: CDATA in scripts, self-closing tags, an XML declaration", "[documents][html]") {
  const std::string xhtml =
      "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>\n"
      "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" "
      "\"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">\n"
      "<html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>X</title>"
      "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\"/></head>"
      "<body><p>été<br/>hiver</p><script type=\"text/javascript\">//<![CDATA[\n"
      "var a = \"<p>notext</p>\";\n//]]></script></body></html>";
  // The text is UTF-8 already: the declared charset is not applied again.
  CHECK(Words(HtmlText(xhtml)) == "X été hiver");
}

TEST_CASE("HTML in any pieces gives the same text", "[documents][html]") {
  std::string html = "<html><head><title>Pieces</title></head><body>";
  for (int i = 0; i < 300; ++i) {
    html += "<p class=\"c\">paragraph " + std::to_string(i) +
            " with <b>bold</b> <i>and</i> caf&eacute; 布隆过滤器</p>\n<script>var x" +
            std::to_string(i) + ";</script><!-- c" + std::to_string(i) + " -->";
  }
  html += "</body></html>";
  const std::string whole = HtmlText(html);
  for (size_t piece : {1, 2, 7, 64, 4096}) {
    INFO(piece);
    CHECK(InPieces(html, piece) == whole);
  }
}

TEST_CASE("HTML: the text and its lines are the same in any pieces, however large",
          "[documents][html]") {
  // Broken markup of every kind libxml2 recovers from by where its chunks end (a second page's
  // head inside a body, stray end tags, empty comments, cut references), over 2.5 MiB so that
  // the parser's own fixed pieces end at many kinds of places.
  const char* kBroken[] = {"</title>",    "<meta charset=x>", "</head>", "<!-->", "</<>",
                           "&eacute",     "&Lstrok;",         "</html>", "<p",    "\n</x>",
                           "<script>a<b", "</script>",        "<!--",    "-->",   "&#x41"};
  std::string html = "<html><head><title>t</title></head><body>";
  uint32_t state = 12345;
  while (html.size() < (5 << 19)) {
    state = state * 1103515245 + 12345;
    html += "word" + std::to_string(state % 1000) + (state & 0x10000 ? "\n" : " ");
    if ((state >> 20) % 3 == 0) html += kBroken[(state >> 8) % std::size(kBroken)];
  }
  std::vector<uint32_t> whole_lines;
  const std::string whole = InPieces(html, html.size(), &whole_lines);
  CHECK(whole.size() > (1 << 19));
  for (size_t piece : {size_t{61}, size_t{4096}, (size_t{1} << 20) - 1, (size_t{1} << 20) + 7}) {
    INFO(piece);
    std::vector<uint32_t> lines;
    CHECK(InPieces(html, piece, &lines) == whole);
    CHECK(lines == whole_lines);
  }
}

namespace {
struct NamedReference {
  const char* name;
  const char* utf8;
};
// The HTML standard's list, as the library's table (scripts/gen-html5-entities).
constexpr NamedReference kReferences[] = {
#include "documents/html5_entities.inc"
};
}  // namespace

TEST_CASE("HTML: every named reference of the standard is decoded", "[documents][html]") {
  size_t checked = 0;
  for (const NamedReference& r : kReferences) {
    const std::string name = r.name, value = r.utf8;
    if (name.back() != ';' || Words(value).empty() || Words(value) != value) continue;
    INFO(name);
    // HTML 4's come through libxml2, the others through DecodeReferencesLibxmlLacks.
    CHECK(Words(HtmlText("<p>x&" + name + "x</p>")) == "x" + value + "x");
    ++checked;
  }
  CHECK(checked > 2000);
}

TEST_CASE("HTML: references libxml2 lacks, by the standard's rules", "[documents][html]") {
  using bitsift::documents::DecodeReferencesLibxmlLacks;
  CHECK(Words(HtmlText("<p>&Lstrok;&oacute;d&zacute;</p>")) == "\u0141\u00f3d\u017a");
  // Legacy references without ';', by the longest match; markup characters stay text.
  CHECK(Words(HtmlText("<p>caf&eacute bar AT&ampT &notit; &LTb&GT</p>")) ==
        "caf\u00e9 bar AT&T \u00acit; <b>");
  // No double decoding: "&amp;eacute;" is the text "&eacute;".
  CHECK(Words(HtmlText("<p>&amp;eacute; &amp;Lstrok;</p>")) == "&eacute; &Lstrok;");
  // Not references: unknown names, a bare '&', numbers (libxml2's).
  CHECK(DecodeReferencesLibxmlLacks("&nosuchname; & x &#233; &1x") ==
        "&nosuchname; & x &#233; &1x");
  // A reference cut between two writes is decoded whole.
  const std::string html = "<p>x &Lstrok;&oacute;d&zacute; &ccaron;esk&yacute; y</p>";
  for (size_t piece = 1; piece < 12; ++piece) {
    INFO(piece);
    CHECK(Words(InPieces(html, piece)) == Words(HtmlText(html)));
  }
  CHECK(Words(HtmlText(html)) == "x \u0141\u00f3d\u017a \u010desk\u00fd y");
}

TEST_CASE("HTML: a long text without markup streams through", "[documents][html]") {
  std::string html = "<p>";
  while (html.size() < (12 << 20)) html += "lorem ipsum dolor sit amet ";
  html += "lastword</p>";
  const std::string text = InPieces(html, 1 << 20);
  CHECK(text.size() > (12 << 20) - 100);
  CHECK(text.find("lastword") != std::string::npos);
}

TEST_CASE("HTML file names", "[documents][html]") {
  for (const char* yes : {"a.html", "b/c.htm", "X.HTML", "x.xhtml", "y.xht", "z.shtml"}) {
    CHECK(IsHtmlName(yes));
  }
  for (const char* no : {"html", "a.txt", "a.html.txt", "a.htmlx", "dir.html/file", ".html.d/x"}) {
    CHECK_FALSE(IsHtmlName(no));
  }
}

TEST_CASE("each line of an HTML text knows its source line", "[documents][html][lines]") {
  const std::string html =
      "<!DOCTYPE html>\n<html><head><title>Title</title></head>\n<body>\n"
      "<p>first paragraph</p>\n\n<p>second\nspans lines</p><p>third</p>\n"
      "<script>\nvar x;\n</script>\n<div>after &amp; script</div>\n</body></html>\n";
  for (size_t piece : {size_t{1}, size_t{7}, size_t{64}, html.size()}) {
    StringSink sink;
    std::vector<uint32_t> lines;
    HtmlToText h(sink, &lines);
    for (size_t i = 0; i < html.size(); i += piece) h.Write(html.substr(i, piece));
    h.Close();
    // Each text line's first word, and the line of the HTML that holds it.
    std::vector<std::string> text_lines;
    for (size_t at = 0; at < sink.text.size();) {
      size_t nl = sink.text.find('\n', at);
      if (nl == std::string::npos) nl = sink.text.size();
      text_lines.push_back(sink.text.substr(at, nl - at));
      at = nl + 1;
    }
    REQUIRE(lines.size() == text_lines.size());
    for (size_t k = 0; k < text_lines.size(); ++k) {
      const std::string& t = text_lines[k];
      const size_t word_end = t.find_first_of(" \n");
      const std::string word = t.substr(0, word_end);
      if (word.empty() || word.find_first_not_of(" \t") == std::string::npos) continue;
      // The source line holding the word (each word here is on one line only).
      size_t line = 1;
      const size_t at = html.find(word == "after" ? "<div>after" : word);
      for (size_t i = 0; i < at; ++i) line += html[i] == '\n';
      INFO("piece " << piece << ", text line " << k + 1 << ": " << t);
      CHECK(lines[k] == line);
    }
  }
}

// libxml2 2.9's push parser gave no text at all for a document starting with a stray end tag
// ("</div>" heading a fragment) and lost everything after the first text for one starting
// with "</ >"; the HTML standard ignores an end tag before any element. Found by fuzz_html.
TEST_CASE("HTML: an end tag before any element or text is ignored, its text kept",
          "[documents][html]") {
  CHECK(Words(HtmlText("</div>\n<p>Hello world</p>")) == "Hello world");
  CHECK(Words(HtmlText("</x>abc <p>second paragraph</p> more")) == "abc second paragraph more");
  CHECK(Words(HtmlText("</ >abc <p>second paragraph</p> more")) == "abc second paragraph more");
  CHECK(Words(HtmlText("</>abc <p>second</p> more")) == "abc second more");
  CHECK(Words(HtmlText("<!DOCTYPE html>\n<!-- </x> -->\n</div><p>x</p>y")) == "x y");
  // Source lines still count the stray tag's newlines.
  std::vector<uint32_t> lines;
  CHECK(HtmlText("</di\nv>\n<p>x</p>\n", &lines) == "x\n\n");
  CHECK(lines == std::vector<uint32_t>{3, 3});
  // In any pieces, a comment's "-->" cut in two included.
  const std::string html = "<!-- a > b --></p>\n<p>after the comment</p></q>tail";
  for (size_t piece = 1; piece < 16; ++piece) {
    INFO(piece);
    CHECK(Words(InPieces(html, piece)) == "after the comment tail");
  }
}

// The whitespace libxml2 hands over at the end of a document came with its line count reset:
// "<!DOCTYPE html>\n<p>x</p>\n" gave source lines {2, 1}. Found by fuzz_html.
TEST_CASE("HTML: source lines never go back at the end of a document", "[documents][html]") {
  for (const std::string html :
       {"<!DOCTYPE html>\n<p>x</p>\n", "\n\n<p>x</p>\n", "<p>a</p>\n\n<p>b</p>\n \n"}) {
    INFO(html);
    std::vector<uint32_t> lines;
    HtmlText(html, &lines);
    CHECK(std::is_sorted(lines.begin(), lines.end()));
  }
  std::vector<uint32_t> lines;
  CHECK(HtmlText("<!DOCTYPE html>\n<p>x</p>\n", &lines) == "x\n\n");
  CHECK(lines == std::vector<uint32_t>{2, 2});
}

TEST_CASE("HTML: a newline from a reference starts no line past the source's",
          "[documents][html][lines]") {
  std::vector<uint32_t> lines;
  CHECK(HtmlText("a&#xah", &lines) == "a\nh\n");
  CHECK(lines == std::vector<uint32_t>{1, 1});
  lines.clear();
  CHECK(HtmlText("<p>a&NewLine;b&#10;c</p>\n<p>d</p>", &lines) == "a\nb\nc\n\nd\n");
  REQUIRE(lines.size() == 5);
  CHECK(std::is_sorted(lines.begin(), lines.end()));
  CHECK(lines.front() == 1);
  CHECK(lines.back() == 2);  // never past the source's two lines
}

// Where libxml2 2.9's push parser kept or lost text by where its input was cut, the text is now
// the HTML standard's in any pieces. Found by fuzz_html (fuzz/regressions/fuzz_html/).
TEST_CASE("HTML: broken markup gives the same words in any pieces", "[documents][html]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"<!-->r <p>s</p>", "r s"},          // an empty comment closed at once
      {"<!--->r <p>s</p>", "r s"},         //
      {std::string("\0</h>\nb", 7), "b"},  // a NUL, then a stray end tag
      {"\x0e</l>\nc", "c"},                // a control character, then a stray end tag
      {"</<>o", "o"},                      // a '<' inside a stray end tag
      {"l</HTML>\nl", "l l"},              // text after the end of the document
      {"a</body>b</html >c", "a b c"},
  };
  for (const auto& [html, words] : cases) {
    INFO(html);
    CHECK(Words(HtmlText(html)) == words);
    for (size_t piece = 1; piece < 8; ++piece) {
      INFO(piece);
      CHECK(Words(InPieces(html, piece)) == words);
    }
  }
}
