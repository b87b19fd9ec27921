// The living index: randomized sequences of changes to a tree of files (and to in-memory
// documents), each followed by an update, must answer exactly as a brute-force oracle over the
// current texts and as a fresh full build. Also: the writer lock, readers during updates and
// compactions, and kill -9 at every named point of an update, flush and merge.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "bitsift/bitsift.h"
#include "reliability/reliability_util.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::Index;
using bitsift::IndexOptions;
using bitsift::IndexSummary;
using bitsift::Status;
using bitsift::testing::Cat;
using bitsift::testing::MixedVocabulary;
using bitsift::testing::TempDir;
using bitsift::testing::WriteFile;
namespace fs = std::filesystem;

namespace {

using Paths = std::vector<std::string>;

// The brute-force answer: names whose token set holds every query term, sorted.
Paths OracleAnswer(const std::map<std::string, std::string>& texts,
                   const std::vector<std::string>& query) {
  std::vector<std::string> terms = bitsift::tokenizer::TokenSet([&] {
    std::string q;
    for (const auto& w : query) q += w + " ";
    return q;
  }());
  Paths out;
  for (const auto& [name, text] : texts) {
    std::vector<std::string> have = bitsift::tokenizer::TokenSet(text);
    bool all = true;
    for (const auto& t : terms) all = all && std::binary_search(have.begin(), have.end(), t);
    if (all) out.push_back(name);
  }
  return out;
}

Paths Answer(const Index& index, const std::vector<std::string>& query) {
  bitsift::QueryResult r;
  Status s = index.Query(query, {}, &r);
  INFO(s.message());
  REQUIRE(s.ok());
  Paths out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}

// As Answer, without Catch2's macros (which are not thread-safe): for reader threads. An error
// gives {"<error>"}.
Paths AnswerQuietly(const Index& index, const std::vector<std::string>& query) {
  bitsift::QueryResult r;
  if (!index.Query(query, {}, &r).ok()) return {"<error>"};
  Paths out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}

std::string RandomText(std::mt19937_64& rng, const std::vector<std::string>& vocab) {
  std::string text;
  size_t words = 1 + rng() % 60;
  for (size_t i = 0; i < words; ++i) {
    text += vocab[std::min<size_t>(vocab.size() - 1, (rng() % vocab.size()) * (rng() % 3 + 1) / 3)];
    text += rng() % 9 == 0 ? "\n" : " ";
  }
  return text;
}

std::vector<std::vector<std::string>> SampleQueries(const std::map<std::string, std::string>& texts,
                                                    std::mt19937_64& rng, size_t n) {
  std::vector<std::vector<std::string>> queries;
  std::vector<std::string> names;
  for (const auto& [name, text] : texts) names.push_back(name);
  for (size_t q = 0; q < n; ++q) {
    if (names.empty() || q % 10 == 0) {
      queries.push_back({Cat("absentterm", q)});
      continue;
    }
    std::vector<std::string> tokens =
        bitsift::tokenizer::TokenSet(texts.at(names[rng() % names.size()]));
    if (tokens.empty()) continue;
    std::vector<std::string> query;
    size_t k = 1 + rng() % 3;
    for (size_t i = 0; i < k; ++i) query.push_back(tokens[rng() % tokens.size()]);
    queries.push_back(query);
  }
  return queries;
}

// Applies one random change to the tree and to `texts` (the truth).
void RandomChange(const TempDir& dir, std::map<std::string, std::string>& texts,
                  std::mt19937_64& rng, const std::vector<std::string>& vocab, int& next_id,
                  bool add_only = false) {
  auto pick = [&]() {
    auto it = texts.begin();
    std::advance(it, rng() % texts.size());
    return it->first;
  };
  int op = texts.empty() || add_only ? 0 : static_cast<int>(rng() % 6);
  switch (op) {
    case 0: {  // add
      std::string name =
          (rng() % 2 ? Cat("d", rng() % 4) + "/" : "") + "f" + std::to_string(next_id++) + ".txt";
      texts[name] = RandomText(rng, vocab);
      WriteFile(dir / ("tree/" + name), texts[name]);
      break;
    }
    case 1: {  // rewrite in place
      std::string name = pick();
      texts[name] = RandomText(rng, vocab);
      WriteFile(dir / ("tree/" + name), texts[name]);
      break;
    }
    case 2: {  // delete
      std::string name = pick();
      fs::remove(dir / ("tree/" + name));
      texts.erase(name);
      break;
    }
    case 3: {  // rename
      std::string name = pick();
      std::string to = Cat("r", next_id++) + ".txt";
      fs::rename(dir / ("tree/" + name), dir / ("tree/" + to));
      texts[to] = texts[name];
      texts.erase(name);
      break;
    }
    case 4: {  // append
      std::string name = pick();
      std::string more = RandomText(rng, vocab);
      texts[name] += "\n" + more;
      WriteFile(dir / ("tree/" + name), texts[name]);
      break;
    }
    default: {  // same size, new content, mtime set back (ctime still changes)
      std::string name = pick();
      std::string path = dir / ("tree/" + name);
      struct stat st;
      REQUIRE(::stat(path.c_str(), &st) == 0);
      std::string text = texts[name];
      for (char& c : text) {
        if (c >= 'a' && c < 'z' && rng() % 4 == 0) c = static_cast<char>(c + 1);
      }
      texts[name] = text;
      WriteFile(path, text);
      struct timespec times[2] = {st.st_atim, st.st_mtim};
      REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
      break;
    }
  }
}

// Indexes dir/tree into dir/kept without merging and into dir/index with merging, under a
// budget that flushes after each batch of documents (they are tokenized in batches of at most
// 512 between two looks at the memory), while a merge (about 9-13 bytes a source term,
// against the builder's ~120) fits for some of the flushes. Returns {kept's, index's} summary.
std::pair<IndexSummary, IndexSummary> BuildKeptAndMerged(const TempDir& dir) {
  IndexOptions kept;
  kept.memory_budget = 1 << 20;
  kept.merge = false;
  IndexSummary flushed, merged;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "kept", kept, &flushed).ok());
  IndexOptions options = kept;
  options.merge = true;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", options, &merged).ok());
  return {flushed, merged};
}

