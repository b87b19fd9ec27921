// The engine against the brute-force oracle: identical results for thousands of queries, and
// candidates always a superset of the truth. Also the false-positive rate before verification.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <sstream>

#include "format/bloom.h"
#include "format/index_format.h"
#include "format/segment_reader.h"
#include "format/sparse_rows.h"
#include "indexer/index_builder.h"
#include "query/searcher.h"
#include "storage/verified_file.h"
#include "test_util.h"
#include "util/error.h"

using namespace bitsift;
using bitsift::testing::Oracle;
using bitsift::testing::TempDir;

namespace {

// Concatenates strings and numbers (GCC 12 warns falsely on chains of operator+).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

// Query arguments of several kinds: terms sampled from a document (so they hit), very common
// terms, terms that occur nowhere, mixtures, and raw vocabulary words (tokenized by the query).
std::vector<std::vector<std::string>> MakeQueries(const Oracle& oracle,
                                                  const std::vector<std::string>& common,
                                                  size_t count, std::mt19937_64& rng) {
  std::vector<std::vector<std::string>> queries;
  while (queries.size() < count) {
    std::vector<std::string> q;
    int kind = static_cast<int>(rng() % 10);
    size_t terms = 1 + rng() % 3;
    const auto& doc = oracle.doc(rng() % oracle.size());
    for (size_t t = 0; t < terms; ++t) {
      if (kind < 5 && !doc.empty()) {
        auto it = doc.begin();
        std::advance(it, rng() % doc.size());
        q.push_back(*it);
      } else if (kind < 7) {
        q.push_back(common[rng() % common.size()]);
      } else if (kind < 8) {
        q.push_back(Cat("absent", rng() % 1000, "zq"));
      } else if (kind < 9 && !doc.empty()) {
        auto it = doc.begin();
        std::advance(it, rng() % doc.size());
        q.push_back(t == 0 ? *it : Cat("nowhere", rng() % 50));
      } else {
        q.push_back(common[rng() % common.size()] + " " + common[rng() % common.size()]);
      }
    }
    queries.push_back(q);
  }
  return queries;
}

struct Totals {
  uint64_t queries = 0, with_hits = 0, candidates = 0, truth = 0;
};

// Checks every query against the oracle. `oracle_doc_of[id]` maps an index document id to the
// oracle's index of the same document.
Totals CheckAgainstOracle(const format::SegmentReader& reader, const Oracle& oracle,
                          const std::vector<size_t>& oracle_doc_of,
                          const std::vector<std::vector<std::string>>& queries) {
  query::Searcher searcher(reader);
  Totals totals;
  for (const auto& args : queries) {
    std::vector<std::string> terms = query::Searcher::ParseQuery(args);
    std::vector<uint32_t> truth_oracle = oracle.Match(terms);
    std::vector<uint32_t> truth;
    for (uint32_t id = 0; id < reader.doc_count(); ++id) {
      if (std::binary_search(truth_oracle.begin(), truth_oracle.end(), oracle_doc_of[id])) {
        truth.push_back(id);
      }
    }
    query::QueryStats stats;
    std::vector<uint32_t> got = searcher.Search(terms, 0, &stats);
    INFO("query: " << args[0] << (args.size() > 1 ? " ..." : ""));
    REQUIRE(got == truth);
    CHECK(stats.matches == truth.size());
    // The signatures alone (no dictionary shortcut) must never lose a true match.
    query::QueryStats cstats;
    std::vector<uint32_t> candidates = searcher.Candidates(terms, true, &cstats);
    REQUIRE(std::includes(candidates.begin(), candidates.end(), truth.begin(), truth.end()));
    std::vector<uint32_t> serial = searcher.Candidates(terms, false, &cstats);
    REQUIRE(serial == candidates);
    // Limits return a prefix of the full answer.
    if (!truth.empty()) {
      std::vector<uint32_t> limited = searcher.Search(terms, 1, &stats);
      REQUIRE(limited == std::vector<uint32_t>{truth[0]});
    }
    totals.queries++;
    totals.with_hits += !truth.empty();
    totals.candidates += candidates.size();
    totals.truth += truth.size();
  }
  return totals;
}

// Builds `docs` with default settings into dir/index (one segment: they fit the default
// memory budget) and returns that segment's path.
std::string BuildOneSegment(const std::vector<indexer::MemoryDocument>& docs, const TempDir& dir) {
  indexer::BuildConfig config;
  config.rebuild = true;
  indexer::BuildReport report;
  indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
  return bitsift::testing::OnlySegment(dir / "index");
}

// Documents to build from memory, each also given to the oracle: OracleDocOf maps a reader's
// document ids (in path order) to the oracle's numbers.
struct OracleCorpus {
  std::vector<indexer::MemoryDocument> docs;
  Oracle oracle;
  std::map<std::string, size_t> oracle_of_name;

