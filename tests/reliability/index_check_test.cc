// `Index::Check` / `bitsift check`: damaged and foreign index files, including damage hidden
// behind recomputed checksums, are reported (exit 2 naming the file and the problem) and never
// crash; whatever the check accepts still answers exactly.
#include <bitsift/bitsift.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "format/doc_table.h"
#include "format/index_format.h"
#include "reliability_util.h"
#include "test_util.h"
#include "util/varint.h"

using bitsift::Index;
using bitsift::Status;
using bitsift::format::SectionId;
using namespace bitsift::testing;

namespace {

// A small corpus with frequent words (exact rows), rare words (Bloom rows), documents of more
// than 128 terms (forward skip entries), an empty document and several scripts.
std::vector<bitsift::Document> SmallCorpus() {
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 40; ++i) {
    std::string text = "common shared ";
    text += Cat("word", i, " ");
    if (i % 3 == 0) text += "third ";
    if (i % 7 == 0) text += "東京タワー Straße привет ";
    if (i == 5 || i == 6) {
      for (int j = 0; j < 300; ++j) text += Cat("long", j * (i - 3), " ");
    }
    docs.push_back({Cat("doc", 100 + i), i == 9 ? "" : text, i});
  }
  return docs;
}

const std::vector<std::vector<std::string>> kQueries = {{"common"},
                                                        {"third"},
                                                        {"word7"},
                                                        {"common", "third"},
                                                        {"東京"},
                                                        {"long30"},
                                                        {"long300", "shared"},
                                                        {"absent"},
                                                        {"straße", "word14"},
                                                        {"long597"}};

struct Answers {
  std::vector<Status::Code> codes;
  std::vector<std::vector<uint32_t>> docs;
  bool operator==(const Answers& o) const { return codes == o.codes && docs == o.docs; }
};

Answers Ask(const Index& index) {
  Answers a;
  for (const auto& q : kQueries) {
    bitsift::QueryResult r;
    a.codes.push_back(index.Query(q, {}, &r).code());
    a.docs.push_back(r.documents);
  }
  return a;
}

// Opens and checks `image` as the segment of a copy of the index `good` at `path`: the Open
// status, else the Check status.
Status OpenAndCheck(const std::string& good, const std::string& path, const std::string& image,
                    std::unique_ptr<Index>* index) {
  WriteIndexWithSegment(good, path, image);
  Status s = Index::Open(path, index);
  return s.ok() ? (*index)->Check() : s;
}

template <typename T>
T Load(const std::string& image, uint64_t offset) {
  T v;
  std::memcpy(&v, image.data() + offset, sizeof(T));
  return v;
}
template <typename T>
void Store(std::string& image, uint64_t offset, T v) {
  std::memcpy(image.data() + offset, &v, sizeof(T));
}

}  // namespace

TEST_CASE("check accepts every index the builder writes", "[check]") {
  TempDir dir;
  // From a directory (the bundled sample), from memory, empty, all-empty documents, and a
  // generated corpus big enough for several bands and exact rows.
  REQUIRE(bitsift::BuildIndex(BITSIFT_SAMPLE_DIR, dir / "sample", {}).ok());
  CHECK(bitsift::CheckIndex(dir / "sample").ok());
  REQUIRE(bitsift::BuildIndexFromDocuments(SmallCorpus(), dir / "small", {}).ok());
  CHECK(bitsift::CheckIndex(dir / "small").ok());
  REQUIRE(bitsift::BuildIndexFromDocuments({}, dir / "none", {}).ok());
  CHECK(bitsift::CheckIndex(dir / "none").ok());
  REQUIRE(bitsift::BuildIndexFromDocuments({{"a", "", 0}, {"b", "!!", 0}}, dir / "blank", {}).ok());
  CHECK(bitsift::CheckIndex(dir / "blank").ok());
  std::mt19937_64 rng(3);
  auto vocab = MixedVocabulary(3000, rng);
  std::vector<bitsift::Document> docs;
  for (auto& d : GenerateCorpus(3000, 2000, vocab, rng)) docs.push_back({d.name, d.text, 0});
  bitsift::IndexOptions options;
  options.fp_rate = 0.05;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "generated", options).ok());
  Status s = bitsift::CheckIndex(dir / "generated");
  INFO(s.message());
  CHECK(s.ok());
  CHECK(bitsift::CheckIndex(dir / "missing").code() == Status::Code::kNotFound);
}

