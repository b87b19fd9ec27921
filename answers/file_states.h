// Stale hits: what became of the files of a query's results since they were indexed, looked at
// (lstat) below each index's root and compared with the facts the index recorded
// (format::SameFileFacts). The public API (include/bitsift/bitsift.h: FileState,
// QueryOptions::check_files, Index::file_state) translates from here.
#ifndef BITSIFT_ANSWERS_FILE_STATES_H_
#define BITSIFT_ANSWERS_FILE_STATES_H_

#include <cstdint>
#include <vector>

#include "query/index_set.h"

namespace bitsift::answers {

enum class FileState : uint8_t {
  kCurrent,   // a regular file with the size, mtime, ctime and inode recorded
  kChanged,   // a regular file, but one of those differs
  kVanished,  // no regular file at its path any more (or one that cannot be looked at)
  kUnknown,   // an in-memory document: there is no file to look at
};

// The states of the files of documents `ids` (ids of `set`), in that order. Reads (so verifies)
// each document's record and path, which the caller's later reads of them then find verified
// (a damaged chunk throws Error(kCorrupt) here). The files of one index are looked at below its
// root in the order given (sorted paths share directory opens: util::LookAtFiles), with the
// process's helper thread for long lists. Thread-compatible: one call at a time per set.
std::vector<FileState> LookAtDocumentFiles(const query::IndexSet& set,
                                           const std::vector<uint32_t>& ids);

// The state of the file of document `id` of `set`, looked at on the calling thread.
FileState LookAtDocumentFile(const query::IndexSet& set, uint32_t id);

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_FILE_STATES_H_
