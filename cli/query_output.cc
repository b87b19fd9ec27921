#include "cli/query_output.h"

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string_view>

#include "cli/output.h"

namespace bitsift::cli {
namespace {

// One match as a JSON object: `path` as printed, `index_path` (within the index) and `root`,
// `index` with several indexes, `stale` if its file changed since indexing.
std::string DocumentJson(const Index& index, uint32_t id, const std::string& prefix,
                         const QueryFlags& f, bool stale, const double* score) {
  DocumentInfo d = index.document(id);
  std::ostringstream out;
  out << "{" << prefix << "\"path\":" << JsonString(ShellPath(d, f.cwd))
      << ",\"index_path\":" << JsonString(d.path) << ",\"root\":" << JsonString(d.root);
  if (f.several) out << ",\"index\":" << d.index;
  // size: the text's bytes (kept for scripts written against it); file_size: the file's.
  out << ",\"size\":" << d.size << ",\"file_size\":" << d.file_size << ",\"text_size\":" << d.size
      << ",\"mtime_ns\":" << d.mtime_ns << ",\"terms\":" << d.terms;
  out << ",\"encoding\":" << JsonString(d.encoding);
  if (score != nullptr) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", *score);
    out << ",\"score\":" << buf;
  }
  if (stale) out << ",\"stale\":true";
  out << "}";
  return out.str();
}

// What became of stale hits, for the warning: which ones are not printed and why.
std::string StaleNote(const StaleHits& stale) {
  std::string note;
  if (!stale.vanished.empty()) note += "; vanished ones are not printed";
  if (stale.lines_skipped) note += "; the lines of changed ones are not printed";
  if (stale.phrase_skipped) note += "; a phrase cannot be checked in changed or vanished ones";
  return note;
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

// Prints one line of --lines output: `path:N:text` (a context line `path-N-text`), a PDF's
// `path:pP:N:text` (N its line within page P), the text cut by --max-columns with "[...]" where
// it was cut, matches highlighted with colour.
void PrintLine(const std::string& prefix, const std::string& path, const MatchLine& line,
               const QueryFlags& f) {
  const char sep = line.match ? ':' : '-';
  Write(prefix);
  if (f.color) Write(kColorPath);
  Write(path);
  if (f.color) Write(kColorReset);
  std::fputc(sep, stdout);
  if (f.color) Write(kColorLine);
  if (line.page != 0) {
    Write("p");
    Write(std::to_string(line.page));
    std::fputc(sep, stdout);
  }
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

// One line of --lines --json: path (as printed), index_path, line (in the file as stored),
// text_line (in the text read from it) for HTML, man pages and PDFs, page for a PDF, text,
// spans, and "context" for a context line.
std::string LineJson(const DocumentInfo& d, const MatchLine& line, const std::string& prefix,
                     const QueryFlags& f) {
  std::ostringstream out;
  out << "{" << prefix << "\"path\":" << JsonString(ShellPath(d, f.cwd))
      << ",\"index_path\":" << JsonString(d.path);
  if (f.several) out << ",\"index\":" << d.index;
  out << ",\"line\":" << line.number;
  if (line.text_line != 0) out << ",\"text_line\":" << line.text_line;
  if (line.page != 0) out << ",\"page\":" << line.page;
  out << ",\"text\":" << JsonString(line.text) << ",\"spans\":[";
  for (size_t i = 0; i < line.spans.size(); ++i) {
    out << (i ? "," : "") << "[" << line.spans[i].start << "," << line.spans[i].end << "]";
  }
  out << "]";
  if (!line.match) out << ",\"context\":true";
  out << "}";
  return out.str();
}

// Prints the matching lines of the documents of `result` (in its order: path order within each
// index, or best first when ranked, each then with its best lines alone: f.context.best_lines).
// A document whose file changed or vanished is not printed (it goes to *stale), nor one that
// cannot be read. Returns the number of documents whose lines were printed.
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

}  // namespace

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
  for (const auto& [i, root] : roots) {
    struct stat st;
    if (!root.empty() && ::stat(root.c_str(), &st) != 0) {  // the whole tree moved or was deleted
      std::fprintf(stderr,
                   "bitsift: warning: the indexed directory %s is gone (moved or deleted)\n",
                   root.c_str());
      std::fprintf(stderr, "bitsift: hint: run '%s' to index it where it is now\n",
                   IndexCommand("NEWDIR", index_paths.at(i), /*rebuild=*/false).c_str());
      continue;
    }
    commands.insert(IndexCommand(root, index_paths.at(i), /*rebuild=*/false));
  }
  for (const std::string& c : commands) {
    std::fprintf(stderr, "bitsift: hint: run '%s' to update the index\n", c.c_str());
  }
}

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
      for (size_t i = 0; i < result.documents.size(); ++i) {
        const uint32_t id = result.documents[i];
        const double* score = result.scores.empty() ? nullptr : &result.scores[i];
        std::printf("%s\n",
                    DocumentJson(index, id, json_prefix, f, changed.count(id) > 0, score).c_str());
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

void ChargeParse(double parse_us, QueryResult* result) {
  result->stats.parse_us += parse_us;
  result->stats.total_us += parse_us;
}

std::optional<uint64_t> AnswerOne(const Index& index, const QueryAnswerer& answer,
                                  const ParsedQuery& query, const std::string& text,
                                  double parse_us, const QueryFlags& f, uint64_t line,
                                  StaleHits* stale) {
  QueryResult result;
  Status s =
      answer ? answer(query, text, f.options, &result) : index.Query(query, f.options, &result);
  ChargeParse(parse_us, &result);
  return PrintAnswer(index, query, f, line, s, result, stale);
}

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

}  // namespace bitsift::cli
