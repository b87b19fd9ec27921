#include "indexer/index_builder.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

#include "format/doc_table.h"
#include "format/manifest.h"
#include "format/segment_reader.h"
#include "indexer/merge_policy.h"
#include "indexer/segment_builder.h"
#include "indexer/segment_merger.h"
#include "storage/file_system.h"
#include "storage/file_writers.h"
#include "util/error.h"
#include "util/files.h"

namespace bitsift::indexer {
namespace {

using Clock = std::chrono::steady_clock;

// Documents tokenized between two checks of the memory estimate: at most this many, ...
constexpr size_t kBatchDocuments = 512;
// ... and of at most 1/kEstimateBytesPerInputByte of the budget left in input bytes (at least
// kMinBatchBytes, and at least one document). Text made mostly of distinct terms (a generated
// header of register names) adds about 6 bytes of estimate per input byte (linux-files).
constexpr uint64_t kEstimateBytesPerInputByte = 8;
constexpr uint64_t kMinBatchBytes = 256 << 10;
// Resident memory above the builder's estimate (and the process reserve) that makes a build
// give freed memory back to the system (malloc_trim).
constexpr uint64_t kTrimSlack = 16 << 20;
// The memory of a build process besides its segment builder, at least (see BuilderBudget).
constexpr uint64_t kProcessReserve = 48ULL << 20;
// Tiered merging: this many segments of one size tier are merged into one.
constexpr size_t kMergeFactor = 8;
// Segments below this size are all in the lowest tier.
constexpr double kTierFloorBytes = 1 << 20;

// The resident memory of this process now, in bytes (0 if /proc cannot tell).
uint64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// The part of the memory budget left for building segments and merging: the budget bounds the
// process, so what the rest of it holds (ICU's data, the threads, the list of files: about
// 35-40 MB on linux-files, measured at the flushes) is taken off: what is resident now, at
// least kProcessReserve (ICU loads its data on first use), never more than half the budget.
uint64_t BuilderBudget(uint64_t budget) {
  return budget - std::min(budget / 2, std::max(kProcessReserve, ResidentBytes()));
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// ---------------------------------------------------------------------------------------------
// The directory and its writer lock.

// Holds PATH/LOCK with flock(2) for the life of the object: one writer per index.
class WriterLock {
 public:
  explicit WriterLock(const std::string& dir) {
    const std::string path = dir + "/" + format::kLockName;
    fd_ = storage::CreateFile(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0)
      throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot open the index lock", errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd_);
      if (err == EWOULDBLOCK) {
        throw Error(ErrorKind::kBusy, dir + ": another bitsift is writing this index (it holds " +
                                          path + "); try again when it has finished");
      }
      throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot lock", err));
    }
  }
  ~WriterLock() { ::close(fd_); }  // closing releases the lock
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  int fd_ = -1;
};

// Makes `dir` an index directory if it is not one: creates it and its .gitignore. A 0.1 index
// file at that path (unreadable by this version) is removed first.
void PrepareDirectory(const std::string& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
    char magic[8] = {};
    int fd = ::open(dir.c_str(), O_RDONLY | O_CLOEXEC);
    bool old = fd >= 0 && ::read(fd, magic, sizeof(magic)) == sizeof(magic) &&
               std::equal(magic, magic + 8, format::kMagic);
    if (fd >= 0) ::close(fd);
    Ensure(old, ErrorKind::kInvalidArgument,
           dir + ": exists and is not a bitsift index; choose another --index path");
    Ensure(storage::RemoveFile(dir.c_str()) == 0, ErrorKind::kIo,
           ErrnoMessage(dir, "cannot replace the bitsift 0.1 index file", errno));
  }
  if (storage::MakeDirectory(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    throw Error(ErrorKind::kIo, ErrnoMessage(dir, "cannot create the index directory", errno));
  }
  Ensure(::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), ErrorKind::kInvalidArgument,
         dir + ": exists and is not a directory; choose another --index path");
  const std::string ignore = dir + "/" + format::kGitignoreName;
  if (::access(ignore.c_str(), F_OK) != 0) {
    storage::AtomicFileWriter w(ignore);
    w.Append("*\n", 2);
    w.Commit();
  }
}

// Removes what no committed state names: segment files of a killed update or an old state, and
// temporaries. Only the lock holder calls this, so nothing else is writing them.
void RemoveUnlisted(const std::string& dir, const format::Manifest& m) {
  std::set<std::string> live;
  for (const format::ManifestSegment& s : m.segments)
    live.insert(format::SegmentFileName(s.number));
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> doomed;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    bool ours = (name.rfind("seg-", 0) == 0 && name.find(".bsg") != std::string::npos) ||
                name.rfind(std::string(format::kManifestName) + ".tmp.", 0) == 0 ||
                name.rfind(std::string(format::kGitignoreName) + ".tmp.", 0) == 0;
    if (ours && live.count(name) == 0) doomed.push_back(name);
  }
  ::closedir(d);
  for (const std::string& name : doomed) storage::RemoveFile((dir + "/" + name).c_str());
}

// ---------------------------------------------------------------------------------------------
// The state being changed: the committed manifest, its segments opened, deletions to add.

struct LiveSegment {
  format::ManifestSegment entry;
  std::string path;                                       // the segment file
  mutable std::shared_ptr<format::SegmentReader> opened;  // mapped on first use

  // The segment's reader, mapped on first use: a segment written by this run is not mapped
  // unless a merge reads it (mapped pages it touched would count in the build's memory).
  const format::SegmentReader& reader() const {
    if (!opened) opened = std::make_shared<format::SegmentReader>(path);
    return *opened;
  }

