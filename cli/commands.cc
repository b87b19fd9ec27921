#include "cli/commands.h"

#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "bitsift/bitsift.h"
#include "util/files.h"
#include "util/memory.h"
#include "util/utf8.h"

namespace po = boost::program_options;

namespace bitsift::cli {
namespace {

constexpr int kExitMatch = 0, kExitNoMatch = 1, kExitError = 2;

int Fail(const std::string& message) {
  std::fprintf(stderr, "bitsift: error: %s\n", message.c_str());
  return kExitError;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// The first path option (--index, --in) given as an empty string, or nullptr: '' names no file,
// and would otherwise be reported later as the current directory, which exists.
const char* EmptyPathOption(const po::variables_map& vm) {
  for (const char* name : {"index", "in"}) {
    if (!vm.count(name)) continue;
    const boost::any& value = vm[name].value();
    if (const auto* one = boost::any_cast<std::string>(&value); one != nullptr && one->empty()) {
      return name;
    }
    if (const auto* many = boost::any_cast<std::vector<std::string>>(&value); many != nullptr) {
      for (const std::string& v : *many) {
        if (v.empty()) return name;
      }
    }
  }
  return nullptr;
}

// Parses args into vm; returns an exit code if the command should stop (help or a bad flag).
// `unknown_hint`, if given, is printed after the message for an unknown option; `help_extra`
// after the options in --help.
std::optional<int> Parse(const std::vector<std::string>& args, const char* usage,
                         const po::options_description& visible, const po::options_description& all,
                         const po::positional_options_description& positional,
                         po::variables_map& vm,
                         const std::function<std::string(const std::string&)>& unknown_hint = {},
                         const char* help_extra = "") {
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << usage << "\n" << visible << help_extra;
      return kExitMatch;
    }
    po::notify(vm);
    if (const char* empty = EmptyPathOption(vm)) {
      std::fprintf(stderr, "bitsift: error: --%s: an empty path (an unset shell variable?)\n%s\n",
                   empty, usage);
      return kExitError;
    }
  } catch (const po::unknown_option& e) {
    const std::string hint = unknown_hint ? unknown_hint(e.get_option_name()) : "";
    std::fprintf(stderr, "bitsift: error: unknown option '%s'\n%s%s\n", e.get_option_name().c_str(),
                 hint.c_str(), usage);
    return kExitError;
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
      const auto* at = reinterpret_cast<const uint8_t*>(s.data()) + i;
      const size_t len = Utf8SequenceLength(at, at + (s.size() - i));
      if (len > 0) {
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

// ---------------------------------------------------------------------------------------------
// Query output: paths a shell can use, stale hits.

// The working directory (physical, as getcwd gives it), or "" if it cannot be found (then
// paths are printed absolute and no folder scope applies).
std::string WorkingDirectory() {
  std::vector<char> buf(4096);
  while (::getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE) return "";
    buf.resize(buf.size() * 2);
  }
  return buf.data();
}

// Reports that `path` could not be opened as `what` (errno tells why), naming a relative path's
// absolute form too; returns the error exit code.
int CannotOpen(const std::string& path, const std::string& what) {
  const int err = errno;
  std::string where;
  const std::string cwd = WorkingDirectory();
  if (!path.empty() && path[0] != '/' && !cwd.empty()) {
    where = " (" + (cwd == "/" ? "" : cwd) + "/" + path + ")";
  }
  return Fail(path + ": cannot open " + what + where + ": " + std::strerror(err));
}

// Opens the file `path` (read as `what`) into *in; returns the error exit code, reported with
// the reason, if it cannot be opened or is a directory (which opens, then fails to read).
std::optional<int> OpenInput(const std::string& path, const std::string& what, std::ifstream* in) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    return CannotOpen(path, what);
  }
  in->open(path, std::ios::binary);
  if (!*in) return CannotOpen(path, what);
  return std::nullopt;
}

struct QueryFlags {
  bool count = false, json = false, stats = false;
  bool null = false;     // NUL after each path instead of a newline
  bool several = false;  // more than one index open
  std::string cwd;       // printed paths are relative to it (ShellPath)
  QueryOptions options;
  // --lines: matching lines instead of paths.
  bool lines = false;
  bool color = false;        // ANSI colours (--color, NO_COLOR, a terminal)
  LineOptions context;       // -A/-B/-C
  uint64_t max_columns = 0;  // --max-columns (0 = whole lines)
};

// One match as a JSON object: `path` as printed, `index_path` (within the index) and `root`,
// `index` with several indexes, `stale` if its file changed since indexing.
std::string DocumentJson(const Index& index, uint32_t id, const std::string& prefix,
                         const QueryFlags& f, bool stale) {
  DocumentInfo d = index.document(id);
  std::ostringstream out;
  out << "{" << prefix << "\"path\":" << JsonString(ShellPath(d, f.cwd))
      << ",\"index_path\":" << JsonString(d.path) << ",\"root\":" << JsonString(d.root);
  if (f.several) out << ",\"index\":" << d.index;
  out << ",\"size\":" << d.size << ",\"mtime_ns\":" << d.mtime_ns << ",\"terms\":" << d.terms;
  out << ",\"encoding\":" << JsonString(d.encoding);
  if (stale) out << ",\"stale\":true";
  out << "}";
  return out.str();
}

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

// What became of stale hits, for the warning: which ones are not printed and why.
std::string StaleNote(const StaleHits& stale) {
  std::string note;
  if (!stale.vanished.empty()) note += "; vanished ones are not printed";
  if (stale.lines_skipped) note += "; the lines of changed ones are not printed";
  if (stale.phrase_skipped) note += "; a phrase cannot be checked in changed or vanished ones";
  return note;
}

// Prints the stale hits on stderr, once (nothing if there are none): the counts, up to kListed
// paths of each kind, and the command that brings each index concerned up to date.
// `index_paths` are the indexes opened, in order.
void ReportStale(const Index& index, const StaleHits& stale, const std::string& cwd,
                 const std::vector<std::string>& index_paths) {
  constexpr size_t kListed = 10;
  size_t shown_unreadable = 0;
  for (const auto& [id, reason] : stale.unreadable) {
    if (shown_unreadable++ < kListed) {
      std::fprintf(stderr, "bitsift: warning: %s: %s\n", ShellPath(index.document(id), cwd).c_str(),
                   reason.c_str());
    }
  }
  if (stale.unreadable.size() > kListed) {
    std::fprintf(stderr, "bitsift: warning: ... and %zu more documents could not be read\n",
                 stale.unreadable.size() - kListed);
  }
  if (stale.changed.empty() && stale.vanished.empty()) return;
  std::fprintf(
      stderr,
      "bitsift: warning: %s out of date (%s changed, %" PRIu64 " vanished since indexing%s):\n",
      Plural(stale.changed.size() + stale.vanished.size(), "match is", "matches are").c_str(),
      Plural(stale.changed.size(), "file", "files").c_str(),
      static_cast<uint64_t>(stale.vanished.size()), StaleNote(stale).c_str());
  std::map<uint32_t, std::string> roots;  // the indexes concerned
  for (const auto& [ids, what] :
       {std::pair{&stale.changed, "changed"}, {&stale.vanished, "vanished"}}) {
    size_t shown = 0;
    for (uint32_t id : *ids) {
      DocumentInfo d = index.document(id);
      roots[d.index] = d.root;
      if (shown++ < kListed) std::fprintf(stderr, "  %s: %s\n", what, ShellPath(d, cwd).c_str());
    }
    if (ids->size() > kListed) {
      std::fprintf(stderr, "  ... and %zu more %s\n", ids->size() - kListed, what);
    }
  }
  std::set<std::string> commands;
  for (const auto& [i, root] : roots)
    commands.insert(IndexCommand(root, index_paths.at(i), /*rebuild=*/false));
  for (const std::string& c : commands) {
    std::fprintf(stderr, "bitsift: hint: run '%s' to update the index\n", c.c_str());
  }
}

std::string StatsJson(const QueryStats& s, uint64_t matches, const std::string& prefix) {
  char buf[1024];
  std::snprintf(buf, sizeof(buf),
                "{%s\"terms\":%" PRIu64 ",\"matches\":%" PRIu64 ",\"candidates\":%" PRIu64
                ",\"false_positives\":%" PRIu64 ",\"rows_read\":%" PRIu64 ",\"bytes_read\":%" PRIu64
                ",\"segments_searched\":%" PRIu64 ",\"segments_skipped\":%" PRIu64
                ",\"segments_out_of_scope\":%" PRIu64 ",\"prefix_terms\":%" PRIu64
                ",\"phrase_candidates\":%" PRIu64 ",\"text_bytes\":%" PRIu64
                ",\"parse_us\":%.1f,\"and_us\":%.1f,\"verify_us\":%.1f,\"phrase_us\":%.1f,"
                "\"total_us\":%.1f,\"files_us\":%.1f}",
                prefix.c_str(), s.terms, matches, s.candidates, s.false_positives, s.rows_read,
                s.bytes_read, s.segments_searched, s.segments_skipped, s.segments_out_of_scope,
                s.prefix_terms, s.phrase_candidates, s.text_bytes, s.parse_us, s.and_us,
                s.verify_us, s.phrase_us, s.total_us, s.files_us);
  return buf;
}

void PrintStatsText(const QueryStats& s, uint64_t matches) {
  std::fprintf(stderr,
               "terms %" PRIu64 ", matches %" PRIu64 ", candidates %" PRIu64
               ", false positives removed %" PRIu64
               "\n"
               "rows read %" PRIu64 ", bytes read %" PRIu64 ", segments searched %" PRIu64
               ", skipped %" PRIu64 ", out of scope %" PRIu64
               "\n"
               "prefix terms %" PRIu64 ", texts read for phrases %" PRIu64 " (%" PRIu64
               " bytes)\n"
               "time: parse %.1f us, and %.1f us, verify %.1f us, phrases %.1f us, total %.1f us; "
               "files looked at %.1f us\n",
               s.terms, matches, s.candidates, s.false_positives, s.rows_read, s.bytes_read,
               s.segments_searched, s.segments_skipped, s.segments_out_of_scope, s.prefix_terms,
               s.phrase_candidates, s.text_bytes, s.parse_us, s.and_us, s.verify_us, s.phrase_us,
               s.total_us, s.files_us);
}

// ANSI colours of --lines, as ripgrep's defaults.
constexpr const char* kColorPath = "\033[35m";
constexpr const char* kColorLine = "\033[32m";
constexpr const char* kColorMatch = "\033[1;31m";
constexpr const char* kColorReset = "\033[0m";

void Write(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

// Prints one line of --lines output: `path:N:text` (a context line `path-N-text`), the text
// cut by --max-columns with "[...]" where it was cut, matches highlighted with colour.
void PrintLine(const std::string& prefix, const std::string& path, const MatchLine& line,
               const QueryFlags& f) {
  const char sep = line.match ? ':' : '-';
  Write(prefix);
  if (f.color) Write(kColorPath);
  Write(path);
  if (f.color) Write(kColorReset);
  std::fputc(sep, stdout);
  if (f.color) Write(kColorLine);
  Write(std::to_string(line.number));
  if (f.color) Write(kColorReset);
  std::fputc(sep, stdout);
  const LineWindow w = TrimLine(line, f.max_columns);
  const std::string_view text = std::string_view(line.text).substr(w.start, w.end - w.start);
  if (w.cut_before) Write("[...]");
  size_t at = 0;
  for (const LineSpan& span : w.spans) {
    Write(text.substr(at, span.start - at));
    if (f.color) Write(kColorMatch);
    Write(text.substr(span.start, span.end - span.start));
    if (f.color) Write(kColorReset);
    at = span.end;
  }
  Write(text.substr(at));
  if (w.cut_after) Write("[...]");
  std::fputc('\n', stdout);
}

// One line of --lines --json: path (as printed), index_path, line, text, spans, and "context"
// for a context line.
std::string LineJson(const DocumentInfo& d, const MatchLine& line, const std::string& prefix,
                     const QueryFlags& f) {
  std::ostringstream out;
  out << "{" << prefix << "\"path\":" << JsonString(ShellPath(d, f.cwd))
      << ",\"index_path\":" << JsonString(d.path);
  if (f.several) out << ",\"index\":" << d.index;
  out << ",\"line\":" << line.number << ",\"text\":" << JsonString(line.text) << ",\"spans\":[";
  for (size_t i = 0; i < line.spans.size(); ++i) {
    out << (i ? "," : "") << "[" << line.spans[i].start << "," << line.spans[i].end << "]";
  }
  out << "]";
  if (!line.match) out << ",\"context\":true";
  out << "}";
  return out.str();
}

// Prints the matching lines of the documents of `result` (in its order: path order within each
// index). A document whose file changed or vanished is not printed (it goes to *stale), nor
// one that cannot be read. Returns the number of documents whose lines were printed.
uint64_t PrintLines(const Index& index, const ParsedQuery& query, const QueryResult& result,
                    const QueryFlags& f, const std::string& text_prefix,
                    const std::string& json_prefix, StaleHits* stale) {
  const bool context = f.context.before > 0 || f.context.after > 0;
  bool printed_group = false;
  uint64_t printed = 0;
  // A slice of documents at a time (up to kMatchingLinesSlice of them, or as many as hold
  // kSliceBytes of text as indexed: the lines found are kept until printed), their lines found
  // on two threads, then printed in order.
  constexpr uint64_t kSliceBytes = 32 << 20;
  const std::vector<uint32_t>& all = result.documents;
  std::vector<std::vector<LineGroup>> slice_groups;
  std::vector<Status> slice_statuses;
  size_t slice_begin = 0, slice_end = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i == slice_end) {
      slice_begin = i;
      uint64_t bytes = 0;
      while (slice_end < all.size() && slice_end - slice_begin < kMatchingLinesSlice &&
             (slice_end == slice_begin || bytes < kSliceBytes)) {
        bytes += index.document(all[slice_end++]).size;
      }
      MatchingLinesOf(index, all.data() + slice_begin, slice_end - slice_begin, query, f.context,
                      &slice_groups, &slice_statuses);
    }
    const size_t k = i - slice_begin;
    const uint32_t id = all[i];
    const std::vector<LineGroup>& groups = slice_groups[k];
    const Status& s = slice_statuses[k];
    if (s.code() == Status::Code::kStale) {
      stale->lines_skipped = true;
      stale->Add(index, id, s.message());
      continue;
    }
    if (!s.ok()) {
      stale->unreadable.emplace(id, s.message());
      continue;
    }
    if (groups.empty()) continue;
    ++printed;
    const DocumentInfo d = index.document(id);
    const std::string path = ShellPath(d, f.cwd);
    for (const LineGroup& g : groups) {
      if (context && printed_group && !f.json) {
        Write(text_prefix);
        Write("--\n");
      }
      printed_group = true;
      for (const MatchLine& line : g.lines) {
        if (f.json) {
          std::printf("%s\n", LineJson(d, line, json_prefix, f).c_str());
        } else {
          PrintLine(text_prefix, path, line, f);
        }
      }
    }
  }
  return printed;
}

