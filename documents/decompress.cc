#include "documents/decompress.h"

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstdint>

namespace bitsift::documents {
namespace {

constexpr size_t kOutputBytes = 256 << 10;

// Whether s ends with the lower-case ASCII `suffix`, in any case ("A.GZ" as "a.gz"), after at
// least one more byte.
bool EndsWithFolded(std::string_view s, std::string_view suffix) {
  if (s.size() <= suffix.size()) return false;
  const std::string_view end = s.substr(s.size() - suffix.size());
  return std::equal(end.begin(), end.end(), suffix.begin(), [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b;
  });
}

// Input pieces handed to a decoder at once: every API here takes an unsigned int length.
constexpr size_t kMaxPiece = 1 << 30;

// A format whose file is one or more members, each a whole compressed stream (gzip, bzip2, as
// their tools read them): input handed on in pieces its library takes, and a file that ends
// well only after a whole member.
class MemberStreams : public Decompressor {
 public:
  void Write(std::string_view in) final {
    for (size_t i = 0; i < in.size(); i += kMaxPiece) {
      Feed(in.substr(i, std::min(kMaxPiece, in.size() - i)));
    }
  }
  void Close() final {
    if (!ended_) Fail(started_ ? "truncated" : "empty");
    out_.Close();
  }

 protected:
  using Decompressor::Decompressor;
  // Decodes a piece of at most kMaxPiece bytes.
  virtual void Feed(std::string_view in) = 0;

  bool ended_ = false;     // the last member read so far is whole
  bool started_ = false;   // a member has begun
  bool trailing_ = false;  // bytes after the last member (ignored, as the tools do)
};

class Gzip : public MemberStreams {
 public:
  Gzip(uint64_t limit, ByteSink& out) : MemberStreams("gzip", limit, out) {
    // 15 + 16: a gzip header and trailer, the largest window.
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~Gzip() override { inflateEnd(&z_); }

 private:
  void Feed(std::string_view in) override {
    if (trailing_) return;
    z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z_.avail_in = static_cast<uInt>(in.size());
    for (;;) {
      if (ended_) {
        if (z_.avail_in == 0) return;
        // Another member follows (gzip -d reads them all); anything else (e.g. zero padding)
        // ends the file, as gzip -d says "trailing garbage ignored".
        if (z_.next_in[0] != 0x1f) {
          trailing_ = true;
          return;
        }
        if (inflateReset(&z_) != Z_OK) Fail("cannot reset");
        ended_ = false;
      }
      started_ = true;
      z_.next_out = reinterpret_cast<Bytef*>(buffer_.data());
      z_.avail_out = static_cast<uInt>(buffer_.size());
      int r = inflate(&z_, Z_NO_FLUSH);
      Emit(buffer_.size() - z_.avail_out);
      if (r == Z_STREAM_END) {
        ended_ = true;
        continue;
      }
      if (r != Z_OK && r != Z_BUF_ERROR) Fail(z_.msg != nullptr ? z_.msg : "invalid data");
      // All input taken and the output not full: nothing more comes out until more input.
      if (z_.avail_in == 0 && z_.avail_out > 0) return;
      if (r == Z_BUF_ERROR) Fail("no progress");
    }
  }
  z_stream z_{};
};
class Xz : public Decompressor {
 public:
  Xz(uint64_t limit, ByteSink& out) : Decompressor("xz", limit, out) {
    if (lzma_stream_decoder(&s_, kXzMemoryLimit, LZMA_CONCATENATED) != LZMA_OK) {
      throw std::bad_alloc();
    }
  }
  ~Xz() override { lzma_end(&s_); }
  void Write(std::string_view in) override {
    for (size_t i = 0; i < in.size(); i += kMaxPiece) {
      Run(in.substr(i, std::min(kMaxPiece, in.size() - i)), LZMA_RUN);
    }
  }
  void Close() override {
    Run({}, LZMA_FINISH);
    out_.Close();
  }

