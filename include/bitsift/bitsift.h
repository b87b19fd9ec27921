// bitsift: exact full-text search over bit-sliced Bloom-filter signatures.
//
// This header is the whole embeddable API. It uses only the C++ standard library; no ICU, TBB
// or Boost type appears here and no exception crosses it: every call that can fail returns a
// Status. Typical use:
//
//   bitsift::IndexSummary summary;
//   bitsift::Status s = bitsift::BuildIndex("docs", "docs/.bitsift", {}, &summary);  // or update

//   std::unique_ptr<bitsift::Index> index;
//   if (s.ok()) s = bitsift::Index::Open("docs/.bitsift", &index);
//   bitsift::ParsedQuery query;
//   if (s.ok()) s = bitsift::ParsedQuery::Parse("bloom \"false positive\" -java", {}, &query);
//   bitsift::QueryResult result;
//   if (s.ok()) s = index->Query(query, {}, &result);
//   for (uint32_t id : result.documents) puts(index->document(id).path.c_str());
#ifndef BITSIFT_BITSIFT_H_
#define BITSIFT_BITSIFT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bitsift {

// The outcome of a call: ok, or a code and a one-line message naming the path and the cause.
class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,  // bad options, a query without terms
    kNotFound,         // a missing directory or index
    kCorrupt,          // an index that is damaged, truncated, or of another format/version
    kIoError,          // the operating system refused (permissions, full disk, ...)
    kInternal,         // out of memory or a bug
    kBusy,             // another writer holds the index (try again later)
    kStale,            // a document's file changed or vanished since it was indexed
  };
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

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
  // false candidates for them); 0 = none (docs/design.md, "Sparse rows").
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
// BuildIndex). Its memory is that of building one segment of every live document.
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

// Returns in *tokens the sorted distinct terms of `text` under the token contract (README "What
// is a term"): words, their parts and bigrams, with `options.keep_diacritics` as an index built
// with `options` has it. Returns kInternal only if ICU's data cannot be loaded.
Status Tokenize(std::string_view text, std::vector<std::string>* tokens,
                const IndexOptions& options = {});

// The text IndexDirectory gives the tokenizer for the file at `path`, read with `options`'
// document settings (encoding, max_file_size, max_decompressed_bytes; README "What is
// indexed"): decompressed, decoded to UTF-8, an HTML file's text. Ignore rules, globs and
// `hidden` are the walk's, not applied here. Returns ok with *text; kNotFound if there is no
// file; kIoError if it cannot be read; kInvalidArgument, naming the reason ("binary",
// "too-large", "special", "bad-compressed", ...), if indexing would skip it, or for an unknown
// encoding.
Status ReadDocumentText(const std::string& path, const IndexOptions& options, std::string* text);

// What a token is in its text (README "What is a term").
enum class TokenRole {
  kWord,   // a word without parts, or a bigram of a CJK run: a term and one phrase position
  kWhole,  // a word with parts ("stdio.h"): a term, not a phrase position; its parts follow
  kPart,   // a part of the whole before it ("stdio", "h"): a term and one phrase position
};

// One token of a text and the bytes [begin, end) of the text it was made from.
struct TextToken {
  std::string token;   // as the index stores it (normalized)
  uint64_t begin = 0;  // first byte of its source characters
  uint64_t end = 0;    // one past the last byte of its source characters
  TokenRole role = TokenRole::kWord;
};

// Returns in *tokens the tokens of `text` under the token contract in text order, repeats
// included (a document's terms are their set; its phrase positions those whose role is not
// kWhole), each with its role and source byte range (a part's own characters): its source
// characters, whole (a character with its combining marks; an invalid UTF-8 sequence as the
// U+FFFD it becomes). A character that normalization expands belongs whole to every token made
// from it, and the bigrams of a kana/ideographic run overlap by a character, so ranges may
// overlap. `options.keep_diacritics` as for Tokenize. Returns an empty vector for a text without
// tokens; kInternal only if ICU's data cannot be loaded.
Status TokenizeInOrder(std::string_view text, std::vector<TextToken>* tokens,
                       const IndexOptions& options = {});
