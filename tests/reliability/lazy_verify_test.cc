// Lazy verification: opening an index verifies its header, table and small sections; every other
// 4 KiB chunk is verified when a query first reads it (format::IndexFile::Touch). A query that
// reads a damaged chunk fails (kCorrupt, naming the file and the repair) instead of answering;
// damage in a chunk the query does not read leaves its answer exact, and check finds it.
#include <bitsift/bitsift.h>
#include <fcntl.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "format/bloom.h"
#include "format/index_format.h"
#include "format/segment_reader.h"
#include "format/sparse_rows.h"
#include "query/searcher.h"
#include "reliability_util.h"
#include "storage/verified_file.h"
#include "test_util.h"
#include "util/error.h"

using bitsift::Index;
using bitsift::Status;
using bitsift::format::SectionId;
using namespace bitsift::testing;
namespace fs = std::filesystem;

namespace {

// Generated documents of many sizes (several bands, frequent terms with exact rows; ROWS,
// FORWARD_DATA and DOCS span several chunks), and marker terms: "needle" in 24 documents, "pin"
// in 29, both in 2 (documents 0 and 2625). They are in more than the segment's sparse threshold
// (kSparseMaxDf, raised to 3000 / 128 = 23 by format::SegmentSparseMaxDf), so {"needle", "pin"}
// uses Bloom rows and verifies its candidates against their forward records.
// "hapax", in 3 documents, has a sparse row, as each document's own "onlyN".
constexpr uint32_t kSparseMaxDf = 16;
std::vector<bitsift::Document> LazyCorpus() {
  std::mt19937_64 rng(11);
  auto vocab = MixedVocabulary(4000, rng);
  std::vector<bitsift::Document> docs;
  int i = 0;
  for (auto& d : GenerateCorpus(3000, 1500, vocab, rng)) {
    std::string text = d.text;
    if (i % 125 == 0) text += " needle";
    if (i % 105 == 0) text += " pin";
    if (i == 100 || i == 1700 || i == 2500) text += " hapax";
    text += " only" + std::to_string(i);  // a term of its own: SPARSE_DATA spans chunks
    docs.push_back({d.name, text, i++});
  }
  return docs;
}

const std::vector<std::string> kQuery = {"needle", "pin"};

// The file holding an index's sections: the index itself, or the one segment of an index
// directory.
std::string SegmentOf(const std::string& index) {
  if (!fs::is_directory(index)) return index;
  for (const auto& e : fs::directory_iterator(index)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("seg-", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".bsg")
      return e.path().string();
  }
  FAIL("no segment in " << index);
  return "";
}

// Writes a copy of index `good` at `bad` whose sections file has `image` as its bytes; returns
// the path of that file.
std::string WriteCopy(const std::string& good, const std::string& bad, const std::string& image) {
  fs::remove_all(bad);
  if (fs::is_directory(good)) fs::copy(good, bad, fs::copy_options::recursive);
  const std::string segment = fs::is_directory(good)
                                  ? (fs::path(bad) / fs::path(SegmentOf(good)).filename()).string()
                                  : bad;
  WriteFile(segment, image);
  return segment;
}

std::vector<std::string> Paths(const Index& index, const bitsift::QueryResult& r) {
  std::vector<std::string> out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}

struct Answer {
  Status status;
  std::vector<std::string> paths;
};

// by_copy: opened as a one-shot query opens where page faults are dear (its reads by pread
// through the chunk cache, format::IndexFile::copy_reads).
Answer Ask(const std::string& index_path, const std::vector<std::string>& query,
           bool by_copy = false) {
  std::unique_ptr<Index> index;
  Status s;
  if (by_copy) {
    bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kCopy);
    bitsift::OpenOptions options;
    options.one_shot = true;
    s = Index::Open(std::vector<std::string>{index_path}, options, &index);
    bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kAuto);
  } else {
    s = Index::Open(index_path, &index);
  }
  REQUIRE(s.ok());
  bitsift::QueryResult r;
  Answer a{index->Query(query, {}, &r), {}};
  a.paths = Paths(*index, r);
  return a;
}

// Which chunks of a section a fresh reader of `segment` has verified after answering the query
// as the API does (search, then the records of the results).
std::vector<bool> TouchedChunks(const std::string& segment, SectionId id) {
  bitsift::format::SegmentReader reader(segment);
  bitsift::query::Searcher searcher(reader);
  bitsift::query::QueryStats stats;
  for (uint32_t d : searcher.Search(kQuery, 0, &stats)) (void)reader.path(d);
  std::vector<bool> touched;
  const uint64_t chunks = bitsift::format::ChunkCount(reader.Section(id).size());
  for (uint64_t c = 0; c < chunks; ++c) touched.push_back(reader.file().ChunkVerified(id, c));
  return touched;
}

