// Finding the documents under a directory and reading one into the tokenizer.
#ifndef BITSIFT_INDEXER_FILE_WALKER_H_
#define BITSIFT_INDEXER_FILE_WALKER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace bitsift::indexer {

// Why a directory entry was not indexed. Reported in summaries; stored nowhere on disk.
enum class SkipReason {
  kHidden,      // name starts with "."
  kSymlink,     // symbolic links are never followed
  kSpecial,     // FIFO, socket, device: never opened
  kBinary,      // a NUL byte in the first 8 KiB
  kTooLarge,    // larger than --max-file-size
  kUnreadable,  // permission denied or an I/O error
  kVanished,    // removed between listing and reading
  kIndexFile,   // the index being written (or its temporary file)
  kCount
};
const char* SkipReasonName(SkipReason reason);

// Called for every skipped entry with its path relative to the root.
using SkipCallback = std::function<void(const std::string& relative_path, SkipReason reason,
                                        const std::string& detail)>;

// Returns the relative paths of the regular files under root, sorted by bytes, without
// following symbolic links and without entering or listing names that start with ".".
// `exclude(relative_path)` drops a file (reported as kIndexFile). Throws Error(kNotFound or
// kInvalidArgument) if root is not a readable directory; problems below root are reported
// through on_skip and never stop the walk.
std::vector<std::string> WalkDirectory(const std::string& root,
                                       const std::function<bool(const std::string&)>& exclude,
                                       const SkipCallback& on_skip);

struct FileFacts {
  uint64_t size = 0;       // bytes of text tokenized
  uint64_t file_size = 0;  // st_size when opened
  int64_t mtime_ns = 0;    // modification time
  int64_t ctime_ns = 0;    // status change time
  uint64_t inode = 0;
};

// Streams root/relative_path through the tokenizer into sink (bounded memory: 1 MiB reads).
// Returns kCount on success, otherwise why the file was skipped (with *detail set); tokens
// already sent to sink then belong to no document and must be discarded by the caller.
SkipReason ReadDocumentFile(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, tokenizer::Tokenizer& tokenizer,
                            tokenizer::TokenSink& sink, FileFacts* facts, std::string* detail);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_FILE_WALKER_H_