// Prints the output of one query, answered with status `s` and `result`; `line` > 0 in batch
// mode. Stale hits go to *stale. Returns the matches printed (or counted) or nullopt on error
// (reported here).
std::optional<uint64_t> PrintAnswer(const Index& index, const ParsedQuery& query,
                                    const QueryFlags& f, uint64_t line, const Status& s,
                                    const QueryResult& result, StaleHits* stale) {
  if (!s.ok()) {
    if (line > 0) {
      std::fprintf(stderr, "bitsift: error: query line %" PRIu64 ": %s\n", line,
                   s.message().c_str());
    } else {
      Fail(s.message());
    }
    return std::nullopt;
  }
  stale->changed.insert(result.changed.begin(), result.changed.end());
  stale->vanished.insert(result.vanished.begin(), result.vanished.end());
  for (uint32_t id : result.unreadable) {
    stale->phrase_skipped = true;
    stale->Add(index, id, "cannot be read to check a phrase; not answered");
  }
  // In batch mode each output line says which query it answers: "N<TAB>" before text, a field
  // in JSON ("line", or "query_line" with --lines, where "line" is the text's line).
  std::string json_prefix;
  if (line > 0) {
    json_prefix = f.lines ? "\"query_line\":" : "\"line\":";
    json_prefix.append(std::to_string(line)).push_back(',');
  }
  const std::string text_prefix = line > 0 ? std::to_string(line) + "\t" : "";
  uint64_t n = result.documents.size();
  if (f.count) {
    if (f.json) {
      std::printf("{%s\"count\":%" PRIu64 "}\n", json_prefix.c_str(), n);
    } else {
      std::printf("%s%" PRIu64 "\n", text_prefix.c_str(), n);
    }
  } else if (f.lines) {
    n = PrintLines(index, query, result, f, text_prefix, json_prefix, stale);
  } else {
    if (f.json) {
      const std::set<uint32_t> changed(result.changed.begin(), result.changed.end());
      for (uint32_t id : result.documents) {
        std::printf("%s\n", DocumentJson(index, id, json_prefix, f, changed.count(id) > 0).c_str());
      }
    } else {
      // The paths' bytes as they are (a name that is not UTF-8 still opens), a slice of
      // results at a time (the text of 626k paths is 14 MB).
      constexpr size_t kSlice = kPathLinesPiece * 64;
      const std::vector<uint32_t>& all = result.documents;
      for (size_t at = 0; at < all.size(); at += kSlice) {
        for (const std::string& piece :
             PathLines(index, all.data() + at, std::min(kSlice, all.size() - at), text_prefix,
                       f.cwd, f.null ? '\0' : '\n')) {
          std::fwrite(piece.data(), 1, piece.size(), stdout);
        }
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
  if (n == 0 && line == 0 && result.scoped && f.options.scope.empty()) {
    std::fprintf(stderr,
                 "bitsift: no match under %s (the folder you are in); --all searches "
                 "the whole index\n",
                 f.cwd.c_str());
  }
  if (n == 0 && line == 0 && !f.options.scope.empty()) {
    // The PATHs given: say where nothing was found, and which of them do not exist.
    std::string where;
    for (const std::string& p : f.options.scope) {
      struct stat st;
      if (!where.empty()) where += ", ";
      where += p;
      if (::stat(p.c_str(), &st) != 0) where += std::string(" (") + std::strerror(errno) + ")";
    }
    std::fprintf(stderr, "bitsift: no match under %s\n", where.c_str());
  }
  return n;
}

// Answers one query and prints it (PrintAnswer). line: its line in a --queries file, 0 for
// the command line's query.
// Adds the time the query's text took to parse to its statistics: Index::Query(ParsedQuery)
// times what follows the parse, and --stats reports the whole query, as the peers' benchmarks
// time theirs (from the text to the complete list of matches).
void ChargeParse(double parse_us, QueryResult* result) {
  result->stats.parse_us += parse_us;
  result->stats.total_us += parse_us;
}

// Times ParsedQuery::Parse (or ParseArguments) as `parse`; the microseconds into *us.
template <typename ParseFn>
Status TimedParse(const ParseFn& parse, double* us) {
  const auto start = std::chrono::steady_clock::now();
  Status s = parse();
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return s;
}

std::optional<uint64_t> AnswerOne(const Index& index, const ParsedQuery& query, double parse_us,
                                  const QueryFlags& f, uint64_t line, StaleHits* stale) {
  QueryResult result;
  Status s = index.Query(query, f.options, &result);
  ChargeParse(parse_us, &result);
  return PrintAnswer(index, query, f, line, s, result, stale);
}

// Reports a query that does not parse: the reason, the text with a caret under the place (for
// a query of one line), and how to search for the characters literally. `line` > 0: a line of
// a --queries file.
void ReportParseError(const Status& s, const QueryError& e, const std::string& text,
                      uint64_t line) {
  if (line > 0) {
    std::fprintf(stderr, "bitsift: error: query line %" PRIu64 ": %s\n", line, s.message().c_str());
  } else {
    Fail(s.message());
  }
  if (text.find_first_of("\n\r") == std::string::npos && text.size() <= 200) {
    // The caret's column: code points before the position (a terminal shows one per column,
    // near enough for the scripts people type queries in).
    size_t column = 0;
    for (size_t i = 0; i < e.position && i < text.size(); ++i) {
      if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++column;
    }
    std::fprintf(stderr, "  %s\n  %s^\n", text.c_str(), std::string(column, ' ').c_str());
  }
  std::fprintf(stderr,
               "bitsift: hint: the query language is described in 'bitsift query --help'; "
               "--words reads every word as plain text\n");
}

// The index of a one-index command: its --index flag, or the one Index::Find finds from the
// working directory.
Status IndexPathOption(const po::variables_map& vm, std::string* path) {
  if (vm.count("index")) {
    *path = vm["index"].as<std::string>();
    return Status();
  }
  return Index::Find(".", path);
}

// Opens the indexes named by --index flags, or the one Index::Find finds from the working
// directory; *opened (if not null) receives their paths in order.
Status OpenIndex(const std::vector<std::string>& flags, std::unique_ptr<Index>* index,
                 std::vector<std::string>* opened = nullptr,
                 const OpenOptions& options = OpenOptions{}) {
  std::vector<std::string> paths = flags;
  if (paths.empty()) {
    std::string path;
    Status s = Index::Find(".", &path);
    if (!s.ok()) return s;
    paths.push_back(path);
  }
  Status s = Index::Open(paths, options, index);
  if (s.ok() && opened != nullptr) *opened = (*index)->paths();
  return s;
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

// ---------------------------------------------------------------------------------------------
// Numeric options. Each is read as text and checked here: Boost's unsigned parsing reads "-1"
// as 2^64 - 1, so a negative number would pass as a huge one.

constexpr uint64_t kMaxLimit = UINT32_MAX;  // document ids are 32-bit: no answer is larger
constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kMaxBytes = 1ULL << 40;  // 1024G for --memory and --max-file-size

// Reports on stderr that option `name` must be `what`, quoting what it got; returns nullopt.
std::nullopt_t BadNumber(const char* name, const std::string& what, const std::string& text) {
  Fail(std::string("--") + name + " must be " + what + ", got '" + text + "'");
  return std::nullopt;
}

// Parses a whole number written with decimal digits only (no sign, space or unit); nullopt if
// `text` is not one or does not fit in 64 bits.
std::optional<uint64_t> ParseWhole(const std::string& text) {
  if (text.empty() || text.size() > 20 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  errno = 0;
  uint64_t v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// The whole-number option `name` of vm, in [min, max]; nullopt (reported) otherwise. `what`
// says what the number means, for the message.
std::optional<uint64_t> WholeOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    uint64_t max, const std::string& what) {
  const std::string text = vm[name].as<std::string>();
  std::optional<uint64_t> v = ParseWhole(text);
  if (!v || *v < min || *v > max) {
    return BadNumber(name,
                     "a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                         " (" + what + ")",
                     text);
  }
  return v;
}

// The byte-count option `name` of vm (units K, M, G), in [min, kMaxBytes]; nullopt (reported)
// otherwise.
std::optional<uint64_t> BytesOption(const po::variables_map& vm, const char* name, uint64_t min,
                                    const std::string& min_text) {
  const std::string text = vm[name].as<std::string>();
  std::optional<uint64_t> v = ParseBytes(text);
  if (!v || *v < min || *v > kMaxBytes) {
    return BadNumber(
        name, "a byte count from " + min_text + " to 1024G (e.g. 300000, 512K, 256M, 1G)", text);
  }
  return v;
}

// --fp-rate: a decimal number in [1e-9, 1) (below that the signatures grow without use).
std::optional<double> FpRateOption(const po::variables_map& vm) {
  const std::string text = vm["fp-rate"].as<std::string>();
  char* end = nullptr;
  errno = 0;
  double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                 ? 0
                 : std::strtod(text.c_str(), &end);
  if (end == nullptr || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < 1e-9 ||
      v >= 1) {
    return BadNumber("fp-rate", "a false-positive rate from 1e-9 to below 1 (e.g. 0.01)", text);
  }
  return v;
}

// The cores this process may run on (its CPU affinity, as TBB counts them).
unsigned AvailableCores() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// --threads: 0 (one per core) to kMaxThreads; above the cores available it is capped with a
// note on stderr (more threads than cores only add contention).
std::optional<unsigned> ThreadsOption(const po::variables_map& vm) {
  std::optional<uint64_t> v = WholeOption(vm, "threads", 0, kMaxThreads, "0 = one per core");
  if (!v) return std::nullopt;
  const unsigned cores = AvailableCores();
  if (*v > cores) {
    std::fprintf(stderr,
                 "bitsift: note: --threads %" PRIu64 " is more than the %s available; using %u\n",
                 *v, Plural(cores, "core", "cores").c_str(), cores);
    return cores;
  }
  return static_cast<unsigned>(*v);
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
      "max-decompressed-size", po::value<std::string>()->default_value("256M"),
      "skip compressed files whose content is larger than this (bytes, or 512K, 256M, 1G)")(
      "keep-diacritics",
      "keep diacritics in terms: José is found by josé, not by jose (default: folded; kept "
      "by later updates, --rebuild without it folds again)");
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
  if (vm.count("glob")) options->globs = vm["glob"].as<std::vector<std::string>>();
  std::optional<uint64_t> limit = BytesOption(vm, "max-decompressed-size", 1, "1");
  if (limit && !vm["max-decompressed-size"].defaulted()) options->max_decompressed_bytes = *limit;
  return limit.has_value();
}

}  // namespace

int RunIndex(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift index DIR [--index PATH] [--rebuild] [--memory BYTES] [--fp-rate P] "
      "[--sparse-max-df N] [--threads N] [--max-file-size BYTES] [--verbose]\n"
      "                         [--encoding NAME] [--hidden] [--no-ignore] [--glob GLOB]... "
      "[--max-decompressed-size BYTES] [--keep-diacritics]";
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
      "threads", po::value<std::string>()->default_value("0"),
      "worker threads (0 = one per core; capped at the cores available)")(
      "max-file-size", po::value<std::string>()->default_value("256M"),
      "skip files larger than this (bytes, or with a unit: 512K, 256M, 1G)")(
      "verbose,v", "name every skipped file on stderr")("quiet,q", "no progress, no summary");
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
  if (!quiet && !summary.why_rebuilt.empty()) {
    std::fprintf(stderr, "bitsift: note: indexed every file again: %s\n",
                 summary.why_rebuilt.c_str());
  }
  if (!quiet) PrintSummary(summary, index_path);
  return kExitMatch;
}

// The query command's scope from its flags: the folder the user is in (unless --all), replaced
// by the PATHs given after "--" or with --in (taken from the working directory, as grep and
// ripgrep take their paths).
void SetQueryScope(const po::variables_map& vm, const std::vector<std::string>& paths,
                   QueryFlags* f) {
  std::vector<std::string> given = paths;
  if (vm.count("in")) {
    for (const std::string& p : vm["in"].as<std::vector<std::string>>()) given.push_back(p);
  }
  for (const std::string& p : given) {
    f->options.scope.push_back(p.empty() || p[0] == '/' || f->cwd.empty() ? p : f->cwd + "/" + p);
  }
  if (given.empty() && !vm.count("all")) f->options.working_dir = f->cwd;
}

// `bitsift query --help`: the query language in brief (README "Query language" has it all).
constexpr const char* kQueryLanguage =
    "\nquery language (each TERM argument is a query; the arguments are ANDed):\n"
    "  word1 word2      documents holding both words, as the index reads words: case folded,\n"
    "                   Latin accents dropped (jose finds José, unless the index was built\n"
    "                   with --keep-diacritics), CJK text as character pairs; a word with\n"
    "                   punctuation inside is also read as its parts, so stdio finds\n"
    "                   <stdio.h>, license LICENSE.txt, example www.example.com, while\n"
    "                   stdio.h finds only stdio.h\n"
    "  \"free software\"  a phrase: the words contiguous and in order, parts counting as\n"
    "                   words (\"stdio h\" finds stdio.h); so is a query word that splits\n"
    "                   into several (std::vector, e-mail) and a CJK run of 3+ characters;\n"
    "                   an argument with spaces but no operator is a phrase too\n"
    "  gpl OR bsd       either (upper-case OR; binds tighter than the implicit AND)\n"
    "  -word            documents without it (after -- or inside a quoted query:\n"
    "                   bitsift query copyright -- -gpl, bitsift query 'copyright -gpl')\n"
    "  licen*           any term starting with licen\n"
    "  (a OR b) -(c d)  groups\n"
    "  --words          0.1's meaning: every word required, nothing is an operator\n";

// The query command's hint for an unknown option: an exclusion written as its own argument.
std::string ExclusionHint(const std::string& option) {
  if (option.size() < 2 || option[0] != '-' || option[1] == '-') return "";
  return "bitsift: hint: to exclude documents holding '" + option.substr(1) +
         "', put it after --: 'bitsift query TERMS -- " + option +
         "', or quote the whole query: 'bitsift query \"TERMS " + option + "\"'\n";
}

// The colour choice of --color: "always", "never", or "auto" (stdout is a terminal and the
// NO_COLOR variable is unset or empty). nullopt (reported) for another value.
std::optional<bool> ColorOption(const po::variables_map& vm) {
  const std::string c = vm["color"].as<std::string>();
  if (c == "always") return true;
  if (c == "never") return false;
  if (c == "auto") {
    const char* no_color = std::getenv("NO_COLOR");
    return ::isatty(STDOUT_FILENO) && (no_color == nullptr || no_color[0] == '\0');
  }
  Fail("--color must be auto, always or never, got '" + c + "'");
  return std::nullopt;
}

// At most this many --jobs.
constexpr uint64_t kMaxJobs = 256;

// A query of a --queries file, and its answer.
struct BatchQuery {
  uint64_t line = 0;
  ParsedQuery query;
  double parse_us = 0;  // the time its line took to parse
  Status status;
  QueryResult result;
};

// Answers (*window)[0, n) on `jobs` threads (the calling one included), each taking the next
// unanswered query: an Index answers queries from several threads at once.
void AnswerInParallel(const Index& index, const QueryOptions& options,
                      std::vector<BatchQuery>* window, size_t n, size_t jobs) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      BatchQuery& q = (*window)[i];
      q.status = index.Query(q.query, options, &q.result);  // Query resets q.result
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(jobs, n); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
}

// The options of `bitsift query` that --help shows.
po::options_description QueryOptionsDescription() {
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::vector<std::string>>(),
      "index directory (default: .bitsift here or in a parent); repeat to search several as one")(
      "count,c", "print the number of matches only")(
      "json", "print one JSON object per match (with --lines: per line, with its spans)")(
      "limit", po::value<std::string>()->default_value("0"), "print at most N matches (0 = all)")(
      "null,0", "end each printed path with a NUL byte instead of a newline (for xargs -0)")(
      "lines,n", "print the matching lines (path:LINE:text), as grep -n does")(
      "color", po::value<std::string>()->default_value("auto"),
      "with --lines: colour paths, line numbers and matches: auto (a terminal, NO_COLOR unset), "
      "always or never")("context,C", po::value<std::string>(),
                         "with --lines: N lines of context around each match")(
      "after-context,A", po::value<std::string>(), "with --lines: N lines after each match")(
      "before-context,B", po::value<std::string>(), "with --lines: N lines before each match")(
      "max-columns", po::value<std::string>()->default_value("0"),
      "with --lines: show at most N characters of a line, around its first match (0 = all; "
      "--json keeps whole lines)")(
      "words", "read the query as plain words, all required (no operators: bitsift 0.1)")(
      "all", "search the whole index, not only the folder you are in")(
      "in", po::value<std::vector<std::string>>(),
      "only documents under PATH (a file or folder, from the current directory; repeatable; "
      "the same as PATHs after --)")(
      "stats", "print candidates, false positives, rows and bytes read, and timings on stderr")(
      "queries", po::value<std::string>(),
      "answer one query per line of FILE ('-' = stdin); output lines start with the line number")(
      "jobs,j", po::value<std::string>()->default_value("1"),
      "with --queries: answer up to N queries at once, reading up to 4xN lines ahead (output "
      "stays in the file's order; default 1: one at a time, as --stats times them)");
  return visible;
}

