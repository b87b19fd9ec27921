// HTML and XHTML to the text a reader sees, with libxml2's HTML push parser (SAX callbacks):
// the title and the body's text, entities decoded; nothing from tags, attributes, comments,
// <script>, <style> or <template>. Every element that is not inline text markup (<a>, <b>,
// <span>, ...) separates words, so "</p><p>" and "<br>" are word breaks but "<b>x</b>y" is
// "xy". Streams: libxml2 is handed the document in 1 MiB pieces at fixed offsets (so that the
// text never depends on how the document was written in), and memory grows beyond those only
// with the longest run of text without a '<' (libxml2 waits for the end of a text) and with
// the nesting depth.
#ifndef BITSIFT_DOCUMENTS_HTML_H_
#define BITSIFT_DOCUMENTS_HTML_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "documents/stage.h"

namespace bitsift::documents {

// Whether a file name (without any compression suffix) names HTML: .html .htm .xhtml .xht
// .shtml (any case).
bool IsHtmlName(std::string_view name);

// A ByteSink that takes UTF-8 HTML (decoded beforehand: a <meta charset> in it is ignored)
// and writes the text to `out`. Malformed markup is recovered from as a browser would, never
// an error. With `source_lines`, the line of the HTML (from 1) where each line of the text
// starts is appended to it, one per line (LineOrigins). Not thread-safe; one per document.
class HtmlToText : public ByteSink {
 public:
  explicit HtmlToText(ByteSink& out, std::vector<uint32_t>* source_lines = nullptr);
  ~HtmlToText() override;
  void Write(std::string_view utf8) override;
  void Close() override;

 private:
  static constexpr size_t kChunk = 1 << 20;
  // Parses the next piece of the document (the pieces are cut at fixed offsets by Write).
  void Feed(std::string_view utf8);

  struct Parser;
  std::unique_ptr<Parser> parser_;
};

// Whole-text convenience: the text of a UTF-8 HTML document (*source_lines as HtmlToText).
std::string HtmlText(std::string_view utf8_html, std::vector<uint32_t>* source_lines = nullptr);

// `html` with the named character references that libxml2 2.9 does not decode replaced by
// their characters: the HTML standard's references beyond HTML 4's 253 ("&Lstrok;" -> "Ł",
// "&ccaron;") and the legacy ones written without ';' ("caf&eacute" -> "café", by the
// standard's longest-match rule). HTML 4's references with their ';' are left to libxml2; a
// character that is markup ("&ampT" is '&') becomes a numeric reference ("&#38;") for libxml2.
// HtmlToText applies it before parsing.
std::string DecodeReferencesLibxmlLacks(std::string_view html);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_HTML_H_