// A copy of `image` with the byte at `pos` changed (no checksum recomputed).
std::string Flip(std::string image, uint64_t pos) {
  image[pos] = static_cast<char>(image[pos] ^ 0x20);
  return image;
}

template <typename T>
T Load(const std::string& image, uint64_t offset) {
  T v;
  std::memcpy(&v, image.data() + offset, sizeof(T));
  return v;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

struct Fixture {
  TempDir dir;
  std::string good, segment, image;
  Answer expected;
  Fixture() {
    bitsift::IndexOptions options;
    options.sparse_max_df = kSparseMaxDf;
    REQUIRE(bitsift::BuildIndexFromDocuments(LazyCorpus(), dir / "good", options).ok());
    good = dir / "good";
    segment = SegmentOf(good);
    image = ReadFile(segment);
    expected = Ask(good, kQuery);
    REQUIRE(expected.status.ok());
    REQUIRE(expected.paths.size() == 2);
  }
};

}  // namespace

TEST_CASE("open verifies only the small sections, a query verifies the chunks it reads", "[lazy]") {
  Fixture f;
  bitsift::format::SegmentReader reader(f.segment);
  const auto& file = reader.file();
  // The corpus is large enough for the large sections to be lazily verified.
  for (SectionId id : {SectionId::kRows, SectionId::kForwardData, SectionId::kDocFacts}) {
    INFO(bitsift::format::SectionName(id));
    REQUIRE(reader.Section(id).size() > 2 * bitsift::format::kChunkBytes);
    CHECK_FALSE(file.ChunkVerified(id, 0));
  }
  CHECK(file.ChunkVerified(SectionId::kMeta, 0));
  CHECK(file.ChunkVerified(SectionId::kBands, 0));
  const uint64_t at_open = file.verified_chunks();
  CHECK(at_open < file.chunk_count() / 2);
  bitsift::query::Searcher searcher(reader);
  bitsift::query::QueryStats stats;
  CHECK(searcher.Search(kQuery, 0, &stats).size() == 2);
  const uint64_t after_query = file.verified_chunks();
  CHECK(after_query > at_open);
  CHECK(after_query < file.chunk_count());
  reader.file().VerifyAll();
  CHECK(file.verified_chunks() == file.chunk_count());
}

namespace {

// Drops a file's pages from the page cache (written back first), so that the next reads come
// from the disk: the cold state of a one-shot query. A hint to the kernel: if it keeps some
// pages, what the tests below assert still holds (they assert results, not timings).
void Evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace

TEST_CASE("read-ahead hints on a cold index verify nothing and change no answer", "[lazy]") {
  Fixture f;
  Evict(f.segment);
  bitsift::format::SegmentReader reader(f.segment);
  reader.AdviseRandomAccess();
  const auto& file = reader.file();
  const uint64_t at_open = file.verified_chunks();
  std::vector<uint32_t> all(reader.doc_count());
  for (uint32_t d = 0; d < all.size(); ++d) all[d] = d;
  all.push_back(UINT32_MAX);  // an id out of range is ignored
  reader.WillNeedRecords(all.data(), all.size());
  reader.WillNeedDocs(all.data(), all.size());
  reader.WillNeedColumns(all.data(), all.size());
  for (uint32_t t = 0; t <= reader.exact_terms(); ++t) reader.WillNeedExactRow(t);
  CHECK(file.verified_chunks() == at_open);
  bitsift::query::Searcher searcher(reader);
  bitsift::query::QueryStats stats;
  std::vector<std::string> paths;
  for (uint32_t d : searcher.Search(kQuery, 0, &stats)) paths.emplace_back(reader.path(d));
  CHECK(paths == f.expected.paths);
  // Through the library (random access advised at open), cold again: the same answer.
  Evict(f.segment);
  Answer a = Ask(f.good, kQuery);
  CHECK(a.status.ok());
  CHECK(a.paths == f.expected.paths);
  CHECK(Ask(f.good, {"hapax"}).paths.size() == 3);
}

TEST_CASE("read-ahead stops for a long-lived reader whose requests meet only verified chunks",
          "[lazy]") {
  // A small dictionary is soon read (so verified) whole; each query's two rounds of lookups for
  // read-ahead would then be work for nothing. They stop as they do for resident chunks.
  Fixture f;
  bitsift::format::SegmentReader reader(f.segment);
  reader.AdviseRandomAccess();
  const auto& file = reader.file();
  file.VerifyAll();
  REQUIRE_FALSE(file.Warm(SectionId::kDictBlocks));
  std::vector<std::string> terms;
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 3000; i += 250) {
    terms.push_back("only" + std::to_string(i));
    hashes.push_back(bitsift::format::HashTerm(terms.back()));
  }
  for (int stage : {1, 2}) reader.dictionary().WillNeedLookups(terms, hashes, stage);
  CHECK(file.Warm(SectionId::kDictBlocks));
  // And the answers stay what they were.
  bitsift::query::Searcher searcher(reader);
  bitsift::query::QueryStats stats;
  std::vector<std::string> paths;
  for (uint32_t d : searcher.Search(kQuery, 0, &stats)) paths.emplace_back(reader.path(d));
  CHECK(paths == f.expected.paths);
}