  // The committed segment `e` of the index directory `dir`, mapped (and checked against e).
  static LiveSegment Open(const std::string& dir, const format::ManifestSegment& e) {
    LiveSegment s;
    s.entry = e;
    s.path = dir + "/" + format::SegmentFileName(e.number);
    Ensure(s.reader().doc_count() == e.doc_count, ErrorKind::kCorrupt,
           dir + ": segment " + format::SegmentFileName(e.number) + " does not match the manifest");
    return s;
  }

  bool deleted(uint32_t id) const { return entry.deleted.contains(id); }
  void Delete(uint32_t id) { entry.deleted.insert(id, entry.doc_count); }
  uint64_t live() const { return entry.doc_count - entry.deleted.size(); }
  double live_bytes() const {
    return entry.doc_count ? static_cast<double>(entry.file_size) * live() / entry.doc_count : 0;
  }
};

class IndexState {
 public:
  // `settings` are this run's; if they differ from the committed ones the index is rebuilt.
  // With keep_root, the committed root and file size limit are kept (documents added by name
  // to any index). With rebuild_other_format, segments written by a bitsift of another format
  // version (which cannot be read) make it a rebuild too: for an update from a directory,
  // which can read every file again (a merge or in-memory documents could not).
  IndexState(std::string dir, const BuildConfig& config,
             std::map<std::string, std::string> settings, bool keep_root = false,
             bool rebuild_other_format = false)
      : dir_(std::move(dir)), config_(config) {
    PrepareDirectory(dir_);
    lock_ = std::make_unique<WriterLock>(dir_);
    bool have = true;
    try {
      manifest_ = format::ReadManifest(dir_);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kNotFound) throw;
      have = false;
    }
    RemoveUnlisted(dir_, manifest_);
    // An index inside its tree moves with it: the root it records follows (no rebuild), and
    // one that recorded no root_in_tree (older) is the same tree under the new key.
    if (have && settings.count("root_in_tree")) {
      const std::string old_root = manifest_.settings["root"];
      if (manifest_.settings.count("root_in_tree") || old_root == settings["root"]) {
        manifest_.settings["root"] = settings["root"];
        manifest_.settings["root_in_tree"] = "1";
      }
    }
    if (keep_root && have) {  // documents by name: neither root nor the file size limit apply
      for (const char* key : {"root", "max_file_size"}) {
        if (manifest_.settings.count(key)) settings[key] = manifest_.settings[key];
      }
    }
    rebuilt_ = !have || config.rebuild || manifest_.settings != settings;
    if (have && !config.rebuild && manifest_.settings != settings) {
      for (const auto& [key, value] : settings) {
        auto old = manifest_.settings.find(key);
        if (old == manifest_.settings.end() || old->second != value) {
          why_ = "its setting " + key + " changed";
          break;
        }
      }
      if (why_.empty()) why_ = "its settings changed";
    }
    for (size_t i = 0; rebuild_other_format && !rebuilt_ && i < manifest_.segments.size(); ++i) {
      const std::string path = dir_ + "/" + format::SegmentFileName(manifest_.segments[i].number);
      const uint32_t version = format::PeekFormatVersion(path);
      rebuilt_ = version != 0 && version != format::kFormatVersion;
      if (rebuilt_) {
        why_ = "it was written in format " + std::to_string(version) + " by another bitsift; " +
               "this one writes format " + std::to_string(format::kFormatVersion);
      }
    }
    if (rebuilt_) {
      manifest_.segments.clear();  // next_segment and generation carry on: names never reused
    }
    manifest_.settings = std::move(settings);
    for (const format::ManifestSegment& e : manifest_.segments) {
      segments_.push_back(LiveSegment::Open(dir_, e));
    }
  }

  // A run that fails before committing removes the segments it wrote (a killed one leaves them
  // to the next writer's RemoveUnlisted).
  ~IndexState() {
    if (committed_) return;
    for (uint64_t number : written_)
      storage::RemoveFile((dir_ + "/" + format::SegmentFileName(number)).c_str());
  }
  IndexState(const IndexState&) = delete;
  IndexState& operator=(const IndexState&) = delete;

  const std::string& dir() const { return dir_; }
  bool rebuilt() const { return rebuilt_; }
  // Why an existing index was rebuilt without being asked ("" otherwise).
  const std::string& why_rebuilt() const { return why_; }
  std::vector<LiveSegment>& segments() { return segments_; }

  // Writes the builder's documents as a new segment (if it has any) and lists it. With
  // to_be_merged (MergeFlushes will read it), its records keep every term's positions
  // (SegmentBuilder::Write).
  void Flush(SegmentBuilder& builder, const std::string& root, BuildReport* report,
             bool to_be_merged) {
    if (builder.documents() == 0) return;
    const uint64_t number = manifest_.next_segment++;
    SegmentSummary s =
        builder.Write(dir_ + "/" + format::SegmentFileName(number), root, to_be_merged);
    report->terms += s.terms;
    report->postings += s.postings;
    report->input_bytes += s.input_bytes;
    report->segments_written++;
    AddSegment(number, s);
    flushed_.insert(number);
    if (to_be_merged) every_position_.insert(number);
    Phase("segment-written");
  }

  void AddSegment(uint64_t number, const SegmentSummary& s) {
    written_.push_back(number);
    LiveSegment seg;
    seg.entry.number = number;
    seg.entry.doc_count = s.documents;
    seg.entry.file_size = s.file_bytes;
    seg.path = dir_ + "/" + format::SegmentFileName(number);
    segments_.push_back(std::move(seg));
  }

  uint64_t NextSegmentNumber() { return manifest_.next_segment++; }
  // The segments Flush has written.
  size_t flushes() const { return flushed_.size(); }

  // Runs the tiered merge policy (see docs/living-index.md).
  void MergeByPolicy(const std::string& root, BuildReport* report);
  // AbsorbedByNewest (indexer/merge_policy.h) of the segments, as many of them as fit the
  // budget (the newest first), or none.
  std::vector<size_t> AbsorbedWithinBudget(double budget) const;
  // Merges the segments this run's flushes wrote (a full build's, or an update's that
  // outgrew the budget), all of them if their merge fits the memory budget, otherwise the
  // smallest that fit together (at least two).
  void MergeFlushes(const std::string& root, BuildReport* report);
  // Merges segments [indices] into one new segment that replaces them.
  void Merge(std::vector<size_t> indices, const std::string& root, BuildReport* report);
  // The segments [indices] as a merge reads them.
  std::vector<MergeSource> Sources(const std::vector<size_t>& indices) const {
    std::vector<MergeSource> out;
    for (size_t i : indices) {
      // (Not from a small segment's META: its records may have come from a larger segment.)
      out.push_back({&segments_[i].reader(), &segments_[i].entry.deleted,
                     every_position_.count(segments_[i].entry.number) > 0});
    }
    return out;
  }

  // Commits the new state and removes the files of the old one.
  void Commit(BuildReport* report) {
    format::Manifest next = manifest_;
    next.generation++;
    next.segments.clear();
    uint64_t bytes = 0, docs = 0;
    for (LiveSegment& s : segments_) {
      if (s.live() == 0) continue;  // every document deleted: the segment goes
      next.segments.push_back(s.entry);
      bytes += s.entry.file_size;
      docs += s.live();
    }
    Phase("before-commit");
    format::WriteManifest(dir_, next);
    committed_ = true;
    manifest_ = next;
    Phase("committed");
    RemoveUnlisted(dir_, manifest_);
    report->segments = next.segments.size();
    report->documents = docs;
    report->index_bytes = bytes + format::EncodeManifest(next).size();
  }

  // A named point of the update: calls config.on_phase, and kills the process with SIGKILL if
  // the environment variable BITSIFT_TEST_KILL_AT names the point (the crash tests run the
  // program with it; nothing else sets it).
  void Phase(const char* point) const {
    if (config_.on_phase) config_.on_phase(point);
    static const char* kill_at = std::getenv("BITSIFT_TEST_KILL_AT");
    if (kill_at != nullptr && std::strcmp(kill_at, point) == 0) ::raise(SIGKILL);
  }

 private:
  std::string dir_;
  const BuildConfig& config_;
  std::unique_ptr<WriterLock> lock_;
  format::Manifest manifest_;
  bool rebuilt_ = false;
  std::string why_;
  bool committed_ = false;
  std::vector<uint64_t> written_;      // segment files written by this run
  std::set<uint64_t> flushed_;         // those of them written by Flush (not by a merge)
  std::set<uint64_t> every_position_;  // those flushed with every term's positions
  std::vector<LiveSegment> segments_;
};

