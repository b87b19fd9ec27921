// The public API: a thin layer that turns internal exceptions into Status values.
#include "bitsift/bitsift.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "answers/file_states.h"
#include "answers/lines.h"
#include "answers/shell_paths.h"
#include "documents/file_walker.h"
#include "format/bloom.h"
#include "format/segment_reader.h"
#include "indexer/index_builder.h"
#include "query/document_text.h"
#include "query/index_set.h"
#include "query/query_matcher.h"
#include "query/query_parser.h"
#include "query/scope.h"
#include "query/searcher.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/files.h"
#include "util/helper_thread.h"
#include "util/memory.h"
#include "util/utf8.h"

namespace bitsift {
namespace {

// The public and the internal states name the same values (a run's cache holds the public ones).
static_assert(
    static_cast<int>(FileState::kCurrent) == static_cast<int>(answers::FileState::kCurrent) &&
    static_cast<int>(FileState::kChanged) == static_cast<int>(answers::FileState::kChanged) &&
    static_cast<int>(FileState::kVanished) == static_cast<int>(answers::FileState::kVanished) &&
    static_cast<int>(FileState::kUnknown) == static_cast<int>(answers::FileState::kUnknown));

FileState FileStateOf(answers::FileState state) { return static_cast<FileState>(state); }

Status::Code CodeOf(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
      return Status::Code::kInvalidArgument;
    case ErrorKind::kIo:
      return Status::Code::kIoError;
    case ErrorKind::kCorrupt:
      return Status::Code::kCorrupt;
    case ErrorKind::kNotFound:
      return Status::Code::kNotFound;
    case ErrorKind::kBusy:
      return Status::Code::kBusy;
  }
  return Status::Code::kInternal;
}

template <typename F>
Status Guard(F&& f) {
  try {
    f();
    return Status();
  } catch (const Error& e) {
    return Status(CodeOf(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    return Status(Status::Code::kInternal, "out of memory");
  } catch (const std::exception& e) {
    return Status(Status::Code::kInternal, e.what());
  }
}

// The command that rebuilds the index directory `index_dir`, its root read from its manifest
// when that is readable; else, for a directory named .bitsift, the default place, its parent;
// else a placeholder DIR. Empty for an index of in-memory documents.
std::string RebuildCommand(const std::string& index_dir) {
  std::string root = "DIR";
  try {
    format::Manifest m = format::ReadManifest(index_dir);
    root = format::EngineSettings::From(m.settings).root;
    if (root.empty()) return "";
  } catch (const Error&) {
    char* real = ::realpath(index_dir.c_str(), nullptr);
    const std::string dir = real != nullptr ? real : "";
    std::free(real);
    const size_t slash = dir.rfind('/');
    if (slash != std::string::npos && dir.compare(slash, std::string::npos, "/.bitsift") == 0) {
      root = slash == 0 ? "/" : dir.substr(0, slash);
    }
  }
  return IndexCommand(root, index_dir, /*rebuild=*/true);
}

// A kCorrupt status names the repair of the index concerned (the one of `index_dirs` its
// message names, else the first): Status::repair() the command, which the message ends with.
Status WithRepair(Status s, const std::vector<std::string>& index_dirs) {
  if (s.code() != Status::Code::kCorrupt || index_dirs.empty()) return s;
  const std::string& msg = s.message();
  std::string dir = index_dirs[0];
  for (const std::string& d : index_dirs) {
    if (msg.compare(0, d.size(), d) == 0) {
      dir = d;
      break;
    }
  }
  std::string command = RebuildCommand(dir);
  const std::string repair = command.empty()
                                 ? "rebuild it from its documents (BuildIndexFromDocuments)"
                                 : "rebuild it with '" + command + "'";
  return Status(s.code(), msg + "; " + repair, std::move(command));
}

// Guard for an operation on the index directories `index_dirs`: a damaged index's message
// names the command that repairs it (WithRepair).
template <typename F>
Status GuardIndex(const std::vector<std::string>& index_dirs, F&& f) {
  return WithRepair(Guard(std::forward<F>(f)), index_dirs);
}

tokenizer::TokenRules RulesOf(const IndexOptions& o) {
  tokenizer::TokenRules rules;
  rules.fold_diacritics = !o.keep_diacritics;
  return rules;
}

indexer::BuildConfig ConfigOf(const IndexOptions& o) {
  indexer::BuildConfig c;
  c.fp_rate = o.fp_rate;
  c.sparse_max_df = o.sparse_max_df;
  c.threads = o.threads;
  c.max_file_size = o.max_file_size;
  c.documents.encoding = o.encoding;
  c.documents.hidden = o.hidden;
  c.documents.no_ignore = o.no_ignore;
  c.documents.globs = o.globs;
  c.documents.max_decompressed_bytes = o.max_decompressed_bytes;
  c.tokens = RulesOf(o);
  c.memory_budget = o.memory_budget;
  c.rebuild = o.rebuild;
  c.merge = o.merge;
  if (o.progress) {
    c.progress = [f = o.progress](const indexer::BuildProgress& p) {
      f({p.files_done, p.files_total, p.bytes_done, p.seconds});
    };
  }
  if (o.on_skip) {
    c.on_skip = [f = o.on_skip](const std::string& path, indexer::SkipReason why,
                                const std::string& detail) {
      f(path, indexer::SkipReasonName(why), detail);
    };
  }
  return c;
}

void Summarize(const indexer::BuildReport& r, IndexSummary* s) {
  if (s == nullptr) return;
  *s = IndexSummary{};
  s->documents = r.documents;
  for (size_t i = 0; i < r.skipped.size(); ++i) {
    if (r.skipped[i] != 0) {
      s->skipped.emplace_back(indexer::SkipReasonName(static_cast<indexer::SkipReason>(i)),
                              r.skipped[i]);
    }
  }
  s->added = r.added;
  s->changed = r.changed;
  s->removed = r.removed;
  s->unchanged = r.unchanged;
  s->rebuilt = r.rebuilt;
  s->why_rebuilt = r.why_rebuilt;
  s->segments_written = r.segments_written;
  s->merges = r.merges;
  s->segments = r.segments;
  s->terms = r.terms;
  s->postings = r.postings;
  s->input_bytes = r.input_bytes;
  s->index_bytes = r.index_bytes;
  s->seconds = r.seconds;
}

// The documents of each opened index that a query with `options` may return.
std::vector<query::IndexScope> ScopeOf(const query::IndexSet& set, const QueryOptions& options) {
  std::vector<query::IndexScope> out(set.indexes().size());
  if (options.scope.empty() && options.working_dir.empty()) return out;
  std::vector<std::string> entries;
  for (const std::string& e : options.scope) {
    entries.push_back(!e.empty() && e[0] == '/' ? query::CanonicalPath(e) : e);
  }
  const std::string dir =
      options.working_dir.empty() ? "" : query::CanonicalPath(options.working_dir);
  // An absolute entry must lie in some index's tree: a path outside all of them is a mistake.
  std::string roots;
  for (const query::IndexSet::Index& index : set.indexes()) {
    roots += (roots.empty() ? "" : ", ") + (index.root.empty() ? "(in-memory)" : index.root);
  }
  for (const std::string& e : entries) {
    bool somewhere = e.empty() || e[0] != '/';
    for (const query::IndexSet::Index& index : set.indexes()) {
      somewhere = somewhere || query::ResolveScopeEntry(index.root, e).has_value();
    }
    Ensure(somewhere, ErrorKind::kInvalidArgument,
           e + ": not inside the indexed directory (" + roots + ")");
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& root = set.indexes()[i].root;
    query::IndexScope& s = out[i];
    if (std::optional<std::string> inside = query::FolderInside(root, dir);
        !dir.empty() && inside) {
      s = {false, {*inside}};
    }
    if (entries.empty()) continue;
    query::Prefixes selected;
    for (const std::string& e : entries) {
      if (std::optional<std::string> p = query::ResolveScopeEntry(root, e)) selected.push_back(*p);
    }
    s.prefixes = s.all ? selected : query::IntersectPrefixes(s.prefixes, selected);
    s.all = false;
  }
  for (query::IndexScope& s : out) {
    if (std::find(s.prefixes.begin(), s.prefixes.end(), "") != s.prefixes.end()) s = {};
  }
  return out;
}

double MicrosSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

query::QueryMode ModeOf(QuerySyntax syntax) {
  return syntax == QuerySyntax::kWords ? query::QueryMode::kWords : query::QueryMode::kLanguage;
}

// Adds the live documents of `seg` to *counts by encoding name; nothing if a chunk of its
// document table is damaged.
void CountEncodings(const query::IndexSet::Segment& seg, std::map<std::string, uint64_t>* counts) {
  const format::SegmentReader& r = *seg.reader;
  std::vector<uint64_t> by_index(r.encodings().size(), 0);
  try {
    for (uint32_t d = 0; d < r.doc_count(); ++d) {
      if (seg.is_deleted(d)) continue;
      const uint32_t e = r.doc(d).encoding;
      if (e >= by_index.size()) return;  // Check reports it
      ++by_index[e];
    }
  } catch (const Error&) {
    return;
  }
  for (size_t e = 0; e < by_index.size(); ++e) {
    if (by_index[e] != 0) (*counts)[r.encodings()[e]] += by_index[e];
  }
}

std::vector<indexer::MemoryDocument> MemoryDocuments(const std::vector<Document>& documents) {
  std::vector<indexer::MemoryDocument> docs;
  docs.reserve(documents.size());
  for (const Document& d : documents) docs.push_back({d.name, d.text, d.mtime_ns});
  return docs;
}

}  // namespace

Status BuildIndex(const std::string& dir, const std::string& index_path,
                  const IndexOptions& options, IndexSummary* summary) {
  return GuardIndex({index_path}, [&] {
    indexer::BuildReport report;
    indexer::UpdateIndexFromDirectory(dir, index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

Status BuildIndexFromDocuments(const std::vector<Document>& documents,
                               const std::string& index_path, const IndexOptions& options,
                               IndexSummary* summary) {
  return Guard([&] {
    indexer::BuildConfig config = ConfigOf(options);
    config.rebuild = true;
    indexer::BuildReport report;
    indexer::UpdateIndexFromMemory(MemoryDocuments(documents), {}, index_path, config, &report);
    Summarize(report, summary);
  });
}

Status UpdateDocuments(const std::vector<Document>& upserts,
                       const std::vector<std::string>& deletes, const std::string& index_path,
                       const IndexOptions& options, IndexSummary* summary) {
  return Guard([&] {
    indexer::BuildReport report;
    indexer::UpdateIndexFromMemory(MemoryDocuments(upserts), deletes, index_path, ConfigOf(options),
                                   &report);
    Summarize(report, summary);
  });
}

Status CompactIndex(const std::string& index_path, const IndexOptions& options,
                    IndexSummary* summary) {
  return GuardIndex({index_path}, [&] {
    indexer::BuildReport report;
    indexer::CompactIndex(index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

Status ReadIndexOptions(const std::string& index_path, IndexOptions* options) {
  return Guard([&] {
    indexer::BuildConfig c = ConfigOf(*options);
    Ensure(indexer::ReadStoredSettings(index_path, &c), ErrorKind::kNotFound,
           index_path + ": no index here");
    options->fp_rate = c.fp_rate;
    options->sparse_max_df = c.sparse_max_df;
    options->max_file_size = c.max_file_size;
    options->encoding = c.documents.encoding;
    options->hidden = c.documents.hidden;
    options->no_ignore = c.documents.no_ignore;
    options->globs = c.documents.globs;
    options->max_decompressed_bytes = c.documents.max_decompressed_bytes;
    options->keep_diacritics = !c.tokens.fold_diacritics;
  });
}

Status CompareWithTree(const std::string& index_path, TreeStatus* status) {
  return GuardIndex({index_path}, [&] {
    indexer::TreeStatus t = indexer::CompareWithTree(index_path);
    *status = TreeStatus{};
    status->root = std::move(t.root);
    status->documents = t.documents;
    status->unchanged = t.unchanged;
    status->added = std::move(t.added);
    status->changed = std::move(t.changed);
    status->removed = std::move(t.removed);
  });
}

Status Tokenize(std::string_view text, std::vector<std::string>* tokens,
                const IndexOptions& options) {
  return Guard([&] { *tokens = tokenizer::TokenSet(text, RulesOf(options)); });
}

Status TokenizeInOrder(std::string_view text, std::vector<TextToken>* tokens,
                       const IndexOptions& options) {
  tokens->clear();
  return TokenizeInOrder(
      text, [&](const TextToken& t) { tokens->push_back(t); }, options);
}

Status TokenizeInOrder(std::string_view text, const std::function<void(const TextToken&)>& on_token,
                       const IndexOptions& options) {
  struct Forward : tokenizer::OffsetTokenSink {
    const std::function<void(const TextToken&)>* on_token;
    TextToken token;
    bool OnToken(std::string_view t, uint64_t begin, uint64_t end, bool,
                 tokenizer::TokenRole role) override {
      token.token.assign(t);
      token.begin = begin;
      token.end = end;
      token.role = role == tokenizer::TokenRole::kWhole  ? TokenRole::kWhole
                   : role == tokenizer::TokenRole::kPart ? TokenRole::kPart
                                                         : TokenRole::kWord;
      (*on_token)(token);
      return true;
    }
  } forward;
  forward.on_token = &on_token;
  return Guard([&] {
    tokenizer::Tokenizer tokenizer(RulesOf(options));
    tokenizer.TokenizeWithOffsets(text, forward);
  });
}

struct ParsedQuery::Rep {
  bool plain = false;
  std::vector<std::string> terms;  // when plain: its terms, sorted and distinct
  bool words = false;              // a word list (QuerySyntax::kWords): root() made of terms
  // The query's tree. A word list's is made the first time it is asked for (to print the
  // query, or for matching lines): answering it needs only `terms`, and its nodes cost an
  // allocation a term, for every query of a --queries file.
  const query::QueryNode& root() const {
    if (words) std::call_once(root_made, [this] { tree = query::WordsRoot(terms); });
    return tree;
  }
  mutable query::QueryNode tree;
  mutable std::once_flag root_made;

  // What was parsed, read under the default token rules: to read it again for an index built
  // with other rules (Under).
  std::vector<std::string> texts;
  QuerySyntax syntax = QuerySyntax::kLanguage;
  bool arguments = false;  // texts are command-line arguments (ParseArguments)

  // The query as an index built under `rules` reads it: itself for the default rules, or for
  // a query of ASCII text (which the rules read alike); else parsed again, once. Throws
  // Error(kInvalidArgument) if that parse fails.
  const Rep& Under(const tokenizer::TokenRules& rules) const;
  mutable std::once_flag other_made;
  mutable std::shared_ptr<const Rep> other;
  mutable std::string other_error;
};

namespace {

// A parse's error as a Status (with *error set), or ok; `several`: name the argument.
Status ParseStatus(const query::ParsedQuery& parsed, bool several, QueryError* error) {
  if (parsed.ok()) return Status();
  const query::ParseError& e = *parsed.error;
  if (error != nullptr) *error = QueryError{e.argument, e.position, e.reason};
  std::string where = several ? "query argument " + std::to_string(e.argument + 1) : "query";
  return Status(Status::Code::kInvalidArgument,
                where + ": " + e.reason + " (at byte " + std::to_string(e.position) + ")");
}

// Parses `texts` (one query string, or command-line arguments) under `rules` into *rep, or
// returns the parse's error as a Status (with *error set). A word list keeps its terms alone
// (its tree is made when needed).
Status MakeRep(std::vector<std::string> texts, QuerySyntax syntax, bool arguments,
               const tokenizer::TokenRules& rules, QueryError* error,
               std::shared_ptr<const ParsedQuery::Rep>* rep) {
  rep->reset();
  auto r = std::make_shared<ParsedQuery::Rep>();
  if (syntax == QuerySyntax::kWords && !arguments) {
    query::ParsedQuery failed;
    failed.error = query::ParseWordTerms(texts[0], &r->terms, rules);
    if (failed.error) return ParseStatus(failed, false, error);
    r->plain = r->words = true;
  } else {
    query::ParsedQuery parsed = arguments
                                    ? query::ParseQueryArguments(texts, ModeOf(syntax), rules)
                                    : query::ParseQueryString(texts[0], ModeOf(syntax), rules);
    if (Status s = ParseStatus(parsed, arguments && texts.size() > 1, error); !s.ok()) return s;
    r->tree = std::move(parsed.root);
    r->plain = query::IsPlainConjunction(r->tree, &r->terms);
  }
  r->texts = std::move(texts);
  r->syntax = syntax;
  r->arguments = arguments;
  *rep = std::move(r);
  return Status();
}

}  // namespace

const ParsedQuery::Rep& ParsedQuery::Rep::Under(const tokenizer::TokenRules& rules) const {
  const bool ascii = std::all_of(texts.begin(), texts.end(), [](const std::string& t) {
    return FindNonAscii(t, 0) == t.size();
  });
  if (rules == tokenizer::TokenRules{} || ascii) return *this;
  std::call_once(other_made, [&] {
    Status s = MakeRep(texts, syntax, arguments, rules, nullptr, &other);
    if (!s.ok()) other_error = s.message();
  });
  Ensure(other != nullptr, ErrorKind::kInvalidArgument, other_error);
  return *other;
}

Status ParsedQuery::Parse(std::string_view text, QuerySyntax syntax, ParsedQuery* query,
                          QueryError* error) {
  Status s;
  Status g =
      Guard([&] { s = MakeRep({std::string(text)}, syntax, false, {}, error, &query->rep_); });
  return g.ok() ? s : g;
}

Status ParsedQuery::ParseArguments(const std::vector<std::string>& arguments, QuerySyntax syntax,
                                   ParsedQuery* query, QueryError* error) {
  Status s;
  Status g = Guard([&] { s = MakeRep(arguments, syntax, true, {}, error, &query->rep_); });
  return g.ok() ? s : g;
}

std::string ParsedQuery::ToString() const { return rep_ ? rep_->root().ToString() : ""; }

bool ParsedQuery::plain() const { return rep_ && rep_->plain; }

LineWindow TrimLine(const MatchLine& line, size_t max_columns) {
  std::vector<answers::LineSpan> spans;
  for (const LineSpan& s : line.spans) spans.push_back({s.start, s.end});
  answers::TrimmedLine t = answers::TrimLine(line.text, spans, max_columns);
  LineWindow w;
  w.start = t.start;
  w.end = t.end;
  w.cut_before = t.cut_before;
  w.cut_after = t.cut_after;
  for (const answers::LineSpan& s : t.spans) w.spans.push_back({s.start, s.end});
  return w;
}

struct Index::Rep {
  Rep(const std::vector<std::string>& paths, const OpenOptions& options)
      : set(paths,
            options.one_shot ? format::IndexFile::Access::kOneShot
                             : format::IndexFile::Access::kRandom,
            options.map_ahead),
        first_path(paths.at(0)),
        paths(paths) {}
  // ScopeOf(set, options), resolved once for each scope and absolute working_dir (a relative
  // one depends on the process's directory at the call, so it is resolved every time):
  // resolving costs a realpath (a readlink per component), several microseconds, a third of a
  // whole query on kjv, and `query --queries` asks the same each time.
  std::vector<query::IndexScope> Scope(const QueryOptions& options) const {
    if (options.scope.empty() && options.working_dir.empty()) {
      return std::vector<query::IndexScope>(set.indexes().size());
    }
    if (!options.working_dir.empty() && options.working_dir[0] != '/') return ScopeOf(set, options);
    std::lock_guard<std::mutex> lock(scope_mu);
    if (!scope_known || options.scope != scope_entries || options.working_dir != scope_dir) {
      scope_value = ScopeOf(set, options);  // throws for a bad entry: nothing is cached then
      scope_entries = options.scope;
      scope_dir = options.working_dir;
      scope_known = true;
    }
    return scope_value;
  }
  query::IndexSet set;
  std::string first_path;
  std::vector<std::string> paths;  // as opened
  mutable std::mutex scope_mu;
  mutable bool scope_known = false;
  mutable std::vector<std::string> scope_entries;
  mutable std::string scope_dir;
  mutable std::vector<query::IndexScope> scope_value;
};

Index::Index(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Index::~Index() = default;

Status Index::Open(const std::string& path, std::unique_ptr<Index>* index) {
  return Open(std::vector<std::string>{path}, index);
}

Status Index::Open(const std::vector<std::string>& paths, std::unique_ptr<Index>* index) {
  return Open(paths, OpenOptions{}, index);
}

Status Index::Open(const std::vector<std::string>& paths, const OpenOptions& options,
                   std::unique_ptr<Index>* index) {
  return GuardIndex(paths, [&] {
    Ensure(!paths.empty(), ErrorKind::kInvalidArgument, "no index to open");
    // One query, then exit: where a page's first touch is a trip to the hypervisor, its fresh
    // buffers in huge pages; where faults are cheap, the huge page's zeroing would cost more.
    if (options.one_shot && PageFaultsAreDear()) util::PrepareHugePageHeap(4 << 20);
    index->reset(new Index(std::make_unique<Rep>(paths, options)));
  });
}

const char* Version() { return BITSIFT_VERSION_STRING; }

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    const size_t len = Utf8SequenceLength(p, end);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), len);
      p += len;
    }
  }
  return out;
}

Status ReadDocumentText(const std::string& path, const IndexOptions& options, std::string* text) {
  return Guard([&] {
    text->clear();
    const indexer::BuildConfig config = ConfigOf(options);
    const size_t slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "."
                            : slash == 0               ? "/"
                                                       : path.substr(0, slash);
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    Ensure(!name.empty(), ErrorKind::kInvalidArgument, path + ": not a file");
    documents::FileFacts facts;
    std::string detail;
    const documents::SkipReason why = documents::ReadDocumentText(
        dir, name, config.max_file_size, config.documents, text, &facts, &detail);
    if (why == documents::SkipReason::kCount) return;
    const ErrorKind kind = why == documents::SkipReason::kVanished ? ErrorKind::kNotFound
                           : why == documents::SkipReason::kUnreadable
                               ? ErrorKind::kIo
                               : ErrorKind::kInvalidArgument;
    throw Error(kind, path + ": not indexed (" + documents::SkipReasonName(why) +
                          (detail.empty() ? "" : ": " + detail) + ")");
  });
}

Status Index::Find(const std::string& start_dir, std::string* index_path) {
  return Guard([&] {
    char* abs = ::realpath(start_dir.c_str(), nullptr);
    Ensure(abs != nullptr, ErrorKind::kNotFound, ErrnoMessage(start_dir, "cannot resolve", errno));
    std::string dir = abs;
    std::free(abs);
    const std::string resolved = dir;
    for (;;) {
      std::string candidate = (dir == "/" ? "" : dir) + "/.bitsift";
      struct stat st;
      // A directory is an index; a file is a 0.1 index (Open then says to rebuild it).
      if (::stat(candidate.c_str(), &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
        *index_path = candidate;
        return;
      }
      if (dir == "/") break;
      dir = DirectoryOf(dir);
    }
    throw Error(ErrorKind::kNotFound,
                "no index: no .bitsift in " + resolved +
                    " or any of its parents (run 'bitsift index DIR' or pass --index PATH)");
  });
}

Status Index::Query(const std::vector<std::string>& arguments, const QueryOptions& options,
                    QueryResult* result) const {
  const auto start = std::chrono::steady_clock::now();
  ParsedQuery q;
  Status s = ParsedQuery::ParseArguments(arguments, options.syntax, &q);
  if (!s.ok()) {
    *result = QueryResult{};
    return s;
  }
  return Answer(q, options, MicrosSince(start), result);
}

Status Index::Query(const ParsedQuery& query, const QueryOptions& options,
                    QueryResult* result) const {
  return Answer(query, options, 0, result);
}

Status Index::Answer(const ParsedQuery& parsed, const QueryOptions& options, double parse_us,
                     QueryResult* result) const {
  return GuardIndex(rep_->paths, [&] {
    *result = QueryResult{};
    const auto start = std::chrono::steady_clock::now();
    Ensure(!parsed.empty(), ErrorKind::kInvalidArgument, "query: not parsed (no query)");
    const ParsedQuery::Rep& q = parsed.rep_->Under(rep_->set.rules());
    // How a phrase's candidates are read: the embedder's texts, or the files as indexed.
    query::IndexSet::SegmentText text = [&](const query::IndexSet::Segment& s, uint32_t local,
                                            std::string* out) {
      if (options.document_text) return options.document_text(document(s.first_id + local), out);
      std::string detail;
      return query::ReadIndexedText(rep_->set, s, local, out, &detail) == query::TextState::kRead;
    };
    std::vector<query::IndexScope> scope = rep_->Scope(options);
    result->scoped =
        std::any_of(scope.begin(), scope.end(), [](const query::IndexScope& s) { return !s.all; });
    query::SetQueryStats st;
    double files_us = 0;
    // With check_files, vanished files leave gaps that the next matches fill: ask again for
    // as many more as were left out (rarely needed: files vanish between updates).
    for (uint64_t ask = options.limit;;) {
      // A plain conjunction takes 0.1's path: the row AND and the forward store, nothing else.
      std::vector<uint32_t> documents =
          q.plain ? rep_->set.Search(q.terms, ask, &st, result->scoped ? &scope : nullptr,
                                     options.parallel)
                  : rep_->set.Evaluate(q.root(), ask, text, options.parallel, &st,
                                       result->scoped ? &scope : nullptr, &result->unreadable);
      // Verify the records document() will read for these results (chunks are verified
      // lazily): damage there fails this Query (with no documents), never meets document().
      // SetAsideStaleFiles reads (so verifies) them itself, on two threads. A cold index reads
      // them in one round of requests first.
      if (!options.count_only) rep_->set.WillNeedDocuments(documents);
      for (uint32_t id : documents) {
        if (options.check_files || options.count_only) break;
        const query::IndexSet::Segment& s = rep_->set.SegmentOf(id);
        (void)s.reader->path(id - s.first_id);
      }
      result->documents = std::move(documents);
      if (!options.check_files) break;
      const uint64_t found = result->documents.size();
      const auto files_start = std::chrono::steady_clock::now();
      SetAsideStaleFiles(result, options.known_files);
      files_us +=
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - files_start)
              .count();
      if (options.limit == 0 || found < ask || result->documents.size() >= options.limit) break;
      ask = options.limit + result->vanished.size();
    }
    if (options.limit != 0 && result->documents.size() > options.limit) {
      result->documents.resize(options.limit);
    }
    QueryStats& out = result->stats;
    out.terms = st.terms;
    out.candidates = st.candidates;
    out.false_positives = st.false_positives;
    out.rows_read = st.rows_read;
    out.bytes_read = st.bytes_read;
    out.segments_searched = st.segments_searched;
    out.segments_skipped = st.segments_skipped;
    out.segments_out_of_scope = st.segments_out_of_scope;
    out.prefix_terms = st.prefix_terms;
    out.phrase_candidates = st.phrase_candidates;
    out.text_bytes = st.text_bytes;
    out.phrase_us = st.phrase_us;
    out.parse_us = st.parse_us + parse_us;
    out.and_us = st.and_us;
    out.verify_us = st.verify_us;
    out.files_us = files_us;
    out.total_us = MicrosSince(start) + parse_us - files_us;
  });
}

Status Index::MatchingLines(uint32_t id, const ParsedQuery& query, const LineOptions& options,
                            std::vector<LineGroup>* groups) const {
  Status stale;
  Status s = Guard([&] {
    groups->clear();
    Ensure(!query.empty(), ErrorKind::kInvalidArgument, "query: not parsed (no query)");
    const query::IndexSet::Segment& seg = rep_->set.SegmentOf(id);
    std::string text;
    documents::LineOrigins origins;  // where the lines come from in the file
    if (options.document_text) {
      if (!options.document_text(document(id), &text)) {
        throw Error(ErrorKind::kIo,
                    std::string(seg.reader->path(id - seg.first_id)) + ": its text cannot be read");
      }
    } else {
      std::string detail;
      const std::string path =
          ShellPath(document(id), "");  // the file's absolute path, for messages
      switch (query::ReadIndexedText(rep_->set, seg, id - seg.first_id, &text, &detail, &origins)) {
        case query::TextState::kRead:
          break;
        case query::TextState::kChanged:
          stale = Status(Status::Code::kStale, path + ": changed since it was indexed");
          return;
        case query::TextState::kVanished:
          stale = Status(Status::Code::kStale, path + ": vanished since it was indexed");
          return;
        case query::TextState::kUnreadable:
          throw Error(ErrorKind::kIo, path + ": cannot be read: " + detail);
        case query::TextState::kNoFile:
          throw Error(ErrorKind::kInvalidArgument,
                      path + ": an in-memory document (give LineOptions::document_text)");
      }
    }
    const tokenizer::TokenRules rules = rep_->set.rules();
    query::QueryMatcher matcher(query.rep_->Under(rules).root(), rules);
    answers::LineOptions lo;
    lo.before = options.before;
    lo.after = options.after;
    const bool extracted = origins.paged || !origins.source_lines.empty();
    for (answers::LineGroup& g : answers::MatchingLines(text, matcher, lo, &origins)) {
      LineGroup out;
      for (answers::Line& l : g.lines) {
        MatchLine m;
        m.number = extracted ? l.source_line : l.number;
        m.text_line = extracted ? l.number : 0;
        m.page = l.page;
        m.text = text.substr(l.begin, l.end - l.begin);
        m.match = l.match;
        for (const answers::LineSpan& sp : l.spans) m.spans.push_back({sp.start, sp.end});
        out.lines.push_back(std::move(m));
      }
      groups->push_back(std::move(out));
    }
  });
  return s.ok() && !stale.ok() ? stale : s;
}

void Index::SetAsideStaleFiles(QueryResult* result,
                               std::vector<std::optional<FileState>>* known) const {
  const std::vector<uint32_t>& docs = result->documents;
  std::vector<answers::FileState> states;
  if (known == nullptr) {
    states = answers::LookAtDocumentFiles(rep_->set, docs);
  } else {  // a run's cache: each file looked at once however many queries return it
    if (known->size() != document_count()) known->resize(document_count());
    std::vector<uint32_t> unknown;  // the documents whose files are looked at
    for (uint32_t id : docs) {
      if (!(*known)[id]) {
        unknown.push_back(id);
      } else {  // the record and path document() will read: verified as looking at it does
        const query::IndexSet::Segment& s = rep_->set.SegmentOf(id);
        (void)s.reader->path(id - s.first_id);
      }
    }
    const std::vector<answers::FileState> looked = answers::LookAtDocumentFiles(rep_->set, unknown);
    for (size_t k = 0; k < unknown.size(); ++k) (*known)[unknown[k]] = FileStateOf(looked[k]);
    states.reserve(docs.size());
    for (uint32_t id : docs) states.push_back(static_cast<answers::FileState>(*(*known)[id]));
  }
  std::vector<uint32_t> kept;
  result->changed.clear();
  result->vanished.clear();
  for (size_t i = 0; i < docs.size(); ++i) {
    const uint32_t id = docs[i];
    if (states[i] == answers::FileState::kVanished) {
      result->vanished.push_back(id);
      continue;
    }
    if (states[i] == answers::FileState::kChanged) result->changed.push_back(id);
    kept.push_back(id);
  }
  result->documents.swap(kept);
}

FileState Index::file_state(uint32_t id) const {
  return FileStateOf(answers::LookAtDocumentFile(rep_->set, id));
}

std::string ShellQuote(const std::string& s) { return answers::ShellQuote(s); }

std::string IndexCommand(const std::string& root, const std::string& index_path, bool rebuild) {
  return answers::IndexCommand(root, index_path, rebuild);
}

void ShellPathTo(std::string_view root, std::string_view path, std::string_view from_dir,
                 std::string* out) {
  answers::ShellPathTo(root, path, from_dir, out);
}

std::vector<std::string> PathLines(const Index& index, const uint32_t* ids, size_t n,
                                   std::string_view prefix, std::string_view from_dir, char end) {
  const bool shared = n >= kParallelPathLines;
  const size_t piece = shared ? kPathLinesPiece : std::max<size_t>(n, 1);
  std::vector<std::string> pieces((n + piece - 1) / piece);
  auto write_piece = [&](size_t k) {
    std::string& out = pieces[k];
    std::string path;
    for (size_t i = k * piece; i < std::min(n, (k + 1) * piece); ++i) {
      const DocumentPath where = index.document_path(ids[i]);
      ShellPathTo(where.root, where.path, from_dir, &path);
      out.append(prefix).append(path).push_back(end);
    }
  };
  if (shared) {
    util::RunShared(pieces.size(), write_piece);
  } else if (!pieces.empty()) {
    write_piece(0);
  }
  return pieces;
}

void MatchingLinesOf(const Index& index, const uint32_t* ids, size_t n, const ParsedQuery& query,
                     const LineOptions& options, std::vector<std::vector<LineGroup>>* groups,
                     std::vector<Status>* statuses) {
  groups->assign(n, {});
  statuses->assign(n, Status());
  auto one = [&](size_t i) {
    (*statuses)[i] = index.MatchingLines(ids[i], query, options, &(*groups)[i]);
  };
  if (options.parallel) {
    util::RunShared(
        n, one,
        n >= kParallelMatchingLines ? util::HelperNeed::kStart : util::HelperNeed::kIfPolling);
  } else {
    for (size_t i = 0; i < n; ++i) one(i);
  }
}

std::string ShellPath(const DocumentInfo& d, const std::string& from_dir) {
  std::string out;
  ShellPathTo(d.root, d.path, from_dir, &out);
  return out;
}

uint64_t Index::document_count() const { return rep_->set.id_count(); }
uint64_t Index::live_document_count() const { return rep_->set.live_documents(); }

DocumentPath Index::document_path(uint32_t id) const {
  try {
    const query::IndexSet::Segment& s = rep_->set.SegmentOf(id);
    return {rep_->set.indexes()[s.index].root, s.reader->path(id - s.first_id)};
  } catch (const Error&) {
    return {};  // a damaged record, as document() (Query verified those of its results)
  }
}

DocumentInfo Index::document(uint32_t id) const {
  try {
    const query::IndexSet::Segment& s = rep_->set.SegmentOf(id);
    const uint32_t local = id - s.first_id;
    const format::DocRecord d = s.reader->doc(local);
    DocumentInfo info;
    info.path = std::string(s.reader->path(local));
    info.root = rep_->set.indexes()[s.index].root;
    info.index = s.index;
    info.size = d.size;
    info.mtime_ns = d.mtime_ns;
    info.terms = d.term_count;
    info.file_size = d.file_size;
    info.ctime_ns = d.ctime_ns;
    info.inode = d.inode;
    info.encoding = s.reader->encoding(d);
    return info;
  } catch (const Error&) {
    // A damaged record (Query verified those of its results, so not one of them).
    return {};
  }
}

const std::string& Index::path() const { return rep_->first_path; }

std::vector<std::string> Index::paths() const {
  std::vector<std::string> out;
  for (const query::IndexSet::Index& x : rep_->set.indexes()) out.push_back(x.dir);
  return out;
}

Status Index::Check() const {
  return GuardIndex(rep_->paths, [&] { rep_->set.Check(); });
}

Status CheckIndex(const std::string& path) {
  std::unique_ptr<Index> index;
  Status s = Index::Open(path, &index);
  return s.ok() ? index->Check() : s;
}

IndexStats Index::Stats() const {
  const query::IndexSet& set = rep_->set;
  IndexStats s;
  std::map<std::string, uint64_t> encodings;
  s.root = set.indexes().empty() ? "" : set.indexes()[0].root;
  s.documents = set.live_documents();
  uint64_t rows = 0, sparse = 0, band_bytes = 0, forward = 0, dictionary = 0, doc_table = 0,
           meta = 0;
  using format::SectionId;
  for (const query::IndexSet::Segment& seg : set.segments()) {
    const format::SegmentReader& r = *seg.reader;
    s.icu_version = std::string(r.meta().icu_version,
                                strnlen(r.meta().icu_version, sizeof(r.meta().icu_version)));
    s.terms += r.meta().term_count;
    s.exact_terms += r.exact_terms();
    s.sparse_terms += r.meta().term_count - r.meta().sparse_first;
    s.bloom_terms += r.meta().sparse_first - r.exact_terms();
    s.fp_rate = r.meta().fp_rate;
    s.file_bytes += r.file_size();
    s.segments.push_back({format::SegmentFileName(seg.number), r.doc_count(), seg.deleted.size(),
                          r.meta().term_count, r.band_count(), r.file_size()});
    for (uint64_t b = 0; b < r.band_count(); ++b) {
      const format::BandRecord& band = r.band(b);
      BandStats bs;
      bs.width = band.width;
      bs.k = band.k;
      bs.documents = band.doc_count;
      bs.max_terms = band.max_terms;
      uint64_t set_bits = 0;
      try {
        for (uint64_t row = 0; row < band.width; ++row) {
          const uint64_t* p = r.Row(band, row);
          for (uint64_t w = 0; w < band.words_per_row; ++w)
            set_bits += static_cast<uint64_t>(__builtin_popcountll(p[w]));
        }
        bs.fill_ratio =
            band.doc_count && band.width
                ? static_cast<double>(set_bits) / (static_cast<double>(band.width) * band.doc_count)
                : 0;
      } catch (const Error&) {
        bs.fill_ratio = std::numeric_limits<double>::quiet_NaN();  // a damaged chunk of its rows
      }
      // A band of width 0 (huge documents) has no signature: every one is a candidate.
      bs.expected_fp_rate =
          band.width ? format::ExpectedFalsePositiveRate({band.width, band.k}, band.max_terms)
                     : 1.0;
      s.bands.push_back(bs);
    }
    CountEncodings(seg, &encodings);
    rows += r.SectionBytes(SectionId::kRows);
    sparse += r.SectionBytes(SectionId::kSparseData) + r.SectionBytes(SectionId::kSparseIndex);
    band_bytes += r.SectionBytes(SectionId::kBandDocs) + r.SectionBytes(SectionId::kBands);
    forward += r.SectionBytes(SectionId::kForwardData) + r.SectionBytes(SectionId::kForwardOffsets);
    dictionary += r.SectionBytes(SectionId::kDictIndex) + r.SectionBytes(SectionId::kDictBlocks) +
                  r.SectionBytes(SectionId::kDfRuns);
    doc_table += r.SectionBytes(SectionId::kDocBands) + r.SectionBytes(SectionId::kDocFacts) +
                 r.SectionBytes(SectionId::kDocFactsIndex);
    meta += r.SectionBytes(SectionId::kMeta);
  }
  s.section_bytes = {{"signature rows", rows},
                     {"document lists", sparse},
                     {"band columns", band_bytes},
                     {"forward store", forward},
                     {"dictionary", dictionary},
                     {"document table", doc_table},
                     {"meta", meta}};
  s.encodings.assign(encodings.begin(), encodings.end());
  std::stable_sort(s.encodings.begin(), s.encodings.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return s;
}

}  // namespace bitsift