  void Add(const std::string& name, const std::string& text) {
    oracle_of_name[name] = oracle.size();
    oracle.Add(text);
    docs.push_back({name, text, 0});
  }
  std::vector<size_t> OracleDocOf(const format::SegmentReader& reader) const {
    std::vector<size_t> out(reader.doc_count());
    for (uint32_t id = 0; id < reader.doc_count(); ++id)
      out[id] = oracle_of_name.at(std::string(reader.path(id)));
    return out;
  }
};

}  // namespace

TEST_CASE("engine equals the brute-force oracle on generated corpora", "[oracle]") {
  // Sparse rows for no term, for the rarest, and by default (most of these corpora's terms).
  // A setting of 8 is raised to documents / 128 (23 and 9 here: format::SegmentSparseMaxDf).
  for (uint32_t sparse_max_df : {0u, 8u, format::kDefaultSparseMaxDf})
    for (uint64_t seed : {1, 2}) {
      INFO("sparse_max_df " << sparse_max_df << ", seed " << seed);
      std::mt19937_64 rng(seed);
      std::vector<std::string> vocab = bitsift::testing::MixedVocabulary(4000, rng);
      auto corpus = bitsift::testing::GenerateCorpus(seed == 1 ? 3000 : 1200, 1500, vocab, rng);
      OracleCorpus c;
      for (const auto& d : corpus) c.Add(d.name, d.text);
      const Oracle& oracle = c.oracle;
      TempDir dir;
      indexer::BuildConfig config;
      config.fp_rate = seed == 1 ? 0.01 : 0.2;  // a loose target makes many false positives
      config.sparse_max_df = sparse_max_df;
      indexer::BuildReport report;
      config.rebuild = true;
      indexer::UpdateIndexFromMemory(c.docs, {}, dir / "index", config, &report);
      format::SegmentReader reader(bitsift::testing::OnlySegment(dir / "index"));
      REQUIRE(reader.doc_count() == corpus.size());
      const std::vector<size_t> oracle_doc_of = c.OracleDocOf(reader);
      std::vector<std::string> common(vocab.begin(), vocab.begin() + 8);
      const std::vector<std::vector<std::string>> queries = MakeQueries(oracle, common, 2500, rng);
      Totals t = CheckAgainstOracle(reader, oracle, oracle_doc_of, queries);
      CHECK(t.with_hits > t.queries / 3);
      CHECK(t.candidates >= t.truth);
      if (seed == 2) CHECK(t.candidates > t.truth);  // verification had work to do
      // The Bloom terms' lists instead of their rows (as a one-shot reader takes them): the
      // same answers.
      reader.PreferLists(true);
      Totals lists = CheckAgainstOracle(reader, oracle, oracle_doc_of, queries);
      CHECK(lists.truth == t.truth);
      // A Bloom term alone is answered by its list whichever a reader prefers: no row read and
      // no candidate to verify, the oracle's documents.
      // (With sparse rows up to 1024 documents these corpora have no Bloom term.)
      const format::MetaRecord& meta = reader.meta();
      if (sparse_max_df != format::kDefaultSparseMaxDf)
        REQUIRE(meta.sparse_first > meta.exact_terms);
      if (meta.sparse_first > meta.exact_terms) {
        std::string term;
        uint32_t bloom = 0;
        reader.dictionary().ForEachWithPrefix("", [&](std::string_view t, uint32_t id) {
          if (id < meta.exact_terms || id >= meta.sparse_first) return true;
          term = t;
          bloom = id;
          return false;
        });
        REQUIRE(!term.empty());
        query::Searcher searcher(reader);
        const std::vector<uint32_t> truth_oracle = oracle.Match({term});
        std::vector<uint32_t> truth;
        for (uint32_t id = 0; id < reader.doc_count(); ++id) {
          if (std::binary_search(truth_oracle.begin(), truth_oracle.end(), oracle_doc_of[id]))
            truth.push_back(id);
        }
        REQUIRE(truth.size() == reader.dictionary().Df(bloom));
        for (bool prefer : {true, false}) {
          reader.PreferLists(prefer);
          query::QueryStats stats;
          CHECK(searcher.Search({term}, 0, &stats) == truth);
          CHECK(stats.bytes_read == 0);
          CHECK(stats.false_positives == 0);
          CHECK(stats.candidates == reader.dictionary().Df(bloom));
        }
      }
    }
}