// Reads the output options (--count, --json, --stats, -0, --limit, --lines and its context,
// colour and columns) into *f. Returns an exit code (the message printed) if they conflict or
// a number is bad.
std::optional<int> ReadQueryFlags(const po::variables_map& vm, QueryFlags* out) {
  QueryFlags& f = *out;
  f.count = vm.count("count") > 0;
  f.json = vm.count("json") > 0;
  f.stats = vm.count("stats") > 0;
  f.null = vm.count("null") > 0;
  f.lines = vm.count("lines") > 0;
  if (f.null && (f.count || f.json || f.lines)) {
    return Fail(
        "-0/--null ends printed paths with NUL; it does not go with --count, --json or --lines");
  }
  if (f.lines && f.count) return Fail("--lines prints lines; it does not go with --count");
  for (const char* name : {"context", "after-context", "before-context"}) {
    if (vm.count(name) && !f.lines) return Fail(std::string("--") + name + " needs --lines");
  }
  if (!f.lines && (!vm["max-columns"].defaulted() || !vm["color"].defaulted())) {
    return Fail("--max-columns and --color need --lines");
  }
  std::optional<uint64_t> limit = WholeOption(vm, "limit", 0, kMaxLimit, "0 = all");
  if (!limit) return kExitError;
  f.options.limit = *limit;
  std::optional<uint64_t> columns = WholeOption(vm, "max-columns", 0, kMaxLimit, "0 = all");
  if (!columns) return kExitError;
  f.max_columns = *columns;
  std::optional<bool> color = ColorOption(vm);
  if (!color) return kExitError;
  f.color = *color && !f.json;
  // -C sets both; -A and -B override their side (grep's rule).
  for (const auto& [name, before, after] : {std::tuple{"context", true, true},
                                            {"before-context", true, false},
                                            {"after-context", false, true}}) {
    if (!vm.count(name)) continue;
    std::optional<uint64_t> n = WholeOption(vm, name, 0, kMaxLimit, "lines");
    if (!n) return kExitError;
    if (before) f.context.before = *n;
    if (after) f.context.after = *n;
  }
  return std::nullopt;
}