// Each index dir/NAME is sound, holds every document of `texts` and answers sampled queries
// as the oracle does.
void CheckAgainstOracle(const TempDir& dir, const std::vector<const char*>& names,
                        const std::map<std::string, std::string>& texts, std::mt19937_64& rng) {
  for (const char* name : names) {
    INFO(name);
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(dir / name, &index).ok());
    REQUIRE(index->Check().ok());
    CHECK(index->document_count() == texts.size());
    for (const auto& q : SampleQueries(texts, rng, 40))
      CHECK(Answer(*index, q) == OracleAnswer(texts, q));
  }
}

}  // namespace

TEST_CASE("updates after random changes answer as the oracle and as a fresh build",
          "[update][oracle]") {
  for (uint64_t budget : {uint64_t{64} << 10, uint64_t{256} << 20}) {
    DYNAMIC_SECTION("memory budget " << budget) {
      std::mt19937_64 rng(budget);
      std::vector<std::string> vocab = MixedVocabulary(300, rng);
      TempDir dir;
      std::map<std::string, std::string> texts;
      int next_id = 0;
      // 40 files to begin with, then random changes (a walk that may shrink the tree a lot).
      for (int i = 0; i < 40; ++i) RandomChange(dir, texts, rng, vocab, next_id, true);
      fs::create_directories(dir / "tree");
      IndexOptions options;
      options.memory_budget = budget;
      options.sparse_max_df = budget < (1 << 20) ? 4 : 128;  // few or most terms: sparse rows
      // The small budget keeps every segment (many segments answer as one); the large one
      // merges them by the policy.
      options.merge = budget >= (1 << 20);
      uint64_t max_segments = 0, merges = 0;
      for (int round = 0; round < 14; ++round) {
        IndexSummary summary;
        Status s = bitsift::BuildIndex(dir / "tree", dir / "index", options, &summary);
        INFO(s.message());
        REQUIRE(s.ok());
        CHECK(summary.documents == texts.size());
        max_segments = std::max(max_segments, summary.segments);
        merges += summary.merges;
        IndexOptions fresh_options;
        fresh_options.rebuild = true;
        fresh_options.sparse_max_df = options.sparse_max_df;
        REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "fresh", fresh_options).ok());
        std::unique_ptr<Index> updated, fresh;
        REQUIRE(Index::Open(dir / "index", &updated).ok());
        REQUIRE(Index::Open(dir / "fresh", &fresh).ok());
        REQUIRE(updated->Check().ok());
        for (const auto& q : SampleQueries(texts, rng, 60)) {
          Paths expected = OracleAnswer(texts, q);
          CHECK(Answer(*updated, q) == expected);
          CHECK(Answer(*fresh, q) == expected);
        }
        // 1 to 12 changes before the next update.
        for (int c = 1 + static_cast<int>(rng() % 12); c > 0; --c)
          RandomChange(dir, texts, rng, vocab, next_id);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // distinct mtimes
      }
      if (budget < (1 << 20)) CHECK(max_segments > 3);  // small budget: many segments
      if (budget >= (1 << 20)) CHECK(merges > 0);       // tiers filled and merged
      // Compaction (after bringing the index up to date) leaves one segment and the answers.
      IndexSummary summary;
      REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", options).ok());
      REQUIRE(bitsift::CompactIndex(dir / "index", options, &summary).ok());
      CHECK(summary.segments == 1);
      std::unique_ptr<Index> compacted;
      REQUIRE(Index::Open(dir / "index", &compacted).ok());
      REQUIRE(compacted->Check().ok());
      CHECK(compacted->document_count() == texts.size());
      for (const auto& q : SampleQueries(texts, rng, 80))
        CHECK(Answer(*compacted, q) == OracleAnswer(texts, q));
    }
  }
}

