// `bitsift-mpi`: `bitsift index` and `bitsift query` over MPI ranks, each holding shards of one
// sharded index (docs/shards.md). Every rank parses the same command line with the CLI's own
// code (cli/); rank 0 prints, the other ranks' output goes nowhere.
//
//   mpirun -np N bitsift-mpi index DIR [--index PATH] [bitsift index's options]
//   mpirun -np N bitsift-mpi query [--index PATH] [bitsift query's options] (QUERY... | --queries
//   FILE)
//
// Shard s of a sharded index of S shards belongs to rank s mod N. A query: rank 0 sends its text
// to every rank; for a ranked query every rank counts its shards' statistics (N, total length,
// each part's df) and an allreduce sums them (the DFS step), so a score is the one a single
// index gives; every rank answers on its shards (at most --limit documents) and sends its
// documents as (shard, id in shard) with their scores; rank 0 merges them by path (or by score,
// then path) and prints them from its own view of every shard, as `bitsift query` prints.
// Under mpirun each rank's MPI process is a child of the process mpirun starts, which reports
// its death (Supervise): a rank that dies ends the run with exit 2 naming its shards.
#include <bitsift/bitsift.h>
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "cli/query_command.h"
#include "mpi/wire.h"

namespace bitsift::mpi {
namespace {

constexpr const char* kUsage =
    "usage: mpirun -np N bitsift-mpi index DIR [--index PATH] [options of 'bitsift index']\n"
    "       mpirun -np N bitsift-mpi query [--index PATH] [options of 'bitsift query'] "
    "(QUERY... | --queries FILE)\n"
    "A new index gets one shard per rank; shard s belongs to rank s mod N (any N later).\n"
    "'bitsift query --index PATH' reads a sharded index without MPI.\n";

int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int Size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The shards of `count` that rank `rank` of `size` holds: rank, rank + size, ...
std::vector<uint32_t> ShardsOf(int rank, int size, uint32_t count) {
  std::vector<uint32_t> out;
  for (uint32_t s = static_cast<uint32_t>(rank); s < count; s += static_cast<uint32_t>(size)) {
    out.push_back(s);
  }
  return out;
}

// The paths of the shards of `paths` that rank `rank` of `size` holds, comma-separated.
std::string HeldShards(int rank, int size, const std::vector<std::string>& paths) {
  std::string held;
  for (uint32_t k : ShardsOf(rank, size, static_cast<uint32_t>(paths.size()))) {
    held += (held.empty() ? "" : ", ") + paths[k];
  }
  return held;
}

// Where a rank says why it ends by a signal: its own stderr (kept when Silence sends the
// rest nowhere), and what it says: "bitsift-mpi: rank R (shards ...)".
int g_signal_fd = STDERR_FILENO;
char g_signal_who[2048] = "bitsift-mpi: a rank";

void Silence() {
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  g_signal_fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (g_signal_fd < 0) g_signal_fd = fd;
  ::dup2(fd, STDOUT_FILENO);
  ::dup2(fd, STDERR_FILENO);
  if (fd != g_signal_fd) ::close(fd);
}

// Appends the decimal digits of v to buf at *at (async-signal-safe).
void AppendNumber(char* buf, size_t size, size_t* at, int v) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && n < 11);
  while (n > 0 && *at + 1 < size) buf[(*at)++] = digits[--n];
}

// A rank ending by a signal it can catch (a crash: SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT;
// or SIGTERM, from outside or from mpirun stopping the run) says so, naming its shards, and
// ends the whole run with exit status 2 (MPI_Abort): never a partial answer. Only
// async-signal-safe calls before MPI_Abort, which is not, but is the last thing done.
void OnFatalSignal(int sig) {
  char line[2200];
  size_t at = 0;
  for (const char* p = g_signal_who; *p != '\0' && at + 1 < sizeof(line); ++p) line[at++] = *p;
  const char* tail = sig == SIGTERM ? " was stopped (signal " : " crashed (signal ";
  for (const char* p = tail; *p != '\0' && at + 1 < sizeof(line); ++p) line[at++] = *p;
  AppendNumber(line, sizeof(line), &at, sig);
  if (at + 1 < sizeof(line)) line[at++] = ')';
  const char* end = "; the run is stopped, the query in progress unanswered\n";
  for (const char* p = end; *p != '\0' && at + 1 < sizeof(line); ++p) line[at++] = *p;
  ssize_t ignored = ::write(g_signal_fd, line, at);
  (void)ignored;
  MPI_Abort(MPI_COMM_WORLD, 2);
  ::_exit(2);
}

