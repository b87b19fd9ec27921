// IndexSet's merge of several segments' hits into path order: by comparing paths until the
// path order is worth finding (the ski rental of index_set.h, order_price_), then by that
// order. A set opened for many queries finds it sooner than one opened for one; either way the
// answers are the same, in path order, and equal to the brute-force oracle's.
#include "query/index_set.h"

#include <bitsift/bitsift.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "format/index_format.h"
#include "query/searcher.h"
#include "test_util.h"

using bitsift::testing::Oracle;
using bitsift::testing::TempDir;
namespace query = bitsift::query;

namespace {

std::string Name(uint32_t i) {
  const std::string digits = std::to_string(100000 + i);
  return "d/" + digits.substr(1, 2) + "/" + digits;
}

// The paths of an answer's global ids, in the answer's order.
std::vector<std::string> Paths(const query::IndexSet& set, const std::vector<uint32_t>& ids) {
  std::vector<std::string> out;
  for (uint32_t id : ids) {
    const query::IndexSet::Segment& s = set.SegmentOf(id);
    out.emplace_back(s.reader->path(id - s.first_id));
  }
  return out;
}

// Documents 0..n-1 named Name(i) with the text text(i), in three segments whose paths
// interleave (i % 3), kept apart (no merge), with the brute-force oracle over them.
class ThreeSegments {
 public:
  ThreeSegments(uint32_t n, const std::function<std::string(uint32_t)>& text) {
    std::vector<std::vector<bitsift::Document>> parts(3);
    for (uint32_t i = 0; i < n; ++i) {
      const std::string t = text(i);
      parts[i % 3].push_back({Name(i), t, 0});
      oracle_.Add(t);
      names_.push_back(Name(i));
    }
    bitsift::IndexOptions options;
    options.merge = false;  // keep the three segments
    for (const auto& part : parts) {
      REQUIRE(bitsift::UpdateDocuments(part, {}, path(), options).ok());
    }
  }
  std::string path() const { return dir_ / "index"; }
  // The paths of the documents holding every term, sorted.
  std::vector<std::string> Truth(const std::vector<std::string>& terms) const {
    std::vector<std::string> paths;
    for (uint32_t i : oracle_.Match(terms)) paths.push_back(names_[i]);
    std::sort(paths.begin(), paths.end());
    return paths;
  }

 private:
  TempDir dir_;
  Oracle oracle_;
  std::vector<std::string> names_;
};

}  // namespace

TEST_CASE("a set opened for many queries finds the path order sooner than one for one query",
          "[index_set]") {
  // 6,000 documents in three segments whose paths interleave (i % 3), so every merge of their
  // hits compares paths until the order is found. `few` has 30 hits (reads well below an
  // eighth of the documents), `many` 2,000 (above an eighth, below all of them).
  constexpr uint32_t kDocs = 6000;
  const ThreeSegments corpus(kDocs, [](uint32_t i) {
    std::string text = "w";
    text += std::to_string(i);
    if (i % 200 == 0) text += " few";
    if (i % 3 != 0 || i % 2 == 0) text += " many";
    if (i % 7 == 0) text += " seven";
    return text;
  });
  const std::string path = corpus.path();
  auto truth = [&](const std::vector<std::string>& terms) { return corpus.Truth(terms); };
  const std::vector<std::string> few = {"few"}, many = {"many"}, both = {"many", "seven"};
  REQUIRE(truth(few).size() == 30);
  REQUIRE(truth(many).size() * 8 > kDocs);
  REQUIRE(truth(many).size() < kDocs);

  using Access = bitsift::format::IndexFile::Access;
  for (Access access : {Access::kRandom, Access::kOneShot}) {
    const bool one_shot = access == Access::kOneShot;
    INFO((one_shot ? "opened for one query" : "opened for many"));
    query::IndexSet set({path}, access);
    REQUIRE(set.segments().size() == 3);
    query::SetQueryStats stats;
    CHECK(Paths(set, set.Search(few, 0, &stats)) == truth(few));
    CHECK_FALSE(set.path_order_found());  // 30 hits: merged by path either way
    CHECK(Paths(set, set.Search(many, 0, &stats)) == truth(many));
    // An eighth of the documents' paths read: a set for many queries finds the order now; one
    // for one query would only once the merges had read every document's.
    CHECK(set.path_order_found() == !one_shot);
    CHECK(Paths(set, set.Search(both, 0, &stats)) == truth(both));
    const std::vector<uint32_t> limited = set.Search(many, 10, &stats);
    std::vector<std::string> first_ten = truth(many);
    first_ten.resize(10);
    CHECK(Paths(set, limited) == first_ten);
    CHECK(Paths(set, set.Search(few, 0, &stats)) == truth(few));
  }
}

