#include "util/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "util/error.h"
#include "util/helper_thread.h"

namespace bitsift {

std::string ErrnoMessage(const std::string& path, const std::string& what, int err) {
  return path + ": " + what + ": " + std::strerror(err);
}

namespace {

// Maps `size` bytes of `fd` read-only at an address 4 KiB past a 2 MiB boundary, or returns
// MAP_FAILED. Why: since Linux 6.18 a fault on a file mapping maps the whole large folio of the
// page cache that holds the page when the folio lies within one page table (ext4 and XFS keep
// files written or read sequentially in folios of up to 2 MiB). A reader that verifies one
// 4 KiB chunk then gains up to 2 MiB of resident memory: a one-shot query reading ~1,200
// chunks of a 446 MB index reached 129 MB resident. At this offset every 2 MiB folio straddles
// two page tables, so a fault maps only the fault-around window (64 KiB by default), as
// before 6.18 (74 MB for that query, same time). Smaller folios are still mapped whole.
void* MapOffAlignment(int fd, size_t size) {
  constexpr size_t kPmd = size_t{2} << 20, kPage = 4096;
  const size_t mapped = (size + kPage - 1) & ~(kPage - 1);
  void* reserved =
      ::mmap(nullptr, mapped + kPmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) return MAP_FAILED;
  const uintptr_t base = reinterpret_cast<uintptr_t>(reserved);
  uintptr_t at = ((base + kPmd - 1) & ~(kPmd - 1)) + kPage;
  if (at - base > kPmd) at -= kPmd;  // base was 2 MiB-aligned: base + 4 KiB
  // MAP_FIXED over our own reservation: nothing else can live there.
  void* p = ::mmap(reinterpret_cast<void*>(at), size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    ::munmap(reserved, mapped + kPmd);
    return MAP_FAILED;
  }
  if (at > base) ::munmap(reserved, at - base);
  const uintptr_t end = base + mapped + kPmd;
  if (end > at + mapped) ::munmap(reinterpret_cast<void*>(at + mapped), end - (at + mapped));
  return p;
}

}  // namespace

MappedFile::MappedFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                ErrnoMessage(path, "cannot open", err));
  }
  MapDescriptor(fd, path);
}

MappedFile MappedFile::OfDescriptor(int fd, const std::string& name) {
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) throw Error(ErrorKind::kIo, ErrnoMessage(name, "cannot duplicate", errno));
  MappedFile m;
  m.MapDescriptor(own, name);
  return m;
}

void MappedFile::MapDescriptor(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot stat", err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(ErrorKind::kIo, path + ": not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = MapOffAlignment(fd, size_);
    if (p == MAP_FAILED) p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot map", err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  fd_ = fd;
  path_ = path;
}

void MappedFile::Read(size_t offset, size_t length, void* dst) const {
  if (offset > size_ || length > size_ - offset) {
    throw Error(ErrorKind::kIo, path_ + ": read past the end of the file (offset " +
                                    std::to_string(offset) + ", length " + std::to_string(length) +
                                    ")");
  }
  auto* out = static_cast<uint8_t*>(dst);
  while (length > 0) {
    const ssize_t n = ::pread(fd_, out, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error(ErrorKind::kIo, n == 0 ? path_ + ": cannot read: the file was truncated"
                                         : ErrnoMessage(path_, "cannot read", errno));
    }
    out += n;
    offset += static_cast<size_t>(n);
    length -= static_cast<size_t>(n);
  }
}

void MappedFile::ReleasePages() const {
  if (size_ > 0) ::madvise(const_cast<uint8_t*>(data_), size_, MADV_DONTNEED);
}

void MappedFile::WillNeed(size_t offset, size_t length) const {
  uintptr_t begin, end;
  if (Pages(offset, length, &begin, &end)) {
    (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_WILLNEED);
  }
}