void IndexState::Merge(std::vector<size_t> indices, const std::string& root, BuildReport* report) {
  std::sort(indices.begin(), indices.end());
  // What indexing freed goes back to the system first: the merge was planned against the
  // budget left beside what is resident now (BuilderBudget).
  ::malloc_trim(0);
  const uint64_t number = manifest_.next_segment++;
  const SegmentSummary s = MergeSegments(Sources(indices), config_.fp_rate, config_.sparse_max_df,
                                         dir_ + "/" + format::SegmentFileName(number), root,
                                         config_.every_position_bytes);
  const bool empty = s.documents == 0;
  for (size_t k = indices.size(); k-- > 0;) segments_.erase(segments_.begin() + indices[k]);
  if (!empty) AddSegment(number, s);
  report->merges++;
  Phase("merged");
}

void IndexState::MergeFlushes(const std::string& root, BuildReport* report) {
  // Each segment costs a query a dictionary lookup per term and, in a fresh process, about ten
  // first-touched pages to open (docs/living-index.md, "Merging"); a build that flushed seven
  // times answered a one-shot query 1.3x slower than one segment. The flushes are of one size
  // tier, which the policy merges only eight at a time. An update's flushes too: the 10%
  // update of linux-paras writes three of ~12-16 MB, which neither the tiers nor the newest
  // segment's absorbing would merge, and a light query would look its terms up in four
  // segments.
  // When they do not fit the budget all together, the smallest that do are merged, then the
  // smallest of the rest that do, and so on; then all of what is left, if it fits
  // (indexer/merge_policy.h, NextFlushMerge).
  std::set<uint64_t> outputs;  // segments these merges wrote
  for (;;) {
    const double budget = static_cast<double>(BuilderBudget(config_.memory_budget));
    std::vector<size_t> ours;  // positions in segments_ of the flushes and these merges' outputs
    std::vector<PolicySegment> sizes;
    std::vector<bool> written;
    for (size_t i = 0; i < segments_.size(); ++i) {
      const uint64_t number = segments_[i].entry.number;
      if (flushed_.count(number) == 0 && outputs.count(number) == 0) continue;
      ours.push_back(i);
      sizes.push_back({number, segments_[i].live_bytes()});
      written.push_back(outputs.count(number) > 0);
    }
    auto positions = [&](const std::vector<size_t>& m) {
      std::vector<size_t> out;
      for (size_t k : m) out.push_back(ours[k]);
      return out;
    };
    const FlushMerge next = NextFlushMerge(sizes, written, [&](const std::vector<size_t>& m) {
      return static_cast<double>(
                 EstimateMergeBytes(Sources(positions(m)), config_.sparse_max_df)) <= budget;
    });
    if (next.members.empty()) return;
    const uint64_t number = manifest_.next_segment;  // the number Merge gives its output
    Merge(positions(next.members), root, report);
    if (next.last) return;
    outputs.insert(number);
  }
}

std::vector<size_t> IndexState::AbsorbedWithinBudget(double budget) const {
  std::vector<PolicySegment> sizes;
  for (const LiveSegment& seg : segments_) sizes.push_back({seg.entry.number, seg.live_bytes()});
  std::vector<size_t> pick = AbsorbedByNewest(sizes);
  // The newest and the largest of the others that fit: the smallest are the cheapest to
  // leave for a later merge of the lowest tier.
  while (pick.size() >= 2 &&
         static_cast<double>(EstimateMergeBytes(Sources(pick), config_.sparse_max_df)) > budget) {
    pick.pop_back();
  }
  if (pick.size() < 2) return {};
  return pick;
}

