// An open index (one directory, or several answered as one): queries, documents, matching
// lines, statistics and checks.
#ifndef BITSIFT_INDEX_H_
#define BITSIFT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bitsift/build.h"
#include "bitsift/document.h"
#include "bitsift/lines.h"
#include "bitsift/query.h"
#include "bitsift/status.h"

namespace bitsift {

struct BandStats {
  uint64_t width = 0;  // signature bits (Bloom rows; exact rows come on top)
  uint32_t k = 0;      // bits per term
  uint64_t documents = 0;
  uint64_t max_terms = 0;       // Bloom-hashed terms of its largest document
  double fill_ratio = 0;        // fraction of the band's Bloom bits that are set (NaN if a
                                // chunk of its rows is damaged: Check names it)
  double expected_fp_rate = 0;  // per-term false-positive rate of its largest document
};

struct SegmentStats {
  std::string file;        // its file name in the index directory
  uint64_t documents = 0;  // documents in the file (deleted ones included)
  uint64_t deleted = 0;
  uint64_t terms = 0;
  uint64_t bands = 0;
  uint64_t file_bytes = 0;
};

struct IndexStats {
  std::string root;         // the directory that was indexed
  std::string icu_version;  // the ICU that tokenized it
  uint64_t documents = 0;
  uint64_t terms = 0;
  uint64_t exact_terms = 0;            // frequent terms stored as exact rows instead of Bloom bits
  uint64_t sparse_terms = 0;           // rare terms stored as document lists instead of Bloom bits
  uint64_t bloom_terms = 0;            // the others: Bloom bits, and a document list beside them
  double fp_rate = 0;                  // the target it was built with
  uint64_t file_bytes = 0;             // all live segment files
  std::vector<SegmentStats> segments;  // of every opened index, in order
  std::vector<BandStats> bands;        // of every segment, in order
  std::vector<std::pair<std::string, uint64_t>> section_bytes;  // part of the file -> bytes
  // Live documents per encoding name (DocumentInfo::encoding), most first (ties by name);
  // a segment whose document table has a damaged chunk is left out (Check names it).
  std::vector<std::pair<std::string, uint64_t>> encodings;
};

// Opens `path` and runs Index::Check on it: ok, or kNotFound / kCorrupt / kIoError with a
// message naming the path and the problem.
Status CheckIndex(const std::string& path);

// How Index::Open reads an index.
struct OpenOptions {
  // The program answers a query or two and exits (`bitsift query TERMS`): the mapped pages of
  // the index are dropped from the process's resident set as it reads on (every 512 new 4 KiB
  // chunks; they stay in the page cache), so a query reading thousands of scattered records
  // stays under ~100 MB resident. On a machine where a first touch of a page traps to the
  // hypervisor (measured once, at the first read that needs it), the records, rows and paths
  // are read with pread instead, and what was copied (results' paths) is kept until the index
  // is closed. There too, the process's heap hands out its next 4 MiB in huge pages, where the
  // kernel allows it (one fault for 2 MiB instead of one a page; docs/design.md). A
  // long-running program leaves it false: the pages it dropped would fault in again at its
  // next queries, and the copies would grow.
  bool one_shot = false;
  // Unless one_shot: a thread of the index maps into the process, in the background, the
  // pages of the index files the page cache holds now (it reads nothing from the disk), so
  // the first queries do not pay a page fault for each page they first touch (the first pass
  // over a freshly updated index of two segments: p50 1.4x -> 1.0x the compacted index's,
  // docs/design.md). Those pages then count in the process's resident set (shared with the
  // page cache). Set it false for a program that opens an index for a few reads and closes it
  // (`bitsift stats`). The environment variable BITSIFT_MAP_AHEAD=0 turns it off too.
  bool map_ahead = true;
  // For a sharded index (bitsift-mpi; ReadShardMap): open only these shards (positions in its
  // shard map, any order; an empty list opens none, and the index then answers nothing).
  // Unset: every shard. Ignored for an index that is not sharded.
  std::optional<std::vector<uint32_t>> shards;
};

// A document as its shard numbers it (Index::shard_document): the same in every Index that
// opens the same state of the shard, whatever else it opens, so processes holding different
// shards can name documents to each other. For an index that is not sharded, shard is 0.
struct ShardDocument {
  uint32_t index = 0;  // the index's position among those opened (Index::paths)
  uint32_t shard = 0;  // the shard's position in that index's shard map
  uint32_t id = 0;     // its position among the shard's document ids
};

// An open, memory-mapped index. All const methods are safe to call from several threads.
class Index {
 public:
  // Opens the index directory `path`: the state its manifest names now (a snapshot that later
  // updates do not change). Headers, the layout and small sections are verified at once; the
  // rest chunk by chunk (4 KiB) as queries first read it, so a one-shot query reads only what
  // it uses. Returns kNotFound if it does not exist, kCorrupt (naming the problem and the
  // repair) if it is damaged in a part opening verifies, of another version, or a bitsift 0.1
  // index file, kInvalidArgument if it is a file of another kind.
  static Status Open(const std::string& path, std::unique_ptr<Index>* index);
  // Opens several index directories answered as one (results index by index, in this order;
  // a directory given twice is opened once: paths()).
  static Status Open(const std::vector<std::string>& paths, std::unique_ptr<Index>* index);
  // Open with options (OpenOptions).
  static Status Open(const std::vector<std::string>& paths, const OpenOptions& options,
                     std::unique_ptr<Index>* index);

