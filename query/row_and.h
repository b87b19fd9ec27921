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

// The same result, computed block by block: once a block's running AND is zero, the remaining
// rows of that block are not read. With `parallel`, blocks are spread over TBB's threads when the
// work is large enough to pay for it. Returns the number of row words read.
// Precondition: nrows >= 1. Put the sparsest rows first: they zero blocks soonest.
uint64_t AndRowsBlocked(const uint64_t* const* rows, size_t nrows, size_t words, uint64_t* out,
                        bool parallel);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_ROW_AND_H_