void IndexState::MergeByPolicy(const std::string& root, BuildReport* report) {
  const double budget = static_cast<double>(BuilderBudget(config_.memory_budget));
  for (;;) {
    // Tier of a segment: log base kMergeFactor of its live bytes over the floor.
    std::map<int, std::vector<size_t>> tiers;
    for (size_t i = 0; i < segments_.size(); ++i) {
      double bytes = std::max(segments_[i].live_bytes(), kTierFloorBytes);
      int tier =
          static_cast<int>(std::log(bytes / kTierFloorBytes) / std::log(double{kMergeFactor}));
      tiers[tier].push_back(i);
    }
    std::vector<size_t> pick;
    for (auto& tier_members : tiers) {
      // (Named, not a structured binding: the lambda below captures `members`, which clang
      // before 16 refuses for a binding.)
      const int tier = tier_members.first;
      std::vector<size_t>& members = tier_members.second;
      // The lowest tier (segments below kMergeFactor x the floor: the few files of an update)
      // is merged as soon as it holds two: each costs a query a dictionary lookup per term and
      // a pass over its bands whatever its size (kjv: 4 segments were 2.3x the latency of
      // one), and merging them is cheap (a streaming merge of at most a few MB each).
      const size_t factor = tier == 0 ? 2 : kMergeFactor;
      if (members.size() < factor) continue;
      std::sort(members.begin(), members.end(), [&](size_t a, size_t b) {
        return segments_[a].live_bytes() < segments_[b].live_bytes();
      });
      if (tier != 0) members.resize(kMergeFactor);
      // In the lowest tier, the largest segment waits while it is more than kMergeFactor times
      // the others together and more than half of the whole index; the others are merged among
      // themselves. A small index (kjv: 5 MB, all of it in this tier) is then rewritten once
      // its updates add up to 1/8 of it, not for every update (an update of 5% of kjv cost
      // 0.32x a rebuild, mostly this rewrite); in a large index a few MB are cheap to rewrite,
      // and one segment fewer answers faster.
      if (tier == 0) {
        double rest = 0, total = 0;
        for (size_t k = 0; k + 1 < members.size(); ++k) rest += segments_[members[k]].live_bytes();
        for (const LiveSegment& seg : segments_) total += seg.live_bytes();
        const double largest = segments_[members.back()].live_bytes();
        if (largest > kMergeFactor * rest && largest * 2 > total) members.pop_back();
        if (members.size() < 2) continue;
      }
      // Segments rich in distinct terms (each flush holds ~1M on linux-files) may not fit the
      // budget all together: then the smallest that do, if they are at least half of them
      // (without this a tier of such segments never merged, and their number grew with the
      // corpus).
      const size_t at_least = tier == 0 ? members.size() : kMergeFactor / 2;
      auto fits = [&] {
        return static_cast<double>(EstimateMergeBytes(Sources(members), config_.sparse_max_df)) <=
               budget;
      };
      while (members.size() > at_least && !fits()) members.pop_back();
      if (!fits()) continue;
      pick = members;
      break;
    }
    // The newest segment absorbs older ones no larger than itself (indexer/merge_policy.h).
    if (pick.empty()) pick = AbsorbedWithinBudget(budget);
    // A segment that is mostly deleted documents is rewritten alone.
    if (pick.empty()) {
      for (size_t i = 0; i < segments_.size(); ++i) {
        const LiveSegment& s = segments_[i];
        if (s.entry.deleted.size() * 2 > s.entry.doc_count &&
            static_cast<double>(EstimateMergeBytes(Sources({i}), config_.sparse_max_df)) <=
                budget) {
          pick = {i};
          break;
        }
      }
    }
    if (pick.empty()) return;
    Merge(pick, root, report);
  }
}

// ---------------------------------------------------------------------------------------------
// Progress reporting from worker threads.

class ProgressReporter {
 public:
  ProgressReporter(const BuildConfig& config, uint64_t total, Clock::time_point start)
      : config_(config), total_(total), start_(start) {}
  void Done(uint64_t bytes) {
    uint64_t files = ++files_;
    bytes_ += bytes;
    if (!config_.progress) return;
    int64_t now =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
    int64_t last = last_ms_.load();
    if ((now - last >= 200 || files == total_) && last_ms_.compare_exchange_strong(last, now)) {
      std::lock_guard<std::mutex> lock(mu_);
      config_.progress({files, total_, bytes_.load(), SecondsSince(start_)});
    }
  }

 private:
  const BuildConfig& config_;
  uint64_t total_;
  Clock::time_point start_;
  std::atomic<uint64_t> files_{0}, bytes_{0};
  std::atomic<int64_t> last_ms_{0};
  std::mutex mu_;
};

// ---------------------------------------------------------------------------------------------
// The phases of an update.

std::string AbsolutePath(const std::string& path) {
  char* r = ::realpath(path.c_str(), nullptr);
  std::string out = r ? r : path;
  std::free(r);
  return out;
}

// Whether the index directory `index_dir` is ROOT/.bitsift for the tree at `root_abs`
// (absolute, resolved): an index inside its tree, which records its root as its parent.
bool IndexInTree(const std::string& root_abs, const std::string& index_dir) {
  const size_t slash = index_dir.find_last_of('/');
  const std::string name = slash == std::string::npos ? index_dir : index_dir.substr(slash + 1);
  return name == ".bitsift" && AbsolutePath(DirectoryOf(index_dir)) == root_abs;
}

