// Queries running while the index is rebuilt see the old index or the new one, never a mix.
#include <bitsift/bitsift.h>
#include <tbb/global_control.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "reliability_util.h"
#include "test_util.h"

using bitsift::Index;
using bitsift::Status;
using namespace bitsift::testing;

namespace {

// Debian's libtbb is not built with ThreadSanitizer, so TSan cannot see the synchronization
// inside TBB's scheduler and reports false races on everything handed to a TBB task. The TSan
// pass of scripts/test links a oneTBB built with TSan (scripts/tbb-tsan) and runs TBB's loops
// on several threads. Against the system's libtbb, BITSIFT_TBB_SERIAL=1 runs every TBB loop on
// its calling thread instead, so that TSan still checks the library used from many
// std::threads at once (the readers, the rebuilder and the file churner of these tests).
const std::unique_ptr<tbb::global_control> kTbbSerial =
    std::getenv("BITSIFT_TBB_SERIAL") != nullptr
        ? std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, 1)
        : nullptr;

// Two versions of a corpus whose answers differ for every query below.
std::vector<bitsift::Document> Version(int v) {
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 600; ++i) {
    std::string text = Cat("shared word", i % 50);
    text += v == 0 ? " old" : " new";
    if ((i + v) % 3 == 0) text += " third";
    if ((i * 7 + v) % 11 == 0) text += " eleventh";
    docs.push_back({Cat("v", v, "/d", i + v * 13), text, 0});
  }
  return docs;
}

const std::vector<std::vector<std::string>> kQueries = {
    {"shared"}, {"old"}, {"new"}, {"third"}, {"eleventh", "word7"}, {"shared", "third", "word3"}};

using Answers = std::vector<std::vector<std::string>>;

Answers Ask(const Index& index) {
  Answers out;
  for (const auto& q : kQueries) {
    bitsift::QueryResult r;
    Status s = index.Query(q, {}, &r);
    if (!s.ok()) return {{"error: " + s.message()}};
    std::vector<std::string> paths;
    for (uint32_t id : r.documents) paths.push_back(index.document(id).path);
    out.push_back(paths);
  }
  return out;
}

}  // namespace

TEST_CASE("queries during rebuilds see the old or the new index, never a mix",
          "[concurrent][api]") {
  TempDir dir;
  const std::string path = dir / "index";
  Answers expected[2];
  for (int v = 0; v < 2; ++v) {
    REQUIRE(bitsift::BuildIndexFromDocuments(Version(v), path, {}).ok());
    std::unique_ptr<Index> index;
    REQUIRE(Index::Open(path, &index).ok());
    expected[v] = Ask(*index);
  }
  REQUIRE(expected[0] != expected[1]);
  std::atomic<bool> done{false};
  std::atomic<int> opened{0}, mixed{0}, failed{0};
  std::vector<std::string> problems;
  std::mutex problems_mu;
  // Readers open the current index again and again; one of them also keeps an old one open.
  auto reader = [&](bool keep_first) {
    std::unique_ptr<Index> first;
    Answers first_answers;
    while (!done.load()) {
      std::unique_ptr<Index> index;
      Status s = Index::Open(path, &index);
      if (!s.ok()) {
        ++failed;
        std::lock_guard<std::mutex> lock(problems_mu);
        problems.push_back(s.message());
        continue;
      }
      ++opened;
      Answers a = Ask(*index);
      if (a != expected[0] && a != expected[1]) ++mixed;
      if (keep_first && !first) {
        first = std::move(index);
        first_answers = a;
      }
      if (first && Ask(*first) != first_answers) ++mixed;
    }
  };
  std::thread r1(reader, false), r2(reader, true);
  for (int round = 0; round < 8; ++round) {
    REQUIRE(bitsift::BuildIndexFromDocuments(Version(round % 2), path, {}).ok());
  }
  done = true;
  r1.join();
  r2.join();
  INFO((problems.empty() ? "" : problems[0]));
  CHECK(failed == 0);
  CHECK(mixed == 0);
  CHECK(opened > 0);
}

TEST_CASE("one open index answers many threads at once", "[concurrent][api]") {
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(Version(0), dir / "index", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "index", &index).ok());
  const Answers expected = Ask(*index);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        if (Ask(*index) != expected) ++wrong;
        std::vector<std::string> tokens;
        if (!bitsift::Tokenize("Straße 布隆过滤器 common", &tokens).ok()) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(wrong == 0);
}
