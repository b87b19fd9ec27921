// DOC_BANDS (format 9): every document's band, from which its column follows.
//
// Within a band, columns follow document ids (indexer::PlanRows orders them so): the column
// of document d in band b is bands[b].first_column plus the number of band b's documents
// below d. So the section stores per block of kDocBandsBlock documents
//
//   [u32 x band_count: each band's documents before the block][a band code per document]
//
// Codes are DocBandCodeBits(band_count) bits wide (4 up to 15 bands, 8 up to 255, else 16),
// packed little-endian in 64-bit lanes; the all-ones code (kNoBandCode) marks a document in no
// band (one without terms) and the ids past doc_count in the last block. Every block has the
// same size, DocBandsBlockBytes(band_count).
//
// Why: a query whose candidates come from a sparse list needs their columns to test Bloom
// rows. DOC_COLUMNS (format 8) kept a u32 column per document: 4 bytes a document, and one
// 4 KiB chunk read per candidate (linux-paras: 4.8 MB, ~1,000 chunks read for 827 candidates
// of `res pm_runtime_mark_last_busy`). With 7 bands a document costs ~0.55 bytes here (a block
// is 284 bytes), and a lookup reads one block.
#ifndef BITSIFT_FORMAT_DOC_BANDS_H_
#define BITSIFT_FORMAT_DOC_BANDS_H_

#include <cstdint>
#include <vector>

#include "format/index_format.h"

namespace bitsift::format {

inline constexpr uint64_t kDocBandsBlock = 512;

// The code width, in bits, for a segment of band_count bands (4, 8 or 16).
constexpr uint32_t DocBandCodeBits(uint64_t band_count) {
  return band_count < 15 ? 4 : band_count < 255 ? 8 : 16;
}
// The code of a document in no band: all ones.
constexpr uint32_t NoBandCode(uint64_t band_count) {
  return (uint32_t{1} << DocBandCodeBits(band_count)) - 1;
}
// The bands a segment can have: the 16-bit codes' (PlanBands makes a few dozen at most).
inline constexpr uint64_t kMaxBands = 65534;
constexpr uint64_t DocBandsBlockBytes(uint64_t band_count) {
  return 4 * band_count + kDocBandsBlock * DocBandCodeBits(band_count) / 8;
}
constexpr uint64_t DocBandsBlocks(uint64_t doc_count) {
  return (doc_count + kDocBandsBlock - 1) / kDocBandsBlock;
}
// The section's size; 0 for a segment without documents.
constexpr uint64_t DocBandsBytes(uint64_t doc_count, uint64_t band_count) {
  return DocBandsBlocks(doc_count) * DocBandsBlockBytes(band_count);
}

// The section for documents 0..column_of.size()-1, where column_of[d] is document d's column
// or kNoColumn, under `bands` (first_column and doc_count set). Throws Error(kInternal) if the
// columns do not follow document ids within each band, a column is in no band, or there are
// more than kMaxBands bands: the writer's bug, not the reader's to find.
std::vector<uint8_t> EncodeDocBands(const std::vector<uint32_t>& column_of,
                                    const std::vector<BandRecord>& bands);

// The band code of the document at position `pos` (< kDocBandsBlock) of the block at `block`
// (a band below band_count, NoBandCode(band_count), or a damaged block's other value).
uint32_t DocBandCode(const uint8_t* block, uint64_t pos, uint64_t band_count);

// The column of the document at position `pos` (< kDocBandsBlock) of the block at `block`
// (DocBandsBlockBytes(band_count) bytes) into *column (kNoColumn for a document in no band).
// Returns false if the block is inconsistent: a code naming no band, or a column past its
// band's doc_count.
bool DocColumnInBlock(const uint8_t* block, uint64_t pos, const BandRecord* bands,
                      uint64_t band_count, uint32_t* column);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DOC_BANDS_H_