TEST_CASE("check finds damage hidden behind recomputed checksums", "[check]") {
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(SmallCorpus(), dir / "good", {}).ok());
  const std::string good = SegmentImage(dir / "good");
  std::unique_ptr<Index> index;
  // Applies `mutate` to a copy, reseals it, and expects open or check to report `expected`.
  auto expect_damage = [&](const char* what, auto mutate, const char* expected) {
    std::string bad = good;
    mutate(bad);
    ResealIndex(bad);
    REQUIRE(bad != good);
    Status s = OpenAndCheck(dir / "good", dir / "bad", bad, &index);
    INFO(what << ": " << s.message());
    CHECK(s.code() == Status::Code::kCorrupt);
    CHECK(s.message().find(dir / "bad") != std::string::npos);
    CHECK(s.message().find(expected) != std::string::npos);
  };
  const auto [rows, rows_len] = SectionSpan(good, SectionId::kRows);
  const auto [bands, bands_len] = SectionSpan(good, SectionId::kBands);
  const auto band = Load<bitsift::format::BandRecord>(good, bands);
  const uint64_t band_count = bands_len / sizeof(bitsift::format::BandRecord);
  expect_damage(
      "a signature bit cleared",
      [&, rows = rows, rows_len = rows_len](std::string& b) {
        for (uint64_t w = 0; w < rows_len / 8; ++w) {
          uint64_t v = Load<uint64_t>(b, rows + w * 8);
          if (v != 0) {
            Store<uint64_t>(b, rows + w * 8, v & (v - 1));
            return;
          }
        }
      },
      "bit");
  expect_damage(
      "a bit past the documents",
      [&, rows = rows](std::string& b) {
        uint64_t col = band.doc_count;  // first column past the band's documents
        uint64_t off = rows + band.rows_offset + (col / 64) * 8;
        Store<uint64_t>(b, off, Load<uint64_t>(b, off) | (uint64_t{1} << (col % 64)));
      },
      "past its documents");
  const auto [dict_blocks, dict_blocks_len] = SectionSpan(good, SectionId::kDictBlocks);
  expect_damage(
      "a term's bytes changed",
      // Byte 1: the first byte of the first term (after its one-byte length).
      [&, at = dict_blocks + 1](std::string& b) { b[at] = b[at] == 'q' ? 'z' : 'q'; },
      "dictionary block 0");
  expect_damage(
      "a term's id changed",
      [&, blocks = dict_blocks, len = dict_blocks_len](std::string& b) {
        // The last byte of the blocks is the last term's id code: 0 (a df-1 term) or id + 1.
        const uint64_t at = blocks + len - 1;
        b[at] = static_cast<char>(b[at] == 0 ? 1 : 0);
      },
      "term");
  const auto [df, df_len] = SectionSpan(good, SectionId::kDfRuns);
  expect_damage(
      "a document frequency changed",
      // Run 0's df: raising it keeps the runs decreasing, only the forward records disagree.
      [&, at = df + 4](std::string& b) { Store<uint32_t>(b, at, Load<uint32_t>(b, at) + 1); },
      "frequency");
  const auto [dict_index, dict_index_len] = SectionSpan(good, SectionId::kDictIndex);
  expect_damage(
      "a dictionary block key changed",
      [&, at = dict_index](std::string& b) { Store<uint64_t>(b, at, Load<uint64_t>(b, at) ^ 1); },
      "dictionary block 0");
  const auto [dict_top, dict_top_len] = SectionSpan(good, SectionId::kDictTop);
  expect_damage(
      "a DICT_TOP key changed",
      // Lookups go wrong before the sample is compared with DICT_INDEX.
      [&, at = dict_top](std::string& b) { Store<uint64_t>(b, at, Load<uint64_t>(b, at) ^ 1); },
      "not found under its id");
  const auto [band_docs, band_docs_len] = SectionSpan(good, SectionId::kBandDocs);
  expect_damage(
      "a document twice in the bands",
      [&, bd = band_docs](std::string& b) { Store<uint32_t>(b, bd + 4, Load<uint32_t>(b, bd)); },
      "twice");
  expect_damage(
      "two band columns swapped",
      [&, bd = band_docs](std::string& b) {
        uint32_t x = Load<uint32_t>(b, bd), y = Load<uint32_t>(b, bd + 4);
        Store<uint32_t>(b, bd, y);
        Store<uint32_t>(b, bd + 4, x);
      },
      "bit");
  // DOC_BANDS: block 0 starts with each band's count of documents before it (0), then the
  // documents' band codes (format/doc_bands.h).
  const auto [doc_bands, doc_bands_len] = SectionSpan(good, SectionId::kDocBands);
  expect_damage(
      "a band's count of documents before a block changed",
      [&, at = doc_bands](std::string& b) { Store<uint32_t>(b, at, Load<uint32_t>(b, at) + 1); },
      "document bands block 0");
  expect_damage(
      "a document's band code changed",
      [&, at = doc_bands + 4 * band_count](std::string& b) {
        b[at] = static_cast<char>(b[at] ^ 1);
      },
      "document bands");  // block 0's code names no band, or a band ends up with too many
  const auto [fwd, fwd_len] = SectionSpan(good, SectionId::kForwardData);
  expect_damage(
      "a forward record's count changed",
      [&, fwd = fwd](std::string& b) { b[fwd] = static_cast<char>(b[fwd] + 1); }, "forward record");
  // TERM_FILTER emptied behind valid checksums: every lookup would say absent (false negatives).
  const auto [filter_at, filter_len] = SectionSpan(good, SectionId::kTermFilter);
  expect_damage(
      "the term filter's bits cleared",
      [&, filter_at = filter_at, filter_len = filter_len](std::string& b) {
        std::fill(b.begin() + static_cast<ptrdiff_t>(filter_at),
                  b.begin() + static_cast<ptrdiff_t>(filter_at + filter_len), '\0');
      },
      "missing from TERM_FILTER");
  // DOC_FACTS: document 0's record follows block 0's table of record starts
  // (format/doc_table.h): kDocFactsFields varints, then its path.
  const auto [facts_at, facts_len] = SectionSpan(good, SectionId::kDocFacts);
  const auto [meta_at, meta_len] = SectionSpan(good, SectionId::kMeta);
  const uint64_t docs = Load<bitsift::format::MetaRecord>(good, meta_at).doc_count;
  const uint64_t record0 =
      facts_at + 2 * (std::min<uint64_t>(docs, bitsift::format::kDocFactsBlock) - 1);
  REQUIRE(facts_len >= record0 - facts_at + bitsift::format::kDocFactsFields);
  REQUIRE(static_cast<uint8_t>(good[record0]) < 0x7f);  // a one-byte term count
  expect_damage(
      "a document's term count changed",
      [&, record0](std::string& b) { b[record0] = static_cast<char>(b[record0] + 1); },
      "term count");
  expect_damage(
      "a document facts block that no longer decodes to its documents",
      [&, record0](std::string& b) { b[record0] = static_cast<char>(0x80); },
      "document facts of block 0");
  expect_damage(
      "a document facts block whose table of record starts is wrong",
      [&, facts_at = facts_at](std::string& b) {
        b[facts_at] = static_cast<char>(b[facts_at] + 1);
      },
      "document facts of block 0");
  // Document 0's path: its length is the varint after the record's other fields.
  uint64_t path_at = record0;
  for (uint32_t field = 0; field + 1 < bitsift::format::kDocFactsFields; ++field) {
    while (static_cast<uint8_t>(good[path_at]) & 0x80) ++path_at;
    ++path_at;
  }
  expect_damage(
      "a document's path length changed",
      [&, path_at](std::string& b) { b[path_at] = static_cast<char>(b[path_at] + 1); },
      "document facts of block 0");
  expect_damage(
      "a document's path renamed after the next one",
      [&, path_at](std::string& b) { b[path_at + 1] = static_cast<char>(0xff); },
      "documents 0 and 1 out of path order");
  // Not an index at all / another version / truncated: named by Open, which check runs first.
  expect_damage(
      "a newer format version",
      [](std::string& b) {
        Store<uint32_t>(b, offsetof(bitsift::format::FileHeader, format_version),
                        bitsift::format::kFormatVersion + 1);
      },
      "format version");
  // A segment of the previous version (before ENCODINGS): refused with the same advice.
  expect_damage(
      "an older format version",
      [](std::string& b) {
        Store<uint32_t>(b, offsetof(bitsift::format::FileHeader, format_version),
                        bitsift::format::kFormatVersion - 1);
      },
      "format version");
  // The encoding table and the records' indexes into it.
  const auto [enc_at, enc_len] = SectionSpan(good, SectionId::kEncodings);
  REQUIRE(enc_len >= 4 + 1 + 5);  // at least "UTF-8"
  expect_damage(
      "a document's encoding past the table",
      [&, record0](std::string& b) {
        const auto* p = reinterpret_cast<const uint8_t*>(b.data()) + record0;
        const uint8_t* encoding = bitsift::SkipVarints(p, p + 64, 6);  // the 7th field
        REQUIRE(encoding != nullptr);
        REQUIRE(*encoding == 0);  // UTF-8: one byte
        b[record0 + (encoding - p)] = 7;
      },
      "encoding 7 of document 0 is not in the encoding table");
  expect_damage(
      "an encoding count past the section",
      [&, enc_at = enc_at](std::string& b) { Store<uint32_t>(b, enc_at, 1000); },
      "encoding table: name count 1000 does not fit");
  expect_damage(
      "an encoding name's length past the section",
      [&, enc_at = enc_at, enc_len = enc_len](std::string& b) {
        b[enc_at + 4] = static_cast<char>(enc_len);
      },
      "encoding table: name 0 of length");
  expect_damage(
      "encoding 0 not UTF-8", [&, enc_at = enc_at](std::string& b) { b[enc_at + 5] = 'u'; },
      "name 0 is not UTF-8");
  expect_damage(
      "an encoding name not ASCII",
      [&, enc_at = enc_at](std::string& b) { b[enc_at + 6] = '\x01'; }, "not printable ASCII");
}

