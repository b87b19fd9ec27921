// Sparse rows: the exact document list of each of the rarest terms.
//
// DESIGN NOTE: under Zipf most distinct terms are in a handful of documents, and with a fixed
// false-positive rate p every Bloom term brings about p x N false candidates, however rare the
// term: on linux-files (78k documents) a query for a 7-document term verified ~690 false
// candidates, one forward record each. A term in at most MetaRecord::sparse_max_df documents
// therefore gets a sparse row (its document ids) instead of Bloom bits, as a term in 1/32 of
// the documents gets a dense exact row: one row representation per density. Its candidates
// are exact (no verification for it), and the Bloom rows, freed of half their postings, are
// narrower. docs/design.md ("Signatures and rows") has the measurements.
//
// Since format 10 the Bloom terms have a list too (beside their Bloom bits): the lists start at
// the first term that is not exact, ListFirst(meta) (format/index_format.h).
//
// SPARSE_DATA: for each listed term in id order, its df document ids ascending (df from
//   DF_RUNS): varint first id, then varint (gap - 1) for each following id.
// SPARSE_INDEX: u64 byte offset into SPARSE_DATA of each group of lists (ListGroups), then
//   the size of SPARSE_DATA: ListGroups::Entries entries. Each Bloom term's list (thousands of
//   ids) is a group of its own; the sparse terms' lists come in groups of kSparseGroupTerms
//   consecutive terms (a lookup skips the lists before its own in the group).
#ifndef BITSIFT_FORMAT_SPARSE_ROWS_H_
#define BITSIFT_FORMAT_SPARSE_ROWS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/dictionary.h"

namespace bitsift::format {

inline constexpr uint32_t kSparseGroupTerms = 16;
// The default MetaRecord::sparse_max_df of new segments: 1024, not 128 (docs/design.md,
// "Signatures and rows"), so that one-shot queries of a term in 129-1024 documents read no
// forward record per candidate.
inline constexpr uint32_t kDefaultSparseMaxDf = 1024;

// A segment of N documents gives sparse rows to the terms in at most N / kSparseDocsPerDf
// documents too, when that is above the setting (docs/design.md, "Signatures and rows"). A
// Bloom term costs a query k rows of N bits in every band, a sparse term its df ids: the
// threshold where they cost the same grows with N. The terms between N / 128 and the exact
// rows' N / 32 keep their Bloom bits.
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

// How SPARSE_INDEX groups the lists of terms [list_first, term_count): the Bloom terms,
// [list_first, sparse_first), a group each; the sparse terms in groups of kSparseGroupTerms
// from sparse_first on. (Before format 10 every group had kSparseGroupTerms terms.)
struct ListGroups {
  uint32_t list_first;
  uint32_t sparse_first;
  uint64_t term_count;

  // The group of listed term id (list_first <= id < term_count).
  uint64_t Group(uint32_t id) const {
    if (id < sparse_first) return id - list_first;
    return (sparse_first - list_first) + (id - sparse_first) / kSparseGroupTerms;
  }
  // The first term of id's group.
  uint32_t GroupFirst(uint32_t id) const {
    if (id < sparse_first) return id;
    return sparse_first + (id - sparse_first) / kSparseGroupTerms * kSparseGroupTerms;
  }
  // Whether id is the last term of its group.
  bool LastInGroup(uint32_t id) const {
    return id < sparse_first || id + 1 == term_count ||
           (id + 1 - sparse_first) % kSparseGroupTerms == 0;
  }
  // Entries of SPARSE_INDEX: one a group, and the end.
  uint64_t Entries() const {
    return (sparse_first - list_first) +
           (term_count - sparse_first + kSparseGroupTerms - 1) / kSparseGroupTerms + 1;
  }
};

// Encodes the lists term by term, in id order; the data can be taken as it grows.
class SparseRowsWriter {
 public:
  // The first `single_terms` terms added (the Bloom terms) get a group each; the others come
  // in groups of kSparseGroupTerms (ListGroups).
  explicit SparseRowsWriter(uint64_t single_terms = 0) : single_(single_terms) {}
  // Appends the next sparse term's documents: n >= 1 ids, strictly ascending.
  void Add(const uint32_t* docs, size_t n);
  // Bytes of SPARSE_DATA encoded and not taken yet.
  size_t pending_bytes() const { return data_.size(); }
  // Returns the pending bytes of SPARSE_DATA (to be appended in order) and forgets them.
  std::string TakeData();
  // SPARSE_INDEX for the terms added so far (call once all are added).
  std::vector<uint64_t> Index() const;

 private:
  uint64_t single_ = 0;
  std::string data_;
  uint64_t taken_ = 0;  // bytes returned by TakeData
  uint64_t terms_ = 0;
  std::vector<uint64_t> index_;
};

// Decodes the documents of listed term `id` from the bytes [p, end) of its group, whose first
// term is `group_first` (ListGroups::GroupFirst(id)); dict gives the
// df of each term of the group. Returns false if the bytes are damaged: a varint past `end`, an
// id not below doc_count, ids out of order. *stop, if not null, receives where the list ended.
bool DecodeSparseRow(const uint8_t* p, const uint8_t* end, uint32_t group_first, uint32_t id,
                     const DictionaryView& dict, uint64_t doc_count, std::vector<uint32_t>* docs,
                     const uint8_t** stop = nullptr);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_SPARSE_ROWS_H_
