#include "documents/html.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>
#include <string>

namespace bitsift::documents {
namespace {

// Text-level (inline) elements: they do not separate words. Every other element does.
constexpr const char* kInline[] = {
    "a",    "abbr", "acronym", "b",    "bdi",   "bdo",  "big",    "cite",   "code", "data",
    "del",  "dfn",  "em",      "font", "i",     "ins",  "kbd",    "mark",   "q",    "rp",
    "rt",   "ruby", "s",       "samp", "small", "span", "strike", "strong", "sub",  "sup",
    "time", "tt",   "u",       "var",  "wbr",   "nobr", "label",  "abbr"};

// Elements whose content no reader sees.
constexpr const char* kHidden[] = {"script", "style", "template"};

bool In(const char* name, const char* const* begin, const char* const* end) {
  return std::any_of(begin, end, [&](const char* s) { return std::strcmp(s, name) == 0; });
}

constexpr size_t kFlushBytes = 64 << 10;

}  // namespace

namespace {

struct NamedReference {
  const char* name;  // with its ';' where the standard has one
  const char* utf8;
};
constexpr NamedReference kNamedReferences[] = {
#include "documents/html5_entities.inc"
};

// The characters of the named reference `name` ("Lstrok;", "eacute"), or nullptr.
const char* LookUpReference(std::string_view name) {
  auto it = std::lower_bound(
      std::begin(kNamedReferences), std::end(kNamedReferences), name,
      [](const NamedReference& r, std::string_view n) { return std::string_view(r.name) < n; });
  return it != std::end(kNamedReferences) && std::string_view(it->name) == name ? it->utf8
                                                                                : nullptr;
}

// A code point as UTF-8 (ICU's U8_APPEND).
std::string Utf8Of(unsigned int c) {
  char buf[4];
  int32_t n = 0;
  UBool error = false;
  U8_APPEND(reinterpret_cast<uint8_t*>(buf), n, 4, static_cast<UChar32>(c), error);
  return error ? std::string() : std::string(buf, static_cast<size_t>(n));
}

bool AsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// The longest name of a named reference, ';' included ("CounterClockwiseContourIntegral;").
constexpr size_t kLongestReference = 33;

}  // namespace

std::string DecodeReferencesLibxmlLacks(std::string_view html) {
  std::string out;  // (sized at the first reference decoded: most pieces have none)
  size_t copied = 0;
  for (size_t amp = html.find('&'); amp != std::string_view::npos; amp = html.find('&', amp + 1)) {
    size_t end = amp + 1;
    while (end < html.size() && end - amp <= kLongestReference && AsciiAlnum(html[end])) ++end;
    if (end == amp + 1 || !((html[amp + 1] >= 'a' && html[amp + 1] <= 'z') ||
                            (html[amp + 1] >= 'A' && html[amp + 1] <= 'Z'))) {
      continue;  // not a named reference ("&#233;" and "& " are libxml2's)
    }
    const std::string name(html.substr(amp + 1, end - amp - 1));
    const bool semicolon = end < html.size() && html[end] == ';';
    // The standard's rule: the longest name that matches, with ';' where it has one; the
    // legacy references also match without it ("&eacute" before a space).
    const char* utf8 = semicolon ? LookUpReference(name + ";") : nullptr;
    // libxml2 decodes HTML 4's references written with their ';': those are left to it (so
    // that "&amp;eacute;" stays the text "&eacute;"), but for the two whose characters the
    // standard changed (&lang; &rang;).
    if (semicolon && utf8 != nullptr) {
      const htmlEntityDesc* known =
          htmlEntityLookup(reinterpret_cast<const xmlChar*>(name.c_str()));
      if (known != nullptr && Utf8Of(known->value) == utf8) continue;
    }
    size_t length = name.size() + 1;
    for (size_t n = name.size(); utf8 == nullptr && n >= 2; --n) {
      utf8 = LookUpReference(std::string_view(name).substr(0, n));
      length = n;
    }
    if (utf8 == nullptr) continue;
    if (copied == 0) out.reserve(html.size());
    out.append(html.substr(copied, amp - copied));
    // A character that is markup ("&ampT", "&LT") goes as a numeric reference, which libxml2
    // decodes: written as itself it would change the markup.
    for (const char* c = utf8; *c != '\0'; ++c) {
      if (std::strchr("<>&\"'", *c) != nullptr) {
        out.append("&#").append(std::to_string(static_cast<int>(*c))).append(";");
      } else {
        out.push_back(*c);
      }
    }
    copied = amp + 1 + length;
    amp = copied - 1;
  }
  if (copied == 0) return std::string(html);
  out.append(html.substr(copied));
  return out;
}

namespace {

// Where a document stands before its content: libxml2 2.9's push parser loses text after an end
// tag that comes before any element or text ("</div><p>x" gave no text at all, "</ >a<p>b" only
// "a"), where the HTML standard ignores such a tag. StrayEndTagsRemoved replaces each by an
// empty comment holding its newlines (so source lines still count), up to the first start tag
// or text; comments, a doctype and processing instructions before it are copied.
enum class Prologue { kBefore, kInComment, kDone };

// `dashes`: the '-' (0-2) that ended the last piece inside a comment, for a "-->" cut in two.
std::string StrayEndTagsRemoved(std::string_view html, Prologue* state, int* dashes) {
  std::string out;
  out.reserve(html.size());
  size_t i = 0;
  while (i < html.size() && *state != Prologue::kDone) {
    if (*state == Prologue::kInComment) {
      if ((*dashes == 2 && html[i] == '>') || (*dashes == 1 && html.substr(i, 2) == "->")) {
        const size_t n = static_cast<size_t>(3 - *dashes);
        out.append(html.substr(i, n));
        i += n;
        *dashes = 0;
        *state = Prologue::kBefore;
        continue;
      }
      const size_t end = html.find("-->", i);
      if (end == std::string_view::npos) {
        out.append(html.substr(i));
        const size_t last = html.find_last_not_of('-');
        const size_t trailing = last == std::string_view::npos || last < i
                                    ? html.size() - i + static_cast<size_t>(*dashes)
                                    : html.size() - 1 - last;
        *dashes = static_cast<int>(std::min<size_t>(trailing, 2));
        i = html.size();
      } else {
        out.append(html.substr(i, end + 3 - i));
        i = end + 3;
        *dashes = 0;
        *state = Prologue::kBefore;
      }
      continue;
    }
    const char c = html[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      out.push_back(c);
      ++i;
    } else if (html.substr(i, 4) == "<!--") {
      out.append("<!--");
      i += 4;
      *state = Prologue::kInComment;
    } else if (c == '<' && i + 1 < html.size() &&
               (html[i + 1] == '!' || html[i + 1] == '?' || html[i + 1] == '/')) {
      const size_t gt = html.find('>', i);
      if (gt == std::string_view::npos) break;  // the end of the document: left as it is
      if (html[i + 1] == '/') {
        out.append("<!--");
        for (size_t k = i; k < gt; ++k) {
          if (html[k] == '\n') out.push_back('\n');
        }
        out.append("-->");
      } else {
        out.append(html.substr(i, gt + 1 - i));
      }
      i = gt + 1;
    } else {
      *state = Prologue::kDone;
    }
  }
  out.append(html.substr(i));
  return out;
}

// "<!-->" and "<!--->" written as "<!---->": the HTML standard closes such an empty comment at
// its '>', where libxml2 2.9 reads on to the next "-->" (or the end, losing every word after
// it) whole, and stops at the '>' or not by where its input was cut.
std::string AbruptCommentsClosed(std::string_view html) {
  std::string out;
  size_t copied = 0;
  for (size_t at = html.find("<!--"); at != std::string_view::npos;
       at = html.find("<!--", at + 4)) {
    size_t end = at + 4;
    if (html.substr(end, 1) == "-") ++end;
    if (html.substr(end, 1) != ">") continue;
    out.append(html.substr(copied, at - copied)).append("<!---->");
    copied = end + 1;
  }
  if (copied == 0) return std::string(html);
  out.append(html.substr(copied));
  return out;
}

// Whether html[at..] is the end tag "</NAME>" (any case, spaces before '>' allowed) for a
// lower-case NAME; *end gets the position after its '>'.
bool IsEndTag(std::string_view html, size_t at, std::string_view name, size_t* end) {
  if (html.substr(at, 2) != "</" || html.size() < at + 2 + name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if ((html[at + 2 + i] | 0x20) != name[i]) return false;
  }
  size_t k = at + 2 + name.size();
  while (k < html.size() &&
         (html[k] == ' ' || html[k] == '\t' || html[k] == '\n' || html[k] == '\r'))
    ++k;
  if (k >= html.size() || html[k] != '>') return false;
  *end = k + 1;
  return true;
}

// "</body>" and "</html>" written as "<br>" (their newlines kept): the HTML standard puts text
// after them in the body still, where libxml2 2.9 drops it or not by where its input was cut
// ("l</html>\nl" gave "l" in pieces, "l l" whole).
std::string BodyEndsRemoved(std::string_view html) {
  std::string out;
  size_t copied = 0, end = 0;
  for (size_t at = html.find("</"); at != std::string_view::npos; at = html.find("</", at + 2)) {
    if (!IsEndTag(html, at, "body", &end) && !IsEndTag(html, at, "html", &end)) continue;
    out.append(html.substr(copied, at - copied)).append("<br");
    for (size_t k = at; k < end; ++k) {
      if (html[k] == '\n') out.push_back('\n');
    }
    out.push_back('>');
    copied = end;
  }
  if (copied == 0) return std::string(html);
  out.append(html.substr(copied));
  return out;
}

}  // namespace

bool IsHtmlName(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || name.find('/', dot) != std::string_view::npos) {
    return false;
  }
  std::string ext(name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == "html" || ext == "htm" || ext == "xhtml" || ext == "xht" || ext == "shtml";
}

struct HtmlToText::Parser {
  Parser(ByteSink& o, std::vector<uint32_t>* lines) : out(o), source_lines(lines) {
    static std::once_flag init;
    std::call_once(init, [] { xmlInitParser(); });  // before any use from several threads
    htmlSAXHandler sax;
    std::memset(&sax, 0, sizeof(sax));
    sax.startElement = [](void* p, const xmlChar* name, const xmlChar**) {
      static_cast<Parser*>(p)->Start(reinterpret_cast<const char*>(name));
    };
    sax.endElement = [](void* p, const xmlChar* name) {
      static_cast<Parser*>(p)->End(reinterpret_cast<const char*>(name));
    };
    sax.characters = [](void* p, const xmlChar* text, int len) {
      static_cast<Parser*>(p)->Text(reinterpret_cast<const char*>(text), len);
    };
    // Whitespace between elements still separates words.
    sax.ignorableWhitespace = sax.characters;
    // libxml2 hands <script> and <style> bodies to cdataBlock; they are dropped.
    sax.cdataBlock = [](void*, const xmlChar*, int) {};
    ctxt = htmlCreatePushParserCtxt(&sax, this, nullptr, 0, nullptr, XML_CHAR_ENCODING_UTF8);
    if (ctxt == nullptr) throw std::bad_alloc();
    // IGNORE_ENC: the text is UTF-8 already, whatever a <meta charset> says.
    htmlCtxtUseOptions(ctxt, HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                 HTML_PARSE_NONET | HTML_PARSE_IGNORE_ENC | XML_PARSE_HUGE);
  }
  ~Parser() {
    if (ctxt != nullptr) htmlFreeParserCtxt(ctxt);
  }