TEST_CASE("a damaged chunk that a query reads: the query fails naming the file and the repair",
          "[lazy]") {
  Fixture f;
  const std::string bad = f.dir / "bad";
  // Through the mapping, and by copy (a one-shot reader where page faults are dear).
  const bool by_copy = GENERATE(false, true);
  // Who reads a section: every reader, or only a reader that answers the Bloom terms "needle"
  // and "pin" from their rows and verifies the candidates' forward records (a reader of many
  // queries), or only one that takes their lists (a one-shot reader: the library's by_copy
  // Ask and the program; format::SegmentReader::UsesList). A reader that does not read the damage
  // answers exactly.
  enum class Readers { kAll, kRows, kLists };
  auto expect_refused = [&](const char* what, uint64_t pos, const char* section,
                            Readers readers = Readers::kAll) {
    const std::string segment = WriteCopy(f.good, bad, Flip(f.image, pos));
    const bool library_reads = readers == Readers::kAll || (readers == Readers::kRows) != by_copy;
    const bool program_reads = readers != Readers::kRows;
    Answer a = Ask(bad, kQuery, by_copy);
    INFO(what << (by_copy ? " (by copy)" : "") << ": " << a.status.message());
    if (library_reads) {
      CHECK(a.status.code() == Status::Code::kCorrupt);
      CHECK(a.paths.empty());
      CHECK(Contains(a.status.message(), segment));
      CHECK(Contains(a.status.message(), std::string("of section ") + section));
      // An index of in-memory documents: the repair is to build it again from them.
      CHECK(Contains(a.status.message(), "rebuild it from its documents"));
      CHECK(a.status.repair().empty());  // no command rebuilds in-memory documents
    } else {
      CHECK(a.status.ok());
      CHECK(a.paths == f.expected.paths);
    }
    // Read from the disk (cold: the query asks for its chunks ahead), the same answer.
    Evict(segment);
    Answer cold = Ask(bad, kQuery, by_copy);
    CHECK(cold.status.code() == a.status.code());
    CHECK(cold.paths == a.paths);
    // The program: exit 2, one line naming the file, nothing on stdout.
    ProcessResult p = RunProcess({BitsiftProgram(), "query", "--index", bad, "needle", "pin"});
    if (program_reads) {
      CHECK(p.exit_code == 2);
      CHECK(p.out.empty());
      CHECK(Contains(p.err, segment));
      CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
    } else {
      CHECK(p.exit_code == 0);
      CHECK(static_cast<size_t>(std::count(p.out.begin(), p.out.end(), '\n')) ==
            f.expected.paths.size());
    }
  };

  // A byte of the first row that the query ANDs in band 0.
  const auto [rows_at, rows_len] = SectionSpan(f.image, SectionId::kRows);
  const auto [bands_at, bands_len] = SectionSpan(f.image, SectionId::kBands);
  const auto band = Load<bitsift::format::BandRecord>(f.image, bands_at);
  uint64_t row = UINT64_MAX;
  bitsift::format::ForEachPosition(bitsift::format::HashTerm("needle"), band.width, band.k,
                                   [&](uint64_t r) { row = std::min(row, r); });
  expect_refused("a row the query reads",
                 rows_at + band.rows_offset + row * band.words_per_row * 8 + 3, "ROWS",
                 Readers::kRows);

  // A byte of the forward record of a candidate (document "needle" and "pin" are in).
  bitsift::format::SegmentReader reader(f.segment);
  uint32_t doc = UINT32_MAX;
  for (uint32_t d = 0; d < reader.doc_count() && doc == UINT32_MAX; ++d) {
    if (reader.path(d) == f.expected.paths[0]) doc = d;
  }
  REQUIRE(doc != UINT32_MAX);
  const auto [offsets_at, offsets_len] = SectionSpan(f.image, SectionId::kForwardOffsets);
  const auto [forward_at, forward_len] = SectionSpan(f.image, SectionId::kForwardData);
  expect_refused("a candidate's forward record",
                 forward_at + Load<uint64_t>(f.image, offsets_at + doc * 8ULL), "FORWARD_DATA",
                 Readers::kRows);

  // A byte of the list of "needle", a Bloom term (format 10: its list beside its rows).
  {
    const std::optional<uint32_t> needle = reader.dictionary().Find("needle");
    REQUIRE(needle.has_value());
    REQUIRE(!reader.IsSparse(*needle));
    REQUIRE(reader.HasList(*needle));
    const auto [index_at, index_len] = SectionSpan(f.image, SectionId::kSparseIndex);
    const auto [data_at, data_len] = SectionSpan(f.image, SectionId::kSparseData);
    const uint64_t group = reader.ListGroups().Group(*needle);
    expect_refused("a Bloom term's list", data_at + Load<uint64_t>(f.image, index_at + group * 8),
                   "SPARSE_DATA", Readers::kLists);
  }

  // The record of a result (its path is printed): a byte of its path, in its DOC_FACTS block.
  const auto [facts_at, facts_len] = SectionSpan(f.image, SectionId::kDocFacts);
  const std::string_view path = reader.path(doc);  // a view of the reader's mapping
  const uint64_t path_at =
      facts_at + static_cast<uint64_t>(path.data() - reader.Section(SectionId::kDocFacts).data());
  REQUIRE(f.image.compare(path_at, path.size(), path) == 0);
  expect_refused("a result's path", path_at + path.size() / 2, "DOC_FACTS");

  // A dictionary block the query's lookups read (read in place by copy too: VerifyMappedChunk).
  const std::vector<bool> dict = TouchedChunks(f.segment, SectionId::kDictBlocks);
  REQUIRE(dict.size() > 1);  // lazily verified, not at open
  const auto touched = std::find(dict.begin(), dict.end(), true);
  REQUIRE(touched != dict.end());
  const auto [dict_at, dict_len] = SectionSpan(f.image, SectionId::kDictBlocks);
  expect_refused("a dictionary block the query reads",
                 dict_at + (touched - dict.begin()) * bitsift::format::kChunkBytes + 5,
                 "DICT_BLOCKS");
}

