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

#include "answers/index_engine.h"
#include "answers/index_location.h"
#include "answers/lines.h"
#include "answers/query_form.h"
#include "answers/shell_paths.h"
#include "documents/file_walker.h"
#include "indexer/index_builder.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/files.h"
#include "util/helper_thread.h"
#include "util/memory.h"
#include "util/utf8.h"

namespace bitsift {
namespace {

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
  std::string command = answers::RebuildCommand(dir);
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
  rules.stem_english = o.stem;
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
  c.documents.shard_count = o.shard_count;
  c.documents.shard = o.shard;
  c.positions = o.positions;
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

// Adds the counts of `one` (a shard's update) to *all.
void AddSummary(const IndexSummary& one, IndexSummary* all) {
  all->documents += one.documents;
  for (const auto& skip : one.skipped) {
    auto at = std::find_if(all->skipped.begin(), all->skipped.end(),
                           [&](const auto& x) { return x.first == skip.first; });
    if (at == all->skipped.end()) {
      all->skipped.push_back(skip);
    } else {
      at->second += skip.second;
    }
  }
  all->added += one.added;
  all->changed += one.changed;
  all->removed += one.removed;
  all->unchanged += one.unchanged;
  all->rebuilt = all->rebuilt || one.rebuilt;
  if (all->why_rebuilt.empty()) all->why_rebuilt = one.why_rebuilt;
  all->segments_written += one.segments_written;
  all->merges += one.merges;
  all->segments += one.segments;
  all->terms += one.terms;
  all->postings += one.postings;
  all->input_bytes += one.input_bytes;
  all->index_bytes += one.index_bytes;
  all->seconds += one.seconds;
}

double MicrosSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
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
  if (format::IsShardedIndex(index_path)) {
    // Each shard in turn, with its own recorded shard (a sharded index built by bitsift-mpi,
    // updated without MPI); the summary adds them up.
    IndexSummary all;
    format::ShardMap map;
    Status s = Guard([&] { map = indexer::ReadShardMapOf(index_path); });
    if (!s.ok()) return s;
    for (uint32_t i = 0; i < map.count; ++i) {
      IndexOptions o = options;
      o.shard_count = map.count;
      o.shard = i;
      IndexSummary one;
      const std::string shard_dir = index_path + "/" + map.dirs[i];
      s = GuardIndex({shard_dir}, [&] {
        indexer::BuildReport report;
        indexer::UpdateIndexFromDirectory(dir, shard_dir, ConfigOf(o), &report);
        Summarize(report, &one);
      });
      if (!s.ok()) return s;
      AddSummary(one, &all);
    }
    if (summary != nullptr) *summary = all;
    return Status();
  }
  return GuardIndex({index_path}, [&] {
    indexer::BuildReport report;
    indexer::UpdateIndexFromDirectory(dir, index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

uint32_t ShardOfPath(std::string_view relative_path, uint32_t shards) {
  return documents::ShardOfPath(relative_path, shards);
}

bool IsShardedIndex(const std::string& index_path) { return format::IsShardedIndex(index_path); }

Status ReadShardMap(const std::string& index_path, ShardMapInfo* map) {
  return Guard([&] {
    const format::ShardMap m = indexer::ReadShardMapOf(index_path);
    map->count = m.count;
    map->root = m.root;
    map->paths.clear();
    for (const std::string& d : m.dirs) map->paths.push_back(index_path + "/" + d);
  });
}

Status PrepareShardedIndex(const std::string& dir, const std::string& index_path, uint32_t count,
                           std::vector<std::string>* shard_paths) {
  return Guard([&] {
    indexer::PrepareShardedIndex(dir, index_path, count);
    if (shard_paths == nullptr) return;
    shard_paths->clear();
    for (uint32_t i = 0; i < count; ++i) {
      shard_paths->push_back(index_path + "/" + format::ShardDirName(i));
    }
  });
}

Status WriteShardMap(const std::string& dir, const std::string& index_path, uint32_t count) {
  return Guard([&] { indexer::WriteShardMapOf(dir, index_path, count); });
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
  if (format::IsShardedIndex(index_path)) {  // each shard in turn
    IndexSummary all;
    format::ShardMap map;
    Status s = Guard([&] { map = indexer::ReadShardMapOf(index_path); });
    for (uint32_t i = 0; s.ok() && i < map.count; ++i) {
      IndexSummary one;
      s = CompactIndex(index_path + "/" + map.dirs[i], options, &one);
      AddSummary(one, &all);
    }
    if (s.ok() && summary != nullptr) *summary = all;
    return s;
  }
  return GuardIndex({index_path}, [&] {
    indexer::BuildReport report;
    indexer::CompactIndex(index_path, ConfigOf(options), &report);
    Summarize(report, summary);
  });
}

Status ReadIndexOptions(const std::string& index_path, IndexOptions* options) {
  return Guard([&] {
    indexer::BuildConfig c = ConfigOf(*options);
    // A sharded index's settings are its first shard's (all were built with the same), but
    // for the shard itself, which BuildIndex sets for each.
    const std::string dir = format::IsShardedIndex(index_path)
                                ? index_path + "/" + indexer::ReadShardMapOf(index_path).dirs.at(0)
                                : index_path;
    Ensure(indexer::ReadStoredSettings(dir, &c), ErrorKind::kNotFound,
           index_path + ": no index here");
    if (dir != index_path) c.documents.shard_count = c.documents.shard = 0;
    options->fp_rate = c.fp_rate;
    options->sparse_max_df = c.sparse_max_df;
    options->max_file_size = c.max_file_size;
    options->encoding = c.documents.encoding;
    options->hidden = c.documents.hidden;
    options->no_ignore = c.documents.no_ignore;
    options->globs = c.documents.globs;
    options->max_decompressed_bytes = c.documents.max_decompressed_bytes;
    options->keep_diacritics = !c.tokens.fold_diacritics;
    options->stem = c.tokens.stem_english;
    options->positions = c.positions;
    options->shard_count = c.documents.shard_count;
    options->shard = c.documents.shard;
  });
}

Status CompareWithTree(const std::string& index_path, TreeStatus* status) {
  if (!format::IsShardedIndex(index_path)) {
    return GuardIndex({index_path}, [&] { *status = indexer::CompareWithTree(index_path); });
  }
  // A sharded index: each shard against its files, the lists merged in path order.
  return Guard([&] {
    const format::ShardMap map = indexer::ReadShardMapOf(index_path);
    TreeStatus all;
    all.root = map.root;
    for (const std::string& d : map.dirs) {
      const TreeStatus one = indexer::CompareWithTree(index_path + "/" + d);
      all.documents += one.documents;
      all.unchanged += one.unchanged;
      all.added.insert(all.added.end(), one.added.begin(), one.added.end());
      all.changed.insert(all.changed.end(), one.changed.begin(), one.changed.end());
      all.removed.insert(all.removed.end(), one.removed.begin(), one.removed.end());
    }
    std::sort(all.added.begin(), all.added.end());
    std::sort(all.changed.begin(), all.changed.end());
    std::sort(all.removed.begin(), all.removed.end());
    *status = std::move(all);
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

// The library's parsed query (answers::QueryForm), behind the public type's opaque pointer.
struct ParsedQuery::Rep : answers::QueryForm {};

namespace {

// Parses `texts` (one query string, or command-line arguments) into *rep, or returns the
// parse's error as a Status (with *error set).
Status MakeRep(std::vector<std::string> texts, QuerySyntax syntax, bool arguments,
               QueryError* error, std::shared_ptr<const ParsedQuery::Rep>* rep) {
  rep->reset();
  const bool several = arguments && texts.size() > 1;
  auto r = std::make_shared<ParsedQuery::Rep>();
  if (auto e = answers::QueryForm::Parse(std::move(texts), syntax, arguments, {}, r.get())) {
    if (error != nullptr) *error = QueryError{e->argument, e->position, e->reason};
    std::string where = several ? "query argument " + std::to_string(e->argument + 1) : "query";
    return Status(Status::Code::kInvalidArgument,
                  where + ": " + e->reason + " (at byte " + std::to_string(e->position) + ")");
  }
  *rep = std::move(r);
  return Status();
}

}  // namespace

Status ParsedQuery::Parse(std::string_view text, QuerySyntax syntax, ParsedQuery* query,
                          QueryError* error) {
  Status s;
  Status g = Guard([&] { s = MakeRep({std::string(text)}, syntax, false, error, &query->rep_); });
  return g.ok() ? s : g;
}

Status ParsedQuery::ParseArguments(const std::vector<std::string>& arguments, QuerySyntax syntax,
                                   ParsedQuery* query, QueryError* error) {
  Status s;
  Status g = Guard([&] { s = MakeRep(arguments, syntax, true, error, &query->rep_); });
  return g.ok() ? s : g;
}

std::string ParsedQuery::ToString() const { return rep_ ? rep_->root().ToString() : ""; }

bool ParsedQuery::plain() const { return rep_ && rep_->plain(); }

LineWindow TrimLine(const MatchLine& line, size_t max_columns) {
  return answers::TrimLine(line.text, line.spans, max_columns);
}

struct Index::Rep {
  Rep(const std::vector<std::string>& paths, const OpenOptions& options) : engine(paths, options) {}
  answers::IndexEngine engine;
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

std::string ToValidUtf8(std::string_view s) { return bitsift::ValidUtf8(s); }

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
  return Guard([&] { *index_path = answers::FindIndex(start_dir); });
}

std::string Index::Resolve(const std::string& path) { return answers::ResolveIndexPath(path); }

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
  return GuardIndex(rep_->engine.opened_paths(), [&] {
    *result = QueryResult{};
    Ensure(!parsed.empty(), ErrorKind::kInvalidArgument, "query: not parsed (no query)");
    *result = rep_->engine.Answer(*parsed.rep_, options, parse_us);
  });
}

Status Index::MatchingLines(uint32_t id, const ParsedQuery& query, const LineOptions& options,
                            std::vector<LineGroup>* groups) const {
  answers::IndexEngine::LinesState state = answers::IndexEngine::LinesState::kRead;
  Status s = Guard([&] {
    groups->clear();
    Ensure(!query.empty(), ErrorKind::kInvalidArgument, "query: not parsed (no query)");
    state = rep_->engine.MatchingLines(id, *query.rep_, options, groups);
  });
  if (!s.ok() || state == answers::IndexEngine::LinesState::kRead) return s;
  return Status(Status::Code::kStale,
                ShellPath(document(id), "") + (state == answers::IndexEngine::LinesState::kChanged
                                                   ? ": changed since it was indexed"
                                                   : ": vanished since it was indexed"));
}

FileState Index::file_state(uint32_t id) const { return rep_->engine.StateOfFile(id); }

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
  return answers::PathLines([&](uint32_t id) { return index.document_path(id); }, ids, n, prefix,
                            from_dir, end);
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

Status Index::RankStatisticsOf(const ParsedQuery& query, const QueryOptions& options,
                               RankStatistics* statistics) const {
  return GuardIndex(rep_->engine.opened_paths(), [&] {
    *statistics = RankStatistics{};
    Ensure(!query.empty(), ErrorKind::kInvalidArgument, "query: not parsed (no query)");
    *statistics = rep_->engine.Statistics(*query.rep_, options);
  });
}

ShardDocument Index::shard_document(uint32_t id) const {
  const query::IndexSet::ShardPosition p = rep_->engine.set().ShardOf(id);
  return {p.index, p.shard, p.id};
}

bool Index::FromShardDocument(const ShardDocument& d, uint32_t* id) const {
  return rep_->engine.set().FromShard({d.index, d.shard, d.id}, id);
}

uint64_t Index::document_count() const { return rep_->engine.set().id_count(); }
uint64_t Index::live_document_count() const { return rep_->engine.set().live_documents(); }
DocumentPath Index::document_path(uint32_t id) const { return rep_->engine.Path(id); }
DocumentInfo Index::document(uint32_t id) const { return rep_->engine.Document(id); }

const std::string& Index::path() const { return rep_->engine.opened_paths().at(0); }

std::vector<std::string> Index::paths() const {
  std::vector<std::string> out;
  for (const auto& x : rep_->engine.set().indexes()) out.push_back(x.dir);
  return out;
}

Status Index::Check() const {
  return GuardIndex(rep_->engine.opened_paths(), [&] { rep_->engine.set().Check(); });
}

Status CheckIndex(const std::string& path) {
  std::unique_ptr<Index> index;
  Status s = Index::Open(path, &index);
  return s.ok() ? index->Check() : s;
}

IndexStats Index::Stats() const { return rep_->engine.Stats(); }

}  // namespace bitsift