TEST_CASE("a full build merges the segments its flushes wrote when they fit the budget",
          "[update][merge]") {
  std::mt19937_64 rng(4242);
  const std::vector<std::string> vocab = MixedVocabulary(6000, rng);  // most terms are rare
  TempDir dir;
  std::map<std::string, std::string> texts;
  // Documents are tokenized in batches of at most 512 between two looks at the memory.
  for (int i = 0; i < 2000; ++i) {
    std::string text = RandomText(rng, vocab);
    WriteFile(dir / Cat("tree/d", i % 7, "/f", i), text);
    texts[Cat("d", i % 7, "/f", i)] = text;
  }
  const auto [flushed, merged] = BuildKeptAndMerged(dir);
  INFO("flushes " << flushed.segments_written << ", segments after " << merged.segments
                  << ", merges " << merged.merges);
  REQUIRE(flushed.segments >= 3);
  CHECK(merged.segments_written == flushed.segments_written);
  CHECK(merged.merges >= 1);
  CHECK(merged.segments < flushed.segments);
  // The flushes left out of the first merge are merged among themselves in turn.
  CHECK(merged.merges >= 2);
  CHECK(merged.segments <= 2);
  // A budget too small for any merge leaves the flushes as they are.
  IndexOptions tiny;
  tiny.memory_budget = 64 << 10;
  tiny.merge = true;
  IndexSummary small;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "tiny", tiny, &small).ok());
  CHECK(small.segments + small.merges >= 3);
  CheckAgainstOracle(dir, {"kept", "index", "tiny"}, texts, rng);
}

TEST_CASE("an update merges the segments its flushes wrote when they fit the budget",
          "[update][merge]") {
  std::mt19937_64 rng(4343);
  const std::vector<std::string> vocab = MixedVocabulary(6000, rng);
  TempDir dir;
  std::map<std::string, std::string> texts;
  auto add_files = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      std::string text = RandomText(rng, vocab);
      WriteFile(dir / Cat("tree/d", i % 7, "/f", i), text);
      texts[Cat("d", i % 7, "/f", i)] = text;
    }
  };
  add_files(0, 600);
  for (const char* name : {"kept", "index"}) {
    IndexSummary s;
    REQUIRE(bitsift::BuildIndex(dir / "tree", dir / name, {}, &s).ok());
    REQUIRE(s.segments == 1);
  }
  // 2,000 new files, under a budget that flushes after each batch.
  add_files(600, 2600);
  const auto [flushed, merged] = BuildKeptAndMerged(dir);
  INFO("flushes " << flushed.segments_written << ", segments after " << merged.segments
                  << ", merges " << merged.merges);
  REQUIRE(flushed.segments_written >= 3);
  CHECK(flushed.segments == flushed.segments_written + 1);
  CHECK(merged.segments_written == flushed.segments_written);
  CHECK(merged.merges >= 1);
  // Not all four fit the budget together: the smallest that do are merged, then the rest if
  // they fit (NextFlushMerge). The tiers alone would merge none of these and leave 5 segments.
  CHECK(merged.segments + 2 <= flushed.segments);
  CheckAgainstOracle(dir, {"kept", "index"}, texts, rng);
}