// Answers the queries of `file` ('-' = stdin), one a line (blank lines skipped), on `jobs`
// threads, printing them in the file's order, each output line prefixed with its query's line
// number, then the run's stale hits. Returns the exit code.
int AnswerQueryFile(const Index& index, const std::string& file, QuerySyntax syntax, uint64_t jobs,
                    QueryFlags f, const std::vector<std::string>& index_paths) {
  StaleHits stale;
  std::ifstream in_file;
  if (file != "-") {
    if (auto code = OpenInput(file, "the query file", &in_file)) return *code;
  }
  std::istream& in = file == "-" ? std::cin : in_file;
  // Each file is looked at once per run, however many queries return it.
  std::vector<std::optional<FileState>> known_files;
  f.options.known_files = &known_files;
  bool any_match = false, any_error = false;
  auto note = [&](const std::optional<uint64_t>& n) {
    if (!n) {
      any_error = true;
    } else if (*n > 0) {
      any_match = true;
    }
  };
  uint64_t line_no = 0;
  // The next query of the file: false at its end. A line that does not parse is reported here.
  auto next_query = [&](BatchQuery* q) {
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (line.find_first_not_of(" \t\r\v\f") == std::string::npos) continue;  // blank
      if (!line.empty() && line.back() == '\r') line.pop_back();  // a file written on Windows
      QueryError error;
      Status ps = TimedParse([&] { return ParsedQuery::Parse(line, syntax, &q->query, &error); },
                             &q->parse_us);
      if (!ps.ok()) {
        ReportParseError(ps, error, line, line_no);
        any_error = true;
        continue;
      }
      q->line = line_no;
      return true;
    }
    return false;
  };
  if (jobs == 1) {
    for (BatchQuery q; next_query(&q);) {
      note(AnswerOne(index, q.query, q.parse_us, f, q.line, &stale));
    }
  } else {
    // Windows of 4 x jobs queries: answered on `jobs` threads, printed in order. The run's
    // cache of looked-at files is not shared between threads: each query looks at its own.
    // The threads use the cores: no helper thread besides (QueryOptions::parallel).
    QueryOptions options = f.options;
    options.known_files = nullptr;
    options.parallel = false;
    std::vector<BatchQuery> window(4 * jobs);
    for (;;) {
      size_t n = 0;
      while (n < window.size() && next_query(&window[n])) ++n;
      if (n == 0) break;
      AnswerInParallel(index, options, &window, n, static_cast<size_t>(jobs));
      for (size_t i = 0; i < n; ++i) {
        BatchQuery& q = window[i];
        ChargeParse(q.parse_us, &q.result);
        note(PrintAnswer(index, q.query, f, q.line, q.status, q.result, &stale));
      }
      if (n < window.size()) break;
    }
  }
  if (in.bad()) {
    Fail(file + ": cannot read the query file: " + std::strerror(errno ? errno : EIO));
    any_error = true;
  }
  std::fflush(stdout);
  ReportStale(index, stale, f.cwd, index_paths);
  if (any_error || (f.lines && !stale.unreadable.empty())) return kExitError;
  return any_match ? kExitMatch : kExitNoMatch;
}