TEST_CASE("reads by copy give the mapping's bytes, from many threads at once",
          "[lazy][concurrent][copy]") {
  // A one-shot reader where page faults are dear reads with pread through a cache of chunks
  // shared by its threads (IndexFile::copy_reads): every piece, within a chunk or across
  // several, by Read, ReadView, Touch or ScratchView, must equal what the mapping holds, and a
  // damaged chunk must be refused by every read that covers it and never be recorded as verified.
  using bitsift::format::IndexFile;
  Fixture f;
  bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kCopy);
  struct Restore {
    ~Restore() {
      bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kAuto);
    }
  } restore;
  const std::vector<SectionId> lazy = {SectionId::kRows,          SectionId::kBandDocs,
                                       SectionId::kDocBands,      SectionId::kForwardOffsets,
                                       SectionId::kForwardData,   SectionId::kDocFacts,
                                       SectionId::kDocFactsIndex, SectionId::kDictBlocks,
                                       SectionId::kSparseData,    SectionId::kDfRuns};
  // wrong: reads that returned other bytes than the mapping's, or bytes of a damaged chunk
  // (damaged(id, chunk)).
  auto read_all = [&](const IndexFile& copy, const IndexFile& mapped,
                      std::atomic<uint64_t>& failures, std::atomic<uint64_t>& wrong, auto damaged) {
    tbb::parallel_for(0, 32, 1, [&](int t) {
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 100);
      std::vector<uint8_t> got, view_buffer;
      for (int i = 0; i < 400; ++i) {
        const SectionId id = lazy[rng() % lazy.size()];
        const uint64_t len = copy.Section(id).size();
        if (len == 0) continue;
        const uint64_t offset = rng() % len;
        // Mostly records within a chunk, sometimes pieces across two or three.
        const uint64_t max = rng() % 4 == 0 ? 3 * bitsift::format::kChunkBytes : 64;
        const uint64_t n = std::min<uint64_t>(len - offset, 1 + rng() % max);
        try {
          got.assign(n, 0);
          const int how = static_cast<int>(rng() % 4);
          const uint8_t* bytes = got.data();
          if (how == 0) {
            copy.Read(id, offset, n, got.data());
          } else if (how == 1) {
            bytes = copy.ReadView(id, offset, n, &view_buffer);
          } else if (how == 2) {
            bytes = copy.Touch(id, offset, n);
          } else {  // the thread's scratch, valid until its next read: compared below first
            bytes = copy.ScratchView(id, offset, n);
          }
          bool covers_damage = false;
          for (uint64_t c = offset >> bitsift::format::kChunkShift;
               c <= (offset + n - 1) >> bitsift::format::kChunkShift; ++c) {
            covers_damage = covers_damage || damaged(id, c);
          }
          if (covers_damage || std::memcmp(bytes, mapped.Section(id).data() + offset, n) != 0)
            wrong.fetch_add(1);
        } catch (const bitsift::Error&) {
          failures.fetch_add(1);
        }
      }
    });
  };
  {
    IndexFile copy(f.segment, IndexFile::Access::kOneShot);
    IndexFile mapped(f.segment);
    REQUIRE(copy.copy_reads());
    CHECK(copy.copies(SectionId::kForwardData));
    CHECK_FALSE(copy.copies(SectionId::kDictBlocks));  // the dictionary stays mapped
    std::atomic<uint64_t> failures{0}, wrong{0};
    read_all(copy, mapped, failures, wrong, [](SectionId, uint64_t) { return false; });
    CHECK(failures.load() == 0);
    CHECK(wrong.load() == 0);
  }
  {
    // A damaged chunk of ROWS (its second) and of FORWARD_DATA (its first).
    const auto [rows_at, rows_len] = SectionSpan(f.image, SectionId::kRows);
    const auto [forward_at, forward_len] = SectionSpan(f.image, SectionId::kForwardData);
    std::string image = Flip(f.image, rows_at + bitsift::format::kChunkBytes + 5);
    image = Flip(image, forward_at + 7);
    WriteCopy(f.good, f.dir / "bad", image);
    IndexFile copy(SegmentOf(f.dir / "bad"), IndexFile::Access::kOneShot);
    IndexFile mapped(SegmentOf(f.dir / "bad"));
    std::atomic<uint64_t> failures{0}, wrong{0};
    read_all(copy, mapped, failures, wrong, [](SectionId id, uint64_t chunk) {
      return (id == SectionId::kRows && chunk == 1) ||
             (id == SectionId::kForwardData && chunk == 0);
    });
    CHECK(failures.load() > 0);
    CHECK(wrong.load() == 0);  // no read that covers a damaged chunk returns bytes
    CHECK_FALSE(copy.ChunkVerified(SectionId::kRows, 1));
    CHECK_FALSE(copy.ChunkVerified(SectionId::kForwardData, 0));
    uint64_t word;
    CHECK_THROWS_AS(copy.Read(SectionId::kRows, bitsift::format::kChunkBytes + 8, 8, &word),
                    bitsift::Error);
    CHECK_THROWS_AS(copy.Read(SectionId::kForwardData, 0, 4, &word), bitsift::Error);
    // A piece across the damaged chunk and a sound one is refused too.
    std::vector<uint8_t> buffer;
    CHECK_THROWS_AS(copy.ReadView(SectionId::kRows, 100, 2 * bitsift::format::kChunkBytes, &buffer),
                    bitsift::Error);
    CHECK_THROWS_AS(copy.ScratchView(SectionId::kRows, 100, 2 * bitsift::format::kChunkBytes),
                    bitsift::Error);
    copy.Read(SectionId::kRows, 0, 8, &word);  // chunk 0 is sound
    CHECK(copy.ChunkVerified(SectionId::kRows, 0));
  }
}