namespace {

// MADV_POPULATE_READ over the pages [begin, end) (page-aligned addresses); false if the kernel
// refused. Once it refuses with EINVAL (before 5.14), it is not asked again.
bool PopulatePages(uintptr_t begin, uintptr_t end) {
#ifdef MADV_POPULATE_READ
  static std::atomic<bool> unsupported{false};
  if (unsupported.load(std::memory_order_relaxed)) return false;
  if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_READ) == 0) return true;
  if (errno == EINVAL) unsupported.store(true, std::memory_order_relaxed);
#else
  (void)begin;
  (void)end;
#endif
  return false;
}

}  // namespace

bool MappedFile::Pages(size_t offset, size_t length, uintptr_t* begin, uintptr_t* end) const {
  if (offset >= size_ || length == 0) return false;
  length = std::min(length, size_ - offset);
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  *begin = reinterpret_cast<uintptr_t>(data_ + offset) & ~(page - 1);
  *end = (reinterpret_cast<uintptr_t>(data_ + offset + length) + page - 1) & ~(page - 1);
  return true;
}

void MappedFile::Populate(size_t offset, size_t length) const {
  uintptr_t begin, end;
  if (Pages(offset, length, &begin, &end)) PopulatePages(begin, end);
}

size_t MappedFile::PopulateResident(size_t offset, size_t length) const {
  uintptr_t begin, end;
  if (!Pages(offset, length, &begin, &end)) return 0;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((end - begin) / page);
  if (::mincore(reinterpret_cast<void*>(begin), end - begin, in_core.data()) != 0) return 0;
  size_t mapped = 0;
  for (size_t i = 0; i < in_core.size();) {
    if ((in_core[i] & 1) == 0) {
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (j < in_core.size() && (in_core[j] & 1) != 0) ++j;
    if (!PopulatePages(begin + i * page, begin + j * page)) break;
    mapped += (j - i) * page;
    i = j;
  }
  return mapped;
}

void MappedFile::AdviseRandom() const {
  if (size_ > 0) (void)::madvise(const_cast<uint8_t*>(data_), size_, MADV_RANDOM);
}

bool MappedFile::Resident(size_t offset) const {
  if (offset >= size_) return true;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data_ + offset) & ~(page - 1);
  unsigned char in_core = 0;
  if (::mincore(reinterpret_cast<void*>(begin), 1, &in_core) != 0) return true;
  return (in_core & 1) != 0;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
    if (fd_ >= 0) ::close(fd_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

bool PageFaultsAreDear() {
  static const bool dear = [] {
    constexpr size_t kPages = 4;  // each a fault to pay (8 cost a one-shot query 90 us here)
    const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void* p =
        ::mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    double fastest = 1e9;
    for (size_t i = 0; i < kPages; ++i) {
      const auto start = std::chrono::steady_clock::now();
      static_cast<volatile uint8_t*>(p)[i * page] = 1;
      fastest = std::min(fastest, std::chrono::duration<double, std::micro>(
                                      std::chrono::steady_clock::now() - start)
                                      .count());
      if (fastest < kDearFaultMicros) break;  // cheap: no need to look further
    }
    ::munmap(p, kPages * page);
    return fastest >= kDearFaultMicros;
  }();
  return dear;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string AbsoluteForMessage(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[PATH_MAX];
  if (::getcwd(buf, sizeof(buf)) == nullptr) return path;
  const std::string cwd = buf;
  if (path.empty() || path == ".") return cwd;
  return (cwd == "/" ? "" : cwd) + "/" + (path.compare(0, 2, "./") == 0 ? path.substr(2) : path);
}

namespace {
// Temporary names are unique per writer, not per process: two writers of one process (a merge
// beside a flush, two threads of an embedding program) never share a temporary file.
std::atomic<uint64_t> writer_sequence{0};
}  // namespace

AtomicFileWriter::AtomicFileWriter(const std::string& path)
    : path_(path),
      tmp_path_(path + ".tmp." + std::to_string(::getpid()) + "." +
                std::to_string(writer_sequence.fetch_add(1))) {
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot create", errno));
  buffer_.reserve(1 << 20);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

namespace {
void WriteAll(int fd, const char* p, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t written = ::write(fd, p, n);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot write", errno));
    p += written;
    n -= static_cast<size_t>(written);
  }
}
}  // namespace

void AtomicFileWriter::FlushBuffer() {
  WriteAll(fd_, buffer_.data(), buffer_.size(), tmp_path_);
  buffer_.clear();
}

void AtomicFileWriter::Append(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  offset_ += n;
  if (buffer_.size() + n > (1 << 20)) FlushBuffer();
  if (n >= (1 << 20)) {
    WriteAll(fd_, p, n, tmp_path_);
  } else {
    buffer_.append(p, n);
  }
}

void AtomicFileWriter::AppendZeros(size_t n) {
  static const char kZeros[64] = {};
  while (n > 0) {
    size_t step = n < sizeof(kZeros) ? n : sizeof(kZeros);
    Append(kZeros, step);
    n -= step;
  }
}

void AtomicFileWriter::Overwrite(uint64_t offset, const void* data, size_t n) {
  FlushBuffer();
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t written = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot write", errno));
    p += written;
    n -= static_cast<size_t>(written);
    offset += static_cast<uint64_t>(written);
  }
}

void AtomicFileWriter::Commit() {
  FlushBuffer();
  if (::fsync(fd_) != 0) throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot sync", errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot close", errno));
  }
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw Error(ErrorKind::kIo, ErrnoMessage(path_, "cannot replace", errno));
  }
  committed_ = true;
  int dir = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // best effort: the rename is durable once the directory is synced
    ::close(dir);
  }
}

