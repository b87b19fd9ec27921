// Writing an index directory (docs/living-index.md): create it, update it from a directory
// tree or from documents in memory, merge its segments, compact it. Every call takes the
// index's writer lock (a second writer fails fast with Error(kBusy)), writes new segment files,
// and commits one new MANIFEST atomically at the end: a failure or a kill at any point leaves
// the previous state complete and usable.
#ifndef BITSIFT_INDEXER_INDEX_BUILDER_H_
#define BITSIFT_INDEXER_INDEX_BUILDER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bitsift/build.h"
#include "documents/file_walker.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "format/shard_map.h"
#include "format/sparse_rows.h"
#include "tokenizer/tokenizer.h"

namespace bitsift::indexer {

using documents::FileFacts;
using documents::SkipCallback;
using documents::SkipReason;
using documents::SkipReasonName;

struct BuildProgress {
  uint64_t files_done = 0;
  uint64_t files_total = 0;  // files to read (unchanged files are not counted)
  uint64_t bytes_done = 0;
  double seconds = 0;
};

inline constexpr uint64_t kDefaultMemoryBudget = 256ULL << 20;

struct BuildConfig {
  double fp_rate = 0.01;  // per-term false-positive target of each band
  // Terms in at most this many documents get a sparse row (their document list) instead of
  // Bloom bits (format/sparse_rows.h); 0 gives every term Bloom bits or an exact row.
  uint32_t sparse_max_df = format::kDefaultSparseMaxDf;
  unsigned threads = 0;                   // 0 = all cores
  uint64_t max_file_size = 256ULL << 20;  // larger files are skipped
  documents::DocumentOptions documents;   // which files are documents and how they are read
  tokenizer::TokenRules tokens;           // the token contract's choices (diacritics)
  bool positions = true;  // forward records keep their frequent terms' positions (phrases)
  // A segment of less text keeps every term's positions (format::kEveryPositionBytes).
  uint64_t every_position_bytes = format::kEveryPositionBytes;
  // Memory for the in-memory segment: a segment is flushed when its estimate reaches this,
  // and a merge runs only if its estimate fits (compaction excepted).
  uint64_t memory_budget = kDefaultMemoryBudget;
  bool rebuild = false;  // ignore the existing state: index everything again
  bool merge = true;     // run the merge policy after an update
  std::function<void(const BuildProgress&)> progress;  // called at most every 200 ms
  SkipCallback on_skip;  // each skipped entry but the index being written; may be empty
  // Called with test hooks' names at the points where a crash test may kill the process
  // ("segment-written", "before-commit", "merged", "committed"). May be empty.
  std::function<void(const char* point)> on_phase;
};

struct BuildReport {
  uint64_t documents = 0;  // live documents after the update
  std::array<uint64_t, static_cast<size_t>(SkipReason::kCount)> skipped{};
  uint64_t added = 0;             // new paths indexed
  uint64_t changed = 0;           // paths whose file changed and was indexed again
  uint64_t removed = 0;           // paths deleted (gone from the tree, or deleted by name)
  uint64_t unchanged = 0;         // paths kept without reading them
  bool rebuilt = false;           // everything was indexed again (asked, or the settings changed)
  std::string why_rebuilt;        // why an existing index was rebuilt unasked, else ""
  uint64_t segments_written = 0;  // by indexing (merges not counted)
  uint64_t merges = 0;            // merges run (each writes one segment)
  uint64_t segments = 0;          // live segments after the update
  uint64_t terms = 0;             // distinct terms of the segments written (summed)
  uint64_t postings = 0;          // postings of the segments written
  uint64_t input_bytes = 0;       // text bytes read and indexed in this run
  uint64_t index_bytes = 0;       // bytes of the live segment files and the manifest
  double seconds = 0;
};

// An in-memory document: its name plays the role of a relative path.
struct MemoryDocument {
  std::string name;
  std::string text;
  int64_t mtime_ns = 0;
};

// Brings the index directory `index_dir` up to date with the regular files under root:
// unchanged files (same size, mtime, ctime and inode) are kept without reading them, new and
// changed files are indexed into new segments, removed and changed ones are deleted. A missing
// index, config.rebuild, a 0.1 index file or different settings (root, fp_rate,
// sparse_max_df, max_file_size) index everything. Throws Error.
void UpdateIndexFromDirectory(const std::string& root, const std::string& index_dir,
                              const BuildConfig& config, BuildReport* report);

// Adds or replaces (by name) `upserts` and deletes the documents named in `deletes` (unknown
// names are ignored). With config.rebuild, the index holds exactly `upserts` afterwards.
// Throws Error.
void UpdateIndexFromMemory(const std::vector<MemoryDocument>& upserts,
                           const std::vector<std::string>& deletes, const std::string& index_dir,
                           const BuildConfig& config, BuildReport* report);

// How an index differs from the tree it indexes (what the next update would do): the public
// API's TreeStatus (include/bitsift/build.h).
using TreeStatus = bitsift::TreeStatus;

// Compares the index directory `index_dir` with the files now under the root it indexes,
// classifying them as UpdateIndexFromDirectory does (same walk, same classification), without
// taking the writer lock and without writing anything. A new or changed file is opened only for
// the checks that decide whether an update would index it (type, size limit, the binary probe
// of its first 8 KiB); an unchanged one is not opened. Paths are relative to the root, in path
// order. Throws Error: kNotFound for no index, kInvalidArgument for an index of in-memory
// documents (it has no tree), kCorrupt for a damaged one.
TreeStatus CompareWithTree(const std::string& index_dir);

// Sets config's fp_rate, sparse_max_df, max_file_size and documents to the settings the index in
// `index_dir` was built with (the keys it records; others keep config's values), so that an update
// can apply the same ones. Returns false if there is no index there (config untouched); throws
// Error(kCorrupt) for a damaged MANIFEST.
bool ReadStoredSettings(const std::string& index_dir, BuildConfig* config);

// Merges every segment into one and drops deleted documents, with the streaming merge
// (indexer/segment_merger.h): its memory grows with the index's distinct terms (about 20 bytes
// each), not with its postings. It runs whatever the budget says (it was asked for). Throws
// Error.
void CompactIndex(const std::string& index_dir, const BuildConfig& config, BuildReport* report);

// The shard map of the sharded index `index_dir` (format/shard_map.h): ReadShardMap's,
// throwing as it throws.
format::ShardMap ReadShardMapOf(const std::string& index_dir);

// Makes `index_dir` (and its parents) for a sharded index of `root`. Throws Error(kNotFound or
// kInvalidArgument) if `root` is not a directory, Error(kIo) if the directory cannot be made,
// Error(kInvalidArgument) if it holds a map of another root or shard count.
void PrepareShardedIndex(const std::string& root, const std::string& index_dir, uint32_t count);

// Writes the shard map of `count` shards of `root` into `index_dir`. Throws Error(kIo).
void WriteShardMapOf(const std::string& root, const std::string& index_dir, uint32_t count);

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_INDEX_BUILDER_H_