TEST_CASE("a damaged sparse row that a query reads: the query fails naming the section", "[lazy]") {
  Fixture f;
  const std::string bad = f.dir / "bad";
  REQUIRE(Ask(f.good, {"hapax"}).paths.size() == 3);
  bitsift::format::SegmentReader reader(f.segment);
  const std::optional<uint32_t> id = reader.dictionary().Find("hapax");
  REQUIRE(id.has_value());
  REQUIRE(reader.IsSparse(*id));
  const uint64_t group = reader.ListGroups().Group(*id);
  const auto [index_at, index_len] = SectionSpan(f.image, SectionId::kSparseIndex);
  const auto [data_at, data_len] = SectionSpan(f.image, SectionId::kSparseData);
  const uint64_t pos = data_at + Load<uint64_t>(f.image, index_at + group * 8);
  const std::string segment = WriteCopy(f.good, bad, Flip(f.image, pos));
  Answer a = Ask(bad, {"hapax"});
  INFO(a.status.message());
  CHECK(a.status.code() == Status::Code::kCorrupt);
  CHECK(a.paths.empty());
  CHECK(Contains(a.status.message(), segment));
  CHECK(Contains(a.status.message(), "of section SPARSE_DATA"));
  // The Bloom terms' query does not read it.
  Answer b = Ask(bad, kQuery);
  CHECK(b.status.ok());
  CHECK(b.paths == f.expected.paths);
}

