// The query language (README "Query language") parsed, what a query is asked with, and what
// it answers.
#ifndef BITSIFT_QUERY_H_
#define BITSIFT_QUERY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bitsift/document.h"
#include "bitsift/status.h"

namespace bitsift {

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
  // Parses command-line arguments as one query: joined with single spaces and read as Parse
  // reads a string, so {"gpl", "bsd"}, {"gpl bsd"} and Parse("gpl bsd") are the same query,
  // {"gpl", "OR", "bsd"} is an OR, and a phrase needs its double quotes. Errors as Parse, the
  // message naming the argument ("query argument 2: REASON (at byte N)") when there are
  // several.
  static Status ParseArguments(const std::vector<std::string>& arguments, QuerySyntax syntax,
                               ParsedQuery* query, QueryError* error = nullptr);

  // A compact form of the parsed tree for messages and tests: term, prefix*, "a b",
  // (and x y -z), (or x y). "" for a query never parsed.
  std::string ToString() const;
  // Whether it is a conjunction of terms only (no phrase, prefix, OR or exclusion): answered by
  // the signature rows and the forward store alone.
  bool plain() const;
  // Whether it was never parsed successfully (Index::Query refuses it).
  bool empty() const { return rep_ == nullptr; }

  struct Rep;  // opaque: the library's parsed tree

 private:
  friend class Index;
  std::shared_ptr<const Rep> rep_;
};

// The collection statistics BM25 reads (QueryOptions::rank): for a collection split between
// processes (bitsift-mpi: each holds some shards), each process gets its own part's with
// Index::RankStatisticsOf, the parts are summed field by field (documents, length, and each
// part_documents[i]) and every process ranks with the sum (QueryOptions::statistics), so that
// a document's score is the one a single index of the whole collection gives it.
struct RankStatistics {
  uint64_t documents = 0;  // live documents (N)
  uint64_t length = 0;     // their lengths (words), summed
  // The documents each scoring part of the query (a term, phrase or prefix outside exclusions,
  // each once, in the order the query first names it) matches: its df.
  std::vector<uint64_t> part_documents;
};

struct QueryOptions {
  // Return at most this many documents (the first in path order, or the best with rank or
  // any); 0 = all.
  uint64_t limit = 0;
  // Rank the answer by BM25, best first (QueryResult::scores), instead of path order. A
  // document's score is the sum, over the query's terms, phrases and prefixes it matches (each
  // as many times as the query names it), of idf x tf (k1 + 1) / (tf + k1 (1 - b + b len /
  // avglen)), k1 = 1.2, b = 0.75, idf = ln((N - df + 0.5) / (df + 0.5)) floored at 1e-6 (as
  // FTS5's bm25()); N, df and avglen are taken over every live document of every index
  // opened, so a score does not depend on how documents are split into segments or indexes.
  // tf: a term's occurrences in the document (its parts' too: `stdio` counts in `stdio.h`); a
  // phrase or a prefix counts once. len: the document's words.
  bool rank = false;
  // Make the query's top-level parts optional: documents matching at least one of them are
  // returned (exclusions still exclude), ranked as with `rank` (which it implies). For a
  // pasted question or a list of keywords.
  bool any = false;
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
  // stream of queries keeps a second core busy: docs/design.md, "Segments and indexes as
  // one"), and the texts of a phrase's many candidates are read, and a ranked query's many
  // candidates scored, on TBB's threads. Set it to
  // false when the program answers queries on every core already (`bitsift query --jobs N`).
  bool parallel = true;
  // With rank or any: the statistics to score with instead of this index's own (not null:
  // summed over every part of a split collection, RankStatistics). Its part_documents must
  // have one entry per scoring part of the query (kInvalidArgument otherwise).
  const RankStatistics* statistics = nullptr;
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
  // Matching document ids: index by index in the order opened, by path within an index; with
  // QueryOptions::rank or any, best first (ties in that order).
  std::vector<uint32_t> documents;
  // With rank or any: the BM25 score of each of `documents`, in the same order.
  std::vector<double> scores;
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

}  // namespace bitsift

#endif  // BITSIFT_QUERY_H_
