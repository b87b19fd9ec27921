// Sharded indexes without MPI: the partition of paths, the shard map, a sharded index opened
// as one index (answers equal to one index of the same tree), shards opened apart and their
// ranking statistics summed (what bitsift-mpi's allreduce does) giving one index's scores.
#include <bitsift/bitsift.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "documents/options.h"
#include "format/shard_map.h"
#include "test_util.h"
#include "util/error.h"

using bitsift::Index;
using bitsift::Status;
using bitsift::testing::TempDir;
using bitsift::testing::WriteFile;

namespace {

// The pieces appended (not with operator+: GCC 12 warns falsely, -Wrestrict, on such chains).
template <typename... Pieces>
std::string Cat(const Pieces&... pieces) {
  std::string out;
  ((out += pieces), ...);
  return out;
}

// Builds a sharded index of `dir` into `path` as bitsift-mpi does, one shard after another.
void BuildSharded(const std::string& dir, const std::string& path, uint32_t count) {
  std::vector<std::string> shards;
  REQUIRE(bitsift::PrepareShardedIndex(dir, path, count, &shards).ok());
  REQUIRE(shards.size() == count);
  for (uint32_t i = 0; i < count; ++i) {
    bitsift::IndexOptions o;
    o.shard_count = count;
    o.shard = i;
    bitsift::IndexSummary summary;
    REQUIRE(bitsift::BuildIndex(dir, shards[i], o, &summary).ok());
  }
  REQUIRE(bitsift::WriteShardMap(dir, path, count).ok());
}

// A query's answer as (path, score) lines.
std::vector<std::string> Answer(const Index& index, const std::string& text,
                                const bitsift::QueryOptions& options) {
  bitsift::ParsedQuery q;
  REQUIRE(bitsift::ParsedQuery::Parse(text, bitsift::QuerySyntax::kLanguage, &q).ok());
  bitsift::QueryResult r;
  Status s = index.Query(q, options, &r);
  REQUIRE(s.ok());
  std::vector<std::string> out;
  for (size_t i = 0; i < r.documents.size(); ++i) {
    std::string line = index.document(r.documents[i]).path;
    if (!r.scores.empty()) line += Cat(" ", std::to_string(r.scores[i]));
    out.push_back(line);
  }
  return out;
}

std::string InDir(int d, const std::string& name) { return Cat("d", std::to_string(d), "/", name); }

void MakeTree(const TempDir& dir, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<std::string> words = {"alpha",  "beta",  "gamma", "delta", "bloom",
                                          "filter", "shard", "rank",  "merge", "license"};
  for (int i = 0; i < 120; ++i) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int w = 0; w < n; ++w) text += words[rng() % words.size()] + (w % 7 == 6 ? "\n" : " ");
    WriteFile(dir / InDir(i % 5, Cat("f", std::to_string(i), ".txt")), text);
  }
}

const std::vector<std::string> kQueries = {
    "alpha",       "bloom filter", "\"bloom filter\"", "gamma OR beta",
    "alpha -beta", "lic*",         "shard rank merge", "zzzabsent"};

}  // namespace

TEST_CASE("the partition: a path's shard is a hash of its bytes, in range and balanced",
          "[api][shards]") {
  std::map<uint32_t, int> counts;
  for (int i = 0; i < 4000; ++i) {
    const std::string path = Cat("dir", std::to_string(i % 13), "/file", std::to_string(i), ".c");
    const uint32_t s = bitsift::ShardOfPath(path, 4);
    CHECK(s < 4);
    CHECK(s == bitsift::documents::ShardOfPath(path, 4));
    CHECK(s == bitsift::ShardOfPath(path, 4));  // deterministic
    ++counts[s];
  }
  for (const auto& [shard, n] : counts) {
    INFO("shard " << shard);
    CHECK(n > 850);  // 1000 expected
    CHECK(n < 1150);
  }
  CHECK(bitsift::ShardOfPath("anything", 1) == 0);
}

