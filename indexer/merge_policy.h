// Merge-policy rules that depend only on the segments' sizes and ages, kept apart from
// IndexState (which adds the memory budget and runs the merges) so that they can be tested on
// sizes alone (docs/living-index.md, "Merging").
#ifndef BITSIFT_INDEXER_MERGE_POLICY_H_
#define BITSIFT_INDEXER_MERGE_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace bitsift::indexer {

struct PolicySegment {
  uint64_t number = 0;    // segment number: a later write has a larger one
  double live_bytes = 0;  // file bytes in proportion to its live documents
};

// The newest segment absorbs the older segments no larger than itself. Returns the indices
// (into `segments`) of the newest segment followed by those older ones, largest first; or
// nothing if there are fewer than 3 segments, if no older segment is that small, or if every
// segment would be merged (that is `bitsift compact`'s work, not an update's).
//
// Why: tiers alone leave an update's segment beside the last update's when the two fall in
// different tiers (bench/living linux-files: the 10% update's 18 MB beside the 1% update's
// 2.4 MB, 3 segments), and each segment costs every query a dictionary lookup per term. The
// cost is bounded as in a binary counter: a merge reads what the update wrote plus segments
// no larger, so a document is rewritten about log2(index / update) times; an update smaller
// than every other segment (one file) absorbs nothing.
std::vector<size_t> AbsorbedByNewest(const std::vector<PolicySegment>& segments);

// The next merge of a full build's flushes (IndexState::MergeFlushes), with fits(indices)
// saying whether merging those segments fits the memory budget and written_by_merges[i]
// whether segment i is the output of an earlier one of these merges. The segments not written
// by them, smallest first, as many as fit (at least 2); when fewer than 2 of them fit and
// these merges have written a segment, all the segments if they fit together (`last`: the
// build ends in one segment); else nothing.
//
// Why: each segment costs a query a dictionary lookup per term and, in a fresh process, about
// ten first-touched pages to open; a one-shot query on linux-paras was 1.32x `quest` on its
// build's 2 segments and 1.13x on one (docs/living-index.md, "Merging").
struct FlushMerge {
  std::vector<size_t> members;
  bool last = false;
};
FlushMerge NextFlushMerge(const std::vector<PolicySegment>& segments,
                          const std::vector<bool>& written_by_merges,
                          const std::function<bool(const std::vector<size_t>&)>& fits);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_MERGE_POLICY_H_