TEST_CASE("a damaged chunk that a query does not read: exact answer, and check finds it",
          "[lazy]") {
  Fixture f;
  const std::string bad = f.dir / "bad";
  for (SectionId id : {SectionId::kRows, SectionId::kForwardData}) {
    const std::string name = bitsift::format::SectionName(id);
    const std::vector<bool> touched = TouchedChunks(f.segment, id);
    // The corpus is built so that the query reads some chunks of these sections, not all.
    auto untouched = std::find(touched.begin(), touched.end(), false);
    REQUIRE(untouched != touched.end());
    REQUIRE(std::find(touched.begin(), touched.end(), true) != touched.end());
    const uint64_t chunk = static_cast<uint64_t>(untouched - touched.begin());
    const auto [at, len] = SectionSpan(f.image, id);
    const uint64_t pos = at + chunk * bitsift::format::kChunkBytes +
                         std::min<uint64_t>(777, len - chunk * bitsift::format::kChunkBytes - 1);
    const std::string segment = WriteCopy(f.good, bad, Flip(f.image, pos));
    INFO(name << " chunk " << chunk << " of " << touched.size());

    Answer a = Ask(bad, kQuery);
    INFO(a.status.message());
    CHECK(a.status.ok());
    CHECK(a.paths == f.expected.paths);
    Status c = bitsift::CheckIndex(bad);
    CHECK(c.code() == Status::Code::kCorrupt);
    CHECK(Contains(c.message(), segment));
    CHECK(Contains(c.message(), "chunk " + std::to_string(chunk) + " of section " + name));

    ProcessResult q = RunProcess({BitsiftProgram(), "query", "--index", bad, "needle", "pin"});
    CHECK(q.exit_code == 0);
    ProcessResult k = RunProcess({BitsiftProgram(), "check", "--index", bad});
    CHECK(k.exit_code == 2);
    CHECK(Contains(k.err, "rebuild it from its documents"));
  }
}

TEST_CASE("a damaged CHUNK_SUMS_INDEX, META or BANDS: open fails", "[lazy]") {
  Fixture f;
  const std::string bad = f.dir / "bad";
  for (SectionId id : {SectionId::kChunkSumsIndex, SectionId::kMeta, SectionId::kBands}) {
    const auto [at, len] = SectionSpan(f.image, id);
    for (uint64_t pos : {at, at + len / 2, at + len - 1}) {
      const std::string segment = WriteCopy(f.good, bad, Flip(f.image, pos));
      std::unique_ptr<Index> index;
      Status s = Index::Open(bad, &index);
      INFO(bitsift::format::SectionName(id) << " +" << pos - at << ": " << s.message());
      CHECK(s.code() == Status::Code::kCorrupt);
      CHECK(Contains(s.message(), segment));
      CHECK(Contains(s.message(), bitsift::format::SectionName(id)));
    }
  }
}

TEST_CASE("a damaged TERM_FILTER: a long-lived open fails, a one-shot query never answers wrongly",
          "[lazy]") {
  // A long-lived reader verifies every segment's filter at open (IndexSet's filters_, tested
  // for every query against every segment); a one-shot reader verifies the blocks it reads.
  Fixture f;
  const std::string bad = f.dir / "bad";
  const auto [at, len] = SectionSpan(f.image, SectionId::kTermFilter);
  REQUIRE(len > 0);
  for (uint64_t pos : {at, at + len / 2, at + len - 1}) {
    const std::string segment = WriteCopy(f.good, bad, Flip(f.image, pos));
    std::unique_ptr<Index> index;
    Status s = Index::Open(bad, &index);
    INFO("TERM_FILTER +" << pos - at << ": " << s.message());
    CHECK(s.code() == Status::Code::kCorrupt);
    CHECK(Contains(s.message(), segment));
    CHECK(Contains(s.message(), "TERM_FILTER"));
    ProcessResult q = RunProcess({BitsiftProgram(), "query", "--index", bad, "needle", "pin"});
    INFO(q.err);
    if (q.exit_code == 0) {
      CHECK(std::count(q.out.begin(), q.out.end(), '\n') == 2);
    } else {
      CHECK(q.exit_code == 2);
      CHECK(Contains(q.err, "rebuild it from its documents"));
    }
  }
}

