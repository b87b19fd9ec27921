// IndexSet's merge of several segments' hits into path order: by comparing paths until the
// path order is worth finding (the ski rental of index_set.h, order_price_), then by that
// order. A set opened for many queries finds it sooner than one opened for one; either way the
// answers are the same, in path order, and equal to the brute-force oracle's.
#include "query/index_set.h"

#include <bitsift/bitsift.h>

#include <algorithm>
#include <catch2/catch.hpp>
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

}  // namespace

TEST_CASE("a set opened for many queries finds the path order sooner than one for one query",
          "[index_set]") {
  // 6,000 documents in three segments whose paths interleave (i % 3), so every merge of their
  // hits compares paths until the order is found. `few` has 30 hits (reads well below an
  // eighth of the documents), `many` 2,000 (above an eighth, below all of them).
  constexpr uint32_t kDocs = 6000;
  std::vector<std::vector<bitsift::Document>> parts(3);
  Oracle oracle;
  std::vector<std::string> names;
  for (uint32_t i = 0; i < kDocs; ++i) {
    std::string text = "w" + std::to_string(i);
    if (i % 200 == 0) text += " few";
    if (i % 3 != 0 || i % 2 == 0) text += " many";
    if (i % 7 == 0) text += " seven";
    parts[i % 3].push_back({Name(i), text, 0});
    oracle.Add(text);
    names.push_back(Name(i));
  }
  TempDir dir;
  const std::string path = dir / "index";
  bitsift::IndexOptions options;
  options.merge = false;  // keep the three segments
  for (const auto& part : parts) REQUIRE(bitsift::UpdateDocuments(part, {}, path, options).ok());

  auto truth = [&](const std::vector<std::string>& terms) {
    std::vector<std::string> paths;
    for (uint32_t i : oracle.Match(terms)) paths.push_back(names[i]);
    std::sort(paths.begin(), paths.end());
    return paths;
  };
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