std::map<std::string, std::string> SettingsOf(const std::string& root, const BuildConfig& c,
                                              bool in_tree = false) {
  std::map<std::string, std::string> settings = c.documents.ToSettings();
  format::EngineSettings{root, in_tree, c.fp_rate, c.sparse_max_df, c.max_file_size, c.positions}
      .To(&settings);
  tokenizer::AddTokenSettings(c.tokens, &settings);
  return settings;
}

void Validate(const BuildConfig& config) {
  Ensure(config.fp_rate > 0 && config.fp_rate < 1, ErrorKind::kInvalidArgument,
         "--fp-rate must be between 0 and 1 (exclusive), got " + std::to_string(config.fp_rate));
  Ensure(config.memory_budget > 0, ErrorKind::kInvalidArgument, "the memory budget must be > 0");
}

// Whether `rel` (relative to root) is inside the index directory.
// What makes a directory an index (its manifest), for the walk to skip indexes in the tree.
documents::IndexMark ManifestMark() {
  return {format::kManifestName,
          std::string(format::kManifestMagic, sizeof(format::kManifestMagic))};
}

std::function<bool(const std::string&)> IndexExcluder(const std::string& root_abs,
                                                      const std::string& index_dir,
                                                      const documents::DocumentOptions& rules) {
  std::string index_abs = AbsolutePath(index_dir);
  // A shard's index lies in the sharded index's directory, with its map and the other shards:
  // none of it is a file of the tree.
  if (rules.shard_count > 0) {
    const size_t slash = index_abs.find_last_of('/');
    if (slash != std::string::npos && slash > 0) index_abs.resize(slash);
  }
  return [root_abs, index_abs](const std::string& rel) {
    std::string abs = root_abs + "/" + rel;
    return abs == index_abs || abs.compare(0, index_abs.size() + 1, index_abs + "/") == 0 ||
           abs.compare(0, index_abs.size() + 5, index_abs + ".tmp.") == 0;
  };
}

// Walks the live documents of every segment in path order beside a sorted list of names.
// For each name, Find returns its live location (if any); documents passed over without being
// found are reported to on_gone.
class LiveCursor {
 public:
  explicit LiveCursor(std::vector<LiveSegment>& segments)
      : segments_(segments), next_(segments.size(), 0) {}

  // Returns {segment, local} of `name`, or {-1, 0}. Names must come in ascending order.
  template <typename Gone>
  std::pair<int64_t, uint32_t> Find(std::string_view name, Gone&& on_gone) {
    std::pair<int64_t, uint32_t> found{-1, 0};
    for (size_t s = 0; s < segments_.size(); ++s) {
      LiveSegment& seg = segments_[s];
      uint32_t& i = next_[s];
      while (i < seg.entry.doc_count && (seg.deleted(i) || seg.reader().path(i) < name)) {
        if (!seg.deleted(i)) on_gone(s, i);
        ++i;
      }
      if (i < seg.entry.doc_count && seg.reader().path(i) == name)
        found = {static_cast<int64_t>(s), i++};
    }
    return found;
  }
  template <typename Gone>
  void Finish(Gone&& on_gone) {
    for (size_t s = 0; s < segments_.size(); ++s) {
      LiveSegment& seg = segments_[s];
      for (uint32_t& i = next_[s]; i < seg.entry.doc_count; ++i) {
        if (!seg.deleted(i)) on_gone(s, i);
      }
    }
  }

 private:
  std::vector<LiveSegment>& segments_;
  std::vector<uint32_t> next_;
};

// What an update does to the live documents for the files of a tree (its classify phase).
struct TreePlan {
  std::vector<std::string> to_read;                    // new and changed files, in path order
  std::vector<std::pair<int64_t, uint32_t>> replaced;  // live {segment, id} of to_read[i]; -1: new
  std::vector<std::pair<size_t, uint32_t>> gone;       // live documents whose file is not listed
  uint64_t unchanged = 0;                              // files kept without reading them
};

// Whether each listed file names[i] that has a live document found[i] ({segment, id}; segment
// -1: none) still has that document's facts (SameFileFacts), looked at in parallel
// (LookAtFiles). The readers of the segments found are open already (LiveCursor read their
// paths), so the threads share them.
std::vector<uint8_t> UnchangedFiles(const std::string& root, const std::vector<std::string>& names,
                                    const std::vector<std::pair<int64_t, uint32_t>>& found,
                                    std::vector<LiveSegment>& segments) {
  std::vector<size_t> indexed;  // positions in names of the files with a live document
  for (size_t i = 0; i < names.size(); ++i) {
    if (found[i].first >= 0) indexed.push_back(i);
  }
  std::vector<uint8_t> unchanged(names.size(), 0);
  LookAtFiles(
      root, indexed.size(), [&](size_t k) -> std::string_view { return names[indexed[k]]; },
      [&](size_t k, const struct stat* st) {
        const auto [seg, id] = found[indexed[k]];
        unchanged[indexed[k]] = st != nullptr && S_ISREG(st->st_mode) &&
                                format::SameFileFacts(segments[seg].reader().doc(id), *st);
      },
      std::min(4u, std::thread::hardware_concurrency()));
  return unchanged;
}

// Classifies `names` (the sorted relative paths WalkDirectory listed under root) against the
// live documents of `segments`: a file whose facts equal its document's is unchanged, any
// other listed file is to be read, and a live document whose path is not listed is gone. Reads
// nothing but the segments' document tables and one fstatat per file already indexed. The
// names to read are moved into the plan (a full build of 1.2M files held two copies, 77 MB each,
// beside the builder: its budget is what the process has left).
TreePlan ClassifyTree(const std::string& root, std::vector<std::string> names,
                      std::vector<LiveSegment>& segments) {
  TreePlan plan;
  // Phase 1: each listed file's live document, if any (one pass over the sorted paths).
  LiveCursor cursor(segments);
  auto gone = [&](size_t s, uint32_t id) { plan.gone.push_back({s, id}); };
  std::vector<std::pair<int64_t, uint32_t>> found(names.size());
  for (size_t i = 0; i < names.size(); ++i) found[i] = cursor.Find(names[i], gone);
  cursor.Finish(gone);
  // Phase 2: which of them are unchanged; phase 3: the others are to be read.
  const std::vector<uint8_t> unchanged = UnchangedFiles(root, names, found, segments);
  for (size_t i = 0; i < names.size(); ++i) {
    if (unchanged[i]) {
      plan.unchanged++;
      continue;
    }
    plan.to_read.push_back(std::move(names[i]));
    plan.replaced.push_back(found[i]);
  }
  return plan;
}

