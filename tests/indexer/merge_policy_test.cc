// The size rules of the merge policy (indexer/merge_policy.h), on sizes alone.
#include "indexer/merge_policy.h"

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace bitsift::indexer
