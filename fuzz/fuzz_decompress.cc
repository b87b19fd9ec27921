// libFuzzer target: the decompressors (documents/decompress.h) and their bomb limit. The first
// byte chooses the format (gzip, xz, bzip2, zstd), the output limit (1 byte to 4 MiB) and the
// piece size. Any input gives content or a skip (bad-compressed, decompression-limit), never a
// crash; no more than the limit ever reaches the next stage; fed in pieces, a stream that
// decompresses whole decompresses to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "documents/decompress.h"
#include "documents/stage.h"

namespace {

using bitsift::documents::Compression;
using bitsift::documents::SkipReason;

constexpr Compression kFormats[] = {Compression::kGzip, Compression::kXz, Compression::kBzip2,
                                    Compression::kZstd};

// Counts what reaches it and fails the run if the limit is ever passed.
struct LimitedSink : bitsift::documents::ByteSink {
  explicit LimitedSink(uint64_t limit) : limit(limit) {}
  void Write(std::string_view bytes) override {
    text += bytes;
    if (text.size() > limit) std::abort();
  }
  void Close() override { closed = true; }
  uint64_t limit;
  std::string text;
  bool closed = false;
};

struct Outcome {
  bool ok = false;
  SkipReason reason = SkipReason::kCount;
  std::string text;
};

Outcome Decompress(Compression c, uint64_t limit, std::string_view bytes, size_t piece) {
  Outcome o;
  LimitedSink sink(limit);
  try {
    auto d = bitsift::documents::Decompressor::Create(c, limit, sink);
    for (size_t at = 0; at < bytes.size(); at += piece) d->Write(bytes.substr(at, piece));
    d->Close();
    if (!sink.closed || d->output_bytes() != sink.text.size()) std::abort();
    o.ok = true;
  } catch (const bitsift::documents::SkipDocument& skip) {
    if (skip.reason() != SkipReason::kBadCompressed &&
        skip.reason() != SkipReason::kDecompressionLimit)
      std::abort();
    o.reason = skip.reason();
  }
  o.text = std::move(sink.text);
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Compression c = kFormats[data[0] & 3];
  const uint64_t limit = uint64_t{1} << ((data[0] >> 2) % 8 * 3 + 1);  // 2 B .. 4 MiB
  const size_t piece = (data[0] >> 5) == 0 ? 1 : (size_t{1} << (data[0] >> 5) * 2);
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  const Outcome whole = Decompress(c, limit, bytes, bytes.size() + 1);
  const Outcome streamed = Decompress(c, limit, bytes, piece);
  if (whole.ok != streamed.ok) std::abort();
  if (whole.ok && whole.text != streamed.text) std::abort();
  return 0;
}
