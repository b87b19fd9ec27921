// DOC_FACTS and DOC_FACTS_INDEX: the fields of a document's record that a query does not read
// per hit (term count, sizes, file facts, encoding), varint-coded in blocks.
//
// Documents are grouped in blocks of kDocFactsBlock by id; DOC_FACTS_INDEX holds the offset of
// every block in DOC_FACTS, then DOC_FACTS' size (ceil(doc_count / kDocFactsBlock) + 1 u64).
// A block is its documents' records one after another, each exactly kDocFactsFields varints:
//
//   term_count, file_size, zigzag(size - file_size), zigzag(mtime_ns - base.mtime_ns),
//   zigzag(ctime_ns - mtime_ns), zigzag(inode - base.inode), encoding
//
// where `base` is the block's first document for the others and all zeros for the first itself
// (differences wrap modulo 2^64). Documents of one tree written together have close mtimes and
// inodes, and ctime usually equals mtime and size file_size: ~12 bytes a document instead of 48.
// Relative to the block's first record rather than to the previous one, so that reading
// document j decodes record 0, skips j - 1 records without decoding them (SkipVarints) and
// decodes record j.
#ifndef BITSIFT_FORMAT_DOC_TABLE_H_
#define BITSIFT_FORMAT_DOC_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/index_format.h"

namespace bitsift::format {

inline constexpr uint32_t kDocFactsBlock = 32;
inline constexpr uint32_t kDocFactsFields = 7;

// Entries of DOC_FACTS_INDEX for doc_count documents.
constexpr uint64_t DocFactsIndexEntries(uint64_t doc_count) {
  return (doc_count + kDocFactsBlock - 1) / kDocFactsBlock + 1;
}

// Encodes the DOC_FACTS of documents given one at a time, in id order. Usage: Add* Finish.
class DocFactsWriter {
 public:
  // Appends document `d`'s record (every field but path_offset, path_length and column).
  void Add(const DocRecord& d);
  // The finished DOC_FACTS_INDEX (after the last Add). data() is DOC_FACTS.
  std::vector<uint64_t> Finish();
  const std::string& data() const { return data_; }

 private:
  std::string data_;
  std::vector<uint64_t> index_;
  DocRecord base_{};
  uint64_t count_ = 0;
};

// Decodes the record of the document at position j (< kDocFactsBlock) of the block [begin,
// end) into the matching fields of *d (the others are left as they are). Returns false if the
// block ends first or a field is out of range (term_count, encoding above 32 bits): a damaged
// block never reads outside [begin, end).
bool DecodeDocFacts(const uint8_t* begin, const uint8_t* end, uint32_t j, DocRecord* d);

// Whether the block [begin, end) holds exactly `count` records that decode (for `check`).
bool ValidDocFactsBlock(const uint8_t* begin, const uint8_t* end, uint32_t count);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DOC_TABLE_H_