// The end of the batch that starts at names[first]: at most kBatchDocuments documents, and
// (from the second document on) input bytes within what the memory budget has left, divided by
// kEstimateBytesPerInputByte. So a run of large files with many distinct terms (generated
// register headers, hex tables) cannot carry the builder far past the budget in one batch.
size_t BatchEnd(size_t first, size_t count, const std::function<uint64_t(size_t)>& size_of,
                uint64_t estimate, uint64_t budget) {
  const uint64_t room = estimate < budget ? budget - estimate : 0;
  const uint64_t max_bytes = std::max<uint64_t>(kMinBatchBytes, room / kEstimateBytesPerInputByte);
  size_t end = first + 1;
  uint64_t bytes = size_of(first);
  while (end < count && end - first < kBatchDocuments) {
    bytes += size_of(end);
    if (bytes > max_bytes) break;
    ++end;
  }
  return end;
}

// Tokenizes `names` with `read` into segments of at most the memory budget. size_of(i) is the
// input size of names[i] as far as it is known before reading (0 if not).
void IndexDocuments(IndexState& state, const std::vector<std::string>& names,
                    const std::function<uint64_t(size_t)>& size_of, const DocumentReader& read,
                    const std::string& root, const BuildConfig& config, const SkipCallback& on_skip,
                    Clock::time_point start, BuildReport* report, std::vector<uint8_t>* indexed) {
  ProgressReporter progress(config, names.size(), start);
  SegmentBuilder builder(config.fp_rate, config.sparse_max_df, config.tokens, config.positions,
                         config.every_position_bytes);
  indexed->assign(names.size(), 1);
  const uint64_t budget = BuilderBudget(config.memory_budget);
  for (size_t first = 0, end = 0; first < names.size(); first = end) {
    end = BatchEnd(first, names.size(), size_of, builder.EstimatedBytes(), budget);
    std::vector<std::string> batch(names.begin() + first, names.begin() + end);
    builder.AddBatch(
        batch,
        [&](size_t i, tokenizer::Tokenizer& tok, tokenizer::TokenSink& sink, FileFacts* facts,
            std::string* detail) { return read(first + i, tok, sink, facts, detail); },
        [&](const std::string& path, SkipReason why, const std::string& detail) {
          auto it = std::lower_bound(names.begin() + first, names.begin() + end, path);
          (*indexed)[it - names.begin()] = 0;
          on_skip(path, why, detail);
        },
        [&](uint64_t bytes) { progress.Done(bytes); });
    // The tokenizers' transient sets of a batch of large documents are freed in the worker
    // threads' malloc arenas, which glibc does not give back by itself (measured on
    // linux-files' register headers: 50 MB resident above the estimate). Trimming after every
    // batch cost a third of the build (linux-files: 46.8 s against 31.3 s; each batch faulted
    // the memory in again), so only when the process runs ahead of the budget.
    if (ResidentBytes() > config.memory_budget - budget + builder.EstimatedBytes() + kTrimSlack)
      ::malloc_trim(0);
    if (builder.EstimatedBytes() >= budget) {
      ::malloc_trim(0);  // what the workers freed, before writing allocates in the main arena
      state.Flush(builder, root, report, config.merge);
    }
  }
  // A build's flushes are merged (MergeFlushes) when there are two or more: their records
  // keep every term's positions, so that the merged records have the lists of the merged
  // segment's frequent terms (which the flushes' own counts cannot tell), and a phrase of them
  // reads no text (docs/design.md, "Phrases").
  state.Flush(builder, root, report, config.merge && state.flushes() > 0);
}

template <typename F>
void WithThreads(const BuildConfig& config, F&& f) {
  // More threads than cores only add contention (and TBB warns about them): capped.
  const int cores = tbb::this_task_arena::max_concurrency();
  int threads = config.threads == 0 || config.threads > static_cast<unsigned>(cores)
                    ? cores
                    : static_cast<int>(config.threads);
  tbb::task_arena arena(threads);
  arena.execute(f);
}

}  // namespace