// The same tokens passed to `on_token` one by one, in order, with memory bounded whatever the
// size of `text` (for large texts).
Status TokenizeInOrder(std::string_view text, const std::function<void(const TextToken&)>& on_token,
                       const IndexOptions& options = {});

struct DocumentInfo {
  std::string path;      // relative to the indexed directory (or the Document name)
  std::string root;      // the indexed directory of its index (empty for in-memory documents)
  uint32_t index = 0;    // which of the opened indexes holds it (0 for a single index)
  uint64_t size = 0;     // bytes indexed
  int64_t mtime_ns = 0;  // modification time when indexed
  uint32_t terms = 0;    // distinct terms
  // The file's facts when indexed (an update compares them; Index::file_state too).
  uint64_t file_size = 0;  // st_size (the text size for in-memory documents)
  int64_t ctime_ns = 0;    // status change time (0 for in-memory documents)
  uint64_t inode = 0;      // st_ino (0 for in-memory documents)
  // The encoding its text was read in: "UTF-8" (also for in-memory documents), "GB18030",
  // "Shift_JIS", "UTF-16LE", "windows-1252", ... (ICU's canonical names).
  std::string encoding;
};

// The path by which a process whose working directory is `from_dir` (absolute) opens document
// `d`'s file: relative to from_dir ("../tree/a.txt" from a sibling folder) when that is shorter
// than the absolute path (d.root + "/" + d.path), the absolute path otherwise or when from_dir
// is empty. A relative path that would start with "-" is written "./-..." so that a command it
// is passed to does not read it as an option. An in-memory document's path is returned as is.
// Bytes are kept as they are (no UTF-8 validation).
std::string ShellPath(const DocumentInfo& d, const std::string& from_dir);

// `s` with every byte that does not belong to a well-formed UTF-8 sequence replaced by U+FFFD:
// for showing a path (bytes, not always UTF-8) where text is required (JSON, a terminal).
std::string ToValidUtf8(std::string_view s);
// The same for a document's root and relative path (Index::document_path), written into *out
// (replacing its contents): printing many paths reuses one string.
void ShellPathTo(std::string_view root, std::string_view path, std::string_view from_dir,
                 std::string* out);

// Where a document's file is, without copying: views into an open Index, valid while it is.
struct DocumentPath {
  std::string_view root;  // DocumentInfo::root
  std::string_view path;  // DocumentInfo::path
};

// `s` as one word for a POSIX shell: unchanged if made only of letters, digits and
// /._-+,:@%, else in single quotes (a ' inside written '\'').
std::string ShellQuote(const std::string& s);

// The command line that updates the index directory `index_path` of the tree `root` (absolute,
// as TreeStatus::root and DocumentInfo::root give it), or with `rebuild` builds it again:
// "bitsift index [--rebuild] ROOT", with "--index INDEX_PATH" unless index_path is the default
// ROOT/.bitsift; each path quoted for the shell when it needs it.
std::string IndexCommand(const std::string& root, const std::string& index_path, bool rebuild);

// What became of a document's file since it was indexed.
enum class FileState {
  kCurrent,   // a regular file with the size, mtime, ctime and inode recorded
  kChanged,   // a regular file, but one of those differs (its answer may be out of date)
  kVanished,  // no regular file at its path any more (the next update removes the document)
  kUnknown,   // an in-memory document: there is no file to look at
};

// ---------------------------------------------------------------------------------------------
// The query language (README "Query language" has the grammar and examples).

