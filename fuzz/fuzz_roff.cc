// libFuzzer target: the man page reader (documents/roff.h). Any input gives text, never a crash
// or a hang (strings and macros that expand into themselves are bounded); fed in pieces of any
// size it gives the same text and source lines as whole; there is one source line per line of
// text, never decreasing and never past the input's lines.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "documents/roff.h"
#include "documents/stage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + data[0] % 97;  // the first byte chooses the piece size
  const std::string_view page(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<uint32_t> whole_lines;
  const std::string whole = bitsift::documents::RoffText(page, &whole_lines);

  bitsift::documents::StringSink sink;
  std::vector<uint32_t> lines;
  bitsift::documents::RoffToText reader(sink, &lines, /*sniff=*/false);
  for (size_t at = 0; at < page.size(); at += piece) reader.Write(page.substr(at, piece));
  reader.Close();
  if (sink.text != whole || lines != whole_lines) std::abort();

  size_t text_lines = 0;
  for (char c : whole) text_lines += c == '\n';
  if (!whole.empty() && whole.back() != '\n') std::abort();  // every line ends
  if (lines.size() != text_lines) std::abort();
  size_t source_lines = 1;
  for (char c : page) source_lines += c == '\n';
  for (size_t k = 0; k < lines.size(); ++k) {
    if (lines[k] < 1 || lines[k] > source_lines) std::abort();
    if (k > 0 && lines[k] < lines[k - 1]) std::abort();
  }
  return 0;
}
