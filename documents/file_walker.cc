#include "indexer/file_walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "util/error.h"

namespace bitsift::indexer {
namespace {

constexpr size_t kBinaryProbeBytes = 8 << 10;
constexpr size_t kReadBytes = 1 << 20;

std::string Join(const std::string& dir, const std::string& name) {
  return dir.empty() ? name : dir + "/" + name;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// open(root/relative, flags). A path of PATH_MAX bytes or more cannot be passed to open(), so it
// is opened one directory at a time with openat(): trees of any depth can be indexed.
int OpenUnder(const std::string& root, const std::string& relative, int flags) {
  if (root.size() + 1 + relative.size() < PATH_MAX) {
    return ::open(relative.empty() ? root.c_str() : (root + "/" + relative).c_str(), flags);
  }
  int dir_fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  size_t pos = 0;
  while (dir_fd >= 0) {
    size_t slash = relative.find('/', pos);
    bool last = slash == std::string::npos;
    std::string part = relative.substr(pos, last ? std::string::npos : slash - pos);
    int fd = ::openat(dir_fd, part.c_str(),
                      last ? flags : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    ::close(dir_fd);
    errno = err;
    if (last) return fd;
    dir_fd = fd;
    pos = slash + 1;
  }
  return -1;
}

}  // namespace

const char* SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kHidden:
      return "hidden";
    case SkipReason::kSymlink:
      return "symlink";
    case SkipReason::kSpecial:
      return "special";
    case SkipReason::kBinary:
      return "binary";
    case SkipReason::kTooLarge:
      return "too-large";
    case SkipReason::kUnreadable:
      return "unreadable";
    case SkipReason::kVanished:
      return "vanished";
    case SkipReason::kIndexFile:
      return "index-file";
    case SkipReason::kCount:
      break;
  }
  return "unknown";
}

std::vector<std::string> WalkDirectory(const std::string& root,
                                       const std::function<bool(const std::string&)>& exclude,
                                       const SkipCallback& on_skip) {
  struct stat st;
  if (::stat(root.c_str(), &st) != 0) {
    int err = errno;
    throw Error(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                ErrnoMessage(root, "cannot index", err));
  }
  Ensure(S_ISDIR(st.st_mode), ErrorKind::kInvalidArgument, root + ": not a directory");
  std::vector<std::string> files;
  std::vector<std::string> pending = {""};  // relative directories still to list
  while (!pending.empty()) {
    std::string dir = std::move(pending.back());
    pending.pop_back();
    int dfd = OpenUnder(root, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR* d = dfd >= 0 ? ::fdopendir(dfd) : nullptr;
    if (d == nullptr) {
      int err = errno;
      if (dfd >= 0) ::close(dfd);
      on_skip(dir, err == ENOENT ? SkipReason::kVanished : SkipReason::kUnreadable,
              std::strerror(err));
      continue;
    }
    std::vector<std::string> subdirs;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string rel = Join(dir, name);
      if (name[0] == '.') {
        on_skip(rel, SkipReason::kHidden, "");
        continue;
      }
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat est;
        if (::fstatat(::dirfd(d), e->d_name, &est, AT_SYMLINK_NOFOLLOW) != 0) {
          int err = errno;
          on_skip(rel, err == ENOENT ? SkipReason::kVanished : SkipReason::kUnreadable,
                  std::strerror(err));
          continue;
        }
        type = S_ISDIR(est.st_mode)   ? DT_DIR
               : S_ISREG(est.st_mode) ? DT_REG
               : S_ISLNK(est.st_mode) ? DT_LNK
                                      : DT_FIFO;
      }
      if (type == DT_DIR) {
        subdirs.push_back(std::move(rel));
      } else if (type == DT_REG) {
        if (exclude(rel)) {
          on_skip(rel, SkipReason::kIndexFile, "");
        } else {
          files.push_back(std::move(rel));
        }
      } else if (type == DT_LNK) {
        on_skip(rel, SkipReason::kSymlink, "");
      } else {
        on_skip(rel, SkipReason::kSpecial, "");
      }
    }
    ::closedir(d);
    // Depth-first in name order keeps memory proportional to the tree's depth times fan-out.
    std::sort(subdirs.rbegin(), subdirs.rend());
    for (auto& s : subdirs) pending.push_back(std::move(s));
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {
SkipReason ReadAndFeed(const std::string& root, const std::string& relative_path,
                       uint64_t max_file_size, tokenizer::Tokenizer& tokenizer,
                       tokenizer::TokenSink& sink, FileFacts* facts, std::string* detail) {
  // O_NONBLOCK: if the entry was replaced by a FIFO since listing, open must not wait.
  Fd fd(OpenUnder(root, relative_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    int err = errno;
    *detail = std::strerror(err);
    if (err == ENOENT) return SkipReason::kVanished;
    if (err == ELOOP) return SkipReason::kSymlink;
    return SkipReason::kUnreadable;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    *detail = std::strerror(errno);
    return SkipReason::kUnreadable;
  }
  if (!S_ISREG(st.st_mode)) return SkipReason::kSpecial;
  if (static_cast<uint64_t>(st.st_size) > max_file_size) {
    *detail = std::to_string(st.st_size) + " bytes";
    return SkipReason::kTooLarge;
  }
  facts->mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  facts->ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  facts->inode = static_cast<uint64_t>(st.st_ino);
  facts->file_size = static_cast<uint64_t>(st.st_size);
  // One read buffer per thread: allocating (and zeroing) 1 MiB per small file was measurable.
  thread_local std::string buffer(kReadBytes, '\0');
  uint64_t total = 0;
  bool probed = false;
  size_t filled = 0;  // bytes in buffer not yet fed
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer.data() + filled, buffer.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *detail = std::strerror(errno);
      return SkipReason::kUnreadable;
    }
    filled += static_cast<size_t>(n);
    bool eof = n == 0;
    // The binary probe needs the first 8 KiB (or the whole file if shorter) before feeding.
    if (!probed && (filled >= kBinaryProbeBytes || eof)) {
      if (std::memchr(buffer.data(), '\0', std::min(filled, kBinaryProbeBytes)) != nullptr) {
        return SkipReason::kBinary;
      }
      probed = true;
    }
    if (probed && (filled == buffer.size() || eof) && filled > 0) {
      if (total + filled > max_file_size) {
        *detail = "grew past the size limit while being read";
        return SkipReason::kTooLarge;
      }
      tokenizer.Feed(std::string_view(buffer.data(), filled), sink);
      total += filled;
      filled = 0;
    }
    if (eof) break;
  }
  tokenizer.Finish(sink);
  facts->size = total;
  return SkipReason::kCount;
}
}  // namespace

SkipReason ReadDocumentFile(const std::string& root, const std::string& relative_path,
                            uint64_t max_file_size, tokenizer::Tokenizer& tokenizer,
                            tokenizer::TokenSink& sink, FileFacts* facts, std::string* detail) {
  SkipReason r = ReadAndFeed(root, relative_path, max_file_size, tokenizer, sink, facts, detail);
  if (r != SkipReason::kCount) tokenizer.Reset();
  return r;
}

}  // namespace bitsift::indexer
