// DOC_FACTS and DOC_FACTS_INDEX: every document's record (its path, term count, sizes, file
// facts, encoding), varint-coded in blocks; its column is in DOC_COLUMNS.
//
// Documents are grouped in blocks of kDocFactsBlock by id; DOC_FACTS_INDEX holds the offset of
// every block in DOC_FACTS, then DOC_FACTS' size (ceil(doc_count / kDocFactsBlock) + 1 u64).
// A block is its documents' records one after another, each kDocFactsFields varints and then
// the path's bytes:
//
//   term_count, file_size, zigzag(size - file_size), zigzag(mtime_ns - base.mtime_ns),
//   zigzag(ctime_ns - mtime_ns), zigzag(inode - base.inode), encoding, path_length,
//   path_length bytes of path
//
// where `base` is the block's first document for the others and all zeros for the first itself
// (differences wrap modulo 2^64). Documents of one tree written together have close mtimes and
// inodes, and ctime usually equals mtime and size file_size: ~12 bytes a document and the path
// instead of 48 and the path. Relative to the block's first record rather than to the previous
// one, so that reading document j decodes record 0, skips j - 1 records without decoding their
// facts (SkipVarints) and decodes record j.
//
// Path and facts in one record (format 8) because a query reads both for every result it
// prints (its path, and its facts to tell a stale hit): one read of a block instead of three
// (DOCS entry, PATHS, DOC_FACTS) for a one-shot query's scattered results. The paths are stored
// whole, not front-coded, so that a path is a view of the file's bytes (IndexReader::path).
#ifndef BITSIFT_FORMAT_DOC_TABLE_H_
#define BITSIFT_FORMAT_DOC_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/index_format.h"

namespace bitsift::format {

inline constexpr uint32_t kDocFactsBlock = 32;
inline constexpr uint32_t kDocFactsFields = 8;  // the path_length included

// Entries of DOC_FACTS_INDEX for doc_count documents.
constexpr uint64_t DocFactsIndexEntries(uint64_t doc_count) {
  return (doc_count + kDocFactsBlock - 1) / kDocFactsBlock + 1;
}

// Encodes the DOC_FACTS of documents given one at a time, in id order, in memory or streamed.
// Usage: (Add (pending ClearPending)?)* Finish.
class DocFactsWriter {
 public:
  // Appends document `d`'s record with `path` (d's path_offset, path_length and column are not
  // stored; the path's length is path.size()). Precondition: path.size() <= UINT32_MAX.
  void Add(const DocRecord& d, std::string_view path);
  // The bytes added since the last ClearPending (all of DOC_FACTS if it is never called): a
  // writer that streams the section appends them to it and then clears them.
  const std::string& pending() const { return pending_; }
  void ClearPending() {
    written_ += pending_.size();
    pending_.clear();
  }
  // The finished DOC_FACTS_INDEX (after the last Add).
  std::vector<uint64_t> Finish();

 private:
  std::string pending_;
  uint64_t written_ = 0;  // bytes cleared from pending_
  std::vector<uint64_t> index_;
  DocRecord base_{};
  uint64_t count_ = 0;
};

// Decodes the record of the document at position j (< kDocFactsBlock) of the block [begin,
// end) into the matching fields of *d (path_length included; path_offset and column are left
// as they are) and, if path is not null, its path into *path (a view of the block's bytes).
// Returns false if the block ends first or a field is out of range (term_count, encoding,
// path_length above 32 bits): a damaged block never reads outside [begin, end).
bool DecodeDocFacts(const uint8_t* begin, const uint8_t* end, uint32_t j, DocRecord* d,
                    std::string_view* path = nullptr);

// Whether the block [begin, end) holds exactly `count` records that decode (for `check`).
bool ValidDocFactsBlock(const uint8_t* begin, const uint8_t* end, uint32_t count);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DOC_TABLE_H_
