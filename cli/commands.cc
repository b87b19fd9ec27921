#include "cli/commands.h"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "bitsift/bitsift.h"

namespace po = boost::program_options;

namespace bitsift::cli {
namespace {

constexpr int kExitMatch = 0, kExitNoMatch = 1, kExitError = 2;

int Fail(const std::string& message) {
  std::fprintf(stderr, "bitsift: error: %s\n", message.c_str());
  return kExitError;
}

// Parses args into vm; returns an exit code if the command should stop (help or a bad flag).
std::optional<int> Parse(const std::vector<std::string>& args, const char* usage,
                         const po::options_description& visible, const po::options_description& all,
                         const po::positional_options_description& positional,
                         po::variables_map& vm) {
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << visible;
      return kExitMatch;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "bitsift: error: %s\n%s\n", e.what(), usage);
    return kExitError;
  }
  return std::nullopt;
}

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

// A string as a JSON string literal. Bytes that are not valid UTF-8 become U+FFFD.
std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
      ++i;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else {
      // Validate one UTF-8 sequence (shortest form, no surrogates, <= U+10FFFF).
      size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
      bool ok = len > 0 && c <= 0xF4 && i + len <= s.size();
      for (size_t j = 1; ok && j < len; ++j)
        ok = (static_cast<unsigned char>(s[i + j]) & 0xC0) == 0x80;
      if (ok && len == 3) {
        unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
      }
      if (ok && len == 4) {
        unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
        ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
      }
      if (ok) {
        out.append(s.substr(i, len));
        i += len;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
    }
  }
  return out + "\"";
}

// The path printed for a document: relative to its index's root with one index open, joined
// to the root with several (so lines stay unambiguous).
std::string PrintedPath(const DocumentInfo& d, bool several) {
  if (!several || d.root.empty()) return d.path;
  return d.root == "/" ? "/" + d.path : d.root + "/" + d.path;
}

std::string DocumentJson(const Index& index, uint32_t id, const std::string& prefix, bool several) {
  DocumentInfo d = index.document(id);
  std::ostringstream out;
  out << "{" << prefix << "\"path\":" << JsonString(PrintedPath(d, several));
  if (several) out << ",\"index\":" << d.index;
  out << ",\"size\":" << d.size << ",\"mtime_ns\":" << d.mtime_ns << ",\"terms\":" << d.terms
      << "}";
  return out.str();
}

std::string StatsJson(const QueryStats& s, uint64_t matches, const std::string& prefix) {
  char buf[640];
  std::snprintf(buf, sizeof(buf),
                "{%s\"terms\":%" PRIu64 ",\"matches\":%" PRIu64 ",\"candidates\":%" PRIu64
                ",\"false_positives\":%" PRIu64 ",\"rows_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64
                ",\"segments_searched\":%" PRIu64 ",\"segments_skipped\":%" PRIu64
                ",\"parse_us\":%.1f,\"and_us\":%.1f,\"verify_us\":%.1f,\"total_us\":%.1f}",
                prefix.c_str(), s.terms, matches, s.candidates, s.false_positives, s.rows_read,
                s.bytes_read, s.segments_searched, s.segments_skipped, s.parse_us, s.and_us,
                s.verify_us, s.total_us);
  return buf;
}

void PrintStatsText(const QueryStats& s, uint64_t matches) {
  std::fprintf(stderr,
               "terms %" PRIu64 ", matches %" PRIu64 ", candidates %" PRIu64
               ", false positives removed %" PRIu64
               "\n"
               "rows read %" PRIu64 ", bytes read %" PRIu64 ", segments searched %" PRIu64
               ", skipped %" PRIu64
               "\n"
               "time: parse %.1f us, and %.1f us, verify %.1f us, total %.1f us\n",
               s.terms, matches, s.candidates, s.false_positives, s.rows_read, s.bytes_read,
               s.segments_searched, s.segments_skipped, s.parse_us, s.and_us, s.verify_us,
               s.total_us);
}

struct QueryFlags {
  bool count = false, json = false, stats = false;
  bool several = false;  // more than one index open
  uint64_t limit = 0;
};