enum class QuerySyntax {
  // Words ANDed, "phrases", a OR b, -exclusion, prefix*, (groups); a word the tokenizer splits
  // (std::vector, e-mail) and a CJK run of three or more characters are phrases.
  kLanguage,
  // bitsift 0.1's meaning, for text from users that must not be read as operators: every token
  // of the text is a required term; quotes, dashes, stars and OR are plain text.
  kWords,
};

// Why a query text is not a query, and where.
struct QueryError {
  size_t argument = 0;  // the argument it is in (ParseArguments), 0 for Parse
  size_t position = 0;  // byte offset in that argument
  std::string reason;   // e.g. "unbalanced quote: no closing \""
};

// A parsed query, answered by Index::Query and used by Index::MatchingLines. Cheap to copy (the
// tree is shared and immutable); safe to use from several threads at once.
class ParsedQuery {
 public:
  // Parses one query string (a line of a --queries file, a search box). Returns ok, or
  // kInvalidArgument with the message "query: REASON (at byte N)" and *error (if not null) set:
  // an unbalanced quote or parenthesis, an OR without a term on both sides, a lone "*", a query
  // made only of exclusions, no term at all. Nothing is thrown.
  static Status Parse(std::string_view text, QuerySyntax syntax, ParsedQuery* query,
                      QueryError* error = nullptr);
  // Parses command-line arguments: each is read in the language and the arguments are ANDed;
  // an argument that holds whitespace but no operator (no quote, parenthesis, OR, leading "-",
  // trailing "*") is a phrase, as grep would read it. Errors as Parse, the message naming the
  // argument ("query argument 2: REASON (at byte N)") when there are several.
  static Status ParseArguments(const std::vector<std::string>& arguments, QuerySyntax syntax,
                               ParsedQuery* query, QueryError* error = nullptr);

  // A compact form of the parsed tree for messages and tests: term, prefix*, "a b",
  // (and x y -z), (or x y). "" for a query never parsed.
  std::string ToString() const;
  // Whether it is a conjunction of terms only (no phrase, prefix, OR or exclusion): answered by
  // the signature rows and the forward store alone, as bitsift 0.1 answered every query.
  bool plain() const;
  // Whether it was never parsed successfully (Index::Query refuses it).
  bool empty() const { return rep_ == nullptr; }

  struct Rep;  // opaque: the library's parsed tree

 private:
  friend class Index;
  std::shared_ptr<const Rep> rep_;
};

// Reads the text of a document as it was indexed into *text, returning false if it cannot.
// Called from several threads at once.
using DocumentText = std::function<bool(const DocumentInfo& document, std::string* text)>;

