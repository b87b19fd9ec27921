#include "format/doc_table.h"

#include <catch2/catch.hpp>
#include <climits>
#include <random>
#include <vector>

using namespace bitsift;
using format::DocRecord;

namespace {

// A record whose facts are drawn from the shapes a tree has (close mtimes and inodes, ctime =
// mtime, size = file_size) mixed with extremes (negative times, 64-bit inodes, size above or
// below file_size, 32-bit counts).
DocRecord RandomFacts(std::mt19937_64& rng, const DocRecord& previous) {
  DocRecord d{};
  const auto pick = [&](uint64_t n) { return rng() % n; };
  d.term_count = pick(4) == 0 ? UINT32_MAX - static_cast<uint32_t>(pick(3))
                              : static_cast<uint32_t>(pick(5000));
  d.file_size = pick(5) == 0 ? rng() : pick(1 << 20);
  d.size = pick(3) == 0 ? rng() : d.file_size;
  // Wrapping arithmetic (the format's): previous.mtime_ns may be INT64_MIN.
  d.mtime_ns =
      pick(3) == 0
          ? static_cast<int64_t>(rng())
          : static_cast<int64_t>(static_cast<uint64_t>(previous.mtime_ns) + pick(1000000) - 500000);
  d.ctime_ns = pick(3) == 0 ? static_cast<int64_t>(rng()) : d.mtime_ns;
  if (pick(20) == 0) d.mtime_ns = INT64_MIN;
  d.inode = pick(4) == 0 ? rng() : previous.inode + pick(100);
  d.encoding = pick(5) == 0 ? static_cast<uint32_t>(rng()) : 0;
  // Fields DOC_FACTS does not hold: a decode must leave them as they are.
  d.path_offset = rng();
  d.column = static_cast<uint32_t>(rng());
  return d;
}

// A path of 0 to ~300 bytes (lengths of one and two varint bytes), any byte values; with
// `huge`, often 3000-5000 bytes, so that a block outgrows its table's 16-bit record starts.
std::string RandomPath(std::mt19937_64& rng, bool huge = false) {
  std::string path(huge && rng() % 2 == 0 ? 3000 + rng() % 2000
                   : rng() % 4 == 0       ? rng() % 300
                                          : rng() % 40,
                   '\0');
  for (char& c : path) c = static_cast<char>(rng());
  return path;
}

bool SameFacts(const DocRecord& a, const DocRecord& b) {
  return a.term_count == b.term_count && a.size == b.size && a.file_size == b.file_size &&
         a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns && a.inode == b.inode &&
         a.encoding == b.encoding;
}

}  // namespace

TEST_CASE("DOC_FACTS decodes every document's facts as written, block by block", "[doc_table]") {
  std::mt19937_64 rng(7);
  const std::pair<uint64_t, bool> cases[] = {{0, false},    {1, false},  {31, false},
                                             {32, false},   {33, false}, {64, false},
                                             {1000, false}, {70, true},  {33, true}};
  for (const auto& [count, huge] : cases) {
    INFO("count " << count << (huge ? ", huge paths" : ""));
    std::vector<DocRecord> docs;
    std::vector<std::string> paths;
    DocRecord previous{};
    previous.mtime_ns = 1700000000000000000;
    // Streamed as a merge writes it: the pending bytes taken at random moments.
    format::DocFactsWriter writer;
    std::string data;
    for (uint64_t i = 0; i < count; ++i) {
      docs.push_back(RandomFacts(rng, previous));
      paths.push_back(RandomPath(rng, huge));
      previous = docs.back();
      writer.Add(docs.back(), paths.back());
      if (rng() % 5 == 0) {
        data += writer.pending();
        writer.ClearPending();
      }
    }
    const std::vector<uint64_t> index = writer.Finish();
    data += writer.pending();
    REQUIRE(index.size() == format::DocFactsIndexEntries(count));
    CHECK(index.front() == 0);
    CHECK(index.back() == data.size());
    const auto* base = reinterpret_cast<const uint8_t*>(data.data());
    // Every record through DecodeDocFacts, and through one cursor per block in a random order.
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t b = i / format::kDocFactsBlock;
      const uint32_t n = format::DocFactsBlockCount(b, count);
      DocRecord got{};
      got.path_offset = 5;
      got.column = 7;
      std::string_view path;
      REQUIRE(format::DecodeDocFacts(base + index[b], base + index[b + 1], n,
                                     static_cast<uint32_t>(i % format::kDocFactsBlock), &got,
                                     &path));
      CHECK(SameFacts(got, docs[i]));
      CHECK(path == paths[i]);
      CHECK(got.path_length == paths[i].size());
      CHECK((got.path_offset == 5 && got.column == 7));
      // Without a path asked for, the same facts.
      DocRecord facts_only{};
      REQUIRE(format::DecodeDocFacts(base + index[b], base + index[b + 1], n,
                                     static_cast<uint32_t>(i % format::kDocFactsBlock),
                                     &facts_only));
      CHECK(SameFacts(facts_only, docs[i]));
    }
    for (uint64_t b = 0; b + 1 < index.size(); ++b) {
      const uint32_t n = format::DocFactsBlockCount(b, count);
      format::DocFactsCursor cursor;
      REQUIRE(cursor.Reset(base + index[b], base + index[b + 1], n));
      for (int step = 0; step < 64; ++step) {
        const auto j = static_cast<uint32_t>(rng() % n);
        DocRecord got{};
        std::string_view path;
        REQUIRE(cursor.Seek(j, &got, &path));
        CHECK(SameFacts(got, docs[b * format::kDocFactsBlock + j]));
        CHECK(path == paths[b * format::kDocFactsBlock + j]);
        std::string_view path_only;
        REQUIRE(cursor.Seek(j, nullptr, &path_only));
        CHECK(path_only == paths[b * format::kDocFactsBlock + j]);
      }
      DocRecord d{};
      CHECK_FALSE(cursor.Seek(n, &d));
    }
    for (uint64_t b = 0; b + 1 < index.size(); ++b) {
      const auto n = static_cast<uint32_t>(
          std::min<uint64_t>(format::kDocFactsBlock, count - b * format::kDocFactsBlock));
      CHECK(format::ValidDocFactsBlock(base + index[b], base + index[b + 1], n));
      // One record more or fewer than the block holds, or a byte missing, is not valid.
      CHECK_FALSE(format::ValidDocFactsBlock(base + index[b], base + index[b + 1], n + 1));
      CHECK_FALSE(format::ValidDocFactsBlock(base + index[b], base + index[b + 1], n - 1));
      CHECK_FALSE(format::ValidDocFactsBlock(base + index[b], base + index[b + 1] - 1, n));
    }
  }
}

