// Single compressed files (.gz, .xz, .bz2, .zst) decompressed as a stream with the formats'
// reference libraries (zlib, liblzma, libbz2, libzstd). Concatenated members/streams/frames
// are read as one file, as gzip -d, xz -d, bzip2 -d and zstd -d do. Memory is constant: a
// 256 KiB output buffer and the decoder's window (xz's is capped at kXzMemoryLimit).
#ifndef BITSIFT_DOCUMENTS_DECOMPRESS_H_
#define BITSIFT_DOCUMENTS_DECOMPRESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "documents/stage.h"

namespace bitsift::documents {

enum class Compression { kNone, kGzip, kXz, kBzip2, kZstd };

// liblzma refuses .xz files whose decoder needs more memory than this (xz -9 needs 65 MiB).
constexpr uint64_t kXzMemoryLimit = 256ULL << 20;

// The compression a file name's suffix names (.gz, .xz, .bz2, .zst, in any case, as .html is);
// *inner gets the name without the suffix ("a.html.gz" -> "a.html").
Compression CompressionOfName(std::string_view name, std::string_view* inner = nullptr);

// "gzip", "xz", "bzip2", "zstd" ("" for kNone): the prefix of FileFacts::format.
const char* CompressionName(Compression c);

// A ByteSink that decompresses what is written to it and writes the content to `out`.
// Throws SkipDocument(kDecompressionLimit) as soon as the content passes max_output_bytes (a
// decompression bomb costs at most that much work, never memory), and
// SkipDocument(kBadCompressed) for damaged or truncated input.
class Decompressor : public ByteSink {
 public:
  // Precondition: c != kNone.
  static std::unique_ptr<Decompressor> Create(Compression c, uint64_t max_output_bytes,
                                              ByteSink& out);
  ~Decompressor() override = default;
  uint64_t output_bytes() const { return output_bytes_; }

 protected:
  Decompressor(const char* format, uint64_t max_output_bytes, ByteSink& out);
  // Sends buffer_[0, n) on to out_, enforcing the limit.
  void Emit(size_t n);
  [[noreturn]] void Fail(const std::string& what) const;

  const char* format_;
  uint64_t max_output_bytes_;
  uint64_t output_bytes_ = 0;
  ByteSink& out_;
  std::string buffer_;
};

}  // namespace bitsift::documents

#endif  // BITSIFT_DOCUMENTS_DECOMPRESS_H_
