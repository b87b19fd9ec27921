#include "query/row_and.h"

#include <tbb/blocked_range.h>
#include <tbb/combinable.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

namespace bitsift::query {
namespace {

// Below this many row words a query runs on the calling thread (task overhead dominates).
constexpr size_t kParallelMinWords = 1 << 16;

// Early exit makes the row reads irregular, which defeats the hardware prefetcher: prefetch the
// blocks kPrefetchWords ahead in the first kPrefetchRows rows, the ones most blocks reach (at
// fill 1/2 a block of 512 columns is usually zero after about log2(512) + 2 rows). Measured on
// linux-paras (docs/design.md, "The row AND"): AND time of 3-4 term queries 341 -> 182 us for
// 16 rows, 32 words ahead; 8 or 12 rows gain less, 20 to 32 rows no more.
constexpr size_t kPrefetchRows = 16;
constexpr size_t kPrefetchWords = 32;

// ANDs words [begin, end) block by block; returns words read. With `verify`, a row's words are
// read only after it covered them (until[r]: the row's words below it are readable).
uint64_t AndRange(const uint64_t* const* rows, size_t nrows, size_t begin, size_t end,
                  uint64_t* out, const RowVerifier* verify) {
  uint64_t read = 0;
  const size_t prefetch_rows = std::min(nrows, kPrefetchRows);
  std::vector<size_t> until(verify != nullptr ? nrows : 0, 0);
  // (A prefetch of a row not verified yet is harmless: no result depends on it.)
  for (size_t w = begin; w < end; w += kBlockWords) {
    const size_t n = std::min(kBlockWords, end - w);
    if (w + kPrefetchWords < end) {
      for (size_t r = 0; r < prefetch_rows; ++r) __builtin_prefetch(rows[r] + w + kPrefetchWords);
    }
    uint64_t acc[kBlockWords];
    uint64_t any = 0;
    if (verify != nullptr && w + n > until[0]) until[0] = verify->Verify(0, w, w + n);
    for (size_t i = 0; i < n; ++i) any |= acc[i] = rows[0][w + i];
    read += n;
    for (size_t r = 1; r < nrows && any != 0; ++r) {
      any = 0;
      if (verify != nullptr && w + n > until[r]) until[r] = verify->Verify(r, w, w + n);
      const uint64_t* row = rows[r] + w;
      for (size_t i = 0; i < n; ++i) any |= acc[i] &= row[i];
      read += n;
    }
    for (size_t i = 0; i < n; ++i) out[w + i] = any != 0 ? acc[i] : 0;
  }
  return read;
}

}  // namespace

void AndRowsScalar(const uint64_t* const* rows, size_t nrows, size_t words, uint64_t* out) {
  for (size_t w = 0; w < words; ++w) {
    uint64_t v = rows[0][w];
    for (size_t r = 1; r < nrows; ++r) v &= rows[r][w];
    out[w] = v;
  }
}

uint64_t AndRowsBlocked(const uint64_t* const* rows, size_t nrows, size_t words, uint64_t* out,
                        bool parallel, const RowVerifier* verify) {
  if (!parallel || words * nrows < kParallelMinWords) {
    return AndRange(rows, nrows, 0, words, out, verify);
  }
  tbb::combinable<uint64_t> read([] { return uint64_t{0}; });
  // Grains of 512 words (32768 documents) keep each task's rows streaming sequentially.
  const size_t grain_blocks = 64;
  const size_t blocks = (words + kBlockWords - 1) / kBlockWords;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, blocks, grain_blocks),
                    [&](const tbb::blocked_range<size_t>& r) {
                      size_t begin = r.begin() * kBlockWords;
                      size_t end = std::min(words, r.end() * kBlockWords);
                      read.local() += AndRange(rows, nrows, begin, end, out, verify);
                    });
  return read.combine([](uint64_t a, uint64_t b) { return a + b; });
}

}  // namespace bitsift::query
