// `bitsift`: the command line. Parses the subcommand and hands the rest to cli/commands.cc.
#include <bitsift/version.h>
#include <malloc.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace {

const char kUsage[] =
    "usage: bitsift <command> [options]\n"
    "\n"
    "commands:\n"
    "  index DIR      index or update the documents under DIR (default index: DIR/.bitsift)\n"
    "  query TERM...  print the documents that contain every term\n"
    "  stats          describe an index: segments, bands, widths, fill, sizes\n"
    "  compact        merge an index's segments into one, dropping deleted documents\n"
    "  status         compare an index with its tree: files added, changed, removed\n"
    "  check          verify an index completely (exit 0 = sound, 2 = damaged)\n"
    "  tokenize TEXT  print the terms of TEXT under the token contract\n"
    "\n"
    "'bitsift <command> --help' describes a command's options; 'bitsift --version' prints the\n"
    "version.\n"
    "exit status: 0 = success or matches found, 1 = no match, 2 = error\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // A file-size limit (ulimit -f) must surface as a write error (EFBIG) that leaves the old
  // index in place and exits 2, not as a SIGXFSZ that kills the process.
  std::signal(SIGXFSZ, SIG_IGN);
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "--version" || command == "version") {
    std::printf("bitsift %s\n", bitsift::Version());
    return 0;
  }
  if (command == "index") return bitsift::cli::RunIndex(args);
  if (command == "query") {
    // Keep freed memory for the next query instead of returning it to the kernel. A query's
    // vectors (candidates, per-segment hits, the merged answer) run to hundreds of KB; glibc
    // serves such blocks with mmap or trims them off the heap top when freed, so the next
    // query page-faults them in again: ~20k minor faults over the 3,204 queries of
    // linux-files, and a fault costs several microseconds in a virtual machine. With these
    // two settings the same run takes ~3k faults, and the mean query 107 -> 95 us (one
    // segment) and 300 -> 160 us (two segments): docs/design.md, "A query's fixed costs".
    // Build and merge processes keep glibc's defaults: they trim on purpose (memory budget).
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    // A query process ends here: stdout and stderr are flushed and the process exits without
    // destructors (RunQuery leaves its index mapped), so the kernel takes the address space
    // down in one pass instead of the segments being unmapped one by one and TBB's threads
    // stopped first: 0.6-1 ms of a one-shot query on linux-files.
    const int code = bitsift::cli::RunQuery(args);
    std::fflush(nullptr);
    std::_Exit(code);
  }
  if (command == "stats") return bitsift::cli::RunStats(args);
  if (command == "check") return bitsift::cli::RunCheck(args);
  if (command == "compact") return bitsift::cli::RunCompact(args);
  if (command == "status") return bitsift::cli::RunStatus(args);
  if (command == "tokenize") return bitsift::cli::RunTokenize(args);
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "bitsift: error: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return 2;
}
