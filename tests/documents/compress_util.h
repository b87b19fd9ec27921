// Compressing test data at test time with the formats' libraries (no binary fixtures).
#ifndef BITSIFT_TESTS_DOCUMENTS_COMPRESS_UTIL_H_
#define BITSIFT_TESTS_DOCUMENTS_COMPRESS_UTIL_H_

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <stdexcept>
#include <string>

#include "documents/decompress.h"

namespace bitsift::testing {

// `data` compressed whole as one .gz member, .xz stream, .bz2 stream or .zst frame.
inline std::string Compress(const std::string& data, documents::Compression c) {
  std::string out;
  switch (c) {
    case documents::Compression::kGzip: {
      z_stream z{};
      if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) break;
      out.resize(deflateBound(&z, data.size()) + 64);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z.avail_in = static_cast<uInt>(data.size());
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      int r = deflate(&z, Z_FINISH);
      out.resize(z.total_out);
      deflateEnd(&z);
      if (r != Z_STREAM_END) throw std::runtime_error("deflate failed");
      return out;
    }
    case documents::Compression::kXz: {
      out.resize(lzma_stream_buffer_bound(data.size()));
      size_t pos = 0;
      if (lzma_easy_buffer_encode(
              6, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data.data()),
              data.size(), reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()) != LZMA_OK) {
        throw std::runtime_error("xz failed");
      }
      out.resize(pos);
      return out;
    }
    case documents::Compression::kBzip2: {
      unsigned len = static_cast<unsigned>(data.size() + data.size() / 100 + 600);
      out.resize(len);
      if (BZ2_bzBuffToBuffCompress(out.data(), &len, const_cast<char*>(data.data()),
                                   static_cast<unsigned>(data.size()), 9, 0, 0) != BZ_OK) {
        throw std::runtime_error("bzip2 failed");
      }
      out.resize(len);
      return out;
    }
    case documents::Compression::kZstd: {
      out.resize(ZSTD_compressBound(data.size()));
      size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
      if (ZSTD_isError(n)) throw std::runtime_error("zstd failed");
      out.resize(n);
      return out;
    }
    case documents::Compression::kNone:
      break;
  }
  throw std::runtime_error("cannot compress");
}

}  // namespace bitsift::testing

#endif  // BITSIFT_TESTS_DOCUMENTS_COMPRESS_UTIL_H_