TEST_CASE("a damaged piece of CHUNK_SUMS: the first read it covers fails, check finds it",
          "[lazy]") {
  // CHUNK_SUMS is verified piece by piece (4 KiB: 512 chunk checksums) against
  // CHUNK_SUMS_INDEX as the chunks it covers are first read. Piece 0 covers the dictionary,
  // which opening an index (its path ranges) or any lookup reads.
  Fixture f;
  const std::string bad = f.dir / "bad";
  const auto [at, len] = SectionSpan(f.image, SectionId::kChunkSums);
  const std::string segment = WriteCopy(f.good, bad, Flip(f.image, at + 5));
  // Through the mapping, and by copy (a one-shot reader where page faults are dear).
  const bool by_copy = GENERATE(false, true);
  bitsift::storage::VerifiedFile::SetOneShotReads(by_copy ? bitsift::storage::OneShotReads::kCopy
                                                          : bitsift::storage::OneShotReads::kAuto);
  bitsift::OpenOptions open;
  open.one_shot = by_copy;
  std::unique_ptr<Index> index;
  Status s = Index::Open(std::vector<std::string>{bad}, open, &index);
  bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kAuto);
  if (s.ok()) {
    bitsift::QueryResult r;
    s = index->Query(kQuery, {}, &r);
  }
  INFO(s.message());
  CHECK(s.code() == Status::Code::kCorrupt);
  CHECK(Contains(s.message(), segment));
  CHECK(Contains(s.message(), "chunk 0 of section CHUNK_SUMS"));
  Status c = bitsift::CheckIndex(bad);
  CHECK(c.code() == Status::Code::kCorrupt);
  CHECK(Contains(c.message(), "CHUNK_SUMS"));
}

TEST_CASE("Touch from many threads at once on fresh chunks", "[lazy][concurrent]") {
  Fixture f;
  const std::vector<SectionId> lazy = {SectionId::kRows,        SectionId::kDocFacts,
                                       SectionId::kForwardData, SectionId::kForwardOffsets,
                                       SectionId::kDictBlocks,  SectionId::kDictIndex,
                                       SectionId::kSparseData};
  // Every thread touches every chunk of the lazily verified sections, each in its own order and
  // with ranges that cross chunk boundaries: the first touches of a chunk race.
  auto touch_all = [&](const bitsift::format::IndexFile& file, std::atomic<uint64_t>& failures) {
    tbb::parallel_for(0, 64, 1, [&](int t) {
      std::mt19937_64 rng(static_cast<uint64_t>(t));
      for (SectionId id : lazy) {
        const uint64_t len = file.Section(id).size();
        const uint64_t chunks = bitsift::format::ChunkCount(len);
        for (uint64_t i = 0; i < chunks; ++i) {
          const uint64_t c = (i + static_cast<uint64_t>(t)) % chunks;
          const uint64_t offset =
              std::min(len - 1, c * bitsift::format::kChunkBytes + rng() % 70000);
          try {
            (void)file.Touch(id, offset, std::min<uint64_t>(len - offset, 1 + rng() % 4096));
          } catch (const bitsift::Error&) {
            failures.fetch_add(1);
          }
        }
      }
    });
  };
  {
    bitsift::format::SegmentReader reader(f.segment);
    std::atomic<uint64_t> failures{0};
    touch_all(reader.file(), failures);
    CHECK(failures.load() == 0);
    for (SectionId id : lazy) {
      for (uint64_t c = 0; c < bitsift::format::ChunkCount(reader.Section(id).size()); ++c)
        CHECK(reader.file().ChunkVerified(id, c));
    }
  }
  {
    // A damaged chunk is never recorded as verified, however many threads touch it.
    const auto [rows_at, rows_len] = SectionSpan(f.image, SectionId::kRows);
    WriteCopy(f.good, f.dir / "bad", Flip(f.image, rows_at + bitsift::format::kChunkBytes + 5));
    bitsift::format::SegmentReader reader(SegmentOf(f.dir / "bad"));
    std::atomic<uint64_t> failures{0};
    touch_all(reader.file(), failures);
    CHECK(failures.load() > 0);
    CHECK_FALSE(reader.file().ChunkVerified(SectionId::kRows, 1));
    CHECK(reader.file().ChunkVerified(SectionId::kRows, 0));
    CHECK_THROWS_AS(reader.file().Touch(SectionId::kRows, bitsift::format::kChunkBytes, 1),
                    bitsift::Error);
  }
}