TEST_CASE("the shard map: written, read back, and refused when damaged", "[api][shards]") {
  TempDir dir;
  const bitsift::format::ShardMap m = bitsift::format::MakeShardMap(3, "/data/tree");
  bitsift::format::WriteShardMap(dir.path(), m);
  CHECK(bitsift::format::IsShardedIndex(dir.path()));
  const bitsift::format::ShardMap back = bitsift::format::ReadShardMap(dir.path());
  CHECK(back.count == 3);
  CHECK(back.root == "/data/tree");
  CHECK(back.dirs == std::vector<std::string>{"shard-000", "shard-001", "shard-002"});
  bitsift::ShardMapInfo info;
  REQUIRE(bitsift::ReadShardMap(dir.path(), &info).ok());
  CHECK(info.paths.at(2) == dir.path() + "/shard-002");
  for (const std::string& bad :
       {std::string("bitsift-shards 2\ncount 1\npartition xxh3-path\nroot /a\nshard s\n"),
        std::string("bitsift-shards 1\ncount 2\npartition xxh3-path\nroot /a\nshard s\n"),
        std::string("bitsift-shards 1\ncount 1\npartition md5\nroot /a\nshard s\n"),
        std::string("bitsift-shards 1\ncount 1\npartition xxh3-path\nroot a\nshard s\n"),
        std::string("bitsift-shards 1\ncount 1\npartition xxh3-path\nroot /a\nshard ../s\n")}) {
    WriteFile(dir / "SHARDS", bad);
    CHECK(bitsift::ReadShardMap(dir.path(), &info).code() == Status::Code::kCorrupt);
  }
  TempDir empty;
  CHECK(!bitsift::IsShardedIndex(empty.path()));
  CHECK(bitsift::ReadShardMap(empty.path(), &info).code() == Status::Code::kNotFound);
}

TEST_CASE("a sharded index answers as one index of the same tree, before and after an update",
          "[api][shards]") {
  TempDir tree, idx;
  MakeTree(tree, 11);
  for (uint32_t count : {1u, 2u, 3u, 5u}) {
    INFO(count << " shards");
    const std::string one = idx / Cat("one", std::to_string(count));
    const std::string sharded = idx / Cat("sharded", std::to_string(count));
    REQUIRE(bitsift::BuildIndex(tree.path(), one, {}).ok());
    BuildSharded(tree.path(), sharded, count);
    // Each shard holds its paths' files only, and all of them together the tree.
    bitsift::ShardMapInfo map;
    REQUIRE(bitsift::ReadShardMap(sharded, &map).ok());
    uint64_t total = 0;
    for (uint32_t k = 0; k < count; ++k) {
      std::unique_ptr<Index> shard;
      REQUIRE(Index::Open(map.paths[k], &shard).ok());
      for (uint32_t id = 0; id < shard->document_count(); ++id) {
        CHECK(bitsift::ShardOfPath(shard->document(id).path, count) == k);
      }
      total += shard->live_document_count();
    }
    CHECK(total == 120);
    for (int round = 0; round < 2; ++round) {
      std::unique_ptr<Index> a, b;
      REQUIRE(Index::Open(one, &a).ok());
      REQUIRE(Index::Open(sharded, &b).ok());
      CHECK(b->paths() == std::vector<std::string>{sharded});
      for (const std::string& q : kQueries) {
        INFO(q << ", round " << round);
        bitsift::QueryOptions o;
        CHECK(Answer(*a, q, o) == Answer(*b, q, o));
        o.limit = 3;
        CHECK(Answer(*a, q, o) == Answer(*b, q, o));
        o.rank = true;
        CHECK(Answer(*a, q, o) == Answer(*b, q, o));
        o.limit = 0;
        o.any = true;
        CHECK(Answer(*a, q, o) == Answer(*b, q, o));
      }
      // Every document names itself by its shard, and back.
      for (uint32_t id = 0; id < b->document_count(); ++id) {
        const bitsift::ShardDocument d = b->shard_document(id);
        uint32_t back = 0;
        CHECK(b->FromShardDocument(d, &back));
        CHECK(back == id);
      }
      if (round == 1) break;
      // An update: renames (each to the shard its new name hashes to), a change, a deletion,
      // an addition; BuildIndex on the sharded index updates each shard.
      for (int i = 0; i < 10; ++i) {
        const std::string from = tree / InDir(i % 5, Cat("f", std::to_string(i), ".txt"));
        std::filesystem::rename(from, tree / InDir(i % 5, Cat("moved", std::to_string(i), ".txt")));
      }
      WriteFile(tree / "d1/f11.txt", "alpha changed bloom\n");
      std::filesystem::remove(tree / "d2/f12.txt");
      WriteFile(tree / "d4/new.txt", "bloom filter shard new\n");
      a.reset();
      b.reset();
      REQUIRE(bitsift::BuildIndex(tree.path(), one, {}).ok());
      bitsift::IndexSummary summary;
      REQUIRE(bitsift::BuildIndex(tree.path(), sharded, {}, &summary).ok());
      CHECK(summary.added == 11);
      CHECK(summary.removed == 11);
      CHECK(summary.changed == 1);
    }
    // The tree as it was, for the next count.
    std::filesystem::remove_all(tree.path());
    std::filesystem::create_directories(tree.path());
    MakeTree(tree, 11);
  }
}

