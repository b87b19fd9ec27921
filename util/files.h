// Small POSIX file helpers: read-only memory maps and atomic replacement of a file.
#ifndef BITSIFT_UTIL_FILES_H_
#define BITSIFT_UTIL_FILES_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace bitsift {

// A read-only private mapping of a whole file. Throws Error(kIo/kNotFound) on failure.
// Movable, not copyable; safe to read from several threads.
class MappedFile {
 public:
  MappedFile() = default;
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // A mapping of the open file `fd` (a duplicate of it is kept; the caller keeps fd), named
  // `name` in messages: a file that has no name (ScratchFile's).
  static MappedFile OfDescriptor(int fd, const std::string& name);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Drops the pages of the mapping from this process's resident set (the file's pages stay
  // in the page cache; a later read faults them in again). A merge that has read its inputs
  // once calls it, so that they do not count in its memory twice.
  void ReleasePages() const;
  // Asks the kernel to start reading [offset, offset + length) (clipped to the file) into the
  // page cache now, without waiting (MADV_WILLNEED): a cold open then waits for one round of
  // parallel reads instead of a read per page it touches in turn. A hint only.
  void WillNeed(size_t offset, size_t length) const;
  // Maps the pages of [offset, offset + length) (clipped to the file) into this process now,
  // with one system call (MADV_POPULATE_READ, Linux 5.14), reading those not in the page cache
  // and waiting for them: the reader touches them next without a page fault each. Where a
  // fault is a trip to the hypervisor (a paravirtualized guest), a fault on a file page costs
  // 50-80 us, as it maps the up to 16 neighbours the page cache holds (fault-around), against
  // ~2 us for this call and ~1 us a page (docs/design.md, "One-shot queries"). Does nothing
  // on a kernel without it. A hint: reading the mapping stays valid.
  void Populate(size_t offset, size_t length) const;
  // Maps into this process the pages of [offset, offset + length) (clipped to the file) that
  // the page cache holds now (mincore, then MADV_POPULATE_READ for each run of them); pages not
  // in the page cache are left alone, so it reads nothing from the disk. Returns the bytes
  // asked to be mapped. For a reader of many queries, on a thread of its own: its first queries
  // then do not pay a page fault for each page they first touch (docs/design.md, "A query's
  // fixed costs"). Does nothing on a kernel without MADV_POPULATE_READ. A hint: reading the
  // mapping stays valid.
  size_t PopulateResident(size_t offset, size_t length) const;
  // Tells the kernel that this mapping is read at scattered places (MADV_RANDOM): a page fault
  // then reads that page alone, instead of read_ahead_kb around it (at 8 MiB, three faults of a
  // cold one-shot query read 24 MB). Whoever calls it asks for what it will read with WillNeed.
  // Scans (merges, check) do not call it.
  void AdviseRandom() const;
  // Whether the page holding byte `offset` is in the page cache (mincore; true if unknown): a
  // caller about to ask for many pieces with WillNeed checks one first, and skips the requests
  // (a system call each) when the file is warm.
  bool Resident(size_t offset) const;
  // Copies [offset, offset + length) of the file into dst with pread(2), not through the
  // mapping: no page of the process is mapped or touched but dst's. Throws Error(kIo) naming
  // the path if the read fails or the range is not inside the file.
  void Read(size_t offset, size_t length, void* dst) const;

 private:
  void MapDescriptor(int fd, const std::string& path);  // takes fd
  // The whole pages covering [offset, offset + length) clipped to the file, as addresses
  // [*begin, *end); false if the range is empty or past the end.
  bool Pages(size_t offset, size_t length, uintptr_t* begin, uintptr_t* end) const;

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;  // kept open for Read
  std::string path_;
};

// Whether a first touch of a page costs this process a trap to the hypervisor, measured once per
// process (the fastest of 4 first writes to fresh anonymous pages, against kDearFaultMicros; the
// first cheap one ends the measure, so a machine where faults are cheap pays one page): about 11 us
// in a paravirtualized guest (PVM), 0.1-1 us on bare metal or hardware-assisted virtualization
// (~1.3 us with hardware-assisted virtualization, fault included). Where it does, a one-shot
// query's heap pays to be in a huge page (Index::Open with OpenOptions::one_shot:
// util::PrepareHugePageHeap); where it does not, the huge page's zeroing costs more than the
// faults it saves (with ~1.3 us faults: `bench/oneshot-ab` p50 2.63 against 2.36 ms without).
bool PageFaultsAreDear();
inline constexpr double kDearFaultMicros = 3.0;

