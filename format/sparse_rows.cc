#include "format/sparse_rows.h"

#include <algorithm>

#include "util/varint.h"

namespace bitsift::format {

uint32_t SparseFirst(const std::vector<DfRun>& runs, uint64_t term_count, uint32_t exact_terms,
                     uint32_t max_df) {
  // Runs are by ascending first_id and decreasing df: the first run of df <= max_df starts the
  // sparse terms.
  uint64_t first = term_count;
  for (const DfRun& r : runs) {
    if (r.df <= max_df) {
      first = r.first_id;
      break;
    }
  }
  if (first < exact_terms) first = exact_terms;
  return static_cast<uint32_t>(first);
}

void SparseRowsWriter::Add(const uint32_t* docs, size_t n) {
  if (terms_ < single_ || (terms_ - single_) % kSparseGroupTerms == 0)
    index_.push_back(taken_ + data_.size());
  ++terms_;
  PutVarint(docs[0], data_);
  for (size_t i = 1; i < n; ++i) PutVarint(docs[i] - docs[i - 1] - 1, data_);
}

std::string SparseRowsWriter::TakeData() {
  std::string out;
  out.swap(data_);
  taken_ += out.size();
  return out;
}

std::vector<uint64_t> SparseRowsWriter::Index() const {
  std::vector<uint64_t> index = index_;
  index.push_back(taken_ + data_.size());
  return index;
}

bool DecodeSparseRow(const uint8_t* p, const uint8_t* end, uint32_t group_first, uint32_t id,
                     const DictionaryView& dict, uint64_t doc_count, std::vector<uint32_t>* docs,
                     const uint8_t** stop) {
  // The lists before id's are skipped, not decoded (their bytes are checksummed like all; each
  // list is checked when its own term is decoded, and `check` decodes every one).
  p = SkipVarints(p, end, dict.DfTotal(group_first, id));
  if (p == nullptr) return false;
  const uint32_t df = dict.Df(id);
  docs->clear();
  docs->reserve(std::min<uint64_t>(df, doc_count));  // (a damaged df asks no more)
  uint64_t doc = 0;
  for (uint32_t i = 0; i < df; ++i) {
    uint64_t v;
    if (!GetVarint(&p, end, &v)) return false;
    doc = i == 0 ? v : doc + v + 1;
    if (v >= doc_count || doc >= doc_count) return false;
    docs->push_back(static_cast<uint32_t>(doc));
  }
  if (stop != nullptr) *stop = p;
  return true;
}

}  // namespace bitsift::format
