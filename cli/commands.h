// The subcommands of the `bitsift` program. Each returns the process exit code:
// 0 = success / matches found, 1 = no match, 2 = error.
#ifndef BITSIFT_CLI_COMMANDS_H_
#define BITSIFT_CLI_COMMANDS_H_

#include <bitsift/bitsift.h>

#include <functional>
#include <string>
#include <vector>

namespace bitsift::cli {

int RunIndex(const std::vector<std::string>& args);
// Builds or updates an index as BuildIndex does; bitsift-mpi's builds its ranks' shards.
using IndexBuilder = std::function<Status(const std::string& dir, const std::string& index_path,
                                          const IndexOptions& options, IndexSummary* summary)>;
// `PROGRAM index ...` (RunIndex's options and output) with `build` (empty: BuildIndex).
int RunIndexWith(const std::vector<std::string>& args, const char* program,
                 const IndexBuilder& build);
int RunQuery(const std::vector<std::string>& args);
int RunStats(const std::vector<std::string>& args);
int RunCheck(const std::vector<std::string>& args);
int RunCompact(const std::vector<std::string>& args);
// 0 = the index is up to date with its tree, 1 = it is behind (files added, changed, removed).
int RunStatus(const std::vector<std::string>& args);
int RunTokenize(const std::vector<std::string>& args);

}  // namespace bitsift::cli

#endif  // BITSIFT_CLI_COMMANDS_H_