TEST_CASE("A damaged DOC_FACTS block is refused, never read past its end", "[doc_table]") {
  std::mt19937_64 rng(8);
  format::DocFactsWriter writer;
  DocRecord previous{};
  for (int i = 0; i < 32; ++i) {
    previous = RandomFacts(rng, previous);
    writer.Add(previous, RandomPath(rng));
  }
  writer.Finish();
  const std::string data = writer.pending();
  for (size_t cut = 0; cut < data.size(); cut += 7) {
    // Copied to a buffer of exactly `cut` bytes, so that a read past the end is an ASan error.
    std::vector<uint8_t> bytes(data.begin(), data.begin() + static_cast<ptrdiff_t>(cut));
    DocRecord d{};
    const bool whole =
        format::DecodeDocFacts(bytes.data(), bytes.data() + bytes.size(), 32, 31, &d);
    CHECK_FALSE(whole);  // the last record ends at data.size()
  }
  // An encoding above 32 bits.
  std::string wide;
  for (int field = 0; field < 7; ++field) wide += field == 6 ? "\x80\x80\x80\x80\x10" : "\x01";
  wide +=
      "\x02"
      "ab";
  DocRecord d{};
  const auto* p = reinterpret_cast<const uint8_t*>(wide.data());
  CHECK_FALSE(format::DecodeDocFacts(p, p + wide.size(), 1, 0, &d));
  CHECK_FALSE(format::ValidDocFactsBlock(p, p + wide.size(), 1));
  std::string fine(7, '\x01');
  fine +=
      "\x02"
      "ab";
  p = reinterpret_cast<const uint8_t*>(fine.data());
  std::string_view path;
  CHECK(format::DecodeDocFacts(p, p + fine.size(), 1, 0, &d, &path));
  CHECK(d.encoding == 1);
  CHECK(path == "ab");
  // A path longer than what is left of the block, and one of more than 32 bits.
  std::string long_path(7, '\x01');
  long_path +=
      "\x03"
      "ab";
  p = reinterpret_cast<const uint8_t*>(long_path.data());
  CHECK_FALSE(format::DecodeDocFacts(p, p + long_path.size(), 1, 0, &d, &path));
  CHECK_FALSE(format::ValidDocFactsBlock(p, p + long_path.size(), 1));
  std::string huge_path(7, '\x01');
  huge_path += "\x80\x80\x80\x80\x10";
  p = reinterpret_cast<const uint8_t*>(huge_path.data());
  CHECK_FALSE(format::DecodeDocFacts(p, p + huge_path.size(), 1, 0, &d, &path));
  // A table of record starts that points past the block or into the middle of a record.
  REQUIRE(data.size() < format::kNoRecordStart);
  for (const uint64_t start : {uint64_t{data.size() + 1}, uint64_t{0}, uint64_t{1}}) {
    std::vector<uint8_t> bytes(data.begin(), data.end());
    bytes[2 * 4] = static_cast<uint8_t>(start & 0xFF);  // entry 5: where record 5 starts
    bytes[2 * 4 + 1] = static_cast<uint8_t>(start >> 8);
    const auto* b = bytes.data();
    CHECK_FALSE(format::ValidDocFactsBlock(b, b + bytes.size(), 32));
    CHECK_FALSE(format::DecodeDocFacts(b, b + bytes.size(), 32, 5, &d));
  }
  // A block shorter than its table.
  CHECK_FALSE(format::DecodeDocFacts(p, p + 10, 32, 0, &d));
  CHECK_FALSE(format::ValidDocFactsBlock(p, p + 10, 32));
}