// Answers the query of the command line, then reports its stale hits. Returns the exit code.
int AnswerArguments(const Index& index, const ParsedQuery& query, double parse_us,
                    const QueryFlags& f, const std::vector<std::string>& index_paths) {
  StaleHits stale;
  std::optional<uint64_t> n = AnswerOne(index, query, parse_us, f, 0, &stale);
  std::fflush(stdout);
  ReportStale(index, stale, f.cwd, index_paths);
  if (!n) return kExitError;
  if (f.lines && !stale.unreadable.empty()) return kExitError;
  return *n > 0 ? kExitMatch : kExitNoMatch;
}

int RunQuery(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift query [--index PATH]... [--count] [--json] [--limit N] [--stats] [-0]\n"
      "                     [--lines [--color WHEN] [-C N] [-A N] [-B N] [--max-columns N]]\n"
      "                     [--words] [--all | --in PATH...] (TERM... | --queries FILE [-j N])\n"
      "                     [-- [-TERM | PATH]...]";
  const po::options_description visible = QueryOptionsDescription();
  po::options_description all;
  all.add(visible).add_options()("term", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("term", -1);
  // TERMS -- ARGS: after the first "--", an argument starting with "-" is a query argument (an
  // exclusion: "copyright -- -gpl"); the others are PATHs to search under. A path starting
  // with "-" is written "./-name", as bitsift prints such paths.
  auto dashes = std::find(args.begin(), args.end(), "--");
  std::vector<std::string> paths, late_terms;
  for (auto it = dashes == args.end() ? dashes : dashes + 1; it != args.end(); ++it) {
    (it->size() > 1 && (*it)[0] == '-' ? late_terms : paths).push_back(*it);
  }
  po::variables_map vm;
  if (auto code = Parse({args.begin(), dashes}, usage, visible, all, pos, vm, ExclusionHint,
                        kQueryLanguage)) {
    return *code;
  }
  QueryFlags f;
  if (auto code = ReadQueryFlags(vm, &f)) return *code;
  const QuerySyntax syntax = vm.count("words") ? QuerySyntax::kWords : QuerySyntax::kLanguage;
  // --count prints no path: it counts the index's answers without looking at the files.
  f.options.check_files = !f.count;
  f.options.count_only = f.count;
  f.cwd = WorkingDirectory();
  SetQueryScope(vm, paths, &f);
  std::vector<std::string> terms;
  if (vm.count("term")) terms = vm["term"].as<std::vector<std::string>>();
  terms.insert(terms.end(), late_terms.begin(), late_terms.end());
  const bool batch = vm.count("queries") > 0;
  std::optional<uint64_t> jobs = WholeOption(vm, "jobs", 1, kMaxJobs, "queries at once");
  if (!jobs) return kExitError;
  if (!batch && !vm["jobs"].defaulted()) return Fail("--jobs needs --queries");
  if (batch == !terms.empty()) {
    return Fail(
        std::string(batch ? "give either TERMs or --queries, not both\n" : "no query terms\n") +
        usage);
  }
  ParsedQuery query;
  double parse_us = 0;
  if (!batch) {
    QueryError error;
    Status s = TimedParse(
        [&] { return ParsedQuery::ParseArguments(terms, syntax, &query, &error); }, &parse_us);
    if (!s.ok()) {
      ReportParseError(s, error, terms.at(std::min(error.argument, terms.size() - 1)), 0);
      return kExitError;
    }
  }
  // One query, then exit: where a page's first touch is a trip to the hypervisor (a
  // paravirtualized guest), its fresh buffers in huge pages (one fault for 2 MiB instead of one
  // a page: docs/design.md, "A one-shot query's heap in huge pages"); where faults are cheap,
  // the huge page's zeroing would cost more. A batch reuses its memory query after query.
  if (!batch && PageFaultsAreDear()) util::PrepareHugePageHeap(4 << 20);
  std::unique_ptr<Index> index;
  // main ends the process right after this command (std::_Exit): the index stays mapped for
  // the kernel to take down with the rest of the address space.
  struct LeaveMapped {
    std::unique_ptr<Index>& index;
    ~LeaveMapped() { (void)index.release(); }
  } leave_mapped{index};
  std::vector<std::string> index_paths;
  OpenOptions open;
  open.one_shot = !batch;  // one query, then exit: keep the resident set small
  Status s = OpenIndex(IndexFlags(vm), &index, &index_paths, open);
  if (!s.ok()) return Fail(s.message());
  f.several = index_paths.size() > 1;
  if (!batch) return AnswerArguments(*index, query, parse_us, f, index_paths);
  return AnswerQueryFile(*index, vm["queries"].as<std::string>(), syntax, *jobs, f, index_paths);
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
  OpenOptions open;
  open.map_ahead = false;  // one pass, then exit: mapping ahead would only add to it
  Status s = OpenIndex(IndexFlags(vm), index, nullptr, open);
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
              "\nterms      %" PRIu64 " (%" PRIu64 " with exact rows, %" PRIu64
              " with Bloom rows and a list, %" PRIu64
              " with a list only; summed over segments)\nfp target  %g\nfiles      %" PRIu64
              " bytes (%.1f bits per document)\n",
              index->path().c_str(), st.root.c_str(), st.icu_version.c_str(), st.documents,
              st.terms, st.exact_terms, st.bloom_terms, st.sparse_terms, st.fp_rate, st.file_bytes,
              st.documents ? 8.0 * st.file_bytes / st.documents : 0.0);
  std::printf("\nsegments: %zu\n%16s %10s %10s %10s %6s %14s\n", st.segments.size(), "file",
              "documents", "deleted", "terms", "bands", "bytes");
  for (const SegmentStats& seg : st.segments) {
    std::printf("%16s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6" PRIu64 " %14" PRIu64 "\n",
                seg.file.c_str(), seg.documents, seg.deleted, seg.terms, seg.bands, seg.file_bytes);
  }
  std::printf("\nencodings (live documents): %zu\n", st.encodings.size());
  for (const auto& [name, count] : st.encodings)
    std::printf("  %-16s %10" PRIu64 "\n", name.c_str(), count);
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
      "threads", po::value<std::string>()->default_value("0"),
      "worker threads (0 = one per core; capped at the cores available)")("quiet,q", "no summary");
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

