// GallopPast: the same position as a binary search (std::partition_point) for every start and
// run length, and about 2 log2(run) + 2 probes for a run, however long the range.
#include "util/gallop.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

namespace bitsift {
namespace {

TEST_CASE("GallopPast finds where a prefix ends, in probes that grow with the run", "[gallop]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    // A sorted sequence with repeats (runs of equal values, as hits of one position).
    std::vector<int> v(std::uniform_int_distribution<int>(0, 2000)(rng));
    for (int& x : v) x = std::uniform_int_distribution<int>(0, 300)(rng);
    std::sort(v.begin(), v.end());
    const size_t from = v.empty() ? 0 : std::uniform_int_distribution<size_t>(0, v.size())(rng);
    const int key = std::uniform_int_distribution<int>(-5, 305)(rng);
    size_t probes = 0;
    const size_t got = util::GallopPast(from, v.size(), [&](size_t i) {
      ++probes;
      REQUIRE(i >= from);
      REQUIRE(i < v.size());
      return v[i] < key;
    });
    const size_t want =
        static_cast<size_t>(std::partition_point(v.begin() + static_cast<long>(from), v.end(),
                                                 [&](int x) { return x < key; }) -
                            v.begin());
    INFO("size " << v.size() << " from " << from << " key " << key);
    CHECK(got == want);
    const double run = static_cast<double>(want - from);
    CHECK(static_cast<double>(probes) <= 2 * std::log2(run + 1) + 2);
  }
  // An empty range, and a range where the predicate holds throughout.
  CHECK(util::GallopPast(5, 5, [](size_t) { return true; }) == 5);
  CHECK(util::GallopPast(0, 1000, [](size_t) { return true; }) == 1000);
  CHECK(util::GallopPast(0, 1000, [](size_t) { return false; }) == 0);
}

}  // namespace
}  // namespace bitsift
