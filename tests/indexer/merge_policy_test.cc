// The size rules of the merge policy (indexer/merge_policy.h), on sizes alone.
#include "indexer/merge_policy.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <vector>

namespace bitsift::indexer {
namespace {

TEST_CASE("the newest segment absorbs the older ones no larger than itself", "[merge][policy]") {
  // number, live bytes: a base, an older small update, the newest (larger) update.
  CHECK(AbsorbedByNewest({{8, 169e6}, {11, 2.4e6}, {12, 18e6}}) == std::vector<size_t>{2, 1});
  // Several older ones no larger: all of them, largest first; equal sizes count as no larger.
  CHECK(AbsorbedByNewest({{1, 500}, {2, 10}, {5, 30}, {3, 30}, {7, 30}}) ==
        std::vector<size_t>{4, 2, 3, 1});
  // The newest is the smallest (a one-file update): nothing.
  CHECK(AbsorbedByNewest({{8, 169e6}, {11, 2.4e6}, {12, 1e3}}).empty());
  // Two segments: nothing (an update beside its base is the least an update can leave).
  CHECK(AbsorbedByNewest({{1, 100}, {2, 200}}).empty());
  // Everything would merge (the newest is the largest): left to compact.
  CHECK(AbsorbedByNewest({{1, 100}, {2, 50}, {3, 300}}).empty());
  // Newest by number, wherever it is listed.
  CHECK(AbsorbedByNewest({{9, 40}, {3, 1000}, {4, 20}}) == std::vector<size_t>{0, 2});
}

// Runs MergeFlushes' loop on sizes alone: a merge's output is `kept` of its inputs' bytes (the
// terms they share count once), and a merge fits when its inputs add up to at most `budget`.
// Returns the merges, each the sizes of its members.
std::vector<std::vector<double>> FlushMerges(std::vector<double> flushes, double budget,
                                             double kept) {
  std::vector<PolicySegment> segments;
  std::vector<bool> written;
  for (double bytes : flushes) {
    segments.push_back({segments.size() + 1, bytes});
    written.push_back(false);
  }
  auto fits = [&](const std::vector<size_t>& members) {
    double sum = 0;
    for (size_t i : members) sum += segments[i].live_bytes;
    return sum <= budget;
  };
  std::vector<std::vector<double>> merges;
  for (;;) {
    const FlushMerge next = NextFlushMerge(segments, written, fits);
    if (next.members.empty()) break;
    std::vector<double> sizes;
    for (size_t i : next.members) sizes.push_back(segments[i].live_bytes);
    merges.push_back(sizes);
    double sum = 0;
    std::vector<size_t> gone = next.members;
    std::sort(gone.rbegin(), gone.rend());
    for (size_t i : gone) {
      sum += segments[i].live_bytes;
      segments.erase(segments.begin() + static_cast<std::ptrdiff_t>(i));
      written.erase(written.begin() + static_cast<std::ptrdiff_t>(i));
    }
    segments.push_back({segments.size() + 100, sum * kept});
    written.push_back(true);
    if (next.last) {
      CHECK(segments.size() == 1);
      break;
    }
  }
  return merges;
}

TEST_CASE("a full build merges its flushes, smallest first, then what they wrote",
          "[merge][policy]") {
  using Sizes = std::vector<std::vector<double>>;
  // All fit at once: one merge.
  CHECK(FlushMerges({3, 1, 2}, 10, 1) == Sizes{{1, 2, 3}});
  // linux-paras: 15 flushes that do not fit together. The smallest 11 that fit, then the other
  // 4, then those two outputs (their shared terms counted once) all together.
  const std::vector<double> paras(15, 10);
  CHECK(FlushMerges(paras, 110, 0.6) ==
        Sizes{std::vector<double>(11, 10), std::vector<double>(4, 10), {66, 24}});
  // The outputs do not fit together: two segments are left.
  CHECK(FlushMerges(paras, 110, 0.9) ==
        Sizes{std::vector<double>(11, 10), std::vector<double>(4, 10)});
  // A flush left alone is merged with the output when they fit, not left beside it.
  CHECK(FlushMerges({10, 10, 10, 40}, 60, 0.5) == Sizes{{10, 10, 10}, {40, 15}});
  // Nothing fits: no merge, and no final merge of segments no merge wrote.
  CHECK(FlushMerges({10, 10, 10}, 15, 0.5).empty());
  // One flush: nothing to merge.
  CHECK(FlushMerges({10}, 100, 0.5).empty());
}

}  // namespace
}  // namespace bitsift::indexer
