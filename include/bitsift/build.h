// Building and updating an index: from a directory (BuildIndex) or from documents given in
// memory, compacting it, comparing it with its tree, and reading a file as indexing reads it.
#ifndef BITSIFT_BUILD_H_
#define BITSIFT_BUILD_H_

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bitsift/status.h"

namespace bitsift {

// Progress of BuildIndex, reported at most every 200 ms.
struct IndexProgress {
  uint64_t files_done = 0;
  uint64_t files_total = 0;
  uint64_t bytes_done = 0;
  double seconds = 0;
};

struct IndexOptions {
  double fp_rate = 0.01;  // per-term false-positive target of the signatures
  // Terms in at most this many documents of a segment, or in at most 1/128 of its documents
  // if that is more, get a sparse row, their exact document list, instead of Bloom bits (no
  // false candidates for them); 0 = none (docs/design.md, "Signatures and rows").
  uint32_t sparse_max_df = 1024;
  unsigned threads = 0;                   // worker threads; 0 = one per core (more are capped)
  uint64_t max_file_size = 256ULL << 20;  // files larger than this are skipped
  // Memory for building: a segment is written whenever the in-memory one reaches this, and
  // merges run only within it (CompactIndex runs when asked; it streams, needing about 20
  // bytes per distinct term). Above 0 (the CLI asks 16 MiB).
  uint64_t memory_budget = 256ULL << 20;
  bool rebuild = false;  // index everything again instead of updating
  bool merge = true;     // merge segments by the tiered policy after an update
  // What is read as a document, and how (README "What is indexed"):
  // The encoding of every file ("GB18030", "Shift_JIS", "UTF-16LE", ...: any name ICU knows);
  // "" detects it per file (a byte-order mark, valid UTF-8, an HTML <meta charset>, ICU's
  // charset detector, else windows-1252). An unknown name is kInvalidArgument.
  std::string encoding;
  // Include files and directories whose names start with "." (".git" and ".bitsift" never).
  bool hidden = false;
  // Do not apply .gitignore, .ignore and .git/info/exclude files.
  bool no_ignore = false;
  // Gitignore-style globs matched against paths relative to `dir`, in order, the last match
  // winning: "GLOB" selects (when any is given, files matching none are skipped), "!GLOB"
  // excludes. A glob's choice overrides ignore files and `hidden`.
  std::vector<std::string> globs;
  // A compressed file (.gz .xz .bz2 .zst) whose content is larger is skipped
  // ("decompression-limit"): a decompression bomb costs this much work at most, never memory.
  uint64_t max_decompressed_bytes = 256ULL << 20;
  // Keep diacritics: "José" is the term "josé", found by "josé" and not by "jose" (by default
  // Latin letters lose their diacritics: README "What is a term"). Recorded with the index:
  // queries on it read their words the same way.
  bool keep_diacritics = false;
  // English word forms: each word's Snowball english stem (Porter2) is indexed too, as an
  // extra term, and an unquoted query word is read by its stem, so `model` finds `models` and
  // `modelling`; a quoted word ("model") and phrases stay exact. Recorded with the index as
  // keep_diacritics is. Costs index bytes (a stem term per distinct stemmable word).
  bool stem = false;
  // Keep, in each document's record, the positions of the terms frequent in its segment, so
  // that phrases are decided without reading the candidates' texts. Off: a smaller index
  // (linux-files 281 -> 188 MB) whose phrases read every candidate's text again (about 10x
  // slower). Recorded with the index as keep_diacritics is.
  bool positions = true;
  // Index only shard `shard` of `shard_count` of the tree (shard_count 0: all of it): the
  // files whose relative path ShardOfPath puts there; the others count as absent. Recorded
  // with the index. bitsift-mpi builds each shard of a sharded index so (include/bitsift/
  // shards.h).
  uint32_t shard_count = 0;
  uint32_t shard = 0;
  // Called from worker threads (one at a time) with progress; may be empty.
  std::function<void(const IndexProgress&)> progress;
  // Called (one at a time) for every skipped entry: path relative to the root, reason
  // ("hidden", "symlink", "special", "binary", "too-large", "unreadable", "vanished",
  // "index-file", "ignored", "decompression-limit", "bad-compressed") and detail (e.g. the
  // system's error text, possibly empty). An ignored or hidden directory is one entry.
  std::function<void(const std::string& path, const std::string& reason, const std::string& detail)>
      on_skip;
};

struct IndexSummary {
  uint64_t documents = 0;  // live documents in the index afterwards (empty files included)
  std::vector<std::pair<std::string, uint64_t>> skipped;  // reason -> count, non-zero only
  uint64_t added = 0;                                     // new documents indexed
  uint64_t changed = 0;    // documents whose file (or text) changed, indexed again
  uint64_t removed = 0;    // documents gone from the tree or deleted by name
  uint64_t unchanged = 0;  // files kept without reading them
  bool rebuilt = false;    // everything was indexed again (asked for, new, or settings changed)
  // Why an existing index was rebuilt without --rebuild: "it was written in format 10 by another
  // bitsift; ...", "its setting tokens.keep_diacritics changed"; "" otherwise.
  std::string why_rebuilt;
  uint64_t segments_written = 0;  // new segments from indexing
  uint64_t merges = 0;            // merges run
  uint64_t segments = 0;          // live segments afterwards
  uint64_t terms = 0;             // distinct terms of the segments written (summed over them)
  uint64_t postings = 0;          // their documents' distinct terms, summed
  uint64_t input_bytes = 0;       // bytes of text read in this run
  uint64_t index_bytes = 0;       // bytes of the index (live segments and manifest)
  double seconds = 0;
};

// (BuildIndex on a sharded index, one holding a shard map, updates each of its shards in turn.)
// Indexes every regular file under `dir` (recursively; names starting with "." unless
// options.hidden, files and directories that ignore files or options.globs exclude, and
// symbolic links are skipped, so are binary files and files over options.max_file_size;
// compressed files are indexed by their content, HTML by its text) into the index
// directory `index_path`. If it already holds an index of `dir`, it is updated: files whose
// size, mtime, ctime and inode are unchanged are not read again, new and changed files are
// indexed, removed ones deleted. The new state is committed atomically: until this returns ok
// the previous state stays complete and usable, and readers keep the state they opened.
// Returns ok, kNotFound/kInvalidArgument for a bad `dir` or options, kBusy if another writer
// holds the index, kIoError if the index cannot be written (nothing changes then).
Status BuildIndex(const std::string& dir, const std::string& index_path,
                  const IndexOptions& options, IndexSummary* summary = nullptr);

// Sets the settings of `options` that an index records (fp_rate, sparse_max_df, max_file_size,
// encoding, hidden, no_ignore, globs, max_decompressed_bytes) to the values the index directory
// `index_path` was built with; the other fields are untouched. BuildIndex rebuilds an index
// whose recorded settings differ from the options it is given, so an update that should apply
// the same rules (as `bitsift index DIR` does) starts from these and overrides what its caller
// chose explicitly. Returns kNotFound if there is no index, kCorrupt for a damaged MANIFEST.
Status ReadIndexOptions(const std::string& index_path, IndexOptions* options);

// An in-memory document; `name` plays the role of the path.
struct Document {
  std::string name;
  std::string text;  // UTF-8 (invalid sequences are read as U+FFFD)
  int64_t mtime_ns = 0;
};

// Builds the index directory `index_path` anew from documents in memory (names must be
// distinct): afterwards it holds exactly these documents. Atomic as BuildIndex.
Status BuildIndexFromDocuments(const std::vector<Document>& documents,
                               const std::string& index_path, const IndexOptions& options,
                               IndexSummary* summary = nullptr);

// Updates the index directory `index_path` (created if missing): adds each of `upserts`,
// replacing a live document of the same name, and deletes the documents named in `deletes`
// (names not in the index are ignored). Atomic as BuildIndex; kBusy if another writer holds it.
Status UpdateDocuments(const std::vector<Document>& upserts,
                       const std::vector<std::string>& deletes, const std::string& index_path,
                       const IndexOptions& options, IndexSummary* summary = nullptr);

// Merges all segments of `index_path` into one and drops deleted documents (atomic as
// BuildIndex; a sharded index's shards one after another). Its memory is that of building one
// segment of every live document.
Status CompactIndex(const std::string& index_path, const IndexOptions& options,
                    IndexSummary* summary = nullptr);

// How an index differs from the directory tree it indexes: what the next BuildIndex would do.
struct TreeStatus {
  std::string root;        // the indexed directory (absolute)
  uint64_t documents = 0;  // live documents in the index
  uint64_t unchanged = 0;  // files whose size, mtime, ctime and inode are as indexed
  // Paths relative to root, in path order:
  std::vector<std::string> added;    // new files an update would index
  std::vector<std::string> changed;  // indexed files that differ and would be indexed again
  std::vector<std::string> removed;  // documents whose file is gone (or would now be skipped)
};

// Compares the index directory `index_path` with the files now under its root, classifying
// them exactly as BuildIndex's update would, in the time of a directory walk: a stat per file;
// only new and changed files are opened, to read at most 8 KiB (the binary probe). Takes no
// lock and writes nothing (it runs beside a writer and sees the state committed when it
// starts). Returns kNotFound for no index, kInvalidArgument for an index of in-memory
// documents, kCorrupt for a damaged index.
Status CompareWithTree(const std::string& index_path, TreeStatus* status);

// The text IndexDirectory gives the tokenizer for the file at `path`, read with `options`'
// document settings (encoding, max_file_size, max_decompressed_bytes; README "What is
// indexed"): decompressed, decoded to UTF-8, an HTML file's text. Ignore rules, globs and
// `hidden` are the walk's, not applied here. Returns ok with *text; kNotFound if there is no
// file; kIoError if it cannot be read; kInvalidArgument, naming the reason ("binary",
// "too-large", "special", "bad-compressed", ...), if indexing would skip it, or for an unknown
// encoding.
Status ReadDocumentText(const std::string& path, const IndexOptions& options, std::string* text);

}  // namespace bitsift

#endif  // BITSIFT_BUILD_H_
