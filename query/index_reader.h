// Read access to an index file: the mapped sections, checked for structure on open.
#ifndef BITSIFT_QUERY_INDEX_READER_H_
#define BITSIFT_QUERY_INDEX_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "format/dictionary.h"
#include "format/forward_store.h"
#include "format/index_format.h"

namespace bitsift::query {

// An open index. Immutable after construction and safe to share between threads.
class IndexReader {
 public:
  // Opens and verifies path (checksums and structure). Throws Error(kNotFound) or
  // Error(kCorrupt) with a message naming the path and the problem.
  explicit IndexReader(const std::string& path);

  const format::MetaRecord& meta() const { return meta_; }
  std::string_view root() const { return root_; }
  uint64_t doc_count() const { return meta_.doc_count; }
  uint64_t band_count() const { return meta_.band_count; }
  const format::BandRecord& band(uint64_t b) const { return bands_[b]; }
  // Terms with ids below this have an exact row in every band instead of Bloom bits.
  uint32_t exact_terms() const { return meta_.exact_terms; }
  // Row r of a band: band.words_per_row words. Rows [0, width) are Bloom rows; row width + t
  // is the exact row of term t < exact_terms().
  const uint64_t* Row(const format::BandRecord& band, uint64_t r) const {
    return rows_ + band.rows_offset / 8 + r * band.words_per_row;
  }
  // The document id of a band's column.
  uint32_t BandDoc(const format::BandRecord& band, uint64_t column) const {
    return band_docs_[band.first_column + column];
  }
  const format::DocRecord& doc(uint32_t id) const { return docs_[id]; }
  std::string_view path(uint32_t id) const {
    return std::string_view(paths_ + docs_[id].path_offset, docs_[id].path_length);
  }
  const format::DictionaryView& dictionary() const { return dict_; }
  // Hints the CPU to start loading document id's forward record (no effect on results).
  void PrefetchRecord(uint32_t id) const { __builtin_prefetch(forward_ + forward_offsets_[id]); }
  // Whether document id contains every term id of ids (ascending). Throws Error(kCorrupt).
  bool Contains(uint32_t id, const uint32_t* ids, size_t n) const;
  // All term ids of a document, ascending. Throws Error(kCorrupt).
  std::vector<uint32_t> DocumentTerms(uint32_t id) const;
  uint64_t SectionBytes(format::SectionId id) const { return file_.Section(id).size(); }
  // The raw bytes of a section (for the consistency check).
  std::string_view Section(format::SectionId id) const { return file_.Section(id); }
  uint64_t file_size() const { return file_.file_size(); }
  const std::string& path() const { return file_.path(); }

 private:
  format::IndexFile file_;
  format::MetaRecord meta_{};
  std::string_view root_;
  const format::BandRecord* bands_ = nullptr;
  const uint32_t* band_docs_ = nullptr;
  const uint64_t* rows_ = nullptr;
  const format::DocRecord* docs_ = nullptr;
  const char* paths_ = nullptr;
  const uint64_t* forward_offsets_ = nullptr;
  const uint8_t* forward_ = nullptr;
  format::DictionaryView dict_;
};

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_INDEX_READER_H_
