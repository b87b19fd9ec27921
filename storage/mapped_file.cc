#include "storage/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "util/error.h"

namespace bitsift::storage {

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
}  // namespace bitsift::storage