TEST_CASE("any byte changed behind valid checksums: no crash, and what check accepts is exact",
          "[check][forge]") {
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(SmallCorpus(), dir / "good", {}).ok());
  const std::string good = SegmentImage(dir / "good");
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "good", &index).ok());
  const Answers expected = Ask(*index);
  for (const auto& d : expected.docs) REQUIRE(d.size() <= 40);
  const uint64_t stride =
      std::max<uint64_t>(1, good.size() / EnvNumber("BITSIFT_FORGE_POSITIONS", 4000));
  uint64_t tried = 0, refused_by_open = 0, refused_by_check = 0, accepted = 0;
  for (uint64_t pos = 0; pos < good.size(); pos += stride) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ flip);
      ResealIndex(bad);
      ++tried;
      WriteIndexWithSegment(dir / "good", dir / "bad", bad);
      Status s = Index::Open(dir / "bad", &index);
      if (!s.ok()) {
        ++refused_by_open;
        INFO("position " << pos << ": " << s.message());
        CHECK(s.code() == Status::Code::kCorrupt);
        continue;
      }
      Status c = index->Check();
      Answers got = Ask(*index);  // must not crash, whatever the check said
      if (!c.ok()) {
        ++refused_by_check;
        CHECK(c.code() == Status::Code::kCorrupt);
        continue;
      }
      ++accepted;
      INFO("position " << pos << " flip " << int{flip} << " passed the check");
      CHECK(got == expected);
    }
  }
  WARN("forged single-byte changes: "
       << tried << " tried, " << refused_by_open << " refused by open, " << refused_by_check
       << " refused by check, " << accepted << " harmless ones accepted (answers unchanged)");
  CHECK(refused_by_open + refused_by_check > tried / 2);
}