TEST_CASE("a set opened for many queries maps its resident pages ahead while it answers",
          "[index_set][race]") {
  // Three segments; each freshly written file is in the page cache, so the set's MapAhead
  // thread maps pages while this thread's queries read the same mappings (run under TSan).
  const ThreeSegments corpus(3000, [](uint32_t i) {
    std::string text = "w";
    text += std::to_string(i);
    text += i % 5 == 0 ? " five" : " other";
    if (i % 11 == 0) text += " eleven";
    return text;
  });
  const std::string path = corpus.path();
  auto truth = [&](const std::vector<std::string>& terms) { return corpus.Truth(terms); };
  const std::vector<std::vector<std::string>> queries = {
      {"five"}, {"eleven"}, {"five", "eleven"}, {"w33"}, {"absent"}};

  using Access = bitsift::format::IndexFile::Access;
  uint64_t file_bytes = 0;
  {
    query::IndexSet set({path}, Access::kRandom);
    REQUIRE(set.segments().size() == 3);
    for (const auto& s : set.segments()) file_bytes += s.reader->file_size();
    query::SetQueryStats stats;
    for (int round = 0; round < 3; ++round) {
      for (const auto& q : queries) CHECK(Paths(set, set.Search(q, 0, &stats)) == truth(q));
    }
    const uint64_t mapped = set.mapped_ahead(/*wait=*/true);
    CHECK(mapped > 0);  // the files were just written: the page cache holds them
    CHECK(mapped <= file_bytes + 3 * 4096);
    CHECK(set.mapped_ahead(true) == mapped);  // finished: waiting again returns at once
    for (const auto& q : queries) CHECK(Paths(set, set.Search(q, 0, &stats)) == truth(q));
  }
  // A set closed at once stops its thread (within a piece) and answers nothing wrong before.
  for (int i = 0; i < 20; ++i) {
    query::IndexSet set({path}, Access::kRandom);
    if (i % 2 == 0) {
      query::SetQueryStats stats;
      CHECK(Paths(set, set.Search(queries[0], 0, &stats)) == truth(queries[0]));
    }
  }
  // No thread for a set opened for one query, nor without map_ahead or with
  // BITSIFT_MAP_AHEAD=0.
  {
    query::IndexSet set({path}, Access::kOneShot);
    CHECK(set.mapped_ahead(true) == 0);
  }
  {
    query::IndexSet set({path}, Access::kRandom, /*map_ahead=*/false);
    CHECK(set.mapped_ahead(true) == 0);
  }
  ::setenv("BITSIFT_MAP_AHEAD", "0", 1);
  {
    query::IndexSet set({path}, Access::kRandom);
    CHECK(set.mapped_ahead(true) == 0);
    query::SetQueryStats stats;
    CHECK(Paths(set, set.Search(queries[2], 0, &stats)) == truth(queries[2]));
  }
  ::unsetenv("BITSIFT_MAP_AHEAD");
}

TEST_CASE("a set closed in a forked child does not wait for its parent's thread", "[index_set]") {
  // A program may fork while a set's MapAhead thread runs: the child has the set but not the
  // thread (glibc marks the parent's other threads as ended in the child, so the destructor's
  // join returns). Each child closes the set and exits; one still running after 10 s hung.
  const ThreeSegments corpus(300, [](uint32_t i) { return std::string(1, 'a' + i % 7); });
  for (int i = 0; i < 30; ++i) {
    auto set = std::make_unique<query::IndexSet>(std::vector<std::string>{corpus.path()},
                                                 bitsift::format::IndexFile::Access::kRandom);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      set.reset();
      ::_exit(0);
    }
    int status = 0;
    pid_t done = 0;
    for (int waited_ms = 0; waited_ms < 10000 && done == 0; waited_ms += 5) {
      done = ::waitpid(child, &status, WNOHANG);
      if (done == 0) ::usleep(5000);
    }
    if (done == 0) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
    }
    REQUIRE(done == child);
    CHECK(WIFEXITED(status));
  }
}