TEST_CASE("in-memory documents: an update merges the segments its flushes wrote",
          "[update][merge]") {
  std::mt19937_64 rng(4444);
  const std::vector<std::string> vocab = MixedVocabulary(6000, rng);
  TempDir dir;
  std::map<std::string, std::string> texts;
  std::vector<bitsift::Document> base, added;
  for (int i = 0; i < 2600; ++i) {
    const std::string name = Cat("m", i);
    texts[name] = RandomText(rng, vocab);
    (i < 600 ? base : added).push_back({name, texts[name], 0});
  }
  IndexOptions kept;
  kept.memory_budget = 1 << 20;  // a flush after each batch, as the tests above
  kept.merge = false;
  IndexOptions options = kept;
  options.merge = true;
  IndexSummary flushed, merged;
  for (const char* name : {"kept", "index"}) {
    REQUIRE(bitsift::BuildIndexFromDocuments(base, dir / name, {}).ok());
  }
  REQUIRE(bitsift::UpdateDocuments(added, {}, dir / "kept", kept, &flushed).ok());
  REQUIRE(bitsift::UpdateDocuments(added, {}, dir / "index", options, &merged).ok());
  INFO("flushes " << flushed.segments_written << ", segments after " << merged.segments
                  << ", merges " << merged.merges);
  REQUIRE(flushed.segments_written >= 3);
  CHECK(merged.segments_written == flushed.segments_written);
  CHECK(merged.segments + 2 <= flushed.segments);
  CheckAgainstOracle(dir, {"kept", "index"}, texts, rng);
}

TEST_CASE("updates are merged among themselves until they add up to 1/8 of the base",
          "[update][merge]") {
  std::mt19937_64 rng(77);
  const std::vector<std::string> vocab = MixedVocabulary(3000, rng);
  TempDir dir;
  std::map<std::string, std::string> texts;
  for (int i = 0; i < 600; ++i) {
    texts[Cat("f", i)] = RandomText(rng, vocab);
    WriteFile(dir / ("tree/" + Cat("f", i)), texts[Cat("f", i)]);
  }
  IndexSummary s;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}, &s).ok());
  REQUIRE(s.segments == 1);
  int waited = 0, base_merged = 0;
  for (int round = 0; round < 60 && base_merged == 0; ++round) {
    for (int k = 0; k < 3; ++k) {
      const std::string name = Cat("f", rng() % 600);
      texts[name].append(" ").append(RandomText(rng, vocab));
      WriteFile(dir / ("tree/" + name), texts[name]);
    }
    REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}, &s).ok());
    INFO("round " << round << ": " << s.segments << " segments, " << s.merges << " merges");
    CHECK(s.segments <= 2);  // the small ones never pile up
    if (s.segments == 2) ++waited;
    if (round > 0 && s.segments == 1) ++base_merged;
  }
  CHECK(waited >= 2);       // the base was not rewritten for every update
  CHECK(base_merged == 1);  // but once the updates added up
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  REQUIRE(index->Check().ok());
  for (const auto& q : SampleQueries(texts, rng, 40))
    CHECK(Answer(*index, q) == OracleAnswer(texts, q));
}