  // Finds the index ".bitsift" in `start_dir` or the nearest of its parents, as git finds
  // ".git".
  // Returns kNotFound if there is none.
  static Status Find(const std::string& start_dir, std::string* index_path);

  // The index directory `path` names when given as an index (`--index PATH`): `path` itself,
  // or path/.bitsift when `path` is not an index but the root of a tree that holds one.
  static std::string Resolve(const std::string& path);

  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  // Answers `query` exactly: the documents it matches (phrases checked in the documents' text,
  // see QueryOptions::document_text; a document that cannot be decided goes to
  // result->unreadable). A plain conjunction is answered by the signature rows and the forward
  // store alone. Segments without a term the query needs are skipped without reading a row.
  // Returns ok with an empty result when nothing matches, kInvalidArgument for an empty
  // (unparsed) query, kCorrupt (naming the path and the repair) if it reads a damaged chunk or
  // record: never an answer from one.
  Status Query(const ParsedQuery& query, const QueryOptions& options, QueryResult* result) const;
  // Parses `arguments` with ParsedQuery::ParseArguments(arguments, options.syntax) and answers
  // the query as above; a parse error is returned as ParseArguments returns it.
  Status Query(const std::vector<std::string>& arguments, const QueryOptions& options,
               QueryResult* result) const;

  // The lines of document `id`'s text that hold an occurrence of a positive term, prefix or
  // phrase of `query` (the lines of a document the query matched: an exclusion marks no line),
  // or with options.best_lines only the best of them (a snippet), in groups with
  // options.before/after context lines. The text is read again as in
  // QueryOptions::document_text: for a file, the text the tokenizer got (decoded to UTF-8, an
  // HTML file's extracted text, a compressed file's content), so line numbers are those of the
  // decoded text. Returns ok (no group if nothing occurs), kStale if the file changed or
  // vanished since indexing (nothing is read from it then), kIoError if it cannot be read,
  // kInvalidArgument for an empty query or an in-memory document without document_text.
  // Precondition: id < document_count().
  Status MatchingLines(uint32_t id, const ParsedQuery& query, const LineOptions& options,
                       std::vector<LineGroup>* groups) const;

  // The collection statistics of this index for `query` (RankStatistics): its live documents,
  // their length, and the documents each scoring part matches over the whole index (not
  // narrowed by options.scope or working_dir). Returns ok, kInvalidArgument for an empty
  // query, kCorrupt as Query does.
  Status RankStatisticsOf(const ParsedQuery& query, const QueryOptions& options,
                          RankStatistics* statistics) const;

  // Document `id` as its shard numbers it. Precondition: id < document_count().
  ShardDocument shard_document(uint32_t id) const;
  // The id of the document `d` names in this Index; false if its shard is not open here or its
  // id is out of the shard's range.
  bool FromShardDocument(const ShardDocument& d, uint32_t* id) const;

