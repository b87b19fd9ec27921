// Sparse rows: the exact document list of each of the rarest terms.
//
// DESIGN NOTE: under Zipf most distinct terms are in a handful of documents, and with a fixed
// false-positive rate p every Bloom term brings about p x N false candidates, however rare the
// term: on linux-files (78k documents) a query for a 7-document term verified ~690 false
// candidates, one forward record each. A term in at most MetaRecord::sparse_max_df documents
// therefore gets a sparse row (its document ids) instead of Bloom bits, as a term in 1/32 of
// the documents gets a dense exact row: one row representation per density. Its candidates
// are exact (no verification for it), and the Bloom rows, freed of half their postings, are
// narrower. docs/design.md ("Sparse rows") has the measurements.
//
// SPARSE_DATA: for each sparse term in id order, its df document ids ascending (df from
//   DF_RUNS): varint first id, then varint (gap - 1) for each following id.
// SPARSE_INDEX: u64 byte offset into SPARSE_DATA of each group of kSparseGroupTerms
//   consecutive sparse terms (group g starts with term sparse_first + g * kSparseGroupTerms),
//   then the size of SPARSE_DATA: ceil(sparse terms / kSparseGroupTerms) + 1 entries.
#ifndef BITSIFT_FORMAT_SPARSE_ROWS_H_
#define BITSIFT_FORMAT_SPARSE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/dictionary.h"

namespace bitsift::format {

inline constexpr uint32_t kSparseGroupTerms = 16;
// The default MetaRecord::sparse_max_df of new segments: 1024 since session 8 (128 before;
// docs/design.md, "Sparse rows up to 1024"): one-shot queries of a term in 129-1024 documents
// no longer read a forward record per candidate.
inline constexpr uint32_t kDefaultSparseMaxDf = 1024;

// A segment of N documents gives sparse rows to the terms in at most N / kSparseDocsPerDf
// documents too, when that is above the setting (session 16; docs/design.md, "Sparse rows that
// grow with the segment"). A Bloom term costs a query k rows of N bits in every band, a sparse
// term its df ids: the threshold where they cost the same grows with N. The terms between
// N / 128 and the exact rows' N / 32 keep their Bloom bits.
inline constexpr uint64_t kSparseDocsPerDf = 128;

// The sparse threshold (MetaRecord::sparse_max_df) of a segment of `docs` documents built
// with the index setting `setting` (0 = no sparse rows, whatever the size).
constexpr uint32_t SegmentSparseMaxDf(uint32_t setting, uint64_t docs) {
  if (setting == 0) return 0;
  const uint64_t scaled = docs / kSparseDocsPerDf;
  return scaled > setting ? static_cast<uint32_t>(scaled) : setting;
}

// The first id of the terms with a sparse row: the smallest id at or above exact_terms whose
// df is at most max_df (ids run by decreasing df), or term_count if there is none. `runs` are
// the dictionary's DF_RUNS.
uint32_t SparseFirst(const std::vector<DfRun>& runs, uint64_t term_count, uint32_t exact_terms,
                     uint32_t max_df);

// Entries of SPARSE_INDEX for `sparse_terms` sparse terms.
constexpr uint64_t SparseIndexEntries(uint64_t sparse_terms) {
  return (sparse_terms + kSparseGroupTerms - 1) / kSparseGroupTerms + 1;
}

// Encodes sparse rows term by term, in id order; the data can be taken as it grows.
class SparseRowsWriter {
 public:
  // Appends the next sparse term's documents: n >= 1 ids, strictly ascending.
  void Add(const uint32_t* docs, size_t n);
  // Bytes of SPARSE_DATA encoded and not taken yet.
  size_t pending_bytes() const { return data_.size(); }
  // Returns the pending bytes of SPARSE_DATA (to be appended in order) and forgets them.
  std::string TakeData();
  // SPARSE_INDEX for the terms added so far (call once all are added).
  std::vector<uint64_t> Index() const;

 private:
  std::string data_;
  uint64_t taken_ = 0;  // bytes returned by TakeData
  uint64_t terms_ = 0;
  std::vector<uint64_t> index_;
};

// Decodes the documents of sparse term `id` from the bytes [p, end) of its group, whose first
// term is `group_first` (group_first <= id < group_first + kSparseGroupTerms); dict gives the
// df of each term of the group. Returns false if the bytes are damaged: a varint past `end`, an
// id not below doc_count, ids out of order. *stop, if not null, receives where the list ended.
bool DecodeSparseRow(const uint8_t* p, const uint8_t* end, uint32_t group_first, uint32_t id,
                     const DictionaryView& dict, uint64_t doc_count, std::vector<uint32_t>* docs,
                     const uint8_t** stop = nullptr);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_SPARSE_ROWS_H_