TEST_CASE("answers from segments whose paths interleave come in path order", "[update][merge]") {
  // Even names first, odd ones in an update: two segments (no merge) whose paths alternate.
  TempDir dir;
  std::map<std::string, std::string> texts;
  auto add = [&](int i) {
    const std::string name = Cat("f", 1000 + i);
    texts[name] = "common " + std::string(i % 50 == 7 ? "rare " : "") + Cat("own", i);
    WriteFile(dir / ("tree/" + name), texts[name]);
  };
  for (int i = 0; i < 400; i += 2) add(i);
  IndexOptions options;
  options.merge = false;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", options).ok());
  for (int i = 1; i < 400; i += 2) add(i);
  IndexSummary s;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", options, &s).ok());
  REQUIRE(s.segments == 2);
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  // A few documents (first merged by comparing paths, later by sorting ranks) and all of them
  // (the first time, hits reach the document count: path ranks are computed, and many hits go
  // through a bitmap over ranks), with and without a limit.
  for (int pass = 0; pass < 4; ++pass) {
    INFO("pass " << pass);
    for (const char* term : {"rare", "common"}) {
      const Paths all = OracleAnswer(texts, {term});
      REQUIRE(all.size() >= (std::string(term) == "rare" ? 8u : 400u));
      CHECK(Answer(*index, {term}) == all);
      bitsift::QueryOptions limited;
      limited.limit = 5;
      bitsift::QueryResult r;
      REQUIRE(index->Query(std::vector<std::string>{term}, limited, &r).ok());
      Paths first;
      for (uint32_t id : r.documents) first.push_back(index->document(id).path);
      CHECK(first == Paths(all.begin(), all.begin() + 5));
    }
  }
}

TEST_CASE("answers from three segments whose paths interleave in runs come in path order",
          "[update][merge]") {
  // Files go to one of three builds (merge off: three segments) in runs of random length, as
  // an update's files fall between the base's; the merge by rank copies such runs whole.
  TempDir dir;
  std::map<std::string, std::string> texts;
  std::vector<int> step_of(1200);
  std::mt19937 rng(20261125);
  for (size_t i = 0; i < step_of.size();) {
    const int step = static_cast<int>(rng() % 3);
    const size_t run = 1 + rng() % 60;
    for (size_t k = 0; k < run && i < step_of.size(); ++k) step_of[i++] = step;
  }
  IndexOptions options;
  options.merge = false;
  for (int step = 0; step < 3; ++step) {
    for (size_t i = 0; i < step_of.size(); ++i) {
      if (step_of[i] != step) continue;
      const std::string name = Cat("g", 10000 + i);
      texts[name] = "every " + std::string(i % 3 == 0 ? "third " : "") +
                    std::string(i % 97 == 5 ? "sparse " : "") + Cat("own", i);
      WriteFile(dir / ("tree/" + name), texts[name]);
    }
    IndexSummary s;
    REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", options, &s).ok());
    REQUIRE(s.segments == static_cast<uint64_t>(step + 1));
  }
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  for (int pass = 0; pass < 3; ++pass) {  // by paths first; by ranks once they are computed
    INFO("pass " << pass);
    for (const char* term : {"every", "third", "sparse"}) {
      INFO(term);
      const Paths all = OracleAnswer(texts, {term});
      CHECK(Answer(*index, {term}) == all);
      for (uint64_t limit : {1, 7, 100}) {
        bitsift::QueryOptions limited;
        limited.limit = limit;
        bitsift::QueryResult r;
        REQUIRE(index->Query(std::vector<std::string>{term}, limited, &r).ok());
        Paths first;
        for (uint32_t id : r.documents) first.push_back(index->document(id).path);
        CHECK(first == Paths(all.begin(), all.begin() + std::min<size_t>(limit, all.size())));
      }
    }
  }
}

TEST_CASE("an update reads only new and changed files", "[update]") {
  TempDir dir;
  for (int i = 0; i < 50; ++i) WriteFile(dir / (Cat("tree/f", i)), Cat("word", i));
  IndexSummary s;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}, &s).ok());
  CHECK(s.added == 50);
  CHECK(s.rebuilt);
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}, &s).ok());
  CHECK((s.added == 0 && s.changed == 0 && s.removed == 0 && s.unchanged == 50));
  CHECK(s.segments_written == 0);
  CHECK(s.input_bytes == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  WriteFile(dir / "tree/f3", "changed words");
  fs::remove(dir / "tree/f4");
  WriteFile(dir / "tree/new", "brand new");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}, &s).ok());
  CHECK(s.added == 1);
  CHECK(s.changed == 1);
  CHECK(s.removed == 1);
  CHECK(s.unchanged == 48);
  CHECK(s.input_bytes == std::string("changed words").size() + std::string("brand new").size());
  CHECK_FALSE(s.rebuilt);
  // Other settings rebuild.
  IndexOptions other;
  other.fp_rate = 0.05;
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", other, &s).ok());
  CHECK(s.rebuilt);
  CHECK(s.added == 50);
}

