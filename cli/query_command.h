// `bitsift query` in two steps, so that another program answering the same command line
// (bitsift-mpi query, mpi/) parses and prints exactly as `bitsift query` does and only answers
// differently: ParseQueryCommand, then AnswerQueryCommand with its own QueryAnswerer.
#ifndef BITSIFT_CLI_QUERY_COMMAND_H_
#define BITSIFT_CLI_QUERY_COMMAND_H_

#include <bitsift/bitsift.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/query_output.h"

namespace bitsift::cli {

// A `bitsift query` command line, read and checked.
struct QueryCommand {
  QueryFlags flags;  // what to print, and the QueryOptions
  QuerySyntax syntax = QuerySyntax::kLanguage;
  std::vector<std::string> index_flags;  // the --index paths (resolved), in order
  bool batch = false;                    // --queries
  std::string queries;                   // --queries FILE ('-' = stdin)
  uint64_t jobs = 1;                     // --jobs
  std::vector<std::string> terms;        // the query's arguments (not batch)
  std::string text;                      // they, joined with spaces
  ParsedQuery query;                     // they, parsed
  double parse_us = 0;
};

// Parses the arguments of `PROGRAM query` into *command. Returns an exit code (printed: help,
// a bad option, a query that does not parse) when the command is over, else nullopt.
std::optional<int> ParseQueryCommand(const std::vector<std::string>& args, const char* program,
                                     QueryCommand* command);

// Answers `command`'s query or query file and prints the answers, as `bitsift query` does,
// with `answer` (empty: index.Query; it must be empty when command.jobs > 1). `index` prints
// the documents (paths, lines, JSON); `index_paths` are its index directories. Returns the
// exit code.
int AnswerQueryCommand(const Index& index, const QueryCommand& command,
                       const std::vector<std::string>& index_paths, const QueryAnswerer& answer);

}  // namespace bitsift::cli

#endif  // BITSIFT_CLI_QUERY_COMMAND_H_