TEST_CASE("engine equals the brute-force oracle on corpora/sample", "[oracle]") {
  for (uint32_t sparse_max_df : {0u, 4u, format::kDefaultSparseMaxDf}) {
    INFO("sparse_max_df " << sparse_max_df);
    TempDir dir;
    indexer::BuildConfig config;
    config.sparse_max_df = sparse_max_df;
    indexer::BuildReport report;
    indexer::UpdateIndexFromDirectory(BITSIFT_SAMPLE_DIR, dir / "index", config, &report);
    format::SegmentReader reader(bitsift::testing::OnlySegment(dir / "index"));
    REQUIRE(reader.doc_count() >= 20);
    Oracle oracle;
    std::vector<size_t> oracle_doc_of;
    std::vector<std::string> common;
    for (uint32_t id = 0; id < reader.doc_count(); ++id) {
      oracle_doc_of.push_back(oracle.size());
      oracle.Add(bitsift::testing::ReadFile(std::string(BITSIFT_SAMPLE_DIR) + "/" +
                                            std::string(reader.path(id))));
    }
    for (const char* w : {"the", "a", "bloom", "filter", "过滤器", "straße", "and", "of"})
      common.push_back(w);
    std::mt19937_64 rng(77);
    Totals t =
        CheckAgainstOracle(reader, oracle, oracle_doc_of, MakeQueries(oracle, common, 2000, rng));
    CHECK(t.with_hits > t.queries / 3);
  }
}

TEST_CASE("false-positive rate before verification is within the target's bounds", "[fp]") {
  // 4096 documents of exactly 200 distinct random terms: one band sized for 200 terms. No
  // sparse rows, so that every term has Bloom bits.
  std::mt19937_64 rng(123);
  std::vector<indexer::MemoryDocument> docs;
  for (int d = 0; d < 4096; ++d) {
    std::string text;
    for (int t = 0; t < 200; ++t) text += Cat("t", d, "x", t, " ");
    docs.push_back({Cat("doc", d), text, 0});
  }
  TempDir dir;
  for (double target : {0.01, 0.05}) {
    indexer::BuildConfig config;
    config.fp_rate = target;
    config.sparse_max_df = 0;
    indexer::BuildReport report;
    config.rebuild = true;
    indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
    format::SegmentReader reader(bitsift::testing::OnlySegment(dir / "index"));
    query::Searcher searcher(reader);
    // Probe with 500 single terms that no document contains.
    uint64_t candidates = 0, probes = 500;
    for (uint64_t p = 0; p < probes; ++p) {
      query::QueryStats stats;
      std::vector<std::string> h = {Cat("absent", p)};
      candidates += searcher.Candidates(h, true, &stats).size();
    }
    double measured = static_cast<double>(candidates) / (probes * docs.size());
    double expected = format::ExpectedFalsePositiveRate(format::ShapeFor(200, target), 200);
    INFO("target " << target << " measured " << measured << " expected " << expected);
    CHECK(expected <= target);
    CHECK(measured <= target * 1.15);
    CHECK(measured >= expected * 0.6);  // the filter is really there, not trivially empty
    // Two absent terms: about the square of the one-term rate (never more than the target).
    uint64_t pair_candidates = 0;
    for (uint64_t p = 0; p < probes; ++p) {
      query::QueryStats stats;
      std::vector<std::string> h = {Cat("absent", p), Cat("other", p)};
      pair_candidates += searcher.Candidates(h, true, &stats).size();
    }
    CHECK(static_cast<double>(pair_candidates) / (probes * docs.size()) <= target * target * 3);
  }
}

