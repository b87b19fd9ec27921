// Building an index: tokenize every document (in parallel), assign term ids, plan bands, set
// the bits of the bit-sliced rows, encode the forward store, and write the file atomically.
#ifndef BITSIFT_INDEXER_INDEX_BUILDER_H_
#define BITSIFT_INDEXER_INDEX_BUILDER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "documents/file_walker.h"

namespace bitsift::indexer {

using documents::FileFacts;
using documents::SkipCallback;
using documents::SkipReason;
using documents::SkipReasonName;

struct BuildProgress {
  uint64_t files_done = 0;
  uint64_t files_total = 0;
  uint64_t bytes_done = 0;
  double seconds = 0;
};

struct BuildConfig {
  double fp_rate = 0.01;                  // per-term false-positive target of each band
  unsigned threads = 0;                   // 0 = all cores
  uint64_t max_file_size = 256ULL << 20;  // larger files are skipped
  documents::DocumentOptions documents;   // which files are documents and how they are read
  std::function<void(const BuildProgress&)> progress;  // called at most every 200 ms
  SkipCallback on_skip;                                // may be empty
};

struct BuildReport {
  uint64_t documents = 0;  // indexed (including empty ones)
  std::array<uint64_t, static_cast<size_t>(SkipReason::kCount)> skipped{};
  uint64_t terms = 0;
  uint64_t postings = 0;  // sum over documents of distinct terms
  uint64_t bands = 0;
  uint64_t input_bytes = 0;
  uint64_t index_bytes = 0;
  double seconds = 0;
};

// An in-memory document: its name plays the role of a relative path.
struct MemoryDocument {
  std::string name;
  std::string text;
  int64_t mtime_ns = 0;
};

// Indexes the regular files under root into index_path (atomically replaced). Throws Error.
void BuildIndexFromDirectory(const std::string& root, const std::string& index_path,
                             const BuildConfig& config, BuildReport* report);

// Indexes in-memory documents (sorted by name in the index). Throws Error.
void BuildIndexFromMemory(const std::vector<MemoryDocument>& docs, const std::string& index_path,
                          const BuildConfig& config, BuildReport* report);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_INDEX_BUILDER_H_
