// libFuzzer target: the tokenizer. Streaming the input in arbitrary pieces with small chunk
// sizes must give exactly the tokens of the whole text (no forced cut can happen below the
// maximum chunk size), ICU for every byte must give the same tokens as ASCII lines without it,
// and every token must be non-empty, well-formed UTF-8.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "util/utf8.h"

namespace {

struct Collect : bitsift::tokenizer::TokenSink {
  std::vector<std::string> tokens;
  void OnToken(std::string_view t, bitsift::tokenizer::TokenRole) override {
    tokens.emplace_back(t);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // The first two bytes choose the chunk size and the feeding piece size.
  const size_t chunk = 8 + data[0] % 120;
  const size_t piece = 1 + data[1] % 64;
  std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);

  static bitsift::tokenizer::Tokenizer whole_tok;
  Collect whole;
  whole_tok.Tokenize(text, whole);

  bitsift::tokenizer::Tokenizer stream_tok;
  stream_tok.SetChunkBytesForTesting(chunk, size_t{1} << 30);
  Collect streamed;
  for (size_t i = 0; i < text.size(); i += piece) stream_tok.Feed(text.substr(i, piece), streamed);
  stream_tok.Finish(streamed);

  if (streamed.tokens != whole.tokens) std::abort();

  // ASCII lines without ICU give what ICU gives.
  static bitsift::tokenizer::Tokenizer icu_tok;
  icu_tok.SetFastPathsForTesting(false);
  Collect icu;
  icu_tok.Tokenize(text, icu);
  if (icu.tokens != whole.tokens) std::abort();
  for (const std::string& t : whole.tokens) {
    if (t.empty() || !bitsift::IsUtf8(t)) std::abort();
  }
  return 0;
}