// Runs one query and prints its output; `line` > 0 in batch mode. Returns matches or nullopt
// on error (already reported).
std::optional<uint64_t> AnswerOne(const Index& index, const std::vector<std::string>& terms,
                                  const QueryFlags& f, uint64_t line) {
  QueryResult result;
  Status s = index.Query(terms, QueryOptions{f.limit}, &result);
  if (!s.ok()) {
    if (line > 0) {
      std::fprintf(stderr, "bitsift: error: query line %" PRIu64 ": %s\n", line,
                   s.message().c_str());
    } else {
      Fail(s.message());
    }
    return std::nullopt;
  }
  const std::string json_prefix = line > 0 ? "\"line\":" + std::to_string(line) + "," : "";
  const std::string text_prefix = line > 0 ? std::to_string(line) + "\t" : "";
  const uint64_t n = result.documents.size();
  if (f.count) {
    if (f.json) {
      std::printf("{%s\"count\":%" PRIu64 "}\n", json_prefix.c_str(), n);
    } else {
      std::printf("%s%" PRIu64 "\n", text_prefix.c_str(), n);
    }
  } else {
    for (uint32_t id : result.documents) {
      if (f.json) {
        std::printf("%s\n", DocumentJson(index, id, json_prefix, f.several).c_str());
      } else {
        std::string path = PrintedPath(index.document(id), f.several);
        std::fwrite(text_prefix.data(), 1, text_prefix.size(), stdout);
        std::fwrite(path.data(), 1, path.size(), stdout);
        std::fputc('\n', stdout);
      }
    }
  }
  if (f.stats) {
    if (line > 0) {
      std::fprintf(stderr, "%s\n", StatsJson(result.stats, n, json_prefix).c_str());
    } else {
      PrintStatsText(result.stats, n);
    }
  }
  return n;
}

// Splits a query line on whitespace into arguments.
std::vector<std::string> SplitLine(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Status OpenIndex(const std::vector<std::string>& flags, std::unique_ptr<Index>* index) {
  std::vector<std::string> paths = flags;
  if (paths.empty()) {
    std::string path;
    Status s = Index::Find(".", &path);
    if (!s.ok()) return s;
    paths.push_back(path);
  }
  return Index::Open(paths, index);
}

std::vector<std::string> IndexFlags(const po::variables_map& vm) {
  return vm.count("index") ? vm["index"].as<std::vector<std::string>>()
                           : std::vector<std::string>{};
}

// Parses a byte count with an optional unit: 300000000, 512K, 256M, 256MiB, 1G, 1GB (powers of
// 1024). Returns nullopt if it is not one.
std::optional<uint64_t> ParseBytes(const std::string& text) {
  size_t end = 0;
  uint64_t v = 0;
  try {
    if (text.empty() || text[0] == '-') return std::nullopt;
    v = std::stoull(text, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string unit = text.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  uint64_t mult = 1;
  if (unit.empty() || unit == "B") {
    mult = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    mult = 1ULL << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    mult = 1ULL << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    mult = 1ULL << 30;
  } else {
    return std::nullopt;
  }
  if (v > UINT64_MAX / mult) return std::nullopt;
  return v * mult;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

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
      "max-decompressed-size", po::value<uint64_t>()->default_value(256ULL << 20),
      "skip compressed files whose content is larger than this many bytes");
}

void ReadDocumentOptions(const po::variables_map& vm, IndexOptions* options) {
  if (vm.count("encoding")) options->encoding = vm["encoding"].as<std::string>();
  options->hidden = vm.count("hidden") > 0;
  options->no_ignore = vm.count("no-ignore") > 0;
  if (vm.count("glob")) options->globs = vm["glob"].as<std::vector<std::string>>();
  options->max_decompressed_bytes = vm["max-decompressed-size"].as<uint64_t>();
}

}  // namespace

int RunIndex(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift index DIR [--index PATH] [--rebuild] [--memory BYTES] [--fp-rate P] "
      "[--threads N] [--max-file-size BYTES] [--verbose]\n"
      "                         [--encoding NAME] [--hidden] [--no-ignore] [--glob GLOB]... "
      "[--max-decompressed-size BYTES]";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::string>(),
      "index directory to create or update (default DIR/.bitsift)")(
      "rebuild", "index every file again instead of updating the index")(
      "memory", po::value<std::string>()->default_value("256MiB"),
      "memory budget for building: a segment is written when this is reached (e.g. 512M, 1G)")(
      "fp-rate", po::value<double>()->default_value(0.01),
      "per-term false-positive target of the signatures, in (0, 1)")(
      "threads", po::value<unsigned>()->default_value(0), "worker threads (0 = one per core)")(
      "max-file-size", po::value<uint64_t>()->default_value(256ULL << 20),
      "skip files larger than this many bytes")("verbose,v", "name every skipped file on stderr")(
      "quiet,q", "no progress, no summary");
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
  options.fp_rate = vm["fp-rate"].as<double>();
  options.threads = vm["threads"].as<unsigned>();
  options.max_file_size = vm["max-file-size"].as<uint64_t>();
  options.rebuild = vm.count("rebuild") > 0;
  ReadDocumentOptions(vm, &options);
  if (!(options.fp_rate > 0 && options.fp_rate < 1)) return Fail("--fp-rate must be in (0, 1)");
  std::optional<uint64_t> memory = ParseBytes(vm["memory"].as<std::string>());
  if (!memory || *memory < (16ULL << 20)) {
    return Fail("--memory must be a byte count of at least 16M (e.g. 256M, 1G), got '" +
                vm["memory"].as<std::string>() + "'");
  }
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
                reason == "bad-compressed";
    if (!warn && !verbose) return;
    std::fprintf(stderr, "%sbitsift: %s: skipped %s (%s%s%s)\n", tty ? "\r" : "",
                 warn ? "warning" : "note", path.c_str(), reason.c_str(),
                 detail.empty() ? "" : ": ", detail.c_str());
  };
  IndexSummary summary;
  Status s = BuildIndex(dir, index_path, options, &summary);
  if (tty) std::fputs("\r\033[K", stderr);
  if (!s.ok()) return Fail(s.message());
  if (!quiet) PrintSummary(summary, index_path);
  return kExitMatch;
}

