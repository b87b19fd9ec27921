// libFuzzer target: HTML to text (documents/html.h), character references included. Any input
// gives text, never a crash or a hang; fed in pieces of any size it gives the same text and
// source lines as whole (the first byte chooses the piece size); valid UTF-8 in gives valid
// UTF-8 out, from the parser and from the reference decoder alike; there is one source line per
// line of text, never decreasing and never past the input's lines.
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
  std::vector<uint32_t> piece_lines;
  {
    bitsift::documents::HtmlToText reader(sink, &piece_lines);
    for (size_t at = 0; at < html.size(); at += piece) reader.Write(html.substr(at, piece));
    reader.Close();
  }
  if (!sink.closed || sink.text != whole || piece_lines != whole_lines) {
    size_t at = 0;
    while (at < sink.text.size() && at < whole.size() && sink.text[at] == whole[at]) ++at;
    at = at < 80 ? 0 : at - 80;
    std::fprintf(stderr, "in pieces of %zu:\n[%s]\nwhole:\n[%s]\n", piece,
                 sink.text.substr(at, 240).c_str(), whole.substr(at, 240).c_str());
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