  void Start(const char* name) {
    if (In(name, std::begin(kHidden), std::end(kHidden))) ++hidden;
    if (!In(name, std::begin(kInline), std::end(kInline))) Separate();
  }
  void End(const char* name) {
    if (In(name, std::begin(kHidden), std::end(kHidden)) && hidden > 0) --hidden;
    if (!In(name, std::begin(kInline), std::end(kInline))) Separate();
  }
  void Text(const char* text, int len) {
    if (hidden > 0 || len <= 0) return;
    if (source_lines != nullptr) Lines(std::string_view(text, static_cast<size_t>(len)));
    pending.append(text, static_cast<size_t>(len));
    last = text[len - 1];
    if (pending.size() >= kFlushBytes) Flush();
  }
  // Records the source line of each line of the text that `text` starts. libxml2 calls back
  // with text it has just read, so its input's line is where the text ends: the text's own
  // newlines count back to where each of its lines starts.
  void Lines(std::string_view text) {
    const size_t newlines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    const long end_line = ctxt->input != nullptr ? ctxt->input->line : 1;
    // Whitespace that libxml2 hands over when the document ends comes with the line count
    // reset ("<p>x</p>\n" gave its last text line source line 1): lines never go back.
    long line = std::max(line_floor, end_line - static_cast<long>(newlines));
    bool at_start = last == '\n' || last == '\0';
    for (char c : text) {
      // A newline of a reference ("&#10;", "&NewLine;") is no line of the source: no line
      // starts past the source's lines read so far.
      if (at_start) source_lines->push_back(static_cast<uint32_t>(std::min(line, lines_read)));
      at_start = c == '\n';
      if (c == '\n') ++line;
    }
    line_floor = line;
  }
  void Separate() {
    if (last != '\n' && last != '\0') {
      pending += '\n';
      last = '\n';
    }
  }
  // Parses markup as written, once its prologue and references are fixed for libxml2.
  void ParseMarkup(std::string_view html) {
    lines_read += static_cast<long>(std::count(html.begin(), html.end(), '\n'));
    std::string controls_fixed, prologue_fixed, comments_fixed, ends_fixed;
    // Control characters (NUL and the C0 ones XML forbids) as spaces: libxml2 2.9 stops at one
    // or not by where its input was cut ("\x0e" + "</l>" + "c" lost the "c"); they separate
    // words either way.
    const auto is_control = [](char c) {
      return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
    };
    if (std::any_of(html.begin(), html.end(), is_control)) {
      controls_fixed.assign(html);
      std::replace_if(controls_fixed.begin(), controls_fixed.end(), is_control, ' ');
      html = controls_fixed;
    }
    if (prologue != Prologue::kDone) {
      prologue_fixed = StrayEndTagsRemoved(html, &prologue, &dashes);
      html = prologue_fixed;
    }
    if (html.find("<!--") != std::string_view::npos) {
      comments_fixed = AbruptCommentsClosed(html);
      html = comments_fixed;
    }
    if (html.find("</") != std::string_view::npos) {
      ends_fixed = BodyEndsRemoved(html);
      html = ends_fixed;
    }
    Parse(DecodeReferencesLibxmlLacks(html));
  }
  void Parse(std::string_view utf8) {
    constexpr size_t kPiece = 1 << 20;  // htmlParseChunk takes an int length
    for (size_t i = 0; i < utf8.size(); i += kPiece) {
      size_t n = std::min(kPiece, utf8.size() - i);
      htmlParseChunk(ctxt, utf8.data() + i, static_cast<int>(n), 0);
    }
  }
  void Flush() {
    if (pending.empty()) return;
    out.Write(pending);
    pending.clear();
  }