constexpr int kGuarded[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM};

// The pipe to the supervising parent (Supervise), or -1.
int g_report_fd = -1;

// Names this rank in what OnFatalSignal prints and installs it (once for each signal); tells
// the supervising parent too.
void GuardSignals(const std::string& who) {
  std::snprintf(g_signal_who, sizeof(g_signal_who), "bitsift-mpi: %s", who.c_str());
  if (g_report_fd >= 0) {
    const std::string line = std::string(g_signal_who) + "\n";
    ssize_t ignored = ::write(g_report_fd, line.data(), line.size());
    (void)ignored;
  }
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : kGuarded) sigaction(sig, &sa, nullptr);
}

pid_t g_child = 0;
volatile sig_atomic_t g_forwarded = 0;  // a signal passed on to the child

void ForwardSignal(int sig) {
  g_forwarded = sig;
  if (g_child > 0) ::kill(g_child, sig);
}

// Under mpirun, before MPI_Init: the rank's work runs in a child process (the MPI process,
// which returns from here), and this process, the one mpirun started, waits for it. A child
// killed by a signal it cannot catch (`kill -9`, the kernel's OOM killer) is reported here,
// naming the shards it told (GuardSignals), and this process exits 2, so mpirun stops the run
// with exit status 2; otherwise this process exits as the child did. SIGTERM, SIGINT and
// SIGHUP are passed on to the child; the child gets SIGTERM when this process dies
// (PR_SET_PDEATHSIG), and says so, naming its shards.
void Supervise() {
  if (std::getenv("OMPI_COMM_WORLD_RANK") == nullptr) return;  // not under mpirun
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (child == 0) {
    ::close(fds[0]);
    g_report_fd = fds[1];
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(2);
    return;
  }
  ::close(fds[1]);
  g_child = child;
  struct sigaction sa {};
  sa.sa_handler = ForwardSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaction(sig, &sa, nullptr);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string told;  // the last line the child wrote
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;)
    told.append(buf, static_cast<size_t>(n));
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  // Stopped from outside (mpirun ending the run): this process ends as the child did.
  if (g_forwarded != 0 && WIFSIGNALED(status) && WTERMSIG(status) == g_forwarded) {
    ::signal(g_forwarded, SIG_DFL);
    ::raise(g_forwarded);
    ::_exit(128 + g_forwarded);
  }
  while (!told.empty() && told.back() == '\n') told.pop_back();
  if (const size_t nl = told.rfind('\n'); nl != std::string::npos) told.erase(0, nl + 1);
  if (told.empty()) told = "bitsift-mpi: rank " + std::string(std::getenv("OMPI_COMM_WORLD_RANK"));
  std::fprintf(stderr,
               "%s was killed (signal %d); the run is stopped, the query in progress "
               "unanswered\n",
               told.c_str(), WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ::_exit(2);
}

// The run's outcome is decided: from here a signal (mpirun stopping the other ranks once one
// has exited 1, "no match") does what it would do anyway.
void UnguardSignals() {
  for (int sig : kGuarded) signal(sig, SIG_DFL);
}

void PutStatus(const Status& s, Writer* w) {
  w->PutU64(static_cast<uint64_t>(s.code()));
  w->PutString(s.message());
}

Status GetStatus(Reader* r) {
  const auto code = static_cast<Status::Code>(r->GetU64());
  std::string message = r->GetString();
  return code == Status::Code::kOk ? Status() : Status(code, std::move(message));
}

// Every rank's status on every rank: the first failure (by rank), or ok.
Status AgreeOn(const Status& mine) {
  Writer w;
  PutStatus(mine, &w);
  std::vector<std::string> all = GatherBytes(w.bytes(), 0, MPI_COMM_WORLD);
  std::string first;
  if (Rank() == 0) {
    Writer out;
    PutStatus(Status(), &out);
    for (const std::string& bytes : all) {
      Reader r(bytes);
      if (!GetStatus(&r).ok()) {
        first = bytes;
        break;
      }
    }
    if (first.empty()) first = out.bytes();
  }
  BroadcastBytes(&first, 0, MPI_COMM_WORLD);
  Reader r(first);
  return GetStatus(&r);
}

// ---------------------------------------------------------------------------------------------
// index