TEST_CASE("shards opened apart rank as one index when their statistics are summed",
          "[api][shards]") {
  TempDir tree, idx;
  MakeTree(tree, 5);
  const std::string one = idx / "one", sharded = idx / "sharded";
  REQUIRE(bitsift::BuildIndex(tree.path(), one, {}).ok());
  BuildSharded(tree.path(), sharded, 3);
  std::unique_ptr<Index> whole;
  REQUIRE(Index::Open(one, &whole).ok());
  std::vector<std::unique_ptr<Index>> parts(3);
  for (uint32_t k = 0; k < 3; ++k) {
    bitsift::OpenOptions o;
    o.shards = std::vector<uint32_t>{k};
    REQUIRE(Index::Open({sharded}, o, &parts[k]).ok());
  }
  for (const std::string& q : kQueries) {
    INFO(q);
    bitsift::ParsedQuery parsed;
    REQUIRE(bitsift::ParsedQuery::Parse(q, bitsift::QuerySyntax::kLanguage, &parsed).ok());
    bitsift::QueryOptions o;
    o.rank = true;
    // The sum of the parts' statistics is the whole's.
    bitsift::RankStatistics sum, all;
    REQUIRE(whole->RankStatisticsOf(parsed, o, &all).ok());
    for (const auto& p : parts) {
      bitsift::RankStatistics s;
      REQUIRE(p->RankStatisticsOf(parsed, o, &s).ok());
      sum.documents += s.documents;
      sum.length += s.length;
      sum.part_documents.resize(s.part_documents.size(), 0);
      for (size_t i = 0; i < s.part_documents.size(); ++i) {
        sum.part_documents[i] += s.part_documents[i];
      }
    }
    CHECK(sum.documents == all.documents);
    CHECK(sum.length == all.length);
    CHECK(sum.part_documents == all.part_documents);
    // With the sum, each part scores its documents exactly as the whole index does.
    std::map<std::string, double> want;
    bitsift::QueryResult r;
    REQUIRE(whole->Query(parsed, o, &r).ok());
    for (size_t i = 0; i < r.documents.size(); ++i) {
      want[whole->document(r.documents[i]).path] = r.scores[i];
    }
    o.statistics = &sum;
    std::map<std::string, double> got;
    for (const auto& p : parts) {
      bitsift::QueryResult pr;
      REQUIRE(p->Query(parsed, o, &pr).ok());
      for (size_t i = 0; i < pr.documents.size(); ++i) {
        got[p->document(pr.documents[i]).path] = pr.scores[i];
      }
    }
    CHECK(got == want);
    // Statistics of another query's shape are refused.
    bitsift::RankStatistics wrong = sum;
    wrong.part_documents.push_back(1);
    o.statistics = &wrong;
    CHECK(parts[0]->Query(parsed, o, &r).code() == Status::Code::kInvalidArgument);
  }
  // A rank holding no shard answers nothing.
  bitsift::OpenOptions none;
  none.shards = std::vector<uint32_t>{};
  std::unique_ptr<Index> empty;
  REQUIRE(Index::Open({sharded}, none, &empty).ok());
  CHECK(empty->live_document_count() == 0);
  CHECK(Answer(*empty, "alpha", {}).empty());
  // A missing shard is named.
  std::filesystem::remove_all(sharded + "/shard-001");
  std::unique_ptr<Index> broken;
  Status s = Index::Open(sharded, &broken);
  CHECK(s.code() == Status::Code::kNotFound);
  CHECK(s.message().find("shard 1") != std::string::npos);
}
