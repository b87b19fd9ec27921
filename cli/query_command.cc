// `bitsift query`: answer a query, or a file of queries, on one index or several.
#include "cli/query_command.h"

#include <bitsift/bitsift.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>
#include <tuple>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "cli/query_output.h"

namespace bitsift::cli {

namespace {

// The query command's scope from its flags: the folder the user is in (unless --all), replaced
// by the PATHs given with --in (taken from the working directory, as grep and ripgrep take
// their paths).
void SetQueryScope(const po::variables_map& vm, QueryFlags* f) {
  std::vector<std::string> given;
  if (vm.count("in")) given = vm["in"].as<std::vector<std::string>>();
  for (const std::string& p : given) {
    f->options.scope.push_back(p.empty() || p[0] == '/' || f->cwd.empty() ? p : f->cwd + "/" + p);
  }
  if (given.empty() && !vm.count("all")) f->options.working_dir = f->cwd;
}

// `bitsift query --help`: the query language in brief (README "Query language" has it all).
constexpr const char* kQueryLanguage =
    "\nquery language (the arguments are joined with spaces and read as one query, so\n"
    "'gpl bsd' and gpl bsd are the same; after -- everything is query text):\n"
    "  word1 word2      documents holding both words, as the index reads words: case folded,\n"
    "                   Latin accents dropped (jose finds José, unless the index was built\n"
    "                   with --keep-diacritics), CJK text as character pairs; a word with\n"
    "                   punctuation inside is also read as its parts, so stdio finds\n"
    "                   <stdio.h>, license LICENSE.txt, example www.example.com, while\n"
    "                   stdio.h finds only stdio.h\n"
    "  \"free software\"  a phrase: the words contiguous and in order, parts counting as\n"
    "                   words (\"stdio h\" finds stdio.h); so is a query word that splits\n"
    "                   into several (std::vector, e-mail) and a CJK run of 3+ characters\n"
    "  gpl OR bsd       either (upper-case OR; binds tighter than the implicit AND)\n"
    "  -word            documents without it (after --, or inside a quoted query:\n"
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

// --snippet-lines' default: a ranked document's lines are a snippet of three, as a search
// engine's result shows a few fragments, not the whole list of matching lines.
constexpr uint64_t kSnippetLines = 3;

// A query of a --queries file, and its answer.
struct BatchQuery {
  uint64_t line = 0;
  std::string text;  // the line
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
  visible.add_options()("help,h", "show this help");
  AddIndexFlag(visible, IndexFlag::kSeveral);
  visible.add_options()("count,c", "print the number of matches only")(
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
      "snippet-lines", po::value<std::string>()->default_value(std::to_string(kSnippetLines)),
      "with --rank or --any and --lines: print each document's N best lines, those holding the "
      "most query terms (ties: the earlier line), in file order (0 = every matching line)")(
      "words", "read the query as plain words, all required (no operators: bitsift 0.1)")(
      "all", "search the whole index, not only the folder you are in")(
      "in", po::value<std::vector<std::string>>(),
      "only documents under PATH (a file or folder, from the current directory; repeatable)")(
      "rank", "print the matches best first (BM25), not in path order")(
      "any",
      "make the query's words optional: documents holding at least one, best first (implies "
      "--rank; with --words, for a pasted question)")(
      "no-check",
      "do not look at the matches' files: faster for batches and scripts, but a file that "
      "vanished or changed since the last update is listed as it was indexed")(
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
  const bool ranked = vm.count("rank") > 0 || vm.count("any") > 0;
  if (!vm["snippet-lines"].defaulted() && (!f.lines || !ranked)) {
    return Fail(
        "--snippet-lines needs --lines and --rank or --any (unranked, --lines prints every "
        "matching line)");
  }
  std::optional<uint64_t> limit = WholeOption(vm, "limit", 0, kMaxLimit, "0 = all");
  if (!limit) return kExitError;
  f.options.limit = *limit;
  std::optional<uint64_t> columns = WholeOption(vm, "max-columns", 0, kMaxLimit, "0 = all");
  if (!columns) return kExitError;
  f.max_columns = *columns;
  std::optional<uint64_t> snippet = WholeOption(vm, "snippet-lines", 0, kMaxLimit, "0 = all");
  if (!snippet) return kExitError;
  // Ranked documents show their best lines; path order keeps grep's every matching line.
  f.context.best_lines = ranked ? *snippet : 0;
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
int AnswerQueryFile(const Index& index, const QueryAnswerer& answer, const std::string& file,
                    QuerySyntax syntax, uint64_t jobs, QueryFlags f,
                    const std::vector<std::string>& index_paths) {
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
      q->text = std::move(line);
      return true;
    }
    return false;
  };
  if (jobs == 1) {
    for (BatchQuery q; next_query(&q);) {
      note(AnswerOne(index, answer, q.query, q.text, q.parse_us, f, q.line, &stale));
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
int AnswerArguments(const Index& index, const QueryAnswerer& answer, const ParsedQuery& query,
                    const std::string& text, double parse_us, const QueryFlags& f,
                    const std::vector<std::string>& index_paths) {
  StaleHits stale;
  std::optional<uint64_t> n = AnswerOne(index, answer, query, text, parse_us, f, 0, &stale);
  std::fflush(stdout);
  ReportStale(index, stale, f.cwd, index_paths);
  if (!n) return kExitError;
  if (f.lines && !stale.unreadable.empty()) return kExitError;
  return *n > 0 ? kExitMatch : kExitNoMatch;
}

}  // namespace

std::optional<int> ParseQueryCommand(const std::vector<std::string>& args, const char* program,
                                     QueryCommand* out) {
  QueryCommand& c = *out;
  const std::string usage =
      std::string("usage: ") + program +
      " query [--index PATH]... [--count] [--json] [--limit N] [--stats] [-0]\n"
      "                     [--rank] [--any] [--no-check]\n"
      "                     [--lines [--color WHEN] [-C N] [-A N] [-B N] [--max-columns N]\n"
      "                              [--snippet-lines N]]\n"
      "                     [--words] [--all | --in PATH...] (QUERY... | --queries FILE [-j N])\n"
      "                     [-- QUERY...]";
  const po::options_description visible = QueryOptionsDescription();
  po::options_description all;
  all.add(visible).add_options()("term", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("term", -1);
  // After the first "--" every argument is query text ("-- -gpl", "-- \"$q\""), as a script
  // passes user text safely; folders to search are given with --in.
  auto dashes = std::find(args.begin(), args.end(), "--");
  const std::vector<std::string> late_terms(dashes == args.end() ? dashes : dashes + 1, args.end());
  po::variables_map vm;
  if (auto code = Parse({args.begin(), dashes}, usage.c_str(), visible, all, pos, vm, ExclusionHint,
                        kQueryLanguage)) {
    return *code;
  }
  QueryFlags& f = c.flags;
  if (auto code = ReadQueryFlags(vm, &f)) return *code;
  c.syntax = vm.count("words") ? QuerySyntax::kWords : QuerySyntax::kLanguage;
  // Every match's file is looked at (one lstat) unless --no-check: a vanished one is left out
  // of the listing and of --count alike. With --no-check, --count reads no record either.
  f.options.check_files = !vm.count("no-check");
  f.options.count_only = f.count;
  f.options.rank = vm.count("rank") > 0;
  f.options.any = vm.count("any") > 0;
  f.cwd = WorkingDirectory();
  SetQueryScope(vm, &f);
  std::vector<std::string>& terms = c.terms;
  if (vm.count("term")) terms = vm["term"].as<std::vector<std::string>>();
  terms.insert(terms.end(), late_terms.begin(), late_terms.end());
  c.batch = vm.count("queries") > 0;
  std::optional<uint64_t> jobs = WholeOption(vm, "jobs", 1, kMaxJobs, "queries at once");
  if (!jobs) return kExitError;
  c.jobs = *jobs;
  if (!c.batch && !vm["jobs"].defaulted()) return Fail("--jobs needs --queries");
  if (c.batch == !terms.empty()) {
    return Fail(
        std::string(c.batch ? "give either a QUERY or --queries, not both\n" : "no query terms\n") +
        usage);
  }
  if (c.batch) c.queries = vm["queries"].as<std::string>();
  c.index_flags = IndexFlags(vm);
  if (!c.batch) {
    QueryError error;
    Status s =
        TimedParse([&] { return ParsedQuery::ParseArguments(terms, c.syntax, &c.query, &error); },
                   &c.parse_us);
    if (!s.ok()) {
      ReportParseError(s, error, terms.at(std::min(error.argument, terms.size() - 1)), 0);
      return kExitError;
    }
    for (size_t i = 0; i < terms.size(); ++i) c.text += (i ? " " : "") + terms[i];
  }
  return std::nullopt;
}

int AnswerQueryCommand(const Index& index, const QueryCommand& c,
                       const std::vector<std::string>& index_paths, const QueryAnswerer& answer) {
  QueryFlags f = c.flags;
  f.several = index_paths.size() > 1;
  if (!c.batch) return AnswerArguments(index, answer, c.query, c.text, c.parse_us, f, index_paths);
  return AnswerQueryFile(index, answer, c.queries, c.syntax, c.jobs, f, index_paths);
}

int RunQuery(const std::vector<std::string>& args) {
  QueryCommand c;
  if (auto code = ParseQueryCommand(args, "bitsift", &c)) return *code;
  std::unique_ptr<Index> index;
  // main ends the process right after this command (std::_Exit): the index stays mapped for
  // the kernel to take down with the rest of the address space.
  struct LeaveMapped {
    std::unique_ptr<Index>& index;
    ~LeaveMapped() { (void)index.release(); }
  } leave_mapped{index};
  std::vector<std::string> index_paths;
  OpenOptions open;
  open.one_shot = !c.batch;  // one query, then exit: keep the resident set small
  Status s = OpenIndex(c.index_flags, &index, &index_paths, open);
  if (!s.ok()) return Fail(s.message());
  return AnswerQueryCommand(*index, c, index_paths, {});
}

}  // namespace bitsift::cli
