// `bitsift compact`: merge an index's segments into one, dropping deleted documents.
#include <bitsift/bitsift.h>

#include <cstdio>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

int RunCompact(const std::vector<std::string>& args) {
  const char* usage = "usage: bitsift compact [--index PATH] [--threads N] [--quiet]";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("quiet,q", "no summary");
  AddIndexFlag(visible, IndexFlag::kOne);
  AddThreadsFlag(visible);
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return *code;
  std::string path;
  if (Status s = IndexPathOption(vm, &path); !s.ok()) return Fail(s.message());
  std::optional<unsigned> threads = ThreadsOption(vm);
  if (!threads) return kExitError;
  IndexOptions options;
  options.threads = *threads;
  IndexSummary summary;
  Status s = CompactIndex(path, options, &summary);
  if (!s.ok()) return Fail(s.message());
  if (!vm.count("quiet")) {
    std::printf("compacted %s in %.2f s: %s, %s, %s\n", path.c_str(), summary.seconds,
                Plural(summary.documents, "document", "documents").c_str(),
                Plural(summary.segments, "segment", "segments").c_str(),
                HumanBytes(summary.index_bytes).c_str());
  }
  return kExitMatch;
}

}  // namespace bitsift::cli