void AtomicFileWriter::RemoveStaleTemporaries(const std::string& path) {
  std::string dir = DirectoryOf(path);
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  std::string prefix = base + ".tmp.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    std::string pid_text = name.substr(prefix.size());
    pid_text = pid_text.substr(0, pid_text.find('.'));
    if (pid_text.empty() || pid_text.size() > 9 ||
        pid_text.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    bool alive = pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM;
    if (!alive) ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

ScratchFile::ScratchFile(const std::string& dir) : name_(dir + "/(scratch file)") {
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // No O_TMPFILE here: a unique name, gone from the directory at once.
    std::string name = dir + "/.scratch.XXXXXX";
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ >= 0) ::unlink(name.c_str());
  }
  if (fd_ < 0) throw Error(ErrorKind::kIo, ErrnoMessage(name_, "cannot create", errno));
  buffer_.reserve(1 << 20);
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ScratchFile::FlushBuffer() {
  WriteAll(fd_, buffer_.data(), buffer_.size(), name_);
  buffer_.clear();
}

void ScratchFile::Append(const void* data, size_t n) {
  size_ += n;
  if (buffer_.size() + n > (1 << 20)) FlushBuffer();
  if (n >= (1 << 20)) {
    WriteAll(fd_, static_cast<const char*>(data), n, name_);
  } else {
    buffer_.append(static_cast<const char*>(data), n);
  }
}

MappedFile ScratchFile::Map() {
  FlushBuffer();
  return MappedFile::OfDescriptor(fd_, name_);
}

void LookAtFiles(const std::string& root, size_t n,
                 const std::function<std::string_view(size_t)>& path,
                 const std::function<void(size_t, const struct stat*)>& look, unsigned threads) {
  if (n == 0) return;
  const int root_fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  // Files [lo, hi) in order, each path read once, two ahead of the file looked at: a directory
  // is opened (O_PATH) at the first of at least three of its files in a row, which are then
  // looked up by name in it; shorter runs are looked up whole (an open and a close cost more
  // than the lookups they would save for two files).
  auto look_range = [&](size_t lo, size_t hi) {
    // Paths i - 1 .. i + 2 as C strings, on the stack (no thread's malloc arena).
    struct Slot {
      char bytes[PATH_MAX];
      size_t size = 0;
      size_t dir = 0;  // the length of its directory part (0: none)
      bool fits = false;
    };
    Slot slots[4];
    auto slot = [&](size_t j) -> Slot& { return slots[j % 4]; };
    auto load = [&](size_t j) {
      Slot& s = slot(j);
      const std::string_view p = path(j);
      s.fits = p.size() < sizeof(s.bytes);
      if (!s.fits) return;
      std::memcpy(s.bytes, p.data(), p.size());
      s.bytes[p.size()] = '\0';
      s.size = p.size();
      const size_t slash = p.rfind('/');
      s.dir = slash == std::string_view::npos ? 0 : slash;
    };
    auto same_dir = [](const Slot& a, const Slot& b) {
      return a.fits && b.fits && a.dir == b.dir && std::memcmp(a.bytes, b.bytes, a.dir) == 0;
    };
    int dir_fd = -1;
    struct Closer {
      int& fd;
      ~Closer() {
        if (fd >= 0) ::close(fd);
      }
    } closer{dir_fd};
    for (size_t j = lo; j < std::min(hi, lo + 2); ++j) load(j);
    for (size_t i = lo; i < hi; ++i) {
      if (i + 2 < hi) load(i + 2);
      Slot& cur = slot(i);
      struct stat st;
      int r = -1;
      if (cur.fits) {
        const bool relative = root_fd >= 0 && cur.size > 0 && cur.bytes[0] != '/';
        if (i == lo || !same_dir(slot(i - 1), cur)) {  // a new directory
          if (dir_fd >= 0) ::close(dir_fd);
          dir_fd = -1;
          if (relative && cur.dir > 0 && i + 2 < hi && same_dir(cur, slot(i + 1)) &&
              same_dir(cur, slot(i + 2))) {
            cur.bytes[cur.dir] = '\0';
            dir_fd = ::openat(root_fd, cur.bytes, O_PATH | O_DIRECTORY | O_CLOEXEC);
            cur.bytes[cur.dir] = '/';
          }
        }
        if (dir_fd >= 0) {
          r = ::fstatat(dir_fd, cur.bytes + cur.dir + 1, &st, AT_SYMLINK_NOFOLLOW);
        } else if (relative) {
          r = ::fstatat(root_fd, cur.bytes, &st, AT_SYMLINK_NOFOLLOW);
        } else {
          r = ::lstat(
              cur.size == 0 || cur.bytes[0] != '/' ? (root + "/" + cur.bytes).c_str() : cur.bytes,
              &st);
        }
      }
      look(i, r == 0 ? &st : nullptr);
    }
  };
  // The first exception of `path` or `look` is rethrown here once every thread has stopped.
  std::exception_ptr error;
  if (threads == kLookWithHelper) {
    // Pieces of kLookPiece files, taken in order by the caller and the helper.
    try {
      util::RunShared(
          (n + kLookPiece - 1) / kLookPiece,
          [&](size_t k) { look_range(k * kLookPiece, std::min(n, (k + 1) * kLookPiece)); },
          n >= kLookStartHelperFiles ? util::HelperNeed::kStart : util::HelperNeed::kIfPolling);
    } catch (...) {
      error = std::current_exception();
    }
  } else {
    // Thread t takes the files [t n / T, (t + 1) n / T): threads in different directories do
    // not contend for the same dentries.
    const unsigned t_count = n >= kParallelLookFiles ? std::max(1u, threads) : 1u;
    std::mutex mu;
    auto run_share = [&](unsigned t) {
      try {
        look_range(n * t / t_count, n * (t + 1) / t_count);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    };
    std::vector<std::thread> helpers;
    for (unsigned t = 1; t < t_count; ++t) {
      try {
        helpers.emplace_back(run_share, t);
      } catch (const std::system_error&) {  // no thread to be had: the caller takes the share
        run_share(t);
      }
    }
    run_share(0);
    for (std::thread& h : helpers) h.join();
  }
  if (root_fd >= 0) ::close(root_fd);
  if (error) std::rethrow_exception(error);
}

}  // namespace bitsift