 private:
  void Run(std::string_view in, lzma_action action) {
    s_.next_in = reinterpret_cast<const uint8_t*>(in.data());
    s_.avail_in = in.size();
    for (;;) {
      s_.next_out = reinterpret_cast<uint8_t*>(buffer_.data());
      s_.avail_out = buffer_.size();
      lzma_ret r = lzma_code(&s_, action);
      Emit(buffer_.size() - s_.avail_out);
      if (r == LZMA_STREAM_END) return;
      if (r == LZMA_MEMLIMIT_ERROR) Fail("needs more than 256 MiB of memory to decompress");
      if (r == LZMA_BUF_ERROR && action == LZMA_FINISH) Fail("truncated");
      if (r != LZMA_OK && r != LZMA_BUF_ERROR) Fail(Message(r));
      if (s_.avail_in == 0 && s_.avail_out > 0 && action == LZMA_RUN) return;
    }
  }
  static const char* Message(lzma_ret r) {
    switch (r) {
      case LZMA_FORMAT_ERROR:
        return "not in the .xz format";
      case LZMA_DATA_ERROR:
        return "corrupt data";
      case LZMA_OPTIONS_ERROR:
        return "unsupported options";
      case LZMA_MEM_ERROR:
        return "out of memory";
      default:
        return "decoder error";
    }
  }
  lzma_stream s_ = LZMA_STREAM_INIT;
};

class Bzip2 : public MemberStreams {
 public:
  Bzip2(uint64_t limit, ByteSink& out) : MemberStreams("bzip2", limit, out) { Init(); }
  ~Bzip2() override { BZ2_bzDecompressEnd(&s_); }

 private:
  void Init() {
    s_ = bz_stream{};
    if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK) throw std::bad_alloc();
  }
  void Feed(std::string_view in) override {
    if (trailing_) return;
    s_.next_in = const_cast<char*>(in.data());
    s_.avail_in = static_cast<unsigned>(in.size());
    for (;;) {
      if (ended_) {
        if (s_.avail_in == 0) return;
        if (s_.next_in[0] != 'B') {  // not another stream: trailing garbage, ignored
          trailing_ = true;
          return;
        }
        // A new stream: libbz2 needs a fresh decoder; the pending input survives.
        char* next = s_.next_in;
        unsigned avail = s_.avail_in;
        BZ2_bzDecompressEnd(&s_);
        Init();
        s_.next_in = next;
        s_.avail_in = avail;
        ended_ = false;
      }
      started_ = true;
      s_.next_out = buffer_.data();
      s_.avail_out = static_cast<unsigned>(buffer_.size());
      int r = BZ2_bzDecompress(&s_);
      Emit(buffer_.size() - s_.avail_out);
      if (r == BZ_STREAM_END) {
        ended_ = true;
        continue;
      }
      if (r != BZ_OK) Fail(r == BZ_DATA_ERROR_MAGIC ? "not in the .bz2 format" : "corrupt data");
      if (s_.avail_in == 0 && s_.avail_out > 0) return;
    }
  }
  bz_stream s_{};
};
class Zstd : public Decompressor {
 public:
  Zstd(uint64_t limit, ByteSink& out) : Decompressor("zstd", limit, out) {
    d_ = ZSTD_createDStream();
    if (d_ == nullptr) throw std::bad_alloc();
    // The default window cap (128 MiB, windowLog 27) bounds the decoder's memory.
  }
  ~Zstd() override { ZSTD_freeDStream(d_); }
  void Write(std::string_view in) override {
    while (!in.empty()) {
      if (!frame_open_) {
        // A frame begins: its magic number is read first, so that only the frames of the
        // current format and skippable frames reach the library. Its legacy decoders (formats
        // before zstd 0.8) are refused: they read the same bytes differently whole and in pieces.
        const size_t take = std::min(in.size(), 4 - magic_.size());
        magic_.append(in.substr(0, take));
        in.remove_prefix(take);
        started_ = true;
        if (magic_.size() < 4) return;
        const auto b = [&](int i) { return uint32_t{static_cast<unsigned char>(magic_[i])}; };
        const uint32_t magic = b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24;
        if (magic != ZSTD_MAGICNUMBER &&
            (magic & ZSTD_MAGIC_SKIPPABLE_MASK) != ZSTD_MAGIC_SKIPPABLE_START)
          Fail("not a zstd frame (unknown or legacy format)");
        frame_open_ = true;
        Decode(magic_);
        magic_.clear();
      } else {
        in.remove_prefix(Decode(in));
      }
    }
  }
  void Close() override {
    if (!started_) Fail("empty");
    if (frame_open_ || !magic_.empty()) Fail("truncated");
    out_.Close();
  }

