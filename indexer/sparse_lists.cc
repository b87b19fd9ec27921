#include "indexer/sparse_lists.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <string>

#include "format/sparse_rows.h"

namespace bitsift::indexer {
namespace {

// Documents whose ids are read in one parallel step of a slice's pass.
constexpr uint64_t kDocumentStep = 4096;
// SPARSE_DATA is handed to `append` once this much is pending.
constexpr size_t kAppendBytes = size_t{1} << 20;

}  // namespace

std::vector<uint64_t> WriteSparseLists(uint64_t doc_count, uint32_t list_first,
                                       uint64_t single_terms, const std::vector<uint32_t>& list_df,
                                       const DocumentIds& ids,
                                       const std::function<void(std::string_view)>& append) {
  format::SparseRowsWriter writer(single_terms);
  std::vector<std::vector<uint32_t>> slice_ids(std::min(kDocumentStep, doc_count));
  tbb::enumerable_thread_specific<std::vector<uint32_t>> scratch;
  for (uint64_t lo = 0; lo < list_df.size();) {
    // Phase 1: the slice, terms [lo, hi): at least one, at most kSparseSlicePostings postings.
    uint64_t hi = lo, total = 0;
    while (hi < list_df.size() && (hi == lo || total + list_df[hi] <= kSparseSlicePostings))
      total += list_df[hi++];
    std::vector<uint64_t> start(hi - lo + 1, 0);
    for (uint64_t t = lo; t < hi; ++t) start[t - lo + 1] = start[t - lo] + list_df[t];
    const auto first_id = static_cast<uint32_t>(list_first + lo);
    const auto end_id = static_cast<uint32_t>(list_first + hi);

    // Phase 2: one pass over the documents; each step finds its documents' ids of the slice in
    // parallel, then files them in document order (so every list ascends).
    std::vector<uint32_t> postings(total);
    for (uint64_t first = 0; first < doc_count; first += kDocumentStep) {
      const uint64_t n = std::min(kDocumentStep, doc_count - first);
      tbb::parallel_for(tbb::blocked_range<uint64_t>(0, n, 64),
                        [&](const tbb::blocked_range<uint64_t>& range) {
                          std::vector<uint32_t>& buffer = scratch.local();
                          for (uint64_t i = range.begin(); i != range.end(); ++i) {
                            const std::vector<uint32_t>& doc = ids(first + i, buffer);
                            slice_ids[i].assign(std::lower_bound(doc.begin(), doc.end(), first_id),
                                                std::lower_bound(doc.begin(), doc.end(), end_id));
                          }
                        });
      for (uint64_t i = 0; i < n; ++i) {
        for (uint32_t id : slice_ids[i])
          postings[start[id - first_id]++] = static_cast<uint32_t>(first + i);
      }
    }

    // Phase 3: the slice's lists, in term order (start[t] is now where term t's list ends).
    uint64_t begin = 0;
    for (uint64_t t = 0; t < hi - lo; ++t) {
      writer.Add(postings.data() + begin, start[t] - begin);
      begin = start[t];
      if (writer.pending_bytes() >= kAppendBytes) append(writer.TakeData());
    }
    lo = hi;
  }
  append(writer.TakeData());
  return writer.Index();
}

}  // namespace bitsift::indexer