// FilterByRows: a sparse term's candidates (at least kRowFilterMinCandidates) filtered by the
// rows of the Bloom terms beside it, band by band either by mapping the rows' set bits to
// documents (BAND_DOCS: fewer set bits than candidates) or by testing each candidate's column
// (DOC_BANDS: more). Both, through the mapping and by copy, against the oracle.
TEST_CASE("the row filter of sparse candidates equals the oracle, by bits and by columns",
          "[oracle]") {
  // 20,000 documents: sparse terms have df <= 156. `rare` is in 153 of them; `mid` (2,858) and
  // `xa` (2,223) have Bloom rows whose AND has thousands of set bits (columns tested); `xa`
  // and `yb` never meet, so their AND has only false positives (bits mapped).
  OracleCorpus c;
  const Oracle& oracle = c.oracle;
  for (uint32_t i = 0; i < 20000; ++i) {
    std::string text = Cat("w", i);
    if (i % 131 == 0) text += " rare";
    if (i % 7 == 0) text += " mid";
    if (i % 9 == 0) text += " xa";
    if (i % 9 == 1) text += " yb";
    for (uint32_t f = 0; f < i % 61; ++f) text += Cat(" f", f);  // documents of many sizes
    c.Add(Cat("d", 100000 + i), text);
  }
  TempDir dir;
  const std::string segment = BuildOneSegment(c.docs, dir);
  const std::vector<std::vector<std::string>> queries = {
      {"rare", "mid"},
      {"rare", "xa"},
      {"rare", "xa", "yb"},
      {"rare", "mid", "xa"},
      {"rare", "yb", "f3"},
      {"rare", "mid", "f40"},
      // No sparse term: candidates from the rows, thousands of set bits a band mapped through
      // BAND_DOCS in batches (format::SegmentReader::BandDocs).
      {"mid"},
      {"xa", "f3"},
      {"f1"}};
  for (auto reads : {storage::OneShotReads::kMap, storage::OneShotReads::kCopy}) {
    storage::VerifiedFile::SetOneShotReads(reads);
    for (auto access : {format::IndexFile::Access::kRandom, format::IndexFile::Access::kOneShot})
      for (bool lists : {false, true}) {
        INFO("one-shot " << (access == format::IndexFile::Access::kOneShot) << ", lists " << lists);
        format::SegmentReader reader(segment, access);
        // A one-shot reader prefers the Bloom terms' lists; the rows, by copy too, stay tested.
        CHECK(reader.prefers_lists() == (access == format::IndexFile::Access::kOneShot));
        reader.PreferLists(lists);
        REQUIRE(reader.doc_count() == c.docs.size());
        const std::vector<size_t> oracle_doc_of = c.OracleDocOf(reader);
        CheckAgainstOracle(reader, oracle, oracle_doc_of, queries);
        // The filter ran: fewer candidates than `rare` has documents.
        query::Searcher searcher(reader);
        query::QueryStats stats;
        searcher.Search(query::Searcher::ParseQuery({"rare", "mid"}), 0, &stats);
        CHECK(stats.candidates < 153);
        CHECK(stats.matches == 22);  // i % 917 == 0
        searcher.Search(query::Searcher::ParseQuery({"rare", "xa", "yb"}), 0, &stats);
        CHECK(stats.candidates < 153);
        CHECK(stats.matches == 0);
      }
  }
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto);
}
// RowFilterColumnsCheaper: with the pages in the process the lookups decide; read by copy the
// chunks do, both ways from the lookups' rule.
TEST_CASE("the row filter reads the candidates' columns where their chunks cost less", "[oracle]") {
  // Pages in the process: columns once the set bits outnumber the candidates.
  CHECK_FALSE(query::RowFilterColumnsCheaper(false, 5000, 432128, 10983, 1206321, 7));
  CHECK(query::RowFilterColumnsCheaper(false, 20000, 432128, 10983, 1206321, 7));
  // By copy, linux-paras' `mutex lock`: 5,000 bits spread over all 422 chunks of band 0's
  // BAND_DOCS cost more than the 10,983 candidates' columns (DOC_BANDS' 164 chunks).
  CHECK(query::RowFilterColumnsCheaper(true, 5000, 432128, 10983, 1206321, 7));
  // A band of 780 documents (one chunk of BAND_DOCS) with more bits than the 100 candidates,
  // whose columns are ~100 chunks: the bits.
  CHECK_FALSE(query::RowFilterColumnsCheaper(true, 700, 780, 100, 1206321, 7));
  // Three bits against 5,000 candidates: the bits.
  CHECK_FALSE(query::RowFilterColumnsCheaper(true, 3, 432128, 5000, 1206321, 7));
}

