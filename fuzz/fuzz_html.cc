// libFuzzer target: HTML to text (documents/html.h), character references included. Any input
// gives text, never a crash or a hang; valid UTF-8 fed in pieces of any size gives the same
// words as whole (the first byte chooses the piece size); valid UTF-8 in gives valid UTF-8 out,
// from the parser and from the reference decoder alike; there is one source line per line of
// text, never decreasing and never past the input's lines.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "documents/html.h"
#include "documents/stage.h"
#include "util/utf8.h"

namespace {

// The words of a text: its runs of ASCII letters and digits and of other UTF-8 bytes, one space
// between them. Where a block break falls between two writes may change the whitespace around
// it, and where markup is broken (an unclosed comment, a '<' that opens nothing) libxml2 may
// keep or drop a punctuation mark by where the writes fall; never a word.
std::string Words(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80 || (u >= '0' && u <= '9') || ((u | 0x20) >= 'a' && (u | 0x20) <= 'z')) {
      if (space && !out.empty()) out += ' ';
      space = false;
      out += c;
    } else {
      space = true;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 61;
  const std::string_view html(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool utf8_in = bitsift::IsUtf8(html);

  const std::string decoded = bitsift::documents::DecodeReferencesLibxmlLacks(html);
  if (utf8_in && !bitsift::IsUtf8(decoded)) std::abort();

  std::vector<uint32_t> whole_lines;
  const std::string whole = bitsift::documents::HtmlText(html, &whole_lines);
  if (utf8_in && !bitsift::IsUtf8(whole)) std::abort();

  bitsift::documents::StringSink sink;
  {
    bitsift::documents::HtmlToText reader(sink);
    for (size_t at = 0; at < html.size(); at += piece) reader.Write(html.substr(at, piece));
    reader.Close();
  }
  // (HtmlToText takes UTF-8: libxml2 recovers from an invalid byte by where the writes fall.)
  if (!sink.closed || (utf8_in && Words(sink.text) != Words(whole))) {
    const std::string a = Words(sink.text), b = Words(whole);
    size_t at = 0;
    while (at < a.size() && at < b.size() && a[at] == b[at]) ++at;
    at = at < 80 ? 0 : at - 80;
    std::fprintf(stderr, "in pieces of %zu:\n[%s]\nwhole:\n[%s]\n", piece,
                 a.substr(at, 240).c_str(), b.substr(at, 240).c_str());
    std::abort();
  }

  size_t text_lines = 0;
  for (char c : whole) text_lines += c == '\n';
  if (!whole.empty() && whole.back() != '\n') ++text_lines;
  if (whole_lines.size() != text_lines) std::abort();
  size_t source_lines = 1;
  for (char c : html) source_lines += c == '\n';
  for (size_t k = 0; k < whole_lines.size(); ++k) {
    if (whole_lines[k] < 1 || whole_lines[k] > source_lines) std::abort();
    if (k > 0 && whole_lines[k] < whole_lines[k - 1]) std::abort();
  }
  return 0;
}