// Whether an update of the shard at `path` with `o` would only recommit it: its recorded
// settings are `o`'s and no file of its shard was added, changed or removed (a walk of the
// tree, a stat a file). *status then holds its counts. An unchanged shard is left as it is, so
// an update writes only to the shards whose files changed.
bool Unchanged(const std::string& path, const IndexOptions& o, TreeStatus* status) {
  if (o.rebuild) return false;
  IndexOptions stored;
  if (!ReadIndexOptions(path, &stored).ok()) return false;
  const bool same = stored.fp_rate == o.fp_rate && stored.sparse_max_df == o.sparse_max_df &&
                    stored.max_file_size == o.max_file_size && stored.encoding == o.encoding &&
                    stored.hidden == o.hidden && stored.no_ignore == o.no_ignore &&
                    stored.globs == o.globs &&
                    stored.max_decompressed_bytes == o.max_decompressed_bytes &&
                    stored.keep_diacritics == o.keep_diacritics && stored.stem == o.stem &&
                    stored.shard_count == o.shard_count && stored.shard == o.shard;
  return same && CompareWithTree(path, status).ok() && status->added.empty() &&
         status->changed.empty() && status->removed.empty();
}

// Builds this rank's shards of the sharded index `index_path` of `dir` (a new index: one shard
// per rank; an existing one keeps its shard count), then rank 0 writes the shard map. The
// summary is every shard's, added up; the status the first failure, naming its shard. Collective.
Status BuildShards(const std::string& dir, const std::string& index_path,
                   const IndexOptions& options, IndexSummary* summary) {
  const int rank = Rank(), size = Size();
  // Rank 0 decides the shard count and makes the directory.
  uint64_t count = static_cast<uint64_t>(size);
  Status prepared;
  if (rank == 0) {
    ShardMapInfo existing;
    if (ReadShardMap(index_path, &existing).ok()) count = existing.count;
    prepared = PrepareShardedIndex(dir, index_path, static_cast<uint32_t>(count));
  }
  MPI_Bcast(&count, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (Status s = AgreeOn(prepared); !s.ok()) return s;
  std::vector<std::string> paths;
  Status mine = PrepareShardedIndex(dir, index_path, static_cast<uint32_t>(count), &paths);
  GuardSignals("rank " + std::to_string(rank) + " (building shards " +
               HeldShards(rank, size, paths) + ")");
  Writer w;
  IndexSummary sum;
  for (uint32_t shard : ShardsOf(rank, size, static_cast<uint32_t>(count))) {
    if (!mine.ok()) break;
    IndexOptions o = options;
    o.shard_count = static_cast<uint32_t>(count);
    o.shard = shard;
    if (rank != 0) o.progress = nullptr;
    IndexSummary one;
    TreeStatus unchanged;
    if (Unchanged(paths[shard], o, &unchanged)) {
      sum.documents += unchanged.documents;
      sum.unchanged += unchanged.unchanged;
      // Its segments and bytes, as a summary counts them: the files of its directory.
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(paths[shard], ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("seg-", 0) == 0) ++sum.segments;
        if (name.rfind("seg-", 0) == 0 || name == "MANIFEST") sum.index_bytes += e.file_size(ec);
      }
      continue;
    }
    Status s = BuildIndex(dir, paths[shard], o, &one);
    if (!s.ok()) {
      mine = Status(s.code(), "shard " + std::to_string(shard) + " (" + paths[shard] + ", rank " +
                                  std::to_string(rank) + "): " + s.message());
      break;
    }
    sum.documents += one.documents;
    sum.added += one.added;
    sum.changed += one.changed;
    sum.removed += one.removed;
    sum.unchanged += one.unchanged;
    sum.rebuilt = sum.rebuilt || one.rebuilt;
    if (sum.why_rebuilt.empty()) sum.why_rebuilt = one.why_rebuilt;
    sum.segments_written += one.segments_written;
    sum.merges += one.merges;
    sum.segments += one.segments;
    sum.input_bytes += one.input_bytes;
    sum.index_bytes += one.index_bytes;
    sum.seconds = std::max(sum.seconds, one.seconds);
    for (const auto& skip : one.skipped) {
      auto at = std::find_if(sum.skipped.begin(), sum.skipped.end(),
                             [&](const auto& x) { return x.first == skip.first; });
      if (at == sum.skipped.end()) {
        sum.skipped.push_back(skip);
      } else {
        at->second += skip.second;
      }
    }
  }
  Status all = AgreeOn(mine);
  if (!all.ok()) return all;
  // The summaries, added up on rank 0. Skipped files are counted by every shard's walk (each
  // walks the whole tree): one shard's counts are the tree's.
  w.PutU64(sum.documents);
  w.PutU64(sum.added);
  w.PutU64(sum.changed);
  w.PutU64(sum.removed);
  w.PutU64(sum.unchanged);
  w.PutU64(sum.rebuilt);
  w.PutString(sum.why_rebuilt);
  w.PutU64(sum.segments_written);
  w.PutU64(sum.merges);
  w.PutU64(sum.segments);
  w.PutU64(sum.input_bytes);
  w.PutU64(sum.index_bytes);
  w.PutDouble(sum.seconds);
  const std::vector<std::string> sums = GatherBytes(w.bytes(), 0, MPI_COMM_WORLD);
  Status written;
  if (rank == 0) {
    IndexSummary total;
    total.skipped = sum.skipped;
    for (const std::string& bytes : sums) {
      Reader r(bytes);
      total.documents += r.GetU64();
      total.added += r.GetU64();
      total.changed += r.GetU64();
      total.removed += r.GetU64();
      total.unchanged += r.GetU64();
      total.rebuilt = r.GetU64() != 0 || total.rebuilt;
      std::string why = r.GetString();
      if (total.why_rebuilt.empty()) total.why_rebuilt = why;
      total.segments_written += r.GetU64();
      total.merges += r.GetU64();
      total.segments += r.GetU64();
      total.input_bytes += r.GetU64();
      total.index_bytes += r.GetU64();
      total.seconds = std::max(total.seconds, r.GetDouble());
    }
    if (summary != nullptr) *summary = total;
    // Once every shard is built: from now on the directory reads as one index.
    written = WriteShardMap(dir, index_path, static_cast<uint32_t>(count));
  }
  return AgreeOn(written);
}

