#include "indexer/merge_policy.h"

#include <algorithm>
#include <numeric>

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

FlushMerge NextFlushMerge(const std::vector<PolicySegment>& segments,
                          const std::vector<bool>& written_by_merges,
                          const std::function<bool(const std::vector<size_t>&)>& fits) {
  FlushMerge next;
  std::vector<size_t>& members = next.members;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!written_by_merges[i]) members.push_back(i);
  }
  std::stable_sort(members.begin(), members.end(), [&](size_t a, size_t b) {
    return segments[a].live_bytes < segments[b].live_bytes;
  });
  while (members.size() >= 2 && !fits(members)) members.pop_back();
  if (members.size() >= 2) return next;
  const bool any_written = std::find(written_by_merges.begin(), written_by_merges.end(), true) !=
                           written_by_merges.end();
  members.resize(segments.size());
  std::iota(members.begin(), members.end(), size_t{0});
  if (!any_written || members.size() < 2 || !fits(members)) return FlushMerge{};
  next.last = true;
  return next;
}

}  // namespace bitsift::indexer