int RunQuery(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift query [--index PATH] [--count] [--json] [--limit N] "
      "[--stats] (TERM... | --queries FILE)";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::vector<std::string>>(),
      "index directory (default: .bitsift here or in a parent); repeat to search several as one")(
      "count,c", "print the number of matches only")("json", "print one JSON object per match")(
      "limit", po::value<uint64_t>()->default_value(0), "print at most N matches (0 = all)")(
      "stats", "print candidates, false positives, rows and bytes read, and timings on stderr")(
      "queries", po::value<std::string>(),
      "answer one query per line of FILE ('-' = stdin); output lines start with the line number");
  po::options_description all;
  all.add(visible).add_options()("term", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("term", -1);
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, all, pos, vm)) return *code;
  QueryFlags f;
  f.count = vm.count("count") > 0;
  f.json = vm.count("json") > 0;
  f.stats = vm.count("stats") > 0;
  f.limit = vm["limit"].as<uint64_t>();
  std::vector<std::string> terms;
  if (vm.count("term")) terms = vm["term"].as<std::vector<std::string>>();
  const bool batch = vm.count("queries") > 0;
  if (batch == !terms.empty()) {
    return Fail(
        std::string(batch ? "give either TERMs or --queries, not both\n" : "no query terms\n") +
        usage);
  }
  std::unique_ptr<Index> index;
  Status s = OpenIndex(IndexFlags(vm), &index);
  if (!s.ok()) return Fail(s.message());
  f.several = IndexFlags(vm).size() > 1;
  if (!batch) {
    std::optional<uint64_t> n = AnswerOne(*index, terms, f, 0);
    if (!n) return kExitError;
    return *n > 0 ? kExitMatch : kExitNoMatch;
  }
  const std::string file = vm["queries"].as<std::string>();
  std::ifstream in_file;
  if (file != "-") {
    in_file.open(file);
    if (!in_file) return Fail(file + ": cannot open query file");
  }
  std::istream& in = file == "-" ? std::cin : in_file;
  bool any_match = false, any_error = false;
  uint64_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::vector<std::string> words = SplitLine(line);
    if (words.empty()) continue;  // blank lines are not queries
    std::optional<uint64_t> n = AnswerOne(*index, words, f, line_no);
    if (!n) {
      any_error = true;
    } else if (*n > 0) {
      any_match = true;
    }
  }
  std::fflush(stdout);
  if (any_error) return kExitError;
  return any_match ? kExitMatch : kExitNoMatch;
}

// For a command whose only option is --index: parses args and opens the index. Returns the
// exit code when the command is over (help printed, bad arguments, no usable index).
std::optional<int> ParseAndOpenIndex(const std::vector<std::string>& args, const char* usage,
                                     std::unique_ptr<Index>* index) {
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::vector<std::string>>(),
      "index directory (default: .bitsift here or in a parent); may be repeated");
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return code;
  Status s = OpenIndex(IndexFlags(vm), index);
  if (!s.ok()) return Fail(s.message());
  return std::nullopt;
}