// ---------------------------------------------------------------------------------------------
// query

// The message rank 0 broadcasts before each query: its text, or the end of the run.
constexpr uint64_t kEnd = 0, kQuery = 1;

// This rank's part of one query: the ranking statistics summed over all ranks (when ranked),
// then its shards' answer, sent to rank 0 (collective; rank 0 gets every rank's bytes back).
std::vector<std::string> AnswerHere(const Index& shards, const ParsedQuery& query,
                                    const QueryOptions& options) {
  QueryOptions o = options;
  Status s;
  RankStatistics global;
  if (o.rank || o.any) {
    RankStatistics local;
    s = shards.RankStatisticsOf(query, o, &local);
    // [failed, documents, length, df...]: every rank has the same number of parts (the same
    // query), so the vectors line up.
    std::vector<uint64_t> v = {s.ok() ? 0u : 1u, local.documents, local.length};
    v.insert(v.end(), local.part_documents.begin(), local.part_documents.end());
    uint64_t n = v.size();
    uint64_t most = 0;
    MPI_Allreduce(&n, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    v.resize(most, 0);  // a rank that failed early has fewer entries
    std::vector<uint64_t> sum(most, 0);
    MPI_Allreduce(v.data(), sum.data(), static_cast<int>(most), MPI_UINT64_T, MPI_SUM,
                  MPI_COMM_WORLD);
    global.documents = sum[1];
    global.length = sum[2];
    global.part_documents.assign(sum.begin() + 3, sum.end());
    if (s.ok() && sum[0] != 0) s = Status(Status::Code::kInternal, "another rank failed");
    o.statistics = &global;
  }
  QueryResult result;
  if (s.ok()) s = shards.Query(query, o, &result);
  Writer w;
  PutStatus(s, &w);
  auto put_documents = [&](const std::vector<uint32_t>& ids) {
    w.PutU64(ids.size());
    for (uint32_t id : ids) {
      const ShardDocument d = shards.shard_document(id);
      w.PutU64(d.shard);
      w.PutU64(d.id);
    }
  };
  // A count of path order needs how many, not which: 8 bytes instead of 16 a document.
  const bool count_only = o.count_only && !o.rank && !o.any;
  if (s.ok()) {
    if (count_only) {
      w.PutU64(result.documents.size());
    } else {
      put_documents(result.documents);
    }
    w.PutU64(result.scores.size());
    for (double x : result.scores) w.PutDouble(x);
    put_documents(result.changed);
    put_documents(result.vanished);
    put_documents(result.unreadable);
    const QueryStats& st = result.stats;
    for (uint64_t x : {st.terms, st.candidates, st.false_positives, st.rows_read, st.bytes_read,
                       st.segments_searched, st.segments_skipped, st.segments_out_of_scope,
                       st.prefix_terms, st.phrase_candidates, st.text_bytes}) {
      w.PutU64(x);
    }
    w.PutU64(result.scoped);
  }
  return GatherBytes(w.bytes(), 0, MPI_COMM_WORLD);
}

// Rank 0: every rank's answer (in rank order) as one QueryResult of `all` (every shard open):
// documents in path order, or best first and ties in path order when ranked, as one index of
// the whole tree answers; at most options.limit.
Status MergeAnswers(const Index& all, const std::vector<std::string>& answers,
                    const QueryOptions& options, QueryResult* result) {
  *result = QueryResult{};
  struct Hit {
    uint32_t id;
    double score;
    std::string_view path;
  };
  std::vector<Hit> hits;
  const bool ranked = options.rank || options.any;
  // A count needs how many, not which: no path is read to order the documents.
  const bool count_only = options.count_only && !ranked;
  for (size_t rank = 0; rank < answers.size(); ++rank) {
    Reader r(answers[rank]);
    Status s = GetStatus(&r);
    if (!s.ok()) {
      if (s.message() == "another rank failed") continue;  // that rank says why
      return Status(s.code(), "rank " + std::to_string(rank) + ": " + s.message());
    }
    Status bad;
    auto get_documents = [&](std::vector<uint32_t>* out) {
      const uint64_t n = r.GetU64();
      for (uint64_t i = 0; i < n; ++i) {
        ShardDocument d;
        d.shard = static_cast<uint32_t>(r.GetU64());
        d.id = static_cast<uint32_t>(r.GetU64());
        uint32_t id = 0;
        if (!all.FromShardDocument(d, &id)) {
          bad = Status(Status::Code::kInternal,
                       "rank " + std::to_string(rank) + " answered from shard " +
                           std::to_string(d.shard) +
                           " in another state than rank 0 sees (was it updated during the "
                           "query?): ask again");
          continue;
        }
        out->push_back(id);
      }
    };
    std::vector<uint32_t> ids;
    if (count_only) {
      ids.assign(r.GetU64(), 0);  // how many; PrintAnswer reads no id of a count
    } else {
      get_documents(&ids);
    }
    std::vector<double> scores(r.GetU64());
    for (double& x : scores) x = r.GetDouble();
    get_documents(&result->changed);
    get_documents(&result->vanished);
    get_documents(&result->unreadable);
    if (!bad.ok()) return bad;
    QueryStats& st = result->stats;
    st.terms = std::max(st.terms, r.GetU64());
    for (uint64_t* x : {&st.candidates, &st.false_positives, &st.rows_read, &st.bytes_read,
                        &st.segments_searched, &st.segments_skipped, &st.segments_out_of_scope,
                        &st.prefix_terms, &st.phrase_candidates, &st.text_bytes}) {
      *x += r.GetU64();
    }
    result->scoped = result->scoped || r.GetU64() != 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      hits.push_back({ids[i], ranked && i < scores.size() ? scores[i] : 0,
                      count_only ? std::string_view() : all.document_path(ids[i]).path});
    }
  }
  // One index orders its documents by path bytes (one tree: one root), and ranks them best
  // first with ties in that order.
  auto by_path = [](const Hit& a, const Hit& b) { return a.path < b.path; };
  auto best = [](const Hit& a, const Hit& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.path < b.path;
  };
  if (ranked) {
    std::sort(hits.begin(), hits.end(), best);
  } else if (!count_only) {
    std::sort(hits.begin(), hits.end(), by_path);
  }
  if (options.limit != 0 && hits.size() > options.limit) hits.resize(options.limit);
  for (const Hit& h : hits) {
    result->documents.push_back(h.id);
    if (ranked) result->scores.push_back(h.score);
  }
  std::sort(result->unreadable.begin(), result->unreadable.end());
  return Status();
}