TEST_CASE("Touch refuses a range outside its section", "[lazy]") {
  Fixture f;
  bitsift::format::SegmentReader reader(f.segment);
  const auto& file = reader.file();
  const uint64_t len = file.Section(SectionId::kDocFacts).size();
  CHECK_NOTHROW(file.Touch(SectionId::kDocFacts, len, 0));
  CHECK_NOTHROW(file.Touch(SectionId::kDocFacts, 0, len));
  CHECK_THROWS_AS(file.Touch(SectionId::kDocFacts, len, 1), bitsift::Error);
  CHECK_THROWS_AS(file.Touch(SectionId::kDocFacts, 1, len), bitsift::Error);
  CHECK_THROWS_AS(file.Touch(SectionId::kDocFacts, UINT64_MAX, 2), bitsift::Error);
  CHECK_THROWS_AS(reader.doc(static_cast<uint32_t>(reader.doc_count())), bitsift::Error);
  CHECK_THROWS_AS(reader.path(static_cast<uint32_t>(reader.doc_count())), bitsift::Error);
  CHECK_THROWS_AS(reader.column(static_cast<uint32_t>(reader.doc_count())), bitsift::Error);
}

TEST_CASE("a sparse list is verified up to its end, not the rest of its group", "[lazy]") {
  // 20 terms "sN" in ~1,000 of 40,000 documents each, all sparse (sparse_max_df 1,100; exact
  // rows start at 1/32 of the documents): each list is ~1,000 varints, so a group of 16 spans
  // several 4 KiB chunks of SPARSE_DATA.
  auto term = [](int t) { return std::string("s").append(std::to_string(t)); };
  std::vector<bitsift::Document> docs;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 40000; ++i) {
    std::string text = std::string("doc").append(std::to_string(i));
    for (int t = 0; t < 20; ++t) {
      if (static_cast<int>(rng() % 40000) < 1000 + t) text.append(" ").append(term(t));
    }
    docs.push_back({std::string("d").append(std::to_string(100000 + i)), text, i});
  }
  TempDir dir;
  bitsift::IndexOptions options;
  options.sparse_max_df = 1100;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "good", options).ok());
  const std::string good = dir / "good";
  const std::string image = ReadFile(SegmentOf(good));
  bitsift::format::SegmentReader reader(SegmentOf(good));
  // A group with a term whose list ends at least a chunk before the group's last chunk.
  const auto [index_at, index_len] = SectionSpan(image, SectionId::kSparseIndex);
  const auto [data_at, data_len] = SectionSpan(image, SectionId::kSparseData);
  std::optional<std::string> early, last;
  uint64_t damage = 0;
  for (int t = 0; t < 20 && !early; ++t) {
    const std::optional<uint32_t> id = reader.dictionary().Find(term(t));
    REQUIRE(id.has_value());
    REQUIRE(reader.IsSparse(*id));
    const uint64_t g = reader.ListGroups().Group(*id);
    const uint64_t begin = Load<uint64_t>(image, index_at + g * 8);
    const uint64_t end = Load<uint64_t>(image, index_at + (g + 1) * 8);
    std::vector<uint32_t> list;
    const auto* p = reinterpret_cast<const uint8_t*>(image.data()) + data_at + begin;
    const uint8_t* stop = nullptr;
    REQUIRE(bitsift::format::DecodeSparseRow(
        p, p + (end - begin), reader.ListGroups().GroupFirst(*id), *id, reader.dictionary(),
        reader.doc_count(), &list, &stop));
    const uint64_t list_end = begin + static_cast<uint64_t>(stop - p);
    if ((end - 1) / bitsift::format::kChunkBytes > list_end / bitsift::format::kChunkBytes) {
      early = term(t);
      damage = data_at + end - 1;     // the group's last byte: in the last term's list
      for (int u = 0; u < 20; ++u) {  // a term of the same group whose list holds that byte
        const uint32_t other = *reader.dictionary().Find(term(u));
        if (reader.ListGroups().Group(other) == g &&
            (!last || other > *reader.dictionary().Find(*last)))
          last = term(u);
      }
    }
  }
  REQUIRE(early.has_value());
  REQUIRE(last.has_value());
  const Answer expected = Ask(good, {*early});
  REQUIRE(expected.status.ok());
  REQUIRE(expected.paths.size() >= 900);
  const std::string bad = dir / "bad";
  WriteCopy(good, bad, Flip(image, damage));
  for (bool by_copy : {false, true}) {
    // The damage is past the early term's list: its answer is exact.
    Answer a = Ask(bad, {*early}, by_copy);
    CHECK(a.status.ok());
    CHECK(a.paths == expected.paths);
    // The group's last list holds it: that query fails naming the section.
    Answer b = Ask(bad, {*last}, by_copy);
    CHECK(b.status.code() == Status::Code::kCorrupt);
    CHECK(Contains(b.status.message(), "of section SPARSE_DATA"));
  }
  CHECK(bitsift::CheckIndex(bad).code() == Status::Code::kCorrupt);
}