void UpdateIndexFromDirectory(const std::string& root, const std::string& index_dir,
                              const BuildConfig& config, BuildReport* report) {
  const auto start = Clock::now();
  *report = BuildReport{};
  Validate(config);
  const std::string root_abs = AbsolutePath(root);
  const std::function<bool(const std::string&)> own_index =
      IndexExcluder(root_abs, index_dir, config.documents);
  std::mutex mu;
  SkipCallback on_skip = [&](const std::string& path, SkipReason why, const std::string& detail) {
    // The index being written (or its temporary files) is no file of the tree: not reported,
    // so that every run says the same (a first run does not meet it).
    if (why == SkipReason::kIndexFile && own_index(path)) return;
    std::lock_guard<std::mutex> lock(mu);
    report->skipped[static_cast<size_t>(why)]++;
    if (config.on_skip) config.on_skip(path, why, detail);
  };
  // Phase 1: list the tree (fails early on a bad root, before the index is touched).
  std::vector<std::string> names =
      WalkDirectory(root, config.documents, ManifestMark(), own_index, on_skip);
  WithThreads(config, [&] {
    // Phase 2: the current state, under the writer lock.
    const bool in_tree = IndexInTree(root_abs, index_dir);
    IndexState state(index_dir, config, SettingsOf(root_abs, config, in_tree),
                     /*keep_root=*/false, /*rebuild_other_format=*/true);
    report->rebuilt = state.rebuilt();
    report->why_rebuilt = state.why_rebuilt();
    // Phase 3: classify every listed file against the live documents.
    TreePlan plan = ClassifyTree(root, std::move(names), state.segments());
    const std::vector<std::string>& to_read = plan.to_read;
    const std::vector<std::pair<int64_t, uint32_t>>& replaced = plan.replaced;
    for (auto [s, id] : plan.gone) state.segments()[s].Delete(id);
    report->removed += plan.gone.size();
    report->unchanged = plan.unchanged;
    // Phase 4: index new and changed files into new segments.
    std::vector<uint8_t> indexed;
    const uint64_t max_size = config.max_file_size;
    IndexDocuments(
        state, to_read,
        [&](size_t i) -> uint64_t {
          struct stat st;
          const std::string full = root + "/" + to_read[i];
          return ::lstat(full.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
        },
        [&](size_t i, tokenizer::Tokenizer& tok, tokenizer::TokenSink& sink, FileFacts* facts,
            std::string* detail) {
          TokenizingSink text(tok, sink);
          const SkipReason r =
              ReadDocumentFile(root, to_read[i], max_size, config.documents, text, facts, detail);
          if (r != SkipReason::kCount) tok.Reset();  // the part read belongs to no document
          return r;
        },
        root_abs, config, on_skip, start, report, &indexed);
    // Phase 5: delete the old versions of changed files (after the new ones are written).
    for (size_t i = 0; i < to_read.size(); ++i) {
      if (replaced[i].first >= 0) {
        state.segments()[replaced[i].first].Delete(replaced[i].second);
        if (indexed[i]) {
          report->changed++;
        } else {
          report->removed++;
        }
      } else if (indexed[i]) {
        report->added++;
      }
    }
    // Phase 6: merge (this run's flushes, then by policy), commit. The names are not
    // needed any more: their memory goes to the merges' budget (BuilderBudget subtracts what
    // is resident; 1.2M names are 77 MB).
    std::vector<std::string>().swap(plan.to_read);
    ::malloc_trim(0);
    if (config.merge) state.MergeFlushes(root_abs, report);
    if (config.merge) state.MergeByPolicy(root_abs, report);
    state.Commit(report);
  });
  report->seconds = SecondsSince(start);
}

bool ReadStoredSettings(const std::string& index_dir, BuildConfig* config) {
  format::Manifest manifest;
  try {
    manifest = format::ReadManifest(index_dir);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kNotFound) return false;
    throw;
  }
  const std::map<std::string, std::string>& s = manifest.settings;
  const format::EngineSettings e = format::EngineSettings::From(s);
  config->fp_rate = e.fp_rate.value_or(config->fp_rate);
  config->sparse_max_df = e.sparse_max_df.value_or(config->sparse_max_df);
  config->max_file_size = e.max_file_size.value_or(config->max_file_size);
  config->positions = e.positions;
  config->documents = documents::DocumentOptions::FromSettings(s);
  // The readers are not a setting one gives: an update reads with all of them (an index made
  // before one existed is rebuilt with it).
  config->documents.read_man = config->documents.read_pdf = true;
  config->tokens = tokenizer::TokenRulesFromSettings(s);
  return true;
}