TEST_CASE("bitsift check: exit 0 for a sound index, 2 naming the file and the problem",
          "[check][cli]") {
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(SmallCorpus(), dir / "good", {}).ok());
  const std::string good = SegmentImage(dir / "good");
  const std::string bitsift = BitsiftProgram();
  ProcessResult r = RunProcess({bitsift, "check", "--index", dir / "good"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("ok") != std::string::npos);
  auto expect = [&](const char* what, const std::string& image, const char* message) {
    WriteIndexWithSegment(dir / "good", dir / "bad", image);
    ProcessResult p = RunProcess({bitsift, "check", "--index", dir / "bad"});
    INFO(what << ": " << p.err);
    CHECK(p.exit_code == 2);
    CHECK(p.err.find(dir / "bad") != std::string::npos);
    CHECK(p.err.find(message) != std::string::npos);
    CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
  };
  expect("truncated", good.substr(0, good.size() - 100), "truncated");
  expect("empty", "", "too short");
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x04;
  expect("flipped byte", flipped, "mismatch");
  expect("another format", "SQLite format 3" + std::string(200, '\0'), "bad magic");
  std::string newer = good;
  Store<uint32_t>(newer, offsetof(bitsift::format::FileHeader, format_version),
                  bitsift::format::kFormatVersion + 1);
  ResealIndex(newer);
  expect("newer version", newer,
         ("format version " + std::to_string(bitsift::format::kFormatVersion + 1)).c_str());
  std::string forged = good;
  const auto [df, df_len] = SectionSpan(good, SectionId::kDfRuns);
  Store<uint32_t>(forged, df + 4, Load<uint32_t>(forged, df + 4) + 1);
  ResealIndex(forged);
  expect("forged frequency", forged, "frequency");
  ProcessResult missing = RunProcess({bitsift, "check", "--index", dir / "nope"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir / "nope") != std::string::npos);
}