struct QueryOptions {
  uint64_t limit = 0;  // return at most this many documents (the first in path order); 0 = all
  // Only documents under these paths (files or folders; "a/b" holds "a/b" and "a/b/c", not
  // "a/bc"). A relative path is relative to each index's root (the indexed directory); an
  // absolute one selects, in each index, the part of its tree under it (all of it if the path
  // holds the root, nothing if the path lies outside the tree). Empty: no restriction. A
  // relative path that leaves the root ("../x") is kInvalidArgument.
  std::vector<std::string> scope;
  // The directory the query is asked from (absolute or relative to the process's working
  // directory), or empty. In each index whose tree holds it strictly (not its root), only
  // documents under it are returned, as `git grep` answers from a subfolder; other indexes are
  // not narrowed. With `scope` too, a document must satisfy both. An Index resolves an
  // absolute working_dir and the absolute scope entries (symbolic links, realpath) the first
  // time it is asked with those values and reuses that while it is open: a link changed later
  // is seen by a newly opened Index (or with other values in between).
  std::string working_dir;
  // Look at the file of every document returned (one lstat each, see Index::file_state):
  // a document whose file vanished is left out and listed in QueryResult::vanished (with a
  // limit, the next matches take its place); one whose file changed is returned and listed in
  // QueryResult::changed.
  bool check_files = false;
  // The caller only counts the documents: Query does not verify their records for document()
  // (which then gives an empty DocumentInfo for one whose record is damaged). Saves a record
  // read per result: 16% of the in-process time of linux-files' counted queries. Ignored with
  // check_files, which reads the records.
  bool count_only = false;
  // With check_files, the states of the files already looked at, by document id, kept by the
  // caller across the queries of one run so that each file is looked at once per run (a file
  // that changes during the run is then reported as it was first seen). Query sizes it to
  // document_count() and fills it. Not to be shared by queries running at the same time.
  // Null: every document returned is looked at.
  std::vector<std::optional<FileState>>* known_files = nullptr;
  // How Query(arguments, ...) reads its arguments (ParsedQuery::ParseArguments).
  QuerySyntax syntax = QuerySyntax::kLanguage;
  // Whether a query may use threads besides the caller's: the searches of several segments are
  // shared with a helper thread, which then polls for the next query's for up to 200 ms (a
  // stream of queries keeps a second core busy: docs/design.md, "Segments on a helper
  // thread"), and the texts of a phrase's many candidates are read on TBB's threads. Set it to
  // false when the program answers queries on every core already (`bitsift query --jobs N`).
  bool parallel = true;
  // Where phrases are checked: a phrase's candidates (documents holding all its terms) are read
  // again and tokenized with positions. Empty: each document's file is read through the same
  // document stage as indexing (decompression, decoding, HTML), and refused when its size,
  // mtime, ctime or inode differ from those recorded. An index of in-memory documents has no
  // files: give their texts here, or phrases cannot be checked in them.
  DocumentText document_text;
};

struct QueryStats {
  uint64_t terms = 0;                  // distinct query terms
  uint64_t candidates = 0;             // documents whose signatures matched
  uint64_t false_positives = 0;        // candidates that verification removed
  uint64_t rows_read = 0;              // signature rows ANDed (over all bands)
  uint64_t bytes_read = 0;             // row bytes read
  uint64_t segments_searched = 0;      // segments whose rows were read
  uint64_t segments_skipped = 0;       // segments whose dictionary lacks a query term
  uint64_t segments_out_of_scope = 0;  // segments with no document in the scope (not read)
  uint64_t prefix_terms = 0;           // dictionary terms the query's prefixes expanded to
  uint64_t phrase_candidates = 0;      // documents whose text was read to check a phrase
  uint64_t text_bytes = 0;             // bytes of text read for that
  // The engine's time: total_us = parse + AND + verify (phrases included: what benchmarks
  // compare). Looking at the files of the results (QueryOptions::check_files) is files_us,
  // outside total_us.
  double parse_us = 0, and_us = 0, verify_us = 0, total_us = 0;
  double files_us = 0;
  double phrase_us = 0;  // reading and tokenizing texts for phrases (summed over threads)
};

struct QueryResult {
  // Matching document ids: index by index in the order opened, by path within an index.
  std::vector<uint32_t> documents;
  QueryStats stats;
  // Whether the scope or working_dir narrowed the search in at least one index.
  bool scoped = false;
  // With QueryOptions::check_files: the documents returned whose file changed since indexing,
  // and the matches left out because their file vanished (each in the order of `documents`).
  std::vector<uint32_t> changed;
  std::vector<uint32_t> vanished;
  // Documents that may match but could not be decided: a phrase had to be checked in their
  // text and it could not be read (the file changed or vanished since indexing, or no
  // document_text for an in-memory document). Never in `documents`; in id order.
  std::vector<uint32_t> unreadable;
};

// ---------------------------------------------------------------------------------------------
// Matching lines (Index::MatchingLines): where a document matches, as grep -n shows it.

// A byte range [start, end) of a line's text.
struct LineSpan {
  size_t start = 0;
  size_t end = 0;
  bool operator==(const LineSpan& o) const { return start == o.start && end == o.end; }
};