  // The number of document ids (deleted documents keep theirs until compaction).
  uint64_t document_count() const;
  // Documents that queries can return.
  uint64_t live_document_count() const;
  // Precondition: id < document_count(). The records of documents a Query returned are
  // verified by that Query; another id whose record lies in a damaged chunk gives an empty
  // DocumentInfo (Check reports the damage).
  DocumentInfo document(uint32_t id) const;
  // Its root and path alone (what printing a match needs), as views valid while this Index is
  // open; empty views where document() gives an empty DocumentInfo.
  DocumentPath document_path(uint32_t id) const;
  // Compares document `id`'s file (its root joined with its path; one lstat, symbolic links
  // not followed) with the facts recorded when it was indexed. Precondition: id <
  // document_count().
  FileState file_state(uint32_t id) const;
  // Reads every row to compute fill ratios: O(index size).
  IndexStats Stats() const;
  // Verifies everything Open does not: every checksum of every section and chunk, zero
  // padding, the bounds of every record, every forward record decodes completely with term ids
  // below the term count, the dictionary finds every term by its own hash, document
  // frequencies agree with the records, the bands hold each non-empty document exactly once,
  // every signature bit of every term of every document is set, and no bit past a band's
  // documents is set. Returns ok or kCorrupt naming the path and the first problem.
  // O(index size + postings x k).
  Status Check() const;
  // The path of the first index opened.
  const std::string& path() const;
  // The index directories answered, in the order given, each once (a directory given twice, by
  // any spelling or through a link, is opened once, at its first place): position i is what
  // results call index i.
  std::vector<std::string> paths() const;

 private:
  struct Rep;
  explicit Index(std::unique_ptr<Rep> rep);
  // Query's work after parsing (`parse_us` is added to the statistics).
  Status Answer(const ParsedQuery& query, const QueryOptions& options, double parse_us,
                QueryResult* result) const;
  std::unique_ptr<Rep> rep_;
};

// The lines that list documents ids[0, n) of `index` for a shell, in the order of ids: each is
// `prefix`, the document's ShellPathTo from `from_dir`, then `end` ('\n', or '\0' for
// `xargs -0`). From kParallelPathLines ids on, the calling thread and the process's helper
// thread take pieces of kPathLinesPiece ids in turn, each written into a string of its own:
// reading a path mostly waits on memory (a record in a table of tens of MB, read just once),
// and two threads wait side by side. Returns the pieces in order (their concatenation is the
// listing). A long listing is best asked for a slice of ids at a time, each written out before
// the next (the CLI: kPathLinesPiece x 64 ids), so that its text is never all in memory.
// Precondition: every id < index.document_count().
inline constexpr size_t kParallelPathLines = 1024;
inline constexpr size_t kPathLinesPiece = 256;
std::vector<std::string> PathLines(const Index& index, const uint32_t* ids, size_t n,
                                   std::string_view prefix, std::string_view from_dir, char end);

// The matching lines of documents ids[0, n) of `index`, as index.MatchingLines(ids[i], query,
// options, &(*groups)[i]) gives them with (*statuses)[i] (both resized to n). With
// options.parallel, the calling thread and the process's helper thread take the documents in
// turn: each is a file read and its text tokenized (~40 us for a few KB), work that two cores
// share; from kParallelMatchingLines ids on the helper is started if it is not running. A long
// listing is best asked for a slice of ids at a time, each printed before the next (the CLI:
// kMatchingLinesSlice ids), so that its lines are never all in memory.
// Precondition: every id < index.document_count().
inline constexpr size_t kParallelMatchingLines = 16;
inline constexpr size_t kMatchingLinesSlice = 256;
void MatchingLinesOf(const Index& index, const uint32_t* ids, size_t n, const ParsedQuery& query,
                     const LineOptions& options, std::vector<std::vector<LineGroup>>* groups,
                     std::vector<Status>* statuses);

}  // namespace bitsift

#endif  // BITSIFT_INDEX_H_