TEST_CASE("a segment of an older format: readers say rebuild, an update from the tree rebuilds",
          "[check][version]") {
  TempDir dir;
  WriteFile(dir / "tree/a.txt", "alpha common\n");
  WriteFile(dir / "tree/b.txt", "beta common\n");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "good", {}).ok());
  // The segment as the previous format version's header would name it.
  std::string old = SegmentImage(dir / "good");
  Store<uint32_t>(old, offsetof(bitsift::format::FileHeader, format_version),
                  bitsift::format::kFormatVersion - 1);
  ResealIndex(old);
  WriteIndexWithSegment(dir / "good", dir / "old", old);
  CHECK(bitsift::format::PeekFormatVersion(OnlySegment(dir / "old")) ==
        bitsift::format::kFormatVersion - 1);
  std::unique_ptr<Index> index;
  Status s = Index::Open(dir / "old", &index);
  CHECK(s.code() == Status::Code::kCorrupt);
  CHECK(s.message().find("format version " + std::to_string(bitsift::format::kFormatVersion - 1)) !=
        std::string::npos);
  // The repair as a field of its own, and at the end of the message for people.
  CHECK(s.repair().rfind("bitsift index --rebuild " + (dir / "tree") + " --index ", 0) == 0);
  CHECK(s.message().size() > s.repair().size() + 1);
  CHECK(s.message().substr(s.message().size() - s.repair().size() - 1) == s.repair() + "'");
  // A query from the command line: exit 2, one line naming the command that repairs it.
  ProcessResult p = RunProcess({BitsiftProgram(), "query", "--index", dir / "old", "common"});
  CHECK(p.exit_code == 2);
  CHECK(p.out.empty());
  CHECK(p.err.find("rebuild it with 'bitsift index --rebuild " + (dir / "tree")) !=
        std::string::npos);
  CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 1);
  // Compaction cannot read the documents again: it fails and leaves the index as it was.
  s = bitsift::CompactIndex(dir / "old", {});
  CHECK(s.code() == Status::Code::kCorrupt);
  CHECK(ReadFile(OnlySegment(dir / "old")) == old);
  // `bitsift index DIR` after an upgrade: every file is read again into the new format.
  bitsift::IndexSummary summary;
  s = bitsift::BuildIndex(dir / "tree", dir / "old", {}, &summary);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(summary.rebuilt);
  CHECK(summary.why_rebuilt.find("format " + std::to_string(bitsift::format::kFormatVersion - 1)) !=
        std::string::npos);
  CHECK(summary.added == 2);
  REQUIRE(Index::Open(dir / "old", &index).ok());
  bitsift::QueryResult r;
  REQUIRE(index->Query({"common"}, {}, &r).ok());
  CHECK(r.documents.size() == 2);
  CHECK(index->document(r.documents[0]).encoding == "UTF-8");
  CHECK(index->Check().ok());
}
