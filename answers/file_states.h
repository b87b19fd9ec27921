// Stale hits: what became of the files of a query's results since they were indexed, looked at
// (lstat) below each index's root and compared with the facts the index recorded
// (format::SameFileFacts), as the public API's FileState (include/bitsift/document.h) names it.
#ifndef BITSIFT_ANSWERS_FILE_STATES_H_
#define BITSIFT_ANSWERS_FILE_STATES_H_

#include <cstdint>
#include <vector>

#include "bitsift/document.h"
#include "query/index_set.h"

namespace bitsift::answers {

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