 private:
  // Hands `in` to the library until it is consumed or the open frame ends; returns the bytes
  // consumed. zstd keeps the last byte of a frame until all of its output is flushed, so
  // consuming all input means everything given so far has come out.
  size_t Decode(std::string_view in) {
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    while (frame_open_ && input.pos < input.size) {
      ZSTD_outBuffer output{buffer_.data(), buffer_.size(), 0};
      size_t r = ZSTD_decompressStream(d_, &output, &input);
      if (ZSTD_isError(r)) Fail(ZSTD_getErrorName(r));
      Emit(output.pos);
      frame_open_ = r != 0;
    }
    return input.pos;
  }

  ZSTD_DStream* d_ = nullptr;
  bool started_ = false, frame_open_ = false;
  std::string magic_;  // the first bytes of a frame not yet handed on
};

}  // namespace

Compression CompressionOfName(std::string_view name, std::string_view* inner) {
  struct Suffix {
    const char* suffix;
    Compression c;
  };
  for (Suffix s : {Suffix{".gz", Compression::kGzip}, Suffix{".xz", Compression::kXz},
                   Suffix{".bz2", Compression::kBzip2}, Suffix{".zst", Compression::kZstd}}) {
    if (EndsWithFolded(name, s.suffix)) {
      if (inner != nullptr)
        *inner = name.substr(0, name.size() - std::string_view(s.suffix).size());
      return s.c;
    }
  }
  if (inner != nullptr) *inner = name;
  return Compression::kNone;
}

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kGzip:
      return "gzip";
    case Compression::kXz:
      return "xz";
    case Compression::kBzip2:
      return "bzip2";
    case Compression::kZstd:
      return "zstd";
    case Compression::kNone:
      break;
  }
  return "";
}

Decompressor::Decompressor(const char* format, uint64_t max_output_bytes, ByteSink& out)
    : format_(format),
      max_output_bytes_(max_output_bytes),
      out_(out),
      buffer_(kOutputBytes, '\0') {}

std::unique_ptr<Decompressor> Decompressor::Create(Compression c, uint64_t max_output_bytes,
                                                   ByteSink& out) {
  switch (c) {
    case Compression::kGzip:
      return std::make_unique<Gzip>(max_output_bytes, out);
    case Compression::kXz:
      return std::make_unique<Xz>(max_output_bytes, out);
    case Compression::kBzip2:
      return std::make_unique<Bzip2>(max_output_bytes, out);
    case Compression::kZstd:
      return std::make_unique<Zstd>(max_output_bytes, out);
    case Compression::kNone:
      break;
  }
  throw std::invalid_argument("no decompressor for an uncompressed file");
}

void Decompressor::Emit(size_t n) {
  if (n == 0) return;
  output_bytes_ += n;
  if (output_bytes_ > max_output_bytes_) {
    throw SkipDocument(SkipReason::kDecompressionLimit, std::string(format_) + ": more than " +
                                                            std::to_string(max_output_bytes_) +
                                                            " bytes when decompressed");
  }
  out_.Write(std::string_view(buffer_.data(), n));
}

void Decompressor::Fail(const std::string& what) const {
  throw SkipDocument(SkipReason::kBadCompressed, std::string(format_) + ": " + what);
}

}  // namespace bitsift::documents
