// libFuzzer target: charset detection and conversion (documents/decode.h). The first byte
// chooses HTML rules or not, a forced encoding or detection, and the piece size. Any input gives
// UTF-8 or a binary skip, never a crash; fed in pieces it gives exactly what it gives whole
// (same encoding, same bytes, or the same skip); text converted from another encoding is valid
// UTF-8 (only UTF-8 is passed through as it is, its bad bytes left to the tokenizer) and holds
// no NUL in its first kBinaryProbeBytes; the chosen encoding is one ICU knows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "documents/decode.h"
#include "documents/stage.h"
#include "util/utf8.h"

namespace {

constexpr const char* kForced[] = {
    "",          "",          "",       "",     "UTF-16LE",    "UTF-16BE", "UTF-32LE",
    "Shift_JIS", "GB18030",   "EUC-KR", "Big5", "ISO-2022-JP", "KOI8-R",   "windows-1252",
    "UTF-8",     "ISO-8859-8"};

struct Outcome {
  std::string text;
  std::string encoding;
  bool binary = false;
};

Outcome Streamed(std::string_view bytes, const std::string& forced, bool html, size_t piece) {
  Outcome o;
  bitsift::documents::StringSink sink;
  try {
    bitsift::documents::Decoder decoder(forced, html, sink);
    for (size_t at = 0; at < bytes.size(); at += piece) decoder.Write(bytes.substr(at, piece));
    decoder.Close();
    o.encoding = decoder.encoding();
  } catch (const bitsift::documents::SkipDocument& skip) {
    if (skip.reason() != bitsift::documents::SkipReason::kBinary) std::abort();
    o.binary = true;
  }
  o.text = std::move(sink.text);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool html = data[0] & 1;
  const std::string forced = kForced[(data[0] >> 1) % 16];
  const size_t piece = 1 + ((data[0] >> 5) == 7 ? 4093 : (data[0] >> 5) * 13);
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  Outcome whole;
  try {
    whole.text = bitsift::documents::DecodeToUtf8(bytes, forced, html, &whole.encoding);
  } catch (const bitsift::documents::SkipDocument& skip) {
    if (skip.reason() != bitsift::documents::SkipReason::kBinary) std::abort();
    whole.binary = true;
  }
  const Outcome streamed = Streamed(bytes, forced, html, piece);
  if (streamed.binary != whole.binary) std::abort();
  if (whole.binary) return 0;
  if (streamed.encoding != whole.encoding || streamed.text != whole.text) std::abort();

  if (whole.encoding.empty()) std::abort();
  // A name ICU knows (ucsdet may report an alias of the canonical name: "ISO-8859-8-I").
  if (bitsift::documents::CanonicalEncodingName(whole.encoding).empty()) std::abort();
  if (whole.encoding != "UTF-8" && !bitsift::IsUtf8(whole.text)) std::abort();
  const std::string_view head =
      std::string_view(whole.text).substr(0, bitsift::documents::kBinaryProbeBytes);
  if (head.find('\0') != std::string_view::npos) std::abort();
  return 0;
}