// Looks at files 0..n-1 below the directory `root` (absolute), file i at the relative path
// path(i) (an absolute path is looked at as it is): look(i, st) receives its lstat, or
// nullptr if it cannot be looked at (vanished, or a directory on its path cannot be opened).
// Files of one directory that come one after another (sorted paths do), three or more, share
// one open of the directory (O_PATH): their fstatat() looks up the name alone (one or two are
// looked up whole). The files are looked at by:
//   - threads == kLookWithHelper: the caller and the process's helper thread
//     (util::RunShared), in pieces of kLookPiece files taken in order, for callers that wait
//     on the answer (a query's results). The caller never waits for a thread to start, and
//     below kLookStartHelperFiles files it shares only with a helper that is polling already
//     (util::HelperNeed::kIfPolling): starting a thread cost the caller 0.2-0.7 ms on a 2-core
//     guest and the thread ran 0.6-4.5 ms later (a sleeping vCPU woken), as long as looking at
//     a query's 469 files alone.
//   - otherwise, with at least kParallelLookFiles files and threads > 1, that many threads (the
//     caller's and std::threads; for long runs, an update's walk of a whole tree), each an
//     equal share of consecutive files. On 2 cores a file costs 1.4 us instead of 2.6 (kjv),
//     because threads in different directories do not contend for the same dentries.
// `path` and `look` are called from any of the threads, once per file each (path(i) before
// look(i), and up to two files ahead of it); the
// first exception either throws is rethrown once every thread has stopped (with the helper, no
// piece is started after it).
inline constexpr size_t kParallelLookFiles = 256;
inline constexpr size_t kLookPiece = 64;
inline constexpr unsigned kLookWithHelper = 0;
inline constexpr size_t kLookStartHelperFiles = 4096;
void LookAtFiles(const std::string& root, size_t n,
                 const std::function<std::string_view(size_t)>& path,
                 const std::function<void(size_t, const struct stat*)>& look, unsigned threads);

// Writes a new version of `path` so that readers see either the old file or the complete new
// one: the bytes go to "<path>.tmp.<pid>.<writer>" in the same directory, are fsync'ed, then
// renamed over `path`, and the directory is fsync'ed. Usage: (Append)* Commit; destroying an
// uncommitted writer removes the temporary file. Not thread-safe.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& path);  // throws Error(kIo)
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  void Append(const void* data, size_t n);  // throws Error(kIo), e.g. on a full disk
  void AppendZeros(size_t n);
  // Rewrites n bytes at an offset already written (a header filled in last).
  void Overwrite(uint64_t offset, const void* data, size_t n);
  uint64_t offset() const { return offset_; }
  void Commit();  // throws Error(kIo); afterwards `path` is the new file

  // Removes "<path>.tmp.<pid>" files left by processes that no longer run (a killed build).
  static void RemoveStaleTemporaries(const std::string& path);

 private:
  void FlushBuffer();
  std::string path_;
  std::string tmp_path_;
  int fd_ = -1;
  uint64_t offset_ = 0;
  std::string buffer_;
  bool committed_ = false;
};

// A temporary file without a name in directory `dir`, for bytes a process writes once and
// reads back (a merge's new forward records, too many to hold in memory): opened O_TMPFILE, so
// that nothing is left behind however the process ends (where the file system cannot, a file
// with a unique name, unlinked as soon as it is created). The file's pages live in the page
// cache, not in the process, until they are mapped and touched. Usage: (Append)* Map. Throws
// Error(kIo), e.g. on a full disk. Not thread-safe.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& dir);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  void Append(const void* data, size_t n);
  uint64_t size() const { return size_; }
  // Everything appended, mapped read-only (the mapping stays valid after this object is gone).
  MappedFile Map();

 private:
  void FlushBuffer();
  std::string name_;  // for messages
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string buffer_;
};

// The directory part of a path ("." if none).
std::string DirectoryOf(const std::string& path);

// `path` as an absolute path for messages: unchanged if absolute, else joined to the working
// directory (not resolved: the path may not exist).
std::string AbsoluteForMessage(const std::string& path);

}  // namespace bitsift

#endif  // BITSIFT_UTIL_FILES_H_
