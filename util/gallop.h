// Galloping search (exponential search): where a run ends in a sorted sequence, in time that
// grows with the run's length, not the sequence's. Used where a merge places one sequence into
// another and most runs are short (query/rank_merge.cc, query/index_set.cc's path order).
#ifndef BITSIFT_UTIL_GALLOP_H_
#define BITSIFT_UTIL_GALLOP_H_

#include <cstddef>

namespace bitsift::util {

// The first position in [from, end) at which below(i) is false, or end, for a predicate that
// holds on a prefix of the range and fails on the rest (positions in sorted order that sort
// before some key). Probes from, then 2, 4, 8... positions past the last that held, then
// bisects the gap: a run of r positions costs about 2 log2(r) + 2 calls of below.
template <typename Below>
size_t GallopPast(size_t from, size_t end, Below below) {
  size_t lo = from;  // below holds on [from, lo)
  size_t hi = end;   // below fails at hi, or hi == end
  for (size_t step = 1; lo < hi; step *= 2) {
    const size_t probe = lo + step - 1;
    if (probe >= hi) break;
    if (!below(probe)) {
      hi = probe;
      break;
    }
    lo = probe + 1;
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (below(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace bitsift::util

#endif  // BITSIFT_UTIL_GALLOP_H_
