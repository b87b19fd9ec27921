#include "indexer/signature_rows.h"

#include <tbb/parallel_for.h>

#include <algorithm>

#include "format/bloom.h"

namespace bitsift::indexer {

std::vector<uint64_t> BuildSignatureRows(const std::vector<format::BandRecord>& bands,
                                         uint32_t exact_terms, uint32_t sparse_first,
                                         const std::vector<uint64_t>& term_hashes,
                                         const ColumnTerms& column_terms) {
  uint64_t row_words = 0;
  for (const format::BandRecord& b : bands) {
    row_words = std::max(row_words, b.rows_offset / 8 + (b.width + exact_terms) * b.words_per_row);
  }
  row_words = (row_words + 7) / 8 * 8;  // every band, and so the section, ends 64-byte aligned
  std::vector<uint64_t> rows(row_words, 0);
  // Each task owns whole 512-column blocks of one band.
  struct BlockTask {
    uint32_t band;
    uint64_t first_col;
  };
  std::vector<BlockTask> tasks;
  for (uint32_t b = 0; b < bands.size(); ++b) {
    for (uint64_t c = 0; c < bands[b].doc_count; c += format::kDocsPerBlock)
      tasks.push_back({b, c});
  }
  tbb::parallel_for(size_t{0}, tasks.size(), [&](size_t t) {
    const format::BandRecord& band = bands[tasks[t].band];
    uint64_t* rows_words = rows.data();
    auto row = [&](uint64_t r) { return rows_words + format::RowOffset(band, r) / 8; };
    uint64_t end = std::min<uint64_t>(tasks[t].first_col + format::kDocsPerBlock, band.doc_count);
    for (uint64_t col = tasks[t].first_col; col < end; ++col) {
      const uint64_t word = col / 64, bit = uint64_t{1} << (col % 64);
      for (uint32_t id : column_terms(tasks[t].band, col)) {
        if (id >= sparse_first) break;  // ids ascend: the rest are sparse terms
        if (id < exact_terms) {
          row(format::ExactRow(band, id))[word] |= bit;
        } else if (band.width > 0) {  // a band of width 0 has no Bloom rows
          format::ForEachPosition(term_hashes[id], band.width, band.k,
                                  [&](uint64_t r) { row(r)[word] |= bit; });
        }
      }
    }
  });
  return rows;
}

}  // namespace bitsift::indexer