TEST_CASE("in-memory documents: upserts and deletes by name equal the oracle", "[update][oracle]") {
  std::mt19937_64 rng(99);
  std::vector<std::string> vocab = MixedVocabulary(200, rng);
  TempDir dir;
  std::map<std::string, std::string> texts;
  IndexOptions options;
  options.memory_budget = 32 << 10;
  for (int round = 0; round < 12; ++round) {
    std::vector<bitsift::Document> upserts;
    std::vector<std::string> deletes;
    std::set<std::string> touched;
    for (int i = 0; i < 15; ++i) {
      std::string name = Cat("n", rng() % 60);
      if (!touched.insert(name).second) continue;
      if (rng() % 4 == 0) {
        deletes.push_back(name);
        texts.erase(name);
      } else {
        std::string text = RandomText(rng, vocab);
        upserts.push_back({name, text, 0});
        texts[name] = text;
      }
    }
    deletes.push_back("never-there");
    REQUIRE(bitsift::UpdateDocuments(upserts, deletes, dir / "index", options).ok());
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(dir / "index", &index).ok());
    CHECK(index->live_document_count() == texts.size());
    for (const auto& q : SampleQueries(texts, rng, 50))
      CHECK(Answer(*index, q) == OracleAnswer(texts, q));
  }
}

TEST_CASE("a second writer fails fast while the first holds the index", "[update][concurrent]") {
  TempDir dir;
  for (int i = 0; i < 30; ++i) WriteFile(dir / (Cat("tree/f", i)), "alpha beta");
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}).ok());
  WriteFile(dir / "tree/f0", "gamma");
  std::atomic<bool> inside{false}, release{false};
  IndexOptions slow;
  slow.rebuild = true;
  slow.on_skip = nullptr;
  slow.progress = [&](const bitsift::IndexProgress& p) {
    if (p.files_done == p.files_total) {
      inside = true;
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  };
  Status first;
  std::thread writer([&] { first = bitsift::BuildIndex(dir / "tree", dir / "index", slow); });
  while (!inside) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Status second = bitsift::BuildIndex(dir / "tree", dir / "index", {});
  CHECK(second.code() == Status::Code::kBusy);
  CHECK(second.message().find("another bitsift") != std::string::npos);
  CHECK(bitsift::CompactIndex(dir / "index", {}).code() == Status::Code::kBusy);
  // Readers are not writers: they open while the writer runs.
  std::unique_ptr<Index> index;
  CHECK(Index::Open(dir / "index", &index).ok());
  release = true;
  writer.join();
  CHECK(first.ok());
  REQUIRE(bitsift::BuildIndex(dir / "tree", dir / "index", {}).ok());
}

TEST_CASE("readers keep answering during updates and compactions", "[update][concurrent]") {
  TempDir dir;
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 300; ++i)
    docs.push_back({Cat("d", i), Cat("common w", i % 7) + Cat(" x", i), 0});
  IndexOptions options;
  options.memory_budget = 16 << 10;  // many small segments to merge
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "index", options).ok());
  std::unique_ptr<Index> first;
  REQUIRE(Index::Open(dir / "index", &first).ok());
  const Paths expected = Answer(*first, {"common", "w3"});
  REQUIRE(expected.size() > 10);
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0}, failed{0}, opened{0};
  auto reader = [&] {
    while (!done) {
      std::unique_ptr<Index> index;
      Status s = Index::Open(dir / "index", &index);
      if (!s.ok()) {
        ++failed;
        continue;
      }
      ++opened;
      bitsift::QueryResult r;
      if (!index->Query({"common", "w3"}, {}, &r).ok()) {
        ++failed;
        continue;
      }
      Paths got;
      for (uint32_t id : r.documents) got.push_back(index->document(id).path);
      if (got != expected) ++wrong;
      if (AnswerQuietly(*first, {"common", "w3"}) != expected) ++wrong;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < 6; ++round) {
    // Rewrite documents with the same text (new segments, deletions), then compact.
    std::vector<bitsift::Document> same(docs.begin() + round * 40, docs.begin() + round * 40 + 40);
    REQUIRE(bitsift::UpdateDocuments(same, {}, dir / "index", options).ok());
    REQUIRE(bitsift::CompactIndex(dir / "index", options).ok());
  }
  done = true;
  r1.join();
  r2.join();
  CHECK(failed == 0);
  CHECK(wrong == 0);
  CHECK(opened > 0);
}

