// Grouping documents into bands of similar size, each with its own signature width.
//
// DESIGN NOTE: one width for every document wastes bits on short documents and saturates long
// ones (COBS and BitFunnel both group by size). Here documents are sorted by their number of
// distinct terms and cut into consecutive bands; band b costs width(max terms in b) bits per
// 512-document row block (rows are 64-byte aligned) plus a fixed penalty standing for per-band
// query overhead. The cuts minimizing the total are found by dynamic programming over cut
// points at multiples of the block size, so the result is the smallest matrix this layout
// allows rather than a fixed power-of-two bucketing.
#ifndef BITSIFT_INDEXER_BANDS_H_
#define BITSIFT_INDEXER_BANDS_H_

#include <cstdint>
#include <vector>

#include "format/bloom.h"
#include "format/index_format.h"

namespace bitsift::indexer {

struct BandPlan {
  uint64_t first = 0;      // index of the band's first document in the sorted order
  uint64_t count = 0;      // documents in the band
  uint64_t max_terms = 0;  // distinct terms of its largest document
  format::BloomShape shape;        // sized so that the largest document meets the target rate
};

// Returns consecutive bands covering all of `sorted_term_counts` (ascending, every entry > 0).
// An empty input gives no bands. Precondition: 0 < fp_rate < 1.
std::vector<BandPlan> PlanBands(const std::vector<uint64_t>& sorted_term_counts, double fp_rate);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_BANDS_H_