struct MatchLine {
  uint64_t number = 0;  // counted from 1; lines end at '\n' (a final '\n' starts no line)
  std::string text;     // the line's bytes of the document's text, without its '\n'
  bool match = false;   // false: a context line
  // Each occurrence of a positive term, prefix or phrase of the query (not under an
  // exclusion), as the index tokenizes (so `strasse` finds `Straße`): sorted, overlapping and
  // touching ones merged. A phrase across line breaks marks each line holding its words, from
  // its first word there to its last (a line between them without one of its words is no
  // match line).
  std::vector<LineSpan> spans;
};

// Consecutive lines; a gap lies between two groups (grep prints "--" there).
struct LineGroup {
  std::vector<MatchLine> lines;
};

struct LineOptions {
  uint64_t before = 0;  // context lines before each matching line (grep -B)
  uint64_t after = 0;   // context lines after each matching line (grep -A)
  // Where the text comes from, as QueryOptions::document_text (empty: the file, re-read).
  DocumentText document_text;
  // Whether MatchingLinesOf may share its documents with the process's helper thread (then
  // document_text may be called from two threads at once).
  bool parallel = true;
};

// A line cut to at most max_columns code points around its first span.
struct LineWindow {
  size_t start = 0, end = 0;    // the bytes of the line's text kept: [start, end)
  bool cut_before = false;      // text before `start` was cut
  bool cut_after = false;       // text after `end` was cut
  std::vector<LineSpan> spans;  // the spans within the window, relative to `start`
};

// The whole line if it has at most max_columns code points (or max_columns is 0); otherwise a
// window of max_columns code points starting a quarter of the window before the first span (or
// at the line's start, or ending at its end). Cuts fall between UTF-8 code points.
LineWindow TrimLine(const MatchLine& line, size_t max_columns);

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

  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  // Answers `query` exactly: the documents it matches (phrases checked in the documents' text,
  // see QueryOptions::document_text; a document that cannot be decided goes to
  // result->unreadable). A plain conjunction runs bitsift 0.1's path unchanged. Segments
  // without a term the query needs are skipped without reading a row. Returns ok with an empty
  // result when nothing matches, kInvalidArgument for an empty (unparsed) query, kCorrupt
  // (naming the path and the repair) if it reads a damaged chunk or record: never an answer
  // from one.
  Status Query(const ParsedQuery& query, const QueryOptions& options, QueryResult* result) const;
  // Parses `arguments` with ParsedQuery::ParseArguments(arguments, options.syntax) and answers
  // the query as above; a parse error is returned as ParseArguments returns it.
  Status Query(const std::vector<std::string>& arguments, const QueryOptions& options,
               QueryResult* result) const;

  // The lines of document `id`'s text that hold an occurrence of a positive term, prefix or
  // phrase of `query` (the lines of a document the query matched: an exclusion marks no line),
  // in groups with options.before/after context lines. The text is read again as in
  // QueryOptions::document_text: for a file, the text the tokenizer got (decoded to UTF-8, an
  // HTML file's extracted text, a compressed file's content), so line numbers are those of the
  // decoded text. Returns ok (no group if nothing occurs), kStale if the file changed or
  // vanished since indexing (nothing is read from it then), kIoError if it cannot be read,
  // kInvalidArgument for an empty query or an in-memory document without document_text.
  // Precondition: id < document_count().
  Status MatchingLines(uint32_t id, const ParsedQuery& query, const LineOptions& options,
                       std::vector<LineGroup>* groups) const;

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
  // Moves the documents of result->documents whose file vanished to result->vanished and lists
  // those whose file changed in result->changed; looks only at files not in *known (if given),
  // and adds what it saw there. Reads, so verifies, the record and path of every document of
  // result (throws Error(kCorrupt) for a damaged one), as Answer does without check_files.
  void SetAsideStaleFiles(QueryResult* result, std::vector<std::optional<FileState>>* known) const;
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

#endif  // BITSIFT_BITSIFT_H_