TreeStatus CompareWithTree(const std::string& index_dir) {
  // The committed state, read as a reader reads it (a writer may commit meanwhile).
  std::vector<LiveSegment> segments;
  const format::Manifest manifest =
      format::OpenManifestSegments(index_dir, [&](const format::Manifest& m) {
        segments.clear();
        for (const format::ManifestSegment& e : m.segments) {
          segments.push_back(LiveSegment::Open(index_dir, e));
        }
      });
  TreeStatus status;
  const format::EngineSettings engine = format::EngineSettings::From(manifest.settings);
  Ensure(!engine.root.empty(), ErrorKind::kInvalidArgument,
         index_dir + ": an index of documents given in memory has no directory to compare with");
  status.root = engine.RootOf(index_dir);
  if (struct stat st; ::stat(status.root.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(
        err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
        ErrnoMessage(status.root, "cannot read the directory the index was built from", err));
  }
  const uint64_t max_file_size = engine.max_file_size.value_or(BuildConfig{}.max_file_size);
  for (const LiveSegment& s : segments) status.documents += s.live();
  // The document rules the index records (defaults for those it does not).
  const documents::DocumentOptions rules =
      documents::DocumentOptions::FromSettings(manifest.settings);
  std::vector<std::string> names = WalkDirectory(
      status.root, rules, ManifestMark(), IndexExcluder(status.root, index_dir, rules),
      [](const std::string&, SkipReason, const std::string&) {});
  const TreePlan plan = ClassifyTree(status.root, std::move(names), segments);
  status.unchanged = plan.unchanged;
  for (auto [s, id] : plan.gone) status.removed.emplace_back(segments[s].reader().path(id));
  for (size_t i = 0; i < plan.to_read.size(); ++i) {
    std::string detail;
    const bool indexable = documents::ProbeDocumentFile(status.root, plan.to_read[i], max_file_size,
                                                        rules, &detail) == SkipReason::kCount;
    if (plan.replaced[i].first >= 0) {
      (indexable ? status.changed : status.removed).push_back(plan.to_read[i]);
    } else if (indexable) {
      status.added.push_back(plan.to_read[i]);
    }
  }
  std::sort(status.removed.begin(), status.removed.end());
  return status;
}

void UpdateIndexFromMemory(const std::vector<MemoryDocument>& upserts,
                           const std::vector<std::string>& deletes, const std::string& index_dir,
                           const BuildConfig& config, BuildReport* report) {
  const auto start = Clock::now();
  *report = BuildReport{};
  Validate(config);
  std::vector<size_t> order(upserts.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return upserts[a].name < upserts[b].name; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (upserts[order[i - 1]].name == upserts[order[i]].name) [[unlikely]]
      throw Error(ErrorKind::kInvalidArgument,
                  "two documents named '" + upserts[order[i]].name + "'");
  }
  std::vector<std::string> names;
  for (size_t i : order) names.push_back(upserts[i].name);
  // Deleted and replaced names, in order, to find their live locations.
  std::vector<std::string> doomed = names;
  doomed.insert(doomed.end(), deletes.begin(), deletes.end());
  std::sort(doomed.begin(), doomed.end());
  doomed.erase(std::unique(doomed.begin(), doomed.end()), doomed.end());
  std::mutex mu;
  SkipCallback on_skip = [&](const std::string& path, SkipReason why, const std::string& detail) {
    std::lock_guard<std::mutex> lock(mu);
    report->skipped[static_cast<size_t>(why)]++;
    if (config.on_skip) config.on_skip(path, why, detail);
  };
  WithThreads(config, [&] {
    IndexState state(index_dir, config, SettingsOf("", config), /*keep_root=*/true);
    report->rebuilt = state.rebuilt();
    report->why_rebuilt = state.why_rebuilt();
    std::set<std::string> upserted(names.begin(), names.end());
    std::vector<std::pair<size_t, uint32_t>> old;
    LiveCursor cursor(state.segments());
    for (const std::string& name : doomed) {
      auto [seg, id] = cursor.Find(name, [](size_t, uint32_t) {});
      if (seg >= 0) old.push_back({static_cast<size_t>(seg), id});
      if (seg >= 0) (upserted.count(name) ? report->changed : report->removed)++;
    }
    std::vector<uint8_t> indexed;
    IndexDocuments(
        state, names, [&](size_t i) -> uint64_t { return upserts[order[i]].text.size(); },
        [&](size_t i, tokenizer::Tokenizer& tok, tokenizer::TokenSink& sink, FileFacts* facts,
            std::string*) {
          const MemoryDocument& d = upserts[order[i]];
          tok.Tokenize(d.text, sink);
          facts->size = facts->file_size = d.text.size();
          facts->mtime_ns = d.mtime_ns;
          return SkipReason::kCount;
        },
        "", config, on_skip, start, report, &indexed);
    for (auto [seg, id] : old) state.segments()[seg].Delete(id);
    report->added = names.size() - report->changed;
    if (config.merge) state.MergeFlushes("", report);  // as UpdateIndexFromDirectory
    if (config.merge) state.MergeByPolicy("", report);
    state.Commit(report);
  });
  report->seconds = SecondsSince(start);
}

void CompactIndex(const std::string& index_dir, const BuildConfig& config, BuildReport* report) {
  const auto start = Clock::now();
  *report = BuildReport{};
  WithThreads(config, [&] {
    format::Manifest current = format::ReadManifest(index_dir);  // kNotFound for no index
    BuildConfig c = config;
    c.rebuild = false;
    // Keep the index's own settings (so the state is not treated as a rebuild).
    const format::EngineSettings engine = format::EngineSettings::From(current.settings);
    c.fp_rate = engine.fp_rate.value_or(c.fp_rate);
    c.sparse_max_df = engine.sparse_max_df.value_or(c.sparse_max_df);
    IndexState state(index_dir, c, current.settings);
    const std::string root = engine.RootOf(index_dir);
    const size_t n = state.segments().size();
    bool needed = n > 1 || (n == 1 && !state.segments()[0].entry.deleted.empty());
    if (needed) {
      std::vector<size_t> all(n);
      std::iota(all.begin(), all.end(), 0);
      state.Merge(all, root, report);
    }
    state.Commit(report);
  });
  report->seconds = SecondsSince(start);
}

format::ShardMap ReadShardMapOf(const std::string& index_dir) {
  return format::ReadShardMap(index_dir);
}

void PrepareShardedIndex(const std::string& root, const std::string& index_dir, uint32_t count) {
  Ensure(count > 0, ErrorKind::kInvalidArgument, "a sharded index needs at least one shard");
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    const int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                ErrnoMessage(root, "cannot index", err));
  }
  Ensure(S_ISDIR(st.st_mode), ErrorKind::kInvalidArgument, root + ": not a directory");
  // The directory and its parents, as `mkdir -p`.
  for (size_t at = 1; at <= index_dir.size(); ++at) {
    if (at < index_dir.size() && index_dir[at] != '/') continue;
    const std::string part = index_dir.substr(0, at);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      throw Error(ErrorKind::kIo, ErrnoMessage(part, "cannot create the index directory", errno));
    }
  }
  Ensure(::stat(index_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode), ErrorKind::kInvalidArgument,
         index_dir + ": exists and is not a directory; choose another --index path");
  if (format::IsShardedIndex(index_dir)) {
    const format::ShardMap map = format::ReadShardMap(index_dir);
    Ensure(map.root == AbsolutePath(root), ErrorKind::kInvalidArgument,
           index_dir + ": a sharded index of " + map.root + ", not of " + AbsolutePath(root));
    Ensure(map.count == count, ErrorKind::kInvalidArgument,
           index_dir + ": a sharded index of " + std::to_string(map.count) + " shards, not " +
               std::to_string(count));
  }
  const std::string ignore = index_dir + "/" + format::kGitignoreName;
  if (::access(ignore.c_str(), F_OK) != 0) {
    storage::AtomicFileWriter w(ignore);
    w.Append("*\n", 2);
    w.Commit();
  }
}

void WriteShardMapOf(const std::string& root, const std::string& index_dir, uint32_t count) {
  format::WriteShardMap(index_dir, format::MakeShardMap(count, AbsolutePath(root)));
}

}  // namespace bitsift::indexer
