// The streaming merge (indexer/segment_merger.h) against a fresh build: compacting an index
// that went through updates and deletions gives, section by section, the segment a fresh
// build of its live documents gives (only META's build time differs).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <random>
#include <set>

#include "bitsift/bitsift.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "format/sparse_rows.h"
#include "indexer/index_builder.h"
#include "test_util.h"

using bitsift::testing::MixedVocabulary;
using bitsift::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".bsg") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Documents of very different sizes (several bands, and frequent terms with exact rows).
std::string RandomText(std::mt19937_64& rng, const std::vector<std::string>& vocab) {
  const size_t words = rng() % 8 == 0 ? 300 + rng() % 2000 : 1 + rng() % 40;
  std::string text;
  for (size_t i = 0; i < words; ++i) {
    // A Zipf-like skew: low indexes are frequent.
    const size_t r = rng() % vocab.size();
    text += vocab[rng() % 2 ? r * r / vocab.size() : r];
    text += rng() % 7 == 0 ? ".\n" : " ";
  }
  return text;
}

}  // namespace

TEST_CASE("compacting after updates gives the segment a fresh build gives", "[merge][update]") {
  std::mt19937_64 rng(2024);
  const std::vector<std::string> vocab = MixedVocabulary(20000, rng);  // most terms are rare
  uint64_t shared_lists_all = 0;
  for (int trial = 0; trial < 4; ++trial) {
    TempDir dir;
    std::map<std::string, std::string> texts;
    bitsift::IndexOptions options;
    options.merge = trial != 1;  // trial 1: only compaction merges
    // Sparse rows: none, few, most; trial 3: a setting of 4, below the segment's documents / 128,
    // which then sets its threshold (format::SegmentSparseMaxDf).
    options.sparse_max_df = trial == 0 ? 0 : trial == 1 ? 32 : trial == 2 ? 128 : 4;
    options.memory_budget = 64 << 10;
    for (int round = 0; round < 10; ++round) {
      std::vector<bitsift::Document> upserts;
      std::vector<std::string> deletes;
      std::set<std::string> touched;  // a name once per round
      // Round 0 adds 1,600 documents (several 512-document blocks: several bands), the
      // others change 60 at random.
      for (int i = 0; i < (round == 0 ? 1600 : 60); ++i) {
        const std::string name = "doc" + std::to_string(round == 0 ? i : rng() % 1700);
        if (!touched.insert(name).second) continue;
        if (rng() % 5 == 0) {
          deletes.push_back(name);
          texts.erase(name);
          continue;
        }
        std::string text = RandomText(rng, vocab);
        texts[name] = text;
        upserts.push_back({name, text, 0});
      }
      REQUIRE(bitsift::UpdateDocuments(upserts, deletes, dir / "updated", options).ok());
    }
    INFO("trial " << trial << ": " << SegmentFiles(dir / "updated").size() << " segments");
    REQUIRE(bitsift::CompactIndex(dir / "updated", options).ok());
    std::vector<bitsift::Document> all;
    for (const auto& [name, text] : texts) all.push_back({name, text, 0});
    bitsift::IndexOptions fresh_options;
    fresh_options.sparse_max_df = options.sparse_max_df;
    REQUIRE(bitsift::BuildIndexFromDocuments(all, dir / "fresh", fresh_options).ok());

    const std::vector<std::string> merged = SegmentFiles(dir / "updated");
    const std::vector<std::string> fresh = SegmentFiles(dir / "fresh");
    REQUIRE(merged.size() == 1);
    REQUIRE(fresh.size() == 1);
    bitsift::format::IndexFile a(merged[0]), b(fresh[0]);
    a.VerifyAll();
    bitsift::format::MetaRecord meta;
    std::memcpy(&meta, a.Section(bitsift::format::SectionId::kMeta).data(), sizeof(meta));
    if (trial == 0) CHECK(meta.band_count > 1);  // the comparison covers several bands
    CHECK(meta.exact_terms > 0);                 // and exact rows
    if (trial > 0) CHECK(meta.sparse_first < meta.term_count);  // and sparse rows
    CHECK(meta.sparse_max_df ==
          bitsift::format::SegmentSparseMaxDf(options.sparse_max_df, meta.doc_count));
    if (trial == 3) CHECK(meta.sparse_max_df == meta.doc_count / 128);
    // Which terms keep positions follows each segment's document frequencies when its
    // documents were indexed (format::IsPositionedTerm), so the forward records may differ in
    // that alone: every other byte is the fresh build's.
    using bitsift::format::SectionId;
    for (SectionId id : bitsift::format::kSectionOrder) {
      // CHUNK_SUMS covers META (its build time), CHUNK_SUMS_INDEX covers CHUNK_SUMS.
      if (id == SectionId::kChunkSums || id == SectionId::kChunkSumsIndex ||
          id == SectionId::kForwardOffsets || id == SectionId::kForwardData)
        continue;
      std::string x(a.Section(id)), y(b.Section(id));
      if (id == SectionId::kMeta) {
        REQUIRE(x.size() == y.size());
        for (size_t at : {offsetof(bitsift::format::MetaRecord, build_time_unix),
                          offsetof(bitsift::format::MetaRecord, position_bytes)}) {
          std::fill(x.begin() + at, x.begin() + at + 8, '\0');
          std::fill(y.begin() + at, y.begin() + at + 8, '\0');
        }
      }
      INFO("section " << bitsift::format::SectionName(id));
      CHECK(x == y);
    }
    // The records: the same ids and counts, and the same positions for every term that has
    // them in both.
    std::vector<uint64_t> offsets_a, offsets_b;
    REQUIRE(bitsift::format::DecodeForwardOffsets(a.Section(SectionId::kForwardOffsets),
                                                  meta.doc_count, &offsets_a));
    REQUIRE(bitsift::format::DecodeForwardOffsets(b.Section(SectionId::kForwardOffsets),
                                                  meta.doc_count, &offsets_b));
    const auto* data_a =
        reinterpret_cast<const uint8_t*>(a.Section(SectionId::kForwardData).data());
    const auto* data_b =
        reinterpret_cast<const uint8_t*>(b.Section(SectionId::kForwardData).data());
    uint64_t shared_lists = 0;
    for (uint64_t d = 0; d < meta.doc_count; ++d) {
      std::vector<uint32_t> ids_a, ids_b;
      bitsift::format::ForwardCounts counts_a, counts_b;
      bitsift::format::ForwardPositions pos_a, pos_b;
      REQUIRE(bitsift::format::DecodeForwardRecord(data_a + offsets_a[d], data_a + offsets_a[d + 1],
                                                   &ids_a, nullptr, &counts_a, &pos_a));
      REQUIRE(bitsift::format::DecodeForwardRecord(data_b + offsets_b[d], data_b + offsets_b[d + 1],
                                                   &ids_b, nullptr, &counts_b, &pos_b));
      REQUIRE(ids_a == ids_b);
      REQUIRE(counts_a.length == counts_b.length);
      for (size_t i = 0; i < ids_a.size(); ++i) REQUIRE(counts_a.TfAt(i) == counts_b.TfAt(i));
      if (!pos_a.empty() && !pos_b.empty()) REQUIRE(pos_a.count == pos_b.count);
      for (size_t k = 0; k < pos_a.which.size(); ++k) {
        const auto j = std::lower_bound(pos_b.which.begin(), pos_b.which.end(), pos_a.which[k]);
        if (j == pos_b.which.end() || *j != pos_a.which[k]) continue;
        size_t na = 0, nb = 0;
        const uint32_t* la = pos_a.List(k, &na);
        const uint32_t* lb = pos_b.List(static_cast<size_t>(j - pos_b.which.begin()), &nb);
        REQUIRE(std::vector<uint32_t>(la, la + na) == std::vector<uint32_t>(lb, lb + nb));
        ++shared_lists;
      }
    }
    shared_lists_all += shared_lists;
  }
  CHECK(shared_lists_all > 200);  // the comparison covers positions
}

