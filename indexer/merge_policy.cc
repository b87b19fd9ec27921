#include "indexer/merge_policy.h"

#include <algorithm>

namespace bitsift::indexer {

std::vector<size_t> AbsorbedByNewest(const std::vector<PolicySegment>& segments) {
  if (segments.size() < 3) return {};
  size_t newest = 0;
  for (size_t i = 1; i < segments.size(); ++i) {
    if (segments[i].number > segments[newest].number) newest = i;
  }
  std::vector<size_t> pick = {newest};
  for (size_t i = 0; i < segments.size(); ++i) {
    if (i != newest && segments[i].live_bytes <= segments[newest].live_bytes) pick.push_back(i);
  }
  if (pick.size() < 2 || pick.size() == segments.size()) return {};
  std::stable_sort(pick.begin() + 1, pick.end(), [&](size_t a, size_t b) {
    return segments[a].live_bytes > segments[b].live_bytes;
  });
  return pick;
}

}  // namespace bitsift::indexer