int RunStats(const std::vector<std::string>& args) {
  std::unique_ptr<Index> index;
  if (auto code = ParseAndOpenIndex(args, "usage: bitsift stats [--index PATH]", &index)) {
    return *code;
  }
  IndexStats st = index->Stats();
  std::printf("index      %s\nroot       %s\nicu        %s\ndocuments  %" PRIu64
              "\nterms      %" PRIu64 " (%" PRIu64
              " with exact rows; summed over segments)\nfp target  %g\nfiles      %" PRIu64
              " bytes (%.1f bits per document)\n",
              index->path().c_str(), st.root.c_str(), st.icu_version.c_str(), st.documents,
              st.terms, st.exact_terms, st.fp_rate, st.file_bytes,
              st.documents ? 8.0 * st.file_bytes / st.documents : 0.0);
  std::printf("\nsegments: %zu\n%16s %10s %10s %10s %6s %14s\n", st.segments.size(), "file",
              "documents", "deleted", "terms", "bands", "bytes");
  for (const SegmentStats& seg : st.segments) {
    std::printf("%16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6" PRIu64 " %14" PRIu64 "\n",
                seg.file.c_str(), seg.documents, seg.deleted, seg.terms, seg.bands, seg.file_bytes);
  }
  std::printf("\nbands: %zu\n%6s %10s %3s %10s %10s %7s %12s\n", st.bands.size(), "band", "width",
              "k", "documents", "max terms", "fill", "expected fp");
  for (size_t b = 0; b < st.bands.size(); ++b) {
    const BandStats& bs = st.bands[b];
    std::printf("%6zu %10" PRIu64 " %3u %10" PRIu64 " %10" PRIu64 " %7.3f %12.5f\n", b, bs.width,
                bs.k, bs.documents, bs.max_terms, bs.fill_ratio, bs.expected_fp_rate);
  }
  std::printf("\nparts:\n");
  for (const auto& [name, bytes] : st.section_bytes) {
    std::printf("  %-16s %12" PRIu64 " bytes  %5.1f%%\n", name.c_str(), bytes,
                st.file_bytes ? 100.0 * bytes / st.file_bytes : 0.0);
  }
  return kExitMatch;
}

int RunCheck(const std::vector<std::string>& args) {
  std::unique_ptr<Index> index;
  if (auto code = ParseAndOpenIndex(args, "usage: bitsift check [--index PATH]", &index)) {
    return *code;
  }
  Status s = index->Check();
  if (!s.ok()) return Fail(s.message());
  std::printf("%s: ok (%s)\n", index->path().c_str(),
              Plural(index->live_document_count(), "document", "documents").c_str());
  return kExitMatch;
}

int RunCompact(const std::vector<std::string>& args) {
  const char* usage = "usage: bitsift compact [--index PATH] [--threads N] [--quiet]";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::string>(), "index directory (default: .bitsift here or in a parent)")(
      "threads", po::value<unsigned>()->default_value(0), "worker threads (0 = one per core)")(
      "quiet,q", "no summary");
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return *code;
  std::string path;
  if (vm.count("index")) {
    path = vm["index"].as<std::string>();
  } else if (Status s = Index::Find(".", &path); !s.ok()) {
    return Fail(s.message());
  }
  IndexOptions options;
  options.threads = vm["threads"].as<unsigned>();
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

int RunTokenize(const std::vector<std::string>& args) {
  const char* usage = "usage: bitsift tokenize (--file PATH | TEXT...)";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("file", po::value<std::string>(),
                                                    "tokenize this file ('-' = stdin)");
  po::options_description all;
  all.add(visible).add_options()("text", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("text", -1);
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, all, pos, vm)) return *code;
  std::string text;
  if (vm.count("file")) {
    const std::string file = vm["file"].as<std::string>();
    std::ifstream in_file;
    if (file != "-") {
      in_file.open(file, std::ios::binary);
      if (!in_file) return Fail(file + ": cannot open");
    }
    std::istream& in = file == "-" ? std::cin : in_file;
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  } else if (vm.count("text")) {
    for (const std::string& t : vm["text"].as<std::vector<std::string>>()) text += t + " ";
  } else {
    return Fail(std::string("nothing to tokenize\n") + usage);
  }
  std::vector<std::string> tokens;
  Status s = Tokenize(text, &tokens);
  if (!s.ok()) return Fail(s.message());
  for (const std::string& t : tokens) std::printf("%s\n", t.c_str());
  return tokens.empty() ? kExitNoMatch : kExitMatch;
}

}  // namespace bitsift::cli