  ByteSink& out;
  std::vector<uint32_t>* source_lines;
  htmlParserCtxtPtr ctxt = nullptr;
  int hidden = 0;                         // depth inside elements no reader sees
  std::string pending;                    // text not yet written to out
  char last = '\0';                       // the last character of the text so far ('\0': none yet)
  std::string input;                      // input not yet handed to Feed (< kChunk bytes)
  std::string held;                       // input from an unclosed '<' at the end of the last Feed
  Prologue prologue = Prologue::kBefore;  // (StrayEndTagsRemoved)
  int dashes = 0;
  long line_floor = 1;  // the source line where the last text ended
  long lines_read = 1;  // the source lines handed to ParseMarkup so far
};

HtmlToText::HtmlToText(ByteSink& out, std::vector<uint32_t>* source_lines)
    : parser_(std::make_unique<Parser>(out, source_lines)) {}

HtmlToText::~HtmlToText() = default;

void HtmlToText::Write(std::string_view utf8) {
  // libxml2's recovery from broken markup depends on where its chunks end, so it is handed the
  // document in pieces of kChunk bytes at fixed offsets, whatever pieces arrive here: the text
  // of a document is the same however it is read.
  std::string& input = parser_->input;
  if (input.size() + utf8.size() < kChunk) {
    input.append(utf8);
    return;
  }
  const size_t fill = kChunk - input.size();
  input.append(utf8.substr(0, fill));
  Feed(input);
  utf8.remove_prefix(fill);
  for (; utf8.size() >= kChunk; utf8.remove_prefix(kChunk)) Feed(utf8.substr(0, kChunk));
  input.assign(utf8);
}

void HtmlToText::Feed(std::string_view utf8) {
  // libxml2 2.9's push parser loses the text after a </script> or </style> whose end tag was
  // cut between two chunks (measured: "</scri" + "pt>..." dropped the next paragraph). So a
  // chunk is never cut inside a tag: bytes from a last '<' with no '>' after it wait for the
  // next write (at most kMaxHeld of them: a '<' in script code or text is not a tag).
  constexpr size_t kMaxHeld = 64 << 10;
  std::string& held = parser_->held;
  std::string joined;
  std::string_view data = utf8;
  if (!held.empty()) {
    joined = std::move(held);
    joined.append(utf8);
    data = joined;
  }
  // From the first '<' after the last '>', so that "</" + "<>" never reaches libxml2 as a
  // chunk ending in "</" (which lost the text after it).
  size_t cut = data.size();
  const size_t gt = data.rfind('>');
  size_t lt = data.find('<', gt == std::string_view::npos ? 0 : gt + 1);
  if (lt != std::string_view::npos && data.size() - lt > kMaxHeld) lt = data.rfind('<');
  if (lt != std::string_view::npos && (gt == std::string_view::npos || lt > gt) &&
      data.size() - lt <= kMaxHeld) {
    cut = lt;
  }
  // Nor inside a named reference: "&Lstr" + "ok;" waits whole.
  const size_t amp = data.substr(0, cut).rfind('&');
  if (amp != std::string_view::npos && cut - amp <= kLongestReference &&
      std::all_of(data.begin() + amp + 1, data.begin() + cut, AsciiAlnum)) {
    cut = amp;
  }
  parser_->ParseMarkup(data.substr(0, cut));
  held.assign(data.substr(cut));
  parser_->Flush();
}

void HtmlToText::Close() {
  if (!parser_->input.empty()) Feed(parser_->input);
  parser_->input.clear();
  parser_->ParseMarkup(parser_->held);
  parser_->held.clear();
  htmlParseChunk(parser_->ctxt, nullptr, 0, 1);
  parser_->Flush();
  parser_->out.Close();
}

std::string HtmlText(std::string_view utf8_html, std::vector<uint32_t>* source_lines) {
  StringSink sink;
  HtmlToText h(sink, source_lines);
  h.Write(utf8_html);
  h.Close();
  return std::move(sink.text);
}

}  // namespace bitsift::documents
