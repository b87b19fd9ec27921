// Decompression: content of every format in any pieces, concatenated members, damage, bombs.
#include "documents/decompress.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "documents/compress_util.h"

using bitsift::documents::Compression;
using bitsift::documents::CompressionName;
using bitsift::documents::CompressionOfName;
using bitsift::documents::Decompressor;
using bitsift::documents::SkipDocument;
using bitsift::documents::SkipReason;
using bitsift::documents::StringSink;
using bitsift::testing::Compress;

namespace {

const Compression kAll[] = {Compression::kGzip, Compression::kXz, Compression::kBzip2,
                            Compression::kZstd};

std::string Decompress(Compression c, const std::string& bytes, size_t piece,
                       uint64_t limit = 1ULL << 30) {
  StringSink sink;
  auto d = Decompressor::Create(c, limit, sink);
  for (size_t i = 0; i < bytes.size(); i += piece)
    d->Write(std::string_view(bytes).substr(i, piece));
  d->Close();
  CHECK(sink.closed);
  return sink.text;
}

SkipReason Failure(Compression c, const std::string& bytes, uint64_t limit = 1ULL << 30) {
  try {
    Decompress(c, bytes, 1 << 20, limit);
  } catch (const SkipDocument& s) {
    return s.reason();
  }
  return SkipReason::kCount;
}

std::string Text(size_t bytes) {
  std::string s;
  for (int i = 0; s.size() < bytes; ++i) s += "line " + std::to_string(i) + " 布隆过滤器 words\n";
  s.resize(bytes);
  return s;
}

}  // namespace

TEST_CASE("every format decompresses in any pieces", "[documents][decompress]") {
  const std::string small = "hello compressed world\n";
  const std::string large = Text(3 << 20);  // several output buffers
  for (Compression c : kAll) {
    INFO(CompressionName(c));
    for (const std::string* text : {&small, &large}) {
      const std::string packed = Compress(*text, c);
      for (size_t piece : {size_t{1} << 20, size_t{4096}, size_t{1}}) {
        if (piece == 1 && text->size() > small.size()) continue;  // slow and adds nothing
        CHECK(Decompress(c, packed, piece) == *text);
      }
    }
    CHECK(Decompress(c, Compress("", c), 1) == "");
  }
}

TEST_CASE("concatenated members are one file, as the tools read them", "[documents][decompress]") {
  for (Compression c : kAll) {
    INFO(CompressionName(c));
    const std::string packed = Compress("first part ", c) + Compress("second part", c);
    CHECK(Decompress(c, packed, 5) == "first part second part");
  }
  // gzip -d ignores zero padding after the last member.
  const std::string padded = Compress("padded", Compression::kGzip) + std::string(512, '\0');
  CHECK(Decompress(Compression::kGzip, padded, 100) == "padded");
}

TEST_CASE("damaged, truncated and empty files are skipped with a reason",
          "[documents][decompress]") {
  const std::string text = Text(200000);
  for (Compression c : kAll) {
    INFO(CompressionName(c));
    const std::string packed = Compress(text, c);
    CHECK(Failure(c, packed.substr(0, packed.size() / 2)) == SkipReason::kBadCompressed);
    CHECK(Failure(c, "this is not compressed at all") == SkipReason::kBadCompressed);
    CHECK(Failure(c, "") == SkipReason::kBadCompressed);
    std::string flipped = packed;
    flipped[flipped.size() / 2] ^= 0x55;
    flipped[flipped.size() / 2 + 1] ^= 0x55;
    CHECK(Failure(c, flipped) == SkipReason::kBadCompressed);
  }
}

TEST_CASE("zstd reads frames of the current format and skippable frames only",
          "[documents][decompress]") {
  const Compression z = Compression::kZstd;
  const std::string frame = Compress("zstd text", z);
  // A skippable frame: magic 0x184D2A5?, a 4-byte size, that many bytes of anything.
  const std::string skippable = std::string(
      "\x53\x2A\x4D\x18\x03\x00\x00\x00"
      "abc",
      11);
  for (size_t piece : {size_t{1}, size_t{3}, size_t{1} << 20}) {
    INFO(piece);
    CHECK(Decompress(z, skippable + frame + skippable, piece) == "zstd text");
  }
  // A frame of zstd 0.6 (magic 0xFD2FB526): refused whole and in pieces alike.
  const std::string legacy("\x26\xb5\x2f\xfd\x49\xff\xff\xff\x03", 9);
  for (size_t piece : {size_t{1}, size_t{4}, size_t{1} << 20}) {
    INFO(piece);
    try {
      Decompress(z, legacy, piece);
      FAIL("a legacy frame was read");
    } catch (const SkipDocument& s) {
      CHECK(s.reason() == SkipReason::kBadCompressed);
      CHECK(std::string(s.what()).find("not a zstd frame") != std::string::npos);
    }
  }
  // Bytes after the last frame that begin no whole magic number: a truncated file.
  CHECK(Failure(z, frame + "\x28\xb5") == SkipReason::kBadCompressed);
}

TEST_CASE("a decompression bomb stops at the limit", "[documents][decompress]") {
  // 64 MiB of one letter: at most a few hundred KB compressed.
  const std::string content(64 << 20, 'a');
  for (Compression c : kAll) {
    INFO(CompressionName(c));
    const std::string bomb = Compress(content, c);
    CHECK(bomb.size() < (1 << 20));
    auto start = std::chrono::steady_clock::now();
    StringSink sink;
    auto d = Decompressor::Create(c, 1 << 20, sink);
    try {
      d->Write(bomb);
      d->Close();
      FAIL("no limit");
    } catch (const SkipDocument& s) {
      CHECK(s.reason() == SkipReason::kDecompressionLimit);
      CHECK(std::string(s.what()).find("more than 1048576 bytes") != std::string::npos);
    }
    // It stopped as soon as the limit was passed, not after the whole content.
    CHECK(sink.text.size() <= (1 << 20));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    // Exactly at the limit is allowed.
    CHECK(Decompress(c, Compress(std::string(1000, 'b'), c), 1 << 20, 1000).size() == 1000);
    CHECK(Failure(c, Compress(std::string(1001, 'b'), c), 1000) == SkipReason::kDecompressionLimit);
  }
}

TEST_CASE("compression by file name", "[documents][decompress]") {
  std::string_view inner;
  CHECK(CompressionOfName("a/b.txt.gz", &inner) == Compression::kGzip);
  CHECK(inner == "a/b.txt");
  CHECK(CompressionOfName("page.html.xz", &inner) == Compression::kXz);
  CHECK(inner == "page.html");
  CHECK(CompressionOfName("x.bz2") == Compression::kBzip2);
  CHECK(CompressionOfName("x.zst") == Compression::kZstd);
  CHECK(CompressionOfName("x.tgz") == Compression::kNone);
  CHECK(CompressionOfName(".gz") == Compression::kNone);
  // In any case, as .html is ("LOG.TXT.GZ" from a Windows machine).
  CHECK(CompressionOfName("LOG.TXT.GZ", &inner) == Compression::kGzip);
  CHECK(inner == "LOG.TXT");
  CHECK(CompressionOfName("x.Zst") == Compression::kZstd);
  CHECK(CompressionOfName("plain.txt", &inner) == Compression::kNone);
  CHECK(inner == "plain.txt");
}
