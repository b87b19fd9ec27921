// DOC_FACTS and DOC_FACTS_INDEX: every document's record (its path, term count, sizes, file
// facts, encoding), varint-coded in blocks; its column follows from DOC_BANDS.
//
// Documents are grouped in blocks of kDocFactsBlock by id; DOC_FACTS_INDEX holds the offset of
// every block in DOC_FACTS, then DOC_FACTS' size (ceil(doc_count / kDocFactsBlock) + 1 u64).
// A block of n documents is a table of where its records start, then the records:
//
//   u16 start of record k (k = 1 .. n-1) from the block's start, or 0xFFFF if it is not below
//   0xFFFF (then found by skipping records from the last one listed); record 0 starts right
//   after the table, at 2 (n - 1)
//   each record: kDocFactsFields varints and then the path's bytes,
//     term_count, file_size, zigzag(size - file_size), zigzag(mtime_ns - base.mtime_ns),
//     zigzag(ctime_ns - mtime_ns), zigzag(inode - base.inode), encoding, path_length,
//     path_length bytes of path
//
// where `base` is the block's first document for the others and all zeros for the first itself
// (differences wrap modulo 2^64). Documents of one tree written together have close mtimes and
// inodes, and ctime usually equals mtime and size file_size: ~14 bytes a document (the table's
// 2 included) and its path, instead of 48 and the path. Relative to the block's first record
// rather than to the previous one, so that reading document j decodes record 0 and record j.
//
// Path and facts in one record (format 8) because a query reads both for every result it
// prints (its path, and its facts to tell a stale hit): one read of a block instead of three
// (DOCS entry, PATHS, DOC_FACTS) for a one-shot query's scattered results. The paths are stored
// whole, not front-coded, so that a path is a view of the file's bytes (SegmentReader::path).
// The table costs 2 bytes a document; without it a query printing 30M results in id order
// spent 10-35% longer skipping the records between them.
#ifndef BITSIFT_FORMAT_DOC_TABLE_H_
#define BITSIFT_FORMAT_DOC_TABLE_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/index_format.h"

namespace bitsift::format {

inline constexpr uint32_t kDocFactsBlock = 32;
inline constexpr uint32_t kDocFactsFields = 8;  // the path_length included
inline constexpr uint32_t kNoRecordStart = 0xFFFF;

// Entries of DOC_FACTS_INDEX for doc_count documents.
constexpr uint64_t DocFactsIndexEntries(uint64_t doc_count) {
  return (doc_count + kDocFactsBlock - 1) / kDocFactsBlock + 1;
}
// Documents in block b of a segment of doc_count documents (b < DocFactsIndexEntries - 1).
constexpr uint32_t DocFactsBlockCount(uint64_t b, uint64_t doc_count) {
  return static_cast<uint32_t>(doc_count - b * kDocFactsBlock < kDocFactsBlock
                                   ? doc_count - b * kDocFactsBlock
                                   : kDocFactsBlock);
}

// Encodes the DOC_FACTS of documents given one at a time, in id order, in memory or streamed.
// Usage: (Add (pending ClearPending)?)* Finish (pending ClearPending)?.
class DocFactsWriter {
 public:
  // Appends document `d`'s record with `path` (d's path_offset, path_length and column are not
  // stored; the path's length is path.size()). Precondition: path.size() <= UINT32_MAX.
  void Add(const DocRecord& d, std::string_view path);
  // The bytes of the blocks completed since the last ClearPending (after Finish, the last
  // block's too): a writer that streams the section appends them to it and then clears them.
  const std::string& pending() const { return pending_; }
  void ClearPending() {
    written_ += pending_.size();
    pending_.clear();
  }
  // Completes the last block and returns DOC_FACTS_INDEX (after the last Add).
  std::vector<uint64_t> Finish();

 private:
  void EndBlock();

  std::string pending_;
  uint64_t written_ = 0;          // bytes cleared from pending_
  std::string block_;             // the records of the block being written
  std::vector<uint64_t> starts_;  // where they start in block_
  std::vector<uint64_t> index_;
  DocRecord base_{};
  uint64_t count_ = 0;
};

// The records of one DOC_FACTS block, read by position. Usage: Reset Seek*.
class DocFactsCursor {
 public:
  // The block [begin, end) of `count` (1..kDocFactsBlock) documents. Returns false if it is
  // too short for its table of record starts.
  bool Reset(const uint8_t* begin, const uint8_t* end, uint32_t count);
  // Decodes record j (< count) into the matching fields of *d (path_length included;
  // path_offset and column are left as they are) and, if path is not null, its path into
  // *path (a view of the block's bytes). With d null, only the path (precondition: path is
  // not null), its facts neither decoded nor checked. Returns false if the block ends first, a
  // record start lies outside it, or a field is out of range (term_count, encoding, path_length
  // above 32 bits): a damaged block never reads outside [begin, end).
  bool Seek(uint32_t j, DocRecord* d, std::string_view* path = nullptr);

 private:
  const uint8_t* Start(uint32_t j) const;  // where record j starts, or nullptr

  const uint8_t* begin_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint32_t count_ = 0;
  bool have_base_ = false;
  DocRecord base_{};  // record 0, once have_base_
};

// Decodes the record at position j of the block [begin, end) of `count` documents as
// DocFactsCursor::Seek does.
bool DecodeDocFacts(const uint8_t* begin, const uint8_t* end, uint32_t count, uint32_t j,
                    DocRecord* d, std::string_view* path = nullptr);

// Whether the block [begin, end) holds exactly `count` records that decode, where its table
// says they start (for `check`).
bool ValidDocFactsBlock(const uint8_t* begin, const uint8_t* end, uint32_t count);

// Whether the file facts recorded for a document (size, mtime, ctime, inode) all equal `st`'s:
// the rule by which an update keeps a file without reading it and a query calls a result's file
// current (any other regular file at the path is changed).
bool SameFileFacts(const DocRecord& d, const struct stat& st);

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_DOC_TABLE_H_