// By copy, one query's row filter maps the few bits of the small documents' band to documents
// and tests the candidates' columns in the larger documents' band, where the bits are many.
TEST_CASE("the row filter by copy takes the bits in one band and the columns in another",
          "[oracle]") {
  // 40,000 documents: exact rows from N/32 (1,250) on, sparse rows up to N/128 (312). `rare`
  // (200 documents) is sparse; `ex` (2,002) has exact rows, two of them among the 30,000
  // one-word documents. The other 10,000 have 20 to 39 of 256 Bloom terms (1,092 to 1,213
  // documents each, above the sparse lists' 1,024), so they make bands of their own.
  OracleCorpus c;
  const Oracle& oracle = c.oracle;
  for (uint32_t i = 0; i < 40000; ++i) {
    std::string text = Cat("w", i);
    if (i % 200 == 0) text += " rare";
    if (i < 30000 ? i == 200 || i == 400 : i % 5 == 0) text += " ex";
    if (i >= 30000) {
      for (uint32_t t = 0; t < 20 + i % 20; ++t) text += Cat(" g", (i * 7 + t * 13) % 256);
    }
    c.Add(Cat("d", 100000 + i), text);
  }
  TempDir dir;
  const std::string segment = BuildOneSegment(c.docs, dir);
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kCopy);
  format::SegmentReader reader(segment, format::IndexFile::Access::kOneShot);
  REQUIRE(reader.IsSparse(*reader.dictionary().Find("rare")));
  REQUIRE(*reader.dictionary().Find("ex") < reader.exact_terms());
  REQUIRE(reader.band_count() >= 2);
  const uint32_t g3 = *reader.dictionary().Find("g3");
  REQUIRE((g3 >= reader.exact_terms() && !reader.IsSparse(g3)));
  const std::vector<size_t> oracle_doc_of = c.OracleDocOf(reader);
  CheckAgainstOracle(reader, oracle, oracle_doc_of, {{"rare", "ex"}, {"rare", "ex", "g3"}});
  query::Searcher searcher(reader);
  query::QueryStats stats;
  // i = 200, 400 and every 200th from 30,000 (50): 52 matches, settled by the filter.
  CHECK(searcher.Search({"ex", "rare"}, 0, &stats).size() == 52);
  CHECK(stats.candidates == 52);
  CHECK(stats.bands_by_bits >= 1);
  CHECK(stats.bands_by_columns >= 1);
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto);
}

// A one-shot reader takes a Bloom term's list, unless the rarer terms' candidates are so few
// that their forward records cost less to read (Searcher::SparseCandidates,
// kListIdsPerCandidate): then verification settles the term. Both ways against the oracle.
TEST_CASE("a Bloom term's list is read unless the candidates are few: the oracle's answers",
          "[oracle]") {
  // 140,000 documents: exact rows from N/32 (4,375) on, sparse rows up to N/128 (1,093).
  // `bloomy` (4,243 documents) is a Bloom term; `one` (1 document, with `bloomy`), `lone` (1,
  // without) and `few` (40, half with it) are sparse.
  constexpr uint32_t kDocs = 140000;
  OracleCorpus c;
  const Oracle& oracle = c.oracle;
  for (uint32_t i = 0; i < kDocs; ++i) {
    std::string text = Cat("w", i, " z", i % 97);
    if (i % 33 == 0) text += " bloomy";
    if (i == 33 * 7) text += " one";
    if (i == 33 * 7 + 1) text += " lone";
    if (i % 1650 < 2 && i < 1650 * 20) text += " few";  // i % 1650 == 0: with `bloomy`
    c.Add(Cat("d", 1000000 + i), text);
  }
  TempDir dir;
  const std::string segment = BuildOneSegment(c.docs, dir);
  format::SegmentReader reader(segment, format::IndexFile::Access::kOneShot);
  REQUIRE(reader.prefers_lists());
  const uint32_t bloomy = *reader.dictionary().Find("bloomy");
  REQUIRE(bloomy >= reader.exact_terms());
  REQUIRE(!reader.IsSparse(bloomy));
  REQUIRE(reader.IsSparse(*reader.dictionary().Find("few")));
  const std::vector<size_t> oracle_doc_of = c.OracleDocOf(reader);
  CheckAgainstOracle(reader, oracle, oracle_doc_of,
                     {{"one", "bloomy"},
                      {"lone", "bloomy"},
                      {"few", "bloomy"},
                      {"bloomy"},
                      {"one", "bloomy", "z7"},
                      {"few", "bloomy", "z0"}});
  query::Searcher searcher(reader);
  query::QueryStats stats;
  // One candidate: `bloomy` is settled by its forward record, its list not read.
  CHECK(searcher.Search({"bloomy", "one"}, 0, &stats).size() == 1);
  CHECK(stats.rows_read == 1);  // `one`'s list only
  CHECK(stats.false_positives == 0);
  CHECK(searcher.Search({"bloomy", "lone"}, 0, &stats).empty());
  CHECK(stats.rows_read == 1);
  CHECK(stats.false_positives == 1);  // `lone`'s document, refused by its record
  // 40 candidates: the list is read, and it settles `bloomy` (no candidate to verify).
  CHECK(searcher.Search({"bloomy", "few"}, 0, &stats).size() == 20);
  CHECK(stats.rows_read == 2);
  CHECK(stats.candidates == 20);
  CHECK(stats.bytes_read == 0);
}