int RunStatus(const std::vector<std::string>& args) {
  const char* usage = "usage: bitsift status [--index PATH] [--verbose]";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "index", po::value<std::string>(), "index directory (default: .bitsift here or in a parent)")(
      "verbose,v", "list the added, changed and removed paths");
  po::positional_options_description pos;
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, visible, pos, vm)) return *code;
  std::string path;
  if (Status s = IndexPathOption(vm, &path); !s.ok()) return Fail(s.message());
  TreeStatus st;
  Status s = CompareWithTree(path, &st);
  if (!s.ok()) return Fail(s.message());
  const uint64_t behind = st.added.size() + st.changed.size() + st.removed.size();
  std::printf("index %s of %s: %s\n", path.c_str(), st.root.c_str(),
              Plural(st.documents, "document", "documents").c_str());
  if (behind == 0) {
    std::printf("up to date: %s unchanged\n", Plural(st.unchanged, "file", "files").c_str());
    return kExitMatch;
  }
  std::printf("behind the tree: %zu added, %zu changed, %zu removed (%" PRIu64 " unchanged)\n",
              st.added.size(), st.changed.size(), st.removed.size(), st.unchanged);
  if (vm.count("verbose")) {
    const std::string cwd = WorkingDirectory();
    for (const auto& [paths, what] :
         {std::pair{&st.added, "added:  "}, {&st.changed, "changed:"}, {&st.removed, "removed:"}}) {
      for (const std::string& p : *paths) {
        DocumentInfo d;
        d.root = st.root;
        d.path = p;
        const std::string shown = ShellPath(d, cwd);
        std::printf("  %s ", what);
        std::fwrite(shown.data(), 1, shown.size(), stdout);
        std::fputc('\n', stdout);
      }
    }
  }
  std::printf("run '%s' to update it\n", IndexCommand(st.root, path, /*rebuild=*/false).c_str());
  return kExitNoMatch;
}