TEST_CASE("kill -9 at any point of an update, flush or merge leaves the old or the new state",
          "[update][crash]") {
  TempDir dir;
  std::map<std::string, std::string> old_texts, new_texts;
  for (int i = 0; i < 40; ++i) {
    old_texts[Cat("f", i)] = Cat("old words w", i);
    WriteFile(dir / (Cat("tree/f", i)), old_texts[Cat("f", i)]);
  }
  const std::string prog = bitsift::testing::BitsiftProgram();
  auto build = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {prog,      "index",       dir / "tree",
                                     "--index", dir / "index", "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return bitsift::testing::RunProcess(argv);
  };
  REQUIRE(build({}).exit_code == 0);
  // The change every attempt makes: 10 rewritten, 5 removed, 5 added.
  new_texts = old_texts;
  for (int i = 0; i < 10; ++i) new_texts[Cat("f", i)] = Cat("new words n", i);
  for (int i = 10; i < 15; ++i) new_texts.erase(Cat("f", i));
  for (int i = 40; i < 45; ++i) new_texts[Cat("f", i)] = Cat("new words n", i);
  auto apply = [&](const std::map<std::string, std::string>& texts) {
    fs::remove_all(dir / "tree");
    for (const auto& [name, text] : texts) WriteFile(dir / ("tree/" + name), text);
  };
  const std::vector<std::vector<std::string>> queries = {{"old"}, {"new"}, {"words"},
                                                         {"w3"},  {"n42"}, {"n3"}};
  for (const char* point : {"segment-written", "merged", "before-commit", "committed"}) {
    DYNAMIC_SECTION("killed at " << point) {
      apply(old_texts);
      REQUIRE(build({"--rebuild"}).exit_code == 0);
      apply(new_texts);
      ::setenv("BITSIFT_TEST_KILL_AT", point, 1);
      // A tiny budget makes several segments; merging is forced by compact below.
      auto r = build({"--memory", "16M"});
      ::unsetenv("BITSIFT_TEST_KILL_AT");
      bool killed = r.signal == SIGKILL;
      std::unique_ptr<Index> index;
      REQUIRE(Index::Open(dir / "index", &index).ok());
      REQUIRE(index->Check().ok());
      bool is_old = true, is_new = true;
      for (const auto& q : queries) {
        Paths got = Answer(*index, q);
        is_old = is_old && got == OracleAnswer(old_texts, q);
        is_new = is_new && got == OracleAnswer(new_texts, q);
      }
      CHECK((is_old || is_new));
      if (std::string(point) == "committed") CHECK(is_new);
      if (std::string(point) == "before-commit" || std::string(point) == "segment-written") {
        CHECK(killed);
        CHECK(is_old);
      }
      // The next run cleans up and completes.
      REQUIRE(build({}).exit_code == 0);
      for (const auto& e : fs::directory_iterator(dir / "index"))
        CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
      std::unique_ptr<Index> after;
      REQUIRE(Index::Open(dir / "index", &after).ok());
      for (const auto& q : queries) CHECK(Answer(*after, q) == OracleAnswer(new_texts, q));
      // Compaction killed after merging and before committing leaves the state as it was.
      ::setenv("BITSIFT_TEST_KILL_AT", point, 1);
      auto c = bitsift::testing::RunProcess({prog, "compact", "--index", dir / "index", "--quiet"});
      ::unsetenv("BITSIFT_TEST_KILL_AT");
      (void)c;
      std::unique_ptr<Index> compacted;
      REQUIRE(Index::Open(dir / "index", &compacted).ok());
      REQUIRE(compacted->Check().ok());
      for (const auto& q : queries) CHECK(Answer(*compacted, q) == OracleAnswer(new_texts, q));
    }
  }
}
