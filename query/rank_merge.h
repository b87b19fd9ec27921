// Merging the hits of several segments into path order, by path rank.
//
// Each segment of an index answers in its own path order (its ids are assigned in path order),
// so the index's answer is a merge. IndexSet finds the path order of an index's documents once
// (SpineOrder, below) and then merges integers, not strings. The hits of the largest segment
// (the spine) are placed by their local ids alone; the other segments' hits, few after an
// update, are merged among themselves by rank with one of two kernels:
//   - a bitmap over the ranks the hits span, when hits are dense there: one pass over
//     span / 64 words and one read of the inverse ranks per hit, whatever the interleaving;
//   - two parts at a time otherwise (the smallest first), one hit at a time while the parts
//     alternate and by galloping once one part runs on (TimSort's rule).
// Both were measured against the run-copying k-way merge they replaced (docs/design.md,
// "Segments and indexes as one").
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

// The path order of the documents of an index's segments, for merging their hits. The largest
// segment is the spine: an update leaves most documents there, and its hits need no lookup. Each
// document of the other segments carries its position among the spine's documents (how many sort
// before it) and its rank among the other segments' documents. A query's hits then merge in two
// steps: the other segments' by rank (MergeByRank, over a few cache-resident arrays), then that
// sequence into the spine's hits by position, which copies runs of spine hits.
// Why not a rank for every document: on linux-paras after a 10% update (4 segments, 1.33M
// documents), merging 42k hits with rank[] and its inverse over every document (10.6 MB) took
// ~20 ns a hit, two cache misses each; a 1.7x slower query than the compacted index
// (docs/design.md, "Segments and indexes as one").
// Usage: construct, then Next for every document outside the spine, in path order; then Merge
// (from any number of threads).
class SpineOrder {
 public:
  // One count per segment of the index (by position); the spine is the largest, the first of
  // equals.
  explicit SpineOrder(const std::vector<uint32_t>& doc_counts);

  // The next document outside the spine in path order: local id `local` of segment position
  // `segment` (not spine()), before which `spine_before` of the spine's documents sort
  // (non-decreasing from call to call).
  void Next(size_t segment, uint32_t local, uint32_t spine_before);

  size_t spine() const { return spine_; }

  // One segment's hits: ascending local ids of segment position `segment`, whose global ids
  // start at first_id.
  struct Hits {
    size_t segment;
    const uint32_t* ids;
    size_t size;
    uint32_t first_id;
  };
  // Appends to *out the first `room` (or all) global ids of `parts` (at most one per segment) in
  // path order. Precondition: every document was given to Next.
  void Merge(const std::vector<Hits>& parts, uint64_t room, std::vector<uint32_t>* out) const;

 private:
  size_t spine_ = 0;
  std::vector<uint32_t> packed_first_;  // by segment: its first packed index (spine: unused)
  uint32_t next_rank_ = 0;
  // By packed index (the non-spine segments' documents, numbered one segment after another):
  std::vector<uint32_t> spine_pos_;  // spine documents that sort before it
  std::vector<uint32_t> rank_;       // its rank among the packed documents
  std::vector<uint32_t> by_rank_;    // the inverse of rank_
};

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_RANK_MERGE_H_