// Redirects this process's stdout and stderr to /dev/null (ranks other than 0: rank 0 prints
// for all, and reports their errors).
int RunQuery(const std::vector<std::string>& args) {
  const int rank = Rank(), size = Size();
  cli::QueryCommand c;
  // Rank 0's stdout is mpirun's pseudo-terminal, whatever mpirun's own stdout is: --color auto
  // cannot tell a terminal from a pipe here, so it means never (--color always still colours).
  if (std::getenv("NO_COLOR") == nullptr) ::setenv("NO_COLOR", "1", 1);
  // Every rank reads the same command line the same way: all go on, or all stop here.
  if (auto code = cli::ParseQueryCommand(args, "bitsift-mpi", &c)) return *code;
  if (c.jobs != 1) return cli::Fail("bitsift-mpi answers one query at a time: no --jobs");
  // The ranks are the parallelism: no helper thread polling beside each (with the MPI library
  // polling too, a small machine's cores would spin instead of answering).
  c.flags.options.parallel = false;
  if (c.index_flags.size() > 1) return cli::Fail("bitsift-mpi answers one sharded index");
  std::string path;
  if (c.index_flags.empty()) {
    if (Status s = Index::Find(".", &path); !s.ok()) return cli::Fail(s.message());
  } else {
    path = c.index_flags[0];
  }
  ShardMapInfo map;
  Status s = ReadShardMap(path, &map);
  if (!s.ok()) {
    return cli::Fail(s.code() == Status::Code::kNotFound
                         ? path +
                               ": not a sharded index (build it with 'mpirun -np N bitsift-mpi "
                               "index DIR --index " +
                               path + "')"
                         : s.message());
  }
  // This rank's shards; rank 0 also opens every shard, to print (paths, JSON, lines).
  OpenOptions open;
  open.one_shot = !c.batch;
  open.shards = ShardsOf(rank, size, map.count);
  std::unique_ptr<Index> mine, all;
  s = Index::Open({path}, open, &mine);
  if (s.ok() && rank == 0) {
    open.shards.reset();
    s = Index::Open({path}, open, &all);
  }
  if (!s.ok()) {
    s = Status(s.code(), "rank " + std::to_string(rank) + " cannot open its shards (" +
                             HeldShards(rank, size, map.paths) + "): " + s.message());
  }
  if (Status agreed = AgreeOn(s); !agreed.ok()) return cli::Fail(agreed.message());
  GuardSignals("rank " + std::to_string(rank) + " (shards " + HeldShards(rank, size, map.paths) +
               ")");
  // Test hook: a rank that answers late (the answer must not change).
  const char* slow = std::getenv("BITSIFT_MPI_SLOW_RANK");
  const bool is_slow = slow != nullptr && std::atoi(slow) == rank;

  std::vector<std::optional<FileState>> known_files;  // a run's files, looked at once
  if (rank != 0) {
    QueryOptions options = c.flags.options;
    if (c.batch) options.known_files = &known_files;
    for (;;) {
      std::string message;  // kQuery and its text, or kEnd and the exit code
      BroadcastBytes(&message, 0, MPI_COMM_WORLD);
      Reader r(message);
      if (r.GetU64() == kEnd) return static_cast<int>(r.GetU64());  // rank 0's exit code
      const std::string text = r.GetString();
      ParsedQuery q;
      (void)ParsedQuery::Parse(text, c.syntax, &q);  // rank 0 parsed it without error
      if (is_slow) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      AnswerHere(*mine, q, options);
    }
  }
  cli::QueryAnswerer answer = [&](const ParsedQuery& q, const std::string& text,
                                  const QueryOptions& options, QueryResult* result) {
    const auto start = std::chrono::steady_clock::now();
    Writer w;
    w.PutU64(kQuery);
    w.PutString(text);
    std::string message = w.bytes();
    BroadcastBytes(&message, 0, MPI_COMM_WORLD);
    if (is_slow) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::vector<std::string> answers = AnswerHere(*mine, q, options);
    Status merged = MergeAnswers(*all, answers, options, result);
    result->stats.total_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return merged;
  };
  const int code = cli::AnswerQueryCommand(*all, c, {path}, answer);
  Writer end;
  end.PutU64(kEnd);
  end.PutU64(static_cast<uint64_t>(code));
  std::string message = end.bytes();
  BroadcastBytes(&message, 0, MPI_COMM_WORLD);
  return code;
}

}  // namespace
}  // namespace bitsift::mpi

int main(int argc, char** argv) {
  bitsift::mpi::Supervise();
  MPI_Init(&argc, &argv);
  const int rank = bitsift::mpi::Rank();
  int code = 2;
  const std::string command = argc > 1 ? argv[1] : "";
  const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
  if (rank != 0) bitsift::mpi::Silence();
  if (command == "index") {
    code = bitsift::cli::RunIndexWith(args, "bitsift-mpi", bitsift::mpi::BuildShards);
  } else if (command == "query") {
    code = bitsift::mpi::RunQuery(args);
  } else if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(bitsift::mpi::kUsage, stdout);
    code = 0;
  } else {
    std::fputs(bitsift::mpi::kUsage, stderr);
  }
  bitsift::mpi::UnguardSignals();
  std::fflush(nullptr);
  MPI_Finalize();
  return code;
}
