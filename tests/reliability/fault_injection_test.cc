// Fault injection at every call that changes the disk (storage/file_system.h): a first build, an
// update and a compaction are run again and again, the N-th call failing each time (EIO, a short
// write then a full disk, or a crash: nothing reaches the disk from that call on), N walking over
// every call the operation makes; then the same walk with a real kill -9 of a child process at
// each call. After each failure the index answers exactly as before the operation or exactly as
// after it (never a mix, never an error), and the next run, without faults, succeeds, answers
// as after, passes the check and leaves no file the manifest does not name.
#include <bitsift/bitsift.h>
#include <dirent.h>
#include <signal.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "format/manifest.h"
#include "reliability_util.h"
#include "storage/file_system.h"
#include "test_util.h"

using bitsift::Index;
using bitsift::Status;
using bitsift::storage::Fault;
using bitsift::storage::FaultInjection;
using namespace bitsift::testing;

namespace {

const std::vector<std::vector<std::string>> kQueries = {
    {"common"}, {"w3"}, {"alpha", "beta"}, {"changed"}, {"fresh"}, {"gone"}, {"\"alpha beta\""}};

using Answers = std::vector<std::vector<std::string>>;

// The answers of index_path, {{"no index"}} when there is none, {{"error: ..."}} on an error.
Answers Ask(const std::string& index_path) {
  std::unique_ptr<Index> index;
  Status s = Index::Open(index_path, &index);
  if (s.code() == Status::Code::kNotFound) return {{"no index"}};
  if (!s.ok()) return {{"error: " + s.message()}};
  Answers out;
  for (const auto& q : kQueries) {
    bitsift::QueryResult r;
    s = index->Query(q, {}, &r);
    if (!s.ok()) return {{"error: " + s.message()}};
    std::vector<std::string> paths;
    for (uint32_t id : r.documents) paths.push_back(index->document(id).path);
    out.push_back(paths);
  }
  return out;
}

size_t Segments(const std::string& index_path) {
  return bitsift::format::ReadManifest(index_path).segments.size();
}

// Files of index_path that are neither MANIFEST, LOCK, .gitignore nor a segment it names.
std::vector<std::string> Unlisted(const std::string& index_path) {
  std::set<std::string> live = {bitsift::format::kManifestName, bitsift::format::kLockName,
                                bitsift::format::kGitignoreName};
  for (const auto& s : bitsift::format::ReadManifest(index_path).segments)
    live.insert(bitsift::format::SegmentFileName(s.number));
  std::vector<std::string> extra;
  for (const auto& e : std::filesystem::directory_iterator(index_path)) {
    const std::string name = e.path().filename().string();
    if (live.count(name) == 0) extra.push_back(name);
  }
  return extra;
}

// A memory budget small enough that every batch a build reads (at least 256 KiB of files)
// is written as a segment of its own.
constexpr uint64_t kSpillBudget = 64 << 10;

// `files` files in four directories; each but the first line `filler` bytes of numbered words.
void MakeTree(const std::string& root, int files = 48, size_t filler = 0) {
  for (int i = 0; i < files; ++i) {
    std::string text = Cat("common w", i % 7, " doc", i);
    if (i % 3 == 0) text += " alpha beta";
    if (i % 5 == 0) text += " beta alpha";
    if (i % 8 == 0) text += " gone";
    text += "\n";
    for (int k = 0; text.size() < filler; ++k) text += Cat("filler", (i * 131 + k) % 4099, " ");
    WriteFile(Cat(root, "/d", i % 4, "/f", i, ".txt"), text + "\n");
  }
}

// Changes the tree as the update will see it: files added (named after `round`), changed and
// removed.
void ChangeTree(const std::string& root, const std::string& round = "new") {
  for (int i = 0; i < 6; ++i)
    WriteFile(Cat(root, "/", round, "/n", i, ".txt"), Cat("fresh common w", i, " ", round, "\n"));
  for (int i = 1; i < 48; i += 9)
    WriteFile(Cat(root, "/d", i % 4, "/f", i, ".txt"), Cat("changed alpha beta ", round, "\n"));
  for (int i = 0; i < 48; i += 8) std::filesystem::remove(Cat(root, "/d", i % 4, "/f", i, ".txt"));
}

void CopyIndex(const std::string& from, const std::string& to) {
  std::filesystem::remove_all(to);
  if (std::filesystem::exists(from))
    std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

struct Walk {
  Walk(std::string name, std::string op, std::string before_index, std::function<Status()> run)
      : name(std::move(name)),
        op(std::move(op)),
        before_index(std::move(before_index)),
        run(std::move(run)) {}
  std::string name;
  std::string op;            // bitsift_fault_child's name of the operation
  std::string before_index;  // copied to the index path before each run ("" = no index)
  std::function<Status()> run;
  Answers before, after;
  size_t segments_after = 0;
};

const char* FaultName(Fault f) {
  return f == Fault::kError ? "EIO" : f == Fault::kShortWrite ? "short write + ENOSPC" : "crash";
}

void WalkFaults(Walk& w, const std::string& index_path) {
  // A run without faults counts the calls.
  CopyIndex(w.before_index, index_path);
  FaultInjection::Arm(0, Fault::kError);
  const Status clean = w.run();
  const uint64_t calls = FaultInjection::calls();
  FaultInjection::Disarm();
  REQUIRE(clean.ok());
  REQUIRE(Ask(index_path) == w.after);
  REQUIRE(calls > 0);
  WARN(w.name << ": " << calls << " calls walked, 3 faults each");
  for (Fault fault : {Fault::kError, Fault::kShortWrite, Fault::kCrash}) {
    uint64_t failed = 0, as_before = 0;
    for (uint64_t n = 1; n <= calls; ++n) {
      INFO(w.name << ", " << FaultName(fault) << " at call " << n << " of " << calls);
      CopyIndex(w.before_index, index_path);
      FaultInjection::Arm(n, fault, EIO);
      const Status s = w.run();
      const bool fired = FaultInjection::fired();
      FaultInjection::Disarm();
      INFO("status: " << s.message());
      const Answers now = Ask(index_path);
      if (s.ok()) {
        CHECK(now == w.after);
      } else {
        ++failed;
        CHECK((now == w.before || now == w.after));
        as_before += now == w.before;
      }
      (void)fired;
      // The next run recovers.
      const Status again = w.run();
      REQUIRE(again.ok());
      CHECK(Ask(index_path) == w.after);
      CHECK(bitsift::CheckIndex(index_path).ok());
      CHECK(Segments(index_path) == w.segments_after);
      CHECK(Unlisted(index_path) == std::vector<std::string>{});
    }
    WARN(w.name << ", " << FaultName(fault) << ": " << failed << " of " << calls << " runs failed, "
                << as_before << " of them left the old state");
  }
}

// The same walk with a real kill -9: a child process runs the operation and kills itself at
// the N-th call (bitsift_fault_child); the next run is this process's.
void WalkKills(Walk& w, const std::string& tree, const std::string& index_path) {
  CopyIndex(w.before_index, index_path);
  FaultInjection::Arm(0, Fault::kError);
  REQUIRE(w.run().ok());
  const uint64_t calls = FaultInjection::calls();
  FaultInjection::Disarm();
  uint64_t as_before = 0;
  for (uint64_t n = 1; n <= calls + 1; ++n) {
    INFO(w.name << ", kill -9 at call " << n << " of " << calls);
    CopyIndex(w.before_index, index_path);
    const ProcessResult r =
        RunProcess({BITSIFT_FAULT_CHILD, w.op, tree, index_path, std::to_string(n)});
    INFO("exit " << r.exit_code << ", signal " << r.signal << ": " << r.err);
    // Killed, except past the last call (the calls of a run vary a little with its threads).
    CHECK((r.signal == SIGKILL || (n + 2 > calls && r.exit_code == 0)));
    const Answers now = Ask(index_path);
    CHECK((now == w.before || now == w.after));
    as_before += now == w.before;
    const Status again = w.run();
    REQUIRE(again.ok());
    CHECK(Ask(index_path) == w.after);
    CHECK(bitsift::CheckIndex(index_path).ok());
    CHECK(Segments(index_path) == w.segments_after);
    CHECK(Unlisted(index_path) == std::vector<std::string>{});
  }
  WARN(w.name << ", kill -9: " << calls << " calls, " << as_before << " runs answered as before");
}

}  // namespace

TEST_CASE("a fault at any call of a build, update or compaction leaves the old or new state",
          "[reliability][faults]") {
  TempDir dir;
  const std::string tree = dir / "tree";
  const std::string index_path = dir / "index";
  MakeTree(tree);
  bitsift::IndexOptions options;
  options.threads = 2;
  options.merge = false;

  // A first build: before it there is no index.
  Walk build{"first build", "build", "",
             [&] { return bitsift::BuildIndex(tree, index_path, options); }};
  build.before = {{"no index"}};
  REQUIRE(bitsift::BuildIndex(tree, dir / "built", options).ok());
  build.after = Ask(dir / "built");
  build.segments_after = Segments(dir / "built");
  WalkFaults(build, index_path);
  WalkKills(build, tree, index_path);

  // An update of the changed tree.
  ChangeTree(tree);
  Walk update{"update", "update", dir / "built",
              [&] { return bitsift::BuildIndex(tree, index_path, options); }};
  // The old index over the changed tree (phrases are checked in the files as they are now).
  update.before = Ask(dir / "built");
  REQUIRE(bitsift::BuildIndex(tree, dir / "fresh", options).ok());
  update.after = Ask(dir / "fresh");
  REQUIRE(update.after != update.before);
  CopyIndex(dir / "built", dir / "updated");
  REQUIRE(bitsift::BuildIndex(tree, dir / "updated", options).ok());
  REQUIRE(Ask(dir / "updated") == update.after);
  update.segments_after = Segments(dir / "updated");
  WalkFaults(update, index_path);
  WalkKills(update, tree, index_path);

  // A compaction of the updated index (two segments, deletions): same answers, one segment.
  REQUIRE(Segments(dir / "updated") > 1);
  Walk compact{"compaction", "compact", dir / "updated",
               [&] { return bitsift::CompactIndex(index_path, options); }};
  compact.before = compact.after = update.after;
  compact.segments_after = 1;
  WalkFaults(compact, index_path);
  WalkKills(compact, tree, index_path);

  // A first build that spills: 1 MiB of files and a budget so small that it writes several
  // segments (one thread, so that where it spills does not depend on timing;
  // bitsift_fault_child's "build-spill").
  const std::string large = dir / "large";
  MakeTree(large, 16, 64 << 10);
  bitsift::IndexOptions spill = options;
  spill.threads = 1;
  spill.memory_budget = kSpillBudget;
  Walk spilled{"first build of several segments", "build-spill", "",
               [&] { return bitsift::BuildIndex(large, index_path, spill); }};
  spilled.before = {{"no index"}};
  REQUIRE(bitsift::BuildIndex(large, dir / "large-fresh", options).ok());
  spilled.after = Ask(dir / "large-fresh");
  REQUIRE(bitsift::BuildIndex(large, dir / "spilled", spill).ok());
  REQUIRE(Ask(dir / "spilled") == spilled.after);
  spilled.segments_after = Segments(dir / "spilled");
  REQUIRE(spilled.segments_after > 2);
  WalkFaults(spilled, index_path);
  WalkKills(spilled, large, index_path);

  // An update that merges: the spilled index, the tree changed again, and the update run with
  // the merge policy and the default budget ("update-merge"), which merges the small segments
  // it finds.
  ChangeTree(large, "again");
  bitsift::IndexOptions merging = spill;
  merging.memory_budget = options.memory_budget;  // room for the merges
  merging.merge = true;
  Walk merged{"update that merges", "update-merge", dir / "spilled",
              [&] { return bitsift::BuildIndex(large, index_path, merging); }};
  merged.before = Ask(dir / "spilled");
  REQUIRE(bitsift::BuildIndex(large, dir / "large-again", options).ok());
  merged.after = Ask(dir / "large-again");
  REQUIRE(merged.after != merged.before);
  CopyIndex(dir / "spilled", dir / "merged");
  REQUIRE(bitsift::BuildIndex(large, dir / "merged", merging).ok());
  REQUIRE(Ask(dir / "merged") == merged.after);
  merged.segments_after = Segments(dir / "merged");
  CopyIndex(dir / "spilled", dir / "unmerged");
  REQUIRE(bitsift::BuildIndex(large, dir / "unmerged", spill).ok());
  REQUIRE(merged.segments_after < Segments(dir / "unmerged"));  // it merged
  WalkFaults(merged, index_path);
  WalkKills(merged, large, index_path);
}
