// `bitsift index DIR`: build or update the index of a directory.
#include <bitsift/bitsift.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"

namespace bitsift::cli {

namespace {

void PrintSummary(const IndexSummary& summary, const std::string& index_path) {
  double secs = summary.seconds > 0 ? summary.seconds : 1e-9;
  std::printf("%s %s in %.2f s: %" PRIu64 " added, %" PRIu64 " changed, %" PRIu64
              " removed, %" PRIu64 " unchanged; read %s (%.1f MB/s)\n",
              summary.rebuilt ? "indexed" : "updated",
              Plural(summary.documents, "document", "documents").c_str(), summary.seconds,
              summary.added, summary.changed, summary.removed, summary.unchanged,
              HumanBytes(summary.input_bytes).c_str(), summary.input_bytes / secs / 1e6);
  std::printf("skipped:");
  if (summary.skipped.empty()) std::printf(" none");
  for (size_t i = 0; i < summary.skipped.size(); ++i) {
    std::printf("%s %s %" PRIu64, i ? "," : "", summary.skipped[i].first.c_str(),
                summary.skipped[i].second);
  }
  std::printf(
      "\nsegments: %s written, %s, %s live\n", std::to_string(summary.segments_written).c_str(),
      Plural(summary.merges, "merge", "merges").c_str(), std::to_string(summary.segments).c_str());
  std::printf("index %s: %s (%.1f bits per document)\n", index_path.c_str(),
              HumanBytes(summary.index_bytes).c_str(),
              summary.documents ? 8.0 * summary.index_bytes / summary.documents : 0.0);
}

// The `index` options that choose the documents and how they are read (README "What is
// indexed"): added to `d`, and read back into `options` after parsing.
void AddDocumentOptions(po::options_description& d) {
  d.add_options()("encoding", po::value<std::string>()->value_name("NAME"),
                  "read every file in this encoding (default: detect per file)")(
      "hidden", "include files and directories whose names start with '.'")(
      "no-ignore", "do not apply .gitignore, .ignore and .git/info/exclude files")(
      "glob,g", po::value<std::vector<std::string>>()->composing()->value_name("GLOB"),
      "index only files matching GLOB; !GLOB excludes (repeatable, the last match wins)")(
      "max-decompressed-size", po::value<std::string>()->default_value("256M"),
      "skip compressed files whose content is larger than this (bytes, or 512K, 256M, 1G)")(
      "keep-diacritics",
      "keep diacritics in terms: José is found by josé, not by jose (default: folded; kept "
      "by later updates, --rebuild without it folds again)")(
      "stem",
      "index English stems too: an unquoted query word then finds its other forms (model finds "
      "models); kept by later updates, --rebuild without it drops them")(
      "no-positions",
      "keep no positions: a smaller index whose phrases read every candidate's text (about "
      "10x slower); kept by later updates, --rebuild without it stores them again");
}

// Returns false after reporting a bad value on stderr.
// Sets the document options the command line gives; the others keep their values in
// `options` (the defaults, or the settings of the index being updated).
bool ReadDocumentOptions(const po::variables_map& vm, IndexOptions* options) {
  if (vm.count("encoding")) {
    options->encoding = vm["encoding"].as<std::string>();
    if (options->encoding.empty()) {
      Fail(
          "--encoding needs a name ICU knows (cp1251, GB18030, Shift_JIS, ...); without it each "
          "file's encoding is detected (--rebuild drops an encoding the index was built with)");
      return false;
    }
  }
  if (vm.count("hidden")) options->hidden = true;
  if (vm.count("no-ignore")) options->no_ignore = true;
  if (vm.count("keep-diacritics")) options->keep_diacritics = true;
  if (vm.count("stem")) options->stem = true;
  if (vm.count("no-positions")) options->positions = false;
  if (vm.count("glob")) options->globs = vm["glob"].as<std::vector<std::string>>();
  std::optional<uint64_t> limit = BytesOption(vm, "max-decompressed-size", 1, "1");
  if (limit && !vm["max-decompressed-size"].defaulted()) options->max_decompressed_bytes = *limit;
  return limit.has_value();
}

}  // namespace

int RunIndex(const std::vector<std::string>& args) { return RunIndexWith(args, "bitsift", {}); }

int RunIndexWith(const std::vector<std::string>& args, const char* program,
                 const IndexBuilder& build) {
  const std::string usage_text =
      std::string("usage: ") + program +
      " index DIR [--index PATH] [--rebuild] [--memory BYTES] [--fp-rate P] "
      "[--sparse-max-df N] [--threads N] [--max-file-size BYTES] [--verbose]\n"
      "                         [--encoding NAME] [--hidden] [--no-ignore] [--glob GLOB]... "
      "[--max-decompressed-size BYTES] [--keep-diacritics] [--stem]\n"
      "                         [--no-positions]";
  const char* usage = usage_text.c_str();
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::string>(),
      "index directory to create or update (default DIR/.bitsift)")(
      "rebuild", "index every file again instead of updating the index")(
      "memory", po::value<std::string>()->default_value("256MiB"),
      "memory budget for building: a segment is written when this is reached (e.g. 512M, 1G)")(
      "fp-rate", po::value<std::string>()->default_value("0.01"),
      "per-term false-positive target of the signatures, from 1e-9 to below 1")(
      "sparse-max-df", po::value<std::string>()->default_value("1024"),
      "terms in at most N documents of a segment (or 1/128 of its documents, if more) get "
      "their document list instead of signature bits (0 = none)")(
      "max-file-size", po::value<std::string>()->default_value("256M"),
      "skip files larger than this (bytes, or with a unit: 512K, 256M, 1G)")(
      "verbose,v", "name every skipped file on stderr")("quiet,q", "no progress, no summary");
  AddThreadsFlag(visible);
  AddDocumentOptions(visible);
  po::options_description all;
  all.add(visible).add_options()("dir", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("dir", -1);
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, all, pos, vm)) return *code;
  if (!vm.count("dir") || vm["dir"].as<std::vector<std::string>>().size() != 1) {
    return Fail(std::string("index needs exactly one DIR\n") + usage);
  }
  const std::string dir = vm["dir"].as<std::vector<std::string>>()[0];
  const std::string index_path =
      vm.count("index") ? vm["index"].as<std::string>() : dir + "/.bitsift";
  const bool verbose = vm.count("verbose") > 0, quiet = vm.count("quiet") > 0;
  IndexOptions options;
  options.rebuild = vm.count("rebuild") > 0;
  // An update applies the settings the index was built with, except those given here (a
  // different setting rebuilds); --rebuild starts from the defaults.
  if (!options.rebuild) (void)ReadIndexOptions(index_path, &options);
  std::optional<double> fp_rate = FpRateOption(vm);
  std::optional<uint64_t> max_file_size = BytesOption(vm, "max-file-size", 1, "1");
  std::optional<uint64_t> memory = BytesOption(vm, "memory", 16ULL << 20, "16M");
  if (!fp_rate || !max_file_size || !memory) return kExitError;
  std::optional<unsigned> threads = ThreadsOption(vm);
  if (!threads) return kExitError;
  std::optional<uint64_t> sparse_max_df =
      WholeOption(vm, "sparse-max-df", 0, 1u << 20, "a document count, 0 = none");
  if (!sparse_max_df) return kExitError;
  if (!vm["fp-rate"].defaulted()) options.fp_rate = *fp_rate;
  if (!vm["sparse-max-df"].defaulted())
    options.sparse_max_df = static_cast<uint32_t>(*sparse_max_df);
  options.threads = *threads;
  if (!vm["max-file-size"].defaulted()) options.max_file_size = *max_file_size;
  if (!ReadDocumentOptions(vm, &options)) return kExitError;
  options.memory_budget = *memory;
  const bool tty = !quiet && ::isatty(STDERR_FILENO);
  if (tty) {
    options.progress = [](const IndexProgress& p) {
      double rate = p.seconds > 0 ? p.bytes_done / p.seconds : 0;
      double left =
          p.files_done > 0 ? p.seconds * (p.files_total - p.files_done) / p.files_done : 0;
      std::fprintf(
          stderr, "\rindexing: %" PRIu64 "/%" PRIu64 " files, %s/s, %.1f s elapsed, ~%.0f s left  ",
          p.files_done, p.files_total, HumanBytes(rate).c_str(), p.seconds, left);
    };
  }
  options.on_skip = [verbose, tty](const std::string& path, const std::string& reason,
                                   const std::string& detail) {
    bool warn = reason == "unreadable" || reason == "vanished" || reason == "decompression-limit" ||
                reason == "bad-compressed" || reason == "bad-document";
    if (!warn && !verbose) return;
    std::fprintf(stderr, "%sbitsift: %s: skipped %s (%s%s%s)\n", tty ? "\r" : "",
                 warn ? "warning" : "note", path.c_str(), reason.c_str(),
                 detail.empty() ? "" : ": ", detail.c_str());
  };
  IndexSummary summary;
  Status s = build ? build(dir, index_path, options, &summary)
                   : BuildIndex(dir, index_path, options, &summary);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!s.ok()) return Fail(s.message());
  if (!quiet && !summary.why_rebuilt.empty()) {
    std::fprintf(stderr, "bitsift: note: indexed every file again: %s\n",
                 summary.why_rebuilt.c_str());
  }
  if (!quiet) PrintSummary(summary, index_path);
  return kExitMatch;
}

}  // namespace bitsift::cli
