// Merging the hits of several segments into path order, by path rank.
//
// Each segment of an index answers in its own path order (its ids are assigned in path order),
// so the index's answer is a merge. IndexSet ranks every document of an index by path once
// (rank[global id], distinct) and then merges integers, not strings. Two kernels:
//   - a bitmap over the ranks the hits span, when hits are dense there: one pass over
//     span / 64 words and one read of the inverse ranks per hit, whatever the interleaving;
//   - two parts at a time otherwise (the smallest first), one hit at a time while the parts
//     alternate and by galloping once one part runs on (TimSort's rule).
// Session 11 measured them against the run-copying k-way merge they replaced
// (docs/design.md, "Merging the segments' hits").
#ifndef BITSIFT_QUERY_RANK_MERGE_H_
#define BITSIFT_QUERY_RANK_MERGE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bitsift::query {

// One segment's hits: global id = first + ids[i]; ranks ascend with i.
struct RankedPart {
  const uint32_t* ids;
  size_t size;
  uint32_t first;
};

// Hits spanning at most this many ranks each go through the bitmap.
inline constexpr uint64_t kBitmapMergeSpanPerHit = 16;
// The pairwise merge gallops after one part gave this many hits in a row.
inline constexpr unsigned kGallopAfter = 8;

// Appends to *out the first `room` (or all) global ids of `parts` in ascending rank.
// rank[id] is the rank of global id `id`; ids_by_rank[r] the global id of rank r. Every part
// is ascending in rank and no two hits share a rank. Chooses the kernel below by density.
void MergeByRank(const std::vector<RankedPart>& parts, const uint32_t* rank,
                 const uint32_t* ids_by_rank, uint64_t room, std::vector<uint32_t>* out);

// The kernels, with MergeByRank's contract. MergeTwoByRank merges a and b; MergeByRankBitmap
// needs every hit's rank in [lo, lo + span).
void MergeTwoByRank(RankedPart a, RankedPart b, const uint32_t* rank, uint64_t room,
                    std::vector<uint32_t>* out);
void MergeByRankBitmap(const std::vector<RankedPart>& parts, const uint32_t* rank,
                       const uint32_t* ids_by_rank, uint32_t lo, uint32_t span, uint64_t room,
                       std::vector<uint32_t>* out);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_RANK_MERGE_H_
