// ANDing bit-sliced rows: the inner loop of every query.
#ifndef BITSIFT_QUERY_ROW_AND_H_
#define BITSIFT_QUERY_ROW_AND_H_

#include <cstddef>
#include <cstdint>

namespace bitsift::query {

// Words per block: 8 x 64 bits = 512 documents = one 64-byte cache line per row.
inline constexpr size_t kBlockWords = 8;

// out[w] = AND over r < nrows of rows[r][w], for w < words. The plain reference loop.
// Precondition: nrows >= 1.
void AndRowsScalar(const uint64_t* const* rows, size_t nrows, size_t words, uint64_t* out);

// Makes rows readable as the AND reaches them (lazy verification of the index's chunks).
class RowVerifier {
 public:
  virtual ~RowVerifier() = default;
  // Called before words [begin, end) of row r are first read; returns a word index `until` >=
  // end such that words [begin, until) of the row may now be read. Throws as the index does
  // for a damaged chunk.
  virtual size_t Verify(size_t r, size_t begin, size_t end) const = 0;
};

// The same result, computed block by block: once a block's running AND is zero, the remaining
// rows of that block are not read. With `parallel`, blocks are spread over TBB's threads when the
// work is large enough to pay for it. With `verify`, no word of a row is read before
// verify->Verify covered it, so a row that the AND never reaches is never touched. Returns the
// number of row words read.
// Precondition: nrows >= 1. Put the sparsest rows first: they zero blocks soonest.
uint64_t AndRowsBlocked(const uint64_t* const* rows, size_t nrows, size_t words, uint64_t* out,
                        bool parallel, const RowVerifier* verify = nullptr);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_ROW_AND_H_
