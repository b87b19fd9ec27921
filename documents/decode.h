// Text decoding as a stream: bytes in any supported encoding in, UTF-8 out, in bounded memory.
//
// How the encoding of a document is chosen (first rule that applies):
//   1. a forced encoding (--encoding NAME) for the whole run;
//   2. a byte-order mark: UTF-8, UTF-16LE/BE, UTF-32LE/BE (the mark itself is dropped);
//   3. the first kProbeBytes are valid UTF-8 (ASCII included): UTF-8, passed through untouched.
//      (Unless the probe holds an ESC byte and ICU recognizes ISO-2022-JP/KR/CN, which are
//      7-bit encodings and so also valid UTF-8.) Also UTF-8 when they are mostly valid UTF-8:
//      at least kMostlyUtf8Ratio valid multi-byte sequences per invalid byte (a damaged UTF-8
//      file; legacy 8-bit text has far more invalid bytes than sequences valid by chance);
//   4. HTML only: a <meta charset=...> or <meta http-equiv content="...; charset=..."> before
//      <body> naming an encoding ICU knows;
//   5. ICU's charset detector (ucsdet) on the first kDetectBytes (tags filtered out for HTML):
//      its best match (EBCDIC ones skipped) if its confidence is at least kMinConfidence;
//   6. otherwise kFallbackEncoding.
// A NUL byte in the first kBinaryProbeBytes that no BOM explains makes the document binary
// unless its NUL bytes fall as in UTF-16/32 text (every other byte, or three of four) and ICU
// recognizes UTF-16/32 with at least kMinUnicodeConfidence (which needs mostly Latin text: ICU
// scores BOM-less UTF-16 by its code units in U+0020..U+00FF).
// Whatever the encoding, a document whose first kBinaryProbeBytes of decoded text hold a NUL
// character is binary (SkipDocument(kBinary)). Invalid sequences become U+FFFD (UTF-8 ones later,
// in the tokenizer), never an error.
#ifndef BITSIFT_DOCUMENTS_DECODE_H_
#define BITSIFT_DOCUMENTS_DECODE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "documents/stage.h"

namespace bitsift::documents {

// Bytes looked at before the encoding is chosen.
constexpr size_t kProbeBytes = 64 << 10;
// Bytes given to ucsdet: it reads about 3 MB/s (ICU 72), so 8 KiB cost about 3 ms, and
// shorter texts already detect right (tests/documents/decode_test.cc).
constexpr size_t kDetectBytes = 8 << 10;
// Decoded bytes in which a NUL character makes a document binary.
constexpr size_t kBinaryProbeBytes = 8 << 10;
// ucsdet reports confidence 0..100. Measured on the texts of tests/documents/sample_texts.h:
// right answers score 26..100 (1 KiB of text: 42..100; 60 bytes of Russian in English: 26),
// random high bytes 15, and texts of 4..10 bytes it cannot tell apart 10.
constexpr int kMinConfidence = 20;
// ucsdet's UTF-16/32 score for BOM-less text starts at 10 and gains 10 per Latin code unit, loses
// 10 per NUL unit: 80 needs a net 7 Latin characters, so a short binary file with a NUL is not
// taken for UTF-16.
constexpr int kMinUnicodeConfidence = 80;
// Valid UTF-8 multi-byte sequences per invalid byte for rule 3.
constexpr size_t kMostlyUtf8Ratio = 10;
// Windows-1252 maps every byte to a character: the WHATWG default for unlabeled legacy text.
constexpr const char* kFallbackEncoding = "windows-1252";

// The name ICU reports for an encoding label ("latin1" -> "ISO-8859-1", "sjis" ->
// "Shift_JIS"): its IANA name if it has one, else its MIME or ICU name. Returns "" if ICU has
// no converter for the label.
std::string CanonicalEncodingName(std::string_view label);

// How an encoding was chosen.
struct EncodingChoice {
  std::string encoding;  // canonical name ("UTF-8", "GB18030", ...), "" = binary
  std::string how;       // "forced", "bom", "utf-8", "meta", "detected", "fallback"
  int confidence = 0;    // ucsdet's, when how == "detected" or "fallback"
  size_t bom_bytes = 0;  // bytes of the byte-order mark to drop
};

// Chooses the encoding of a document from its first bytes (`probe`; `complete` when the
// probe is the whole document) by rules 1-6 above. forced_encoding is "" or a label
// CanonicalEncodingName knows. Returns encoding "" for a binary document.
EncodingChoice ChooseEncoding(std::string_view probe, bool complete, bool html,
                              const std::string& forced_encoding);

// A ByteSink that decodes what is written to it and writes UTF-8 to `out`. Buffers at most
// kProbeBytes before choosing the encoding; after that, memory is constant. Valid UTF-8 is
// passed through without copying. Throws SkipDocument(kBinary). Not thread-safe; one per
// document.
class Decoder : public ByteSink {
 public:
  // forced_encoding: "" (detect) or a label CanonicalEncodingName knows (else Close/Write
  // throw std::invalid_argument). html: apply the HTML rules (meta charset, tag filter).
  Decoder(const std::string& forced_encoding, bool html, ByteSink& out);
  ~Decoder() override;
  void Write(std::string_view bytes) override;
  void Close() override;
  // The chosen encoding's name; "" until chosen (the first kProbeBytes, or Close).
  const std::string& encoding() const { return choice_.encoding; }
  const EncodingChoice& choice() const { return choice_; }

 private:
  void Choose(std::string_view probe, bool complete);
  void Emit(std::string_view bytes, bool flush);
  void CheckBinary(std::string_view decoded);

  struct Converter;
  std::string forced_;
  bool html_;
  ByteSink& out_;
  std::string probe_;
  bool chosen_ = false;
  bool passthrough_ = false;
  size_t checked_ = 0;  // decoded bytes checked for NUL so far
  EncodingChoice choice_;
  std::unique_ptr<Converter> converter_;
};

// Whole-text convenience: decodes bytes (as a document on its own) into UTF-8; *encoding gets
// the chosen name. Throws SkipDocument(kBinary).
std::string DecodeToUtf8(std::string_view bytes, const std::string& forced_encoding, bool html,
                         std::string* encoding = nullptr);

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_DECODE_H_
