#include "util/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
