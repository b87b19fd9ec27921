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
#include <functional>
#include <vector>

#include "format/bloom.h"
#include "format/dictionary.h"
#include "format/index_format.h"

namespace bitsift::indexer {

struct BandPlan {
  uint64_t first = 0;        // index of the band's first document in the sorted order
  uint64_t count = 0;        // documents in the band
  uint64_t max_terms = 0;    // distinct terms of its largest document
  format::BloomShape shape;  // sized so that the largest document meets the target rate
};

// The rows of a segment: bands and the column order of the non-empty documents.
struct RowPlan {
  std::vector<format::BandRecord> bands;  // rows_offset, width, k, words_per_row, ... set
  std::vector<uint32_t> band_docs;        // BAND_DOCS: document ids by band column
};

// Exact rows for frequent terms (BitFunnel's "private rows"): the number of terms that get
// one, the ids below the result. A term in at least 1/32 of the non-empty documents (and in 2
// or more) costs about 9.6 * df Bloom bits (0.3 bits per document and more) but one bit per
// document as an exact row; it keeps the Bloom rows sparse, reads one row instead of k, and
// needs no verification: on linux-files 1/32 instead of 1/10 cost 1.3 MB (+0.8%) and took a
// one-shot `mutex lock` from 41 to 31 ms (docs/design.md).
// `runs` are the dictionary's DF_RUNS (ids by decreasing df).
uint32_t CountExactTerms(const std::vector<format::DfRun>& runs, uint64_t term_count,
                         uint64_t nonempty_docs);

// The Bloom-hashed terms of a document whose sorted term ids are `ids`: those in
// [exact_terms, sparse_first) (exact terms have exact rows, sparse terms sparse rows), but at
// least 1 for any other non-empty document (it still needs a column), and 0 for an empty
// document (it is in no band).
uint64_t BloomTermCount(const std::vector<uint32_t>& ids, uint32_t exact_terms,
                        uint32_t sparse_first);

// Bands over the non-empty documents sorted by their Bloom-hashed terms (bloom_counts[d] as
// BloomTermCount gives it), planned by PlanBands; documents with more than
// kMaxSignatureTerms go to a last band of width 0. Rows of every band start 64-byte aligned.
RowPlan PlanRows(const std::vector<uint64_t>& bloom_counts, double fp_rate, uint32_t exact_terms);

// Returns consecutive bands covering all of `sorted_term_counts` (ascending, every entry > 0).
// An empty input gives no bands. Precondition: 0 < fp_rate < 1.
std::vector<BandPlan> PlanBands(const std::vector<uint64_t>& sorted_term_counts, double fp_rate);

// The same for n counts given by count_at(i), ascending in i (it reads a few thousand of them
// at most: the candidate cuts').
std::vector<BandPlan> PlanBands(uint64_t n, const std::function<uint64_t(uint64_t)>& count_at,
                                double fp_rate);

// The term counts of the documents added so far, in order: a segment builder plans its bands
// from them after every batch (to estimate its memory) without sorting all of them again. A
// Fenwick tree over the counts 1..kMaxSignatureTerms: adding one and finding the i-th smallest
// both take 17 steps.
class TermCountOrder {
 public:
  // Precondition: 1 <= count <= format::kMaxSignatureTerms; fewer than 2^32 counts in all.
  void Add(uint64_t count);
  uint64_t size() const { return size_; }
  // The i-th smallest count (from 0). Precondition: i < size().
  uint64_t At(uint64_t i) const;
  void Clear();

 private:
  std::vector<uint32_t> tree_;  // [1, kMaxSignatureTerms]; allocated by the first Add
  uint64_t size_ = 0;
};

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_BANDS_H_
