// How `bitsift query` prints its answers: paths, JSON, counts, matching lines with colour,
// statistics, and the stale hits of a run, reported once at its end.
#ifndef BITSIFT_CLI_QUERY_OUTPUT_H_
#define BITSIFT_CLI_QUERY_OUTPUT_H_

#include <bitsift/bitsift.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace bitsift::cli {

// The query command's choices of what to print and how.
struct QueryFlags {
  bool count = false, json = false, stats = false;
  bool null = false;     // NUL after each path instead of a newline
  bool several = false;  // more than one index open
  std::string cwd;       // printed paths are relative to it (ShellPath)
  QueryOptions options;
  // --lines: matching lines instead of paths.
  bool lines = false;
  bool color = false;        // ANSI colours (--color, NO_COLOR, a terminal)
  LineOptions context;       // -A/-B/-C, and --snippet-lines when ranked
  uint64_t max_columns = 0;  // --max-columns (0 = whole lines)
};

// The hits of a run whose files changed or vanished since indexing (each once, whatever the
// number of queries that returned it), reported once at the end.
struct StaleHits {
  std::set<uint32_t> changed, vanished;
  // Matches that could not be decided (a phrase to check in a file that cannot be read) or
  // whose lines could not be read, with the reason.
  std::map<uint32_t, std::string> unreadable;
  bool lines_skipped = false;   // a changed file's lines were not printed (--lines)
  bool phrase_skipped = false;  // a changed or vanished file was not answered (a phrase to check)
  // Adds document `id`, which could not be used, where its file's state puts it.
  void Add(const Index& index, uint32_t id, const std::string& reason) {
    switch (index.file_state(id)) {
      case FileState::kChanged:
        changed.insert(id);
        break;
      case FileState::kVanished:
        vanished.insert(id);
        break;
      default:
        unreadable.emplace(id, reason);
    }
  }
};

// Prints the stale hits on stderr, once (nothing if there are none): the counts, up to kListed
// paths of each kind, and the command that brings each index concerned up to date.
// `index_paths` are the indexes opened, in order.
void ReportStale(const Index& index, const StaleHits& stale, const std::string& cwd,
                 const std::vector<std::string>& index_paths);

// Prints the output of one query, answered with status `s` and `result`; `line` > 0 in batch
// mode. Stale hits go to *stale. Returns the matches printed (or counted) or nullopt on error
// (reported here).
std::optional<uint64_t> PrintAnswer(const Index& index, const ParsedQuery& query,
                                    const QueryFlags& f, uint64_t line, const Status& s,
                                    const QueryResult& result, StaleHits* stale);

// Adds the time the query's text took to parse to its statistics: Index::Query(ParsedQuery)
// times what follows the parse, and --stats reports the whole query, as the peers' benchmarks
// time theirs (from the text to the complete list of matches).
void ChargeParse(double parse_us, QueryResult* result);

// Answers a query for the command that prints it: `query`, parsed from `text` (a line of a
// --queries file, or the command line's arguments joined with spaces), with `options`, into
// *result, as Index::Query does. `bitsift query` answers from its index; bitsift-mpi asks
// every rank (mpi/).
using QueryAnswerer = std::function<Status(const ParsedQuery& query, const std::string& text,
                                           const QueryOptions& options, QueryResult* result)>;

// Answers one query (with `answer`, or index.Query if it is empty) and prints it
// (PrintAnswer). line: its line in a --queries file, 0 for the command line's query.
std::optional<uint64_t> AnswerOne(const Index& index, const QueryAnswerer& answer,
                                  const ParsedQuery& query, const std::string& text,
                                  double parse_us, const QueryFlags& f, uint64_t line,
                                  StaleHits* stale);

// Reports a query that does not parse: the reason, the text with a caret under the place (for
// a query of one line), and how to search for the characters literally. `line` > 0: a line of
// a --queries file.
void ReportParseError(const Status& s, const QueryError& e, const std::string& text, uint64_t line);

// Times ParsedQuery::Parse (or ParseArguments) as `parse`; the microseconds into *us.
template <typename ParseFn>
Status TimedParse(const ParseFn& parse, double* us) {
  const auto start = std::chrono::steady_clock::now();
  Status s = parse();
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace bitsift::cli

#endif  // BITSIFT_CLI_QUERY_OUTPUT_H_