TEST_CASE("the library's default sparse threshold is the format's", "[merge]") {
  CHECK(bitsift::IndexOptions{}.sparse_max_df == bitsift::format::kDefaultSparseMaxDf);
  CHECK(bitsift::indexer::BuildConfig{}.sparse_max_df == bitsift::format::kDefaultSparseMaxDf);
}

TEST_CASE("a segment's sparse threshold grows with its documents above the setting", "[merge]") {
  using bitsift::format::SegmentSparseMaxDf;
  CHECK(SegmentSparseMaxDf(0, 10'000'000) == 0);  // no sparse rows stays none
  CHECK(SegmentSparseMaxDf(1024, 0) == 1024);
  CHECK(SegmentSparseMaxDf(1024, 1024 * 128) == 1024);
  CHECK(SegmentSparseMaxDf(1024, 1024 * 128 + 128) == 1025);
  CHECK(SegmentSparseMaxDf(1024, 800'000) == 6250);
  CHECK(SegmentSparseMaxDf(20'000, 800'000) == 20'000);
}

TEST_CASE("a merged segment's pair filters answer phrases as the texts do", "[merge][pairs]") {
  std::mt19937_64 rng(77);
  // 30 words of letters. The first segment's files hold the last 5 in a few of them only (no
  // positions there); the next two segments hold every word in most files: after the merge all
  // 30 are pair terms, and the first segment's records stand some at positions without lists.
  // (Positions of the frequent terms only, as segments of more than 16 MiB of text keep.)
  std::vector<std::string> vocab;
  while (vocab.size() < 30) {
    std::string w;
    for (size_t n = 3 + rng() % 4; n > 0; --n) w += static_cast<char>('a' + rng() % 26);
    if (std::find(vocab.begin(), vocab.end(), w) == vocab.end()) vocab.push_back(w);
  }
  TempDir dir;
  fs::create_directories(dir / "tree");
  std::map<std::string, std::vector<std::string>> words;  // by path: its words in order
  bitsift::indexer::BuildConfig config;
  config.merge = false;
  config.every_position_bytes = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 300; ++i) {
      const std::string name = "r" + std::to_string(round) + "-" + std::to_string(i) + ".txt";
      std::vector<std::string>& w = words[name];
      const size_t known = round == 0 && i % 30 != 0 ? 25 : 30;
      std::string text;
      for (size_t n = 20 + rng() % 60; n > 0; --n) {
        w.push_back(vocab[rng() % known]);
        text += w.back() + (rng() % 9 == 0 ? "\n" : " ");
      }
      bitsift::testing::WriteFile(dir / ("tree/" + name), text);
    }
    if (round == 2) {  // some of the first segment's files deleted
      for (int i = 1; i < 300; i += 3) {
        const std::string name = "r0-" + std::to_string(i) + ".txt";
        fs::remove(dir / ("tree/" + name));
        words.erase(name);
      }
    }
    bitsift::indexer::BuildReport report;
    bitsift::indexer::UpdateIndexFromDirectory(dir / "tree", dir / "index", config, &report);
  }
  REQUIRE(SegmentFiles(dir / "index").size() == 3);
  bitsift::indexer::BuildReport report;
  bitsift::indexer::CompactIndex(dir / "index", config, &report);
  REQUIRE(SegmentFiles(dir / "index").size() == 1);
  std::unique_ptr<bitsift::Index> index;
  REQUIRE(bitsift::Index::Open(dir / "index", &index).ok());
  REQUIRE(index->Check().ok());
  uint64_t found = 0, empty = 0, rare_in_first = 0;
  for (int q = 0; q < 400; ++q) {
    // Half the phrases from a file's words (present; every fourth from a first-segment file
    // that holds a rare word), half of random words (mostly not).
    std::vector<std::string> phrase;
    const size_t m = 2 + rng() % 2;
    if (q % 2 == 0) {
      auto it = words.begin();
      if (q % 8 == 0) {
        it = words.find("r0-" + std::to_string(30 * (rng() % 10)) + ".txt");
        if (it == words.end()) continue;
      } else {
        std::advance(it, rng() % words.size());
      }
      const size_t at = rng() % (it->second.size() - m + 1);
      phrase.assign(it->second.begin() + at, it->second.begin() + at + m);
    } else {
      for (size_t e = 0; e < m; ++e) phrase.push_back(vocab[rng() % vocab.size()]);
    }
    std::string text = "\"";
    for (const std::string& w : phrase) text += (text.size() > 1 ? " " : "") + w;
    text += "\"";
    std::set<std::string> expected;
    bool rare = false;
    for (const auto& [name, w] : words) {
      if (std::search(w.begin(), w.end(), phrase.begin(), phrase.end()) == w.end()) continue;
      expected.insert(name);
      for (const std::string& x : phrase) {
        rare |= name.rfind("r0-", 0) == 0 &&
                std::find(vocab.begin() + 25, vocab.end(), x) != vocab.end();
      }
    }
    bitsift::QueryResult r;
    REQUIRE(index->Query({text}, {}, &r).ok());
    INFO(text);
    CHECK(r.unreadable.empty());
    std::set<std::string> got;
    for (uint32_t id : r.documents) got.insert(index->document(id).path);
    CHECK(got == expected);
    found += !expected.empty();
    empty += expected.empty();
    rare_in_first += rare;
  }
  CHECK(found > 100);
  CHECK(empty > 10);
  CHECK(rare_in_first > 10);  // phrases a first-segment record holds without their lists
}

TEST_CASE("a build that flushes many times writes the segment one flush writes", "[merge]") {
  // The flushes keep every term's positions and their merge those of the merged segment's
  // frequent terms: the records, positions and pair filters included, are byte for byte those
  // of one flush (which terms are frequent a flush of a part cannot tell).
  std::mt19937_64 rng(99);
  const std::vector<std::string> vocab = MixedVocabulary(3000, rng);
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 2400; ++i)
    docs.push_back({"doc" + std::to_string(i), RandomText(rng, vocab), 0});
  TempDir dir;
  bitsift::IndexOptions flushing;
  flushing.memory_budget = 8 << 20;
  bitsift::IndexSummary report;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "flushed", flushing, &report).ok());
  CHECK(report.segments_written >= 3);
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "whole", bitsift::IndexOptions{}).ok());
  const std::vector<std::string> flushed = SegmentFiles(dir / "flushed");
  const std::vector<std::string> whole = SegmentFiles(dir / "whole");
  REQUIRE(flushed.size() == 1);
  REQUIRE(whole.size() == 1);
  bitsift::format::IndexFile a(flushed[0]), b(whole[0]);
  bitsift::format::MetaRecord meta;
  std::memcpy(&meta, a.Section(bitsift::format::SectionId::kMeta).data(), sizeof(meta));
  CHECK(meta.position_bytes > 0);
  using bitsift::format::SectionId;
  for (SectionId id : bitsift::format::kSectionOrder) {
    if (id == SectionId::kChunkSums || id == SectionId::kChunkSumsIndex) continue;
    std::string x(a.Section(id)), y(b.Section(id));
    if (id == SectionId::kMeta) {
      REQUIRE(x.size() == y.size());
      const size_t at = offsetof(bitsift::format::MetaRecord, build_time_unix);
      std::fill(x.begin() + at, x.begin() + at + 8, '\0');
      std::fill(y.begin() + at, y.begin() + at + 8, '\0');
    }
    INFO("section " << bitsift::format::SectionName(id));
    CHECK(x == y);
  }
}
