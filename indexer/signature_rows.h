// The signature-row builder: sets the bits of a segment's bit-sliced rows.
//
// A band has `width` Bloom rows followed by `exact_terms` exact rows (format/index_format.h).
// Document `column` of a band sets, for each of its term ids, either the exact row of the id
// (ids below exact_terms) or the k Bloom rows that ForEachPosition gives for the term's hash
// (ids below sparse_first); sparse terms (format/sparse_rows.h) set no bit.
#ifndef BITSIFT_INDEXER_SIGNATURE_ROWS_H_
#define BITSIFT_INDEXER_SIGNATURE_ROWS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "format/index_format.h"

namespace bitsift::indexer {

// The sorted term ids of the document in band column `column` (the caller's storage).
using ColumnTerms = std::function<const std::vector<uint32_t>&(uint64_t band, uint64_t column)>;

// Returns the ROWS section for `bands` (rows_offset, width, k, words_per_row and doc_count
// already set; rows zero past doc_count). term_hashes[id] is the hash of term id. Runs in
// parallel (TBB) over 512-column blocks, so no two tasks write the same word; the result does
// not depend on the number of threads.
std::vector<uint64_t> BuildSignatureRows(const std::vector<format::BandRecord>& bands,
                                         uint32_t exact_terms, uint32_t sparse_first,
                                         const std::vector<uint64_t>& term_hashes,
                                         const ColumnTerms& column_terms);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_SIGNATURE_ROWS_H_
