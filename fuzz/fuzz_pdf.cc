// libFuzzer target: the PDF reader (documents/pdf.h, through the Poppler module). Any input
// gives text or a skip (a damaged PDF), never a crash; the text ends with a newline and its form
// feeds only start pages.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "documents/pdf.h"
#include "documents/stage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view pdf(reinterpret_cast<const char*>(data), size);
  std::string text;
  try {
    text = bitsift::documents::PdfText(pdf, 1 << 20);
  } catch (const bitsift::documents::SkipDocument& skip) {
    if (skip.reason() != bitsift::documents::SkipReason::kBadDocument &&
        skip.reason() != bitsift::documents::SkipReason::kDecompressionLimit)
      std::abort();
    return 0;
  }
  if (!text.empty() && text.back() != '\n') std::abort();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') std::abort();
    if (text[i] == '\f' && (i == 0 || text[i - 1] != '\n')) std::abort();
  }
  return 0;
}
