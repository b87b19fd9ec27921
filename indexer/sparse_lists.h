// The sparse rows' writer side: documents' term ids transposed into the exact document lists of
// the sparse terms (format/sparse_rows.h). The segment builder and the segment merger both
// write their SPARSE_DATA and SPARSE_INDEX here, so a merged segment's sparse rows are
// byte-identical to a fresh build's.
#ifndef BITSIFT_INDEXER_SPARSE_LISTS_H_
#define BITSIFT_INDEXER_SPARSE_LISTS_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace bitsift::indexer {

// The ids of the sparse terms transposed at once hold at most this many document ids together
// (4 bytes each): the transposition's memory, whatever the number of sparse postings.
inline constexpr uint64_t kSparseSlicePostings = uint64_t{4} << 20;

// The sorted term ids of document `doc`: the caller's storage, or `scratch` filled with them.
// Called from several threads at once (each with its own scratch).
using DocumentIds =
    std::function<const std::vector<uint32_t>&(uint64_t doc, std::vector<uint32_t>& scratch)>;

// Writes the lists of terms list_first .. list_first + list_df.size() - 1, whose document
// frequencies are list_df, from the term ids of documents 0 .. doc_count - 1 (each list
// ascending by document); the first single_terms of them (the Bloom terms) a group each in
// SPARSE_INDEX, the rest in groups of format::kSparseGroupTerms (format::ListGroups). Terms
// are taken in slices of at most kSparseSlicePostings postings (one pass over the documents
// per slice, in parallel with TBB); `append` receives the SPARSE_DATA bytes in order, in
// pieces of about 1 MiB. Returns SPARSE_INDEX.
// Precondition: every document's ids ascend and list_df counts them exactly.
std::vector<uint64_t> WriteSparseLists(uint64_t doc_count, uint32_t list_first,
                                       uint64_t single_terms, const std::vector<uint32_t>& list_df,
                                       const DocumentIds& ids,
                                       const std::function<void(std::string_view)>& append);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_SPARSE_LISTS_H_