// An exact term beside a sparse one: when the row filter runs (Searcher::FilterByRows), the
// exact term's rows settle it and verification tests none of its bits; when the filter does
// not pay (the exact term in more than kRowFilterMaxDfPerCandidate documents a candidate),
// verification tests its bit at each candidate's column, the columns read a piece of
// candidates at a time (format::SegmentReader::Columns). Through the mapping and by copy.
TEST_CASE("an exact term beside a sparse one is settled by the row filter or by its bits",
          "[oracle]") {
  // 40,000 documents: exact rows from N/32 (1,250) on, sparse rows up to N/128 (312). `sp`
  // (299 documents) is sparse; `ex` (5,000) and `common` (32,000) have exact rows; `bl0` to
  // `bl9` (1,111 each) have Bloom rows, which leave false positives for verification to refuse.
  OracleCorpus c;
  const Oracle& oracle = c.oracle;
  for (uint32_t i = 0; i < 40000; ++i) {
    std::string text = Cat("w", i);
    if (i % 134 == 0) text += " sp";
    if (i % 8 == 0) text += " ex";
    if (i % 5 != 0) text += " common";
    if (i % 36 < 10) text += Cat(" bl", i % 36);
    for (uint32_t f = 0; f < i % 29; ++f) text += Cat(" f", f);
    c.Add(Cat("d", 100000 + i), text);
  }
  TempDir dir;
  // A false-positive target of 30%: the Bloom rows leave candidates to refuse.
  indexer::BuildConfig config;
  config.rebuild = true;
  config.fp_rate = 0.3;
  indexer::BuildReport report;
  indexer::UpdateIndexFromMemory(c.docs, {}, dir / "index", config, &report);
  const std::string segment = bitsift::testing::OnlySegment(dir / "index");
  for (auto reads : {storage::OneShotReads::kMap, storage::OneShotReads::kCopy}) {
    storage::VerifiedFile::SetOneShotReads(reads);
    for (auto access : {format::IndexFile::Access::kRandom, format::IndexFile::Access::kOneShot}) {
      INFO("copy " << (reads == storage::OneShotReads::kCopy) << ", one-shot "
                   << (access == format::IndexFile::Access::kOneShot));
      format::SegmentReader reader(segment, access);
      REQUIRE(reader.IsSparse(*reader.dictionary().Find("sp")));
      REQUIRE(*reader.dictionary().Find("ex") < reader.exact_terms());
      REQUIRE(*reader.dictionary().Find("common") < reader.exact_terms());
      const uint32_t bl0 = *reader.dictionary().Find("bl0");
      REQUIRE((bl0 >= reader.exact_terms() && !reader.IsSparse(bl0)));
      const std::vector<size_t> oracle_doc_of = c.OracleDocOf(reader);
      CheckAgainstOracle(reader, oracle, oracle_doc_of,
                         {{"sp", "ex"},
                          {"sp", "common"},
                          {"sp", "ex", "common"},
                          {"sp", "common", "f3"},
                          {"sp", "ex", "f20"},
                          {"sp", "bl2"},
                          {"sp", "ex", "bl4"}});
      query::Searcher searcher(reader);
      query::QueryStats stats;
      // The filter ran: its candidates are the matches (i % 536 == 0), none left to refuse.
      CHECK(searcher.Search({"ex", "sp"}, 0, &stats).size() == 75);
      CHECK(stats.candidates == 75);
      CHECK(stats.false_positives == 0);
      // No filter: `sp`'s 299 documents are the candidates; the 60 without `common` (i % 670
      // == 0) are refused by its bits.
      CHECK(searcher.Search({"common", "sp"}, 0, &stats).size() == 239);
      CHECK(stats.candidates == 299);
      CHECK(stats.false_positives == 60);
      // The Bloom terms' rows (a reader that does not take their lists) filter the candidates
      // but do not settle them: the false positives they leave are refused.
      uint64_t refused = 0;
      for (uint32_t k = 0; k < 10; ++k) {
        const std::vector<std::string> q = {Cat("bl", k), "sp"};
        std::vector<uint32_t> truth;
        for (size_t o : oracle.Match(q)) truth.push_back(static_cast<uint32_t>(o));
        CHECK(searcher.Search(q, 0, &stats).size() == truth.size());
        refused += stats.false_positives;
      }
      if (!reader.prefers_lists()) CHECK(refused > 0);
    }
  }
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto);
}