int RunTokenize(const std::vector<std::string>& args) {
  const char* usage =
      "usage: bitsift tokenize [--set] [--keep-diacritics] (--file PATH [--raw] | TEXT...)\n"
      "prints TOKEN<TAB>START<TAB>END<TAB>ROLE per token in text order ([START, END): its source\n"
      "bytes; ROLE: word, whole (a word with parts: a term, not a phrase position) or part;\n"
      "TEXTs are joined with one space), or with --set the sorted distinct terms, one a line";
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")(
      "file", po::value<std::string>(),
      "tokenize this file as 'bitsift index' reads it: decompressed, decoded to UTF-8, an HTML "
      "file's text (offsets are in that text); '-' = stdin, as UTF-8")(
      "raw", "with --file: the file's bytes as UTF-8, as they are (offsets in the file)")(
      "set",
      "print the sorted distinct terms (what the index stores for a document), one a line, "
      "instead of every token in text order with its byte offsets")(
      "keep-diacritics", "as an index built with --keep-diacritics reads text: José is josé");
  po::options_description all;
  all.add(visible).add_options()("text", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("text", -1);
  po::variables_map vm;
  if (auto code = Parse(args, usage, visible, all, pos, vm)) return *code;
  std::string text;
  if (vm.count("file")) {
    if (vm.count("text")) {
      return Fail("tokenize takes --file or TEXT, not both (extra argument '" +
                  vm["text"].as<std::vector<std::string>>()[0] + "')\n" + usage);
    }
    const std::string file = vm["file"].as<std::string>();
    std::ifstream in_file;
    if (file != "-") {
      if (auto code = OpenInput(file, "the file to tokenize", &in_file)) return *code;
    }
    if (file != "-" && !vm.count("raw")) {
      // Through the document stage, as indexing reads it (the open above names a missing or
      // unreadable file as the other inputs do).
      if (Status s = ReadDocumentText(file, IndexOptions{}, &text); !s.ok()) {
        return Fail(s.message());
      }
    } else {
      std::istream& in = file == "-" ? std::cin : in_file;
      std::ostringstream buf;
      errno = 0;
      if (in.peek() != std::char_traits<char>::eof()) buf << in.rdbuf();
      if (in.bad()) {
        return Fail(file +
                    ": cannot read the file to tokenize: " + std::strerror(errno ? errno : EIO));
      }
      text = buf.str();
    }
  } else if (vm.count("raw")) {
    return Fail(std::string("--raw goes with --file\n") + usage);
  } else if (vm.count("text")) {
    for (const std::string& t : vm["text"].as<std::vector<std::string>>()) {
      if (!text.empty()) text += ' ';
      text += t;
    }
  } else {
    return Fail(std::string("nothing to tokenize\n") + usage);
  }
  uint64_t printed = 0;
  IndexOptions rules;
  rules.keep_diacritics = vm.count("keep-diacritics") > 0;
  if (vm.count("set")) {
    std::vector<std::string> terms;
    if (Status s = Tokenize(text, &terms, rules); !s.ok()) return Fail(s.message());
    for (const std::string& t : terms) {
      std::fwrite(t.data(), 1, t.size(), stdout);
      std::fputc('\n', stdout);
    }
    printed = terms.size();
  } else {
    // Printed as found: a large file needs no list of all its tokens.
    Status s = TokenizeInOrder(
        text,
        [&](const TextToken& t) {
          const char* role = t.role == TokenRole::kWhole  ? "whole"
                             : t.role == TokenRole::kPart ? "part"
                                                          : "word";
          std::printf("%s\t%" PRIu64 "\t%" PRIu64 "\t%s\n", t.token.c_str(), t.begin, t.end, role);
          ++printed;
        },
        rules);
    if (!s.ok()) return Fail(s.message());
  }
  if (printed == 0) {
    const char* what = vm.count("file") ? "file" : "text";
    std::fprintf(stderr,
                 text.empty() ? "bitsift: no tokens: the %s is empty\n"
                              : "bitsift: no tokens: the %s holds only spaces, punctuation or "
                                "symbols (tokens are runs of letters, digits, kana or ideographs; "
                                "README \"What is a term\")\n",
                 what);
    return kExitNoMatch;
  }
  return kExitMatch;
}

}  // namespace bitsift::cli