TEST_CASE("columns and band documents read in spans equal those read one by one", "[oracle]") {
  // 40,000 documents: a band's BAND_DOCS spans ~40 chunks, more than one span
  // (format::SegmentReader::kColumnSpanBytes) and more than a batch of ForEachBandDoc; DOC_BANDS
  // (~6 chunks) is read in several spans where the ids are far apart (every 9,000th).
  std::vector<indexer::MemoryDocument> docs;
  for (uint32_t i = 0; i < 40000; ++i) {
    std::string text = Cat("w", i);
    for (uint32_t f = 0; f < i % 37; ++f) text += Cat(" f", f);
    docs.push_back({Cat("d", 100000 + i), text, 0});
  }
  docs.push_back({"empty", "", 0});  // no terms: no column
  TempDir dir;
  const std::string segment = BuildOneSegment(docs, dir);
  std::mt19937_64 rng(77);
  for (auto reads : {storage::OneShotReads::kMap, storage::OneShotReads::kCopy}) {
    storage::VerifiedFile::SetOneShotReads(reads);
    format::SegmentReader reader(segment, format::IndexFile::Access::kOneShot);
    REQUIRE(reader.doc_count() == docs.size());
    // Every density, from all the documents to a few: ascending subsets.
    for (uint32_t every : {1u, 3u, 700u, 2000u, 9000u}) {
      std::vector<uint32_t> ids;
      for (uint32_t d = static_cast<uint32_t>(rng() % every); d < reader.doc_count(); d += every)
        ids.push_back(d);
      std::vector<uint32_t> columns(ids.size());
      reader.Columns(ids.data(), ids.size(), columns.data());
      for (size_t i = 0; i < ids.size(); ++i) REQUIRE(columns[i] == reader.column(ids[i]));
      for (uint64_t b = 0; b < reader.band_count(); ++b) {
        const format::BandRecord& band = reader.band(b);
        std::vector<uint32_t> cols;
        for (uint32_t c = static_cast<uint32_t>(rng() % every); c < band.doc_count; c += every)
          cols.push_back(c);
        std::vector<uint32_t> got(cols.size());
        reader.BandDocs(band, cols.data(), cols.size(), got.data());
        for (size_t i = 0; i < cols.size(); ++i) REQUIRE(got[i] == reader.BandDoc(band, cols[i]));
      }
    }
    // DOC_BANDS against BAND_DOCS, its inverse: every column's document has that column, and
    // the document without terms has none.
    for (uint64_t b = 0; b < reader.band_count(); ++b) {
      const format::BandRecord& band = reader.band(b);
      for (uint32_t c = 0; c < band.doc_count; ++c)
        REQUIRE(reader.column(reader.BandDoc(band, c)) == band.first_column + c);
    }
    uint32_t empty = 0;
    while (reader.path(empty) != "empty") ++empty;
    CHECK(reader.column(empty) == format::kNoColumn);
    // An id past the documents is an error, not a read past the section.
    const uint32_t bad = static_cast<uint32_t>(reader.doc_count());
    uint32_t out = 0;
    CHECK_THROWS_AS(reader.Columns(&bad, 1, &out), Error);
    CHECK_THROWS_AS(reader.column(bad), Error);
    CHECK_THROWS_AS(reader.column(UINT32_MAX - 1), Error);  // far past DOC_BANDS' last block
  }
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto);
}
