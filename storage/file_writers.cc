#include "storage/file_writers.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "storage/file_system.h"
#include "util/error.h"
#include "util/files.h"

namespace bitsift::storage {

namespace {

// Temporary names are unique per writer, not per process: two writers of one process (a merge
// beside a flush, two threads of an embedding program) never share a temporary file.
std::atomic<uint64_t> writer_sequence{0};

// What the writers gather before they write: pieces smaller than this are appended to their
// buffer, larger ones written at once.
constexpr size_t kBufferBytes = 1 << 20;

// Writes n bytes at p to fd where it stands (write) or, with at >= 0, at file offset `at`
// (pwrite), until all are written (short writes and EINTR retried). Throws Error(kIo) naming
// `path`.
void WriteAll(int fd, const char* p, size_t n, const std::string& path, off_t at = -1) {
  while (n > 0) {
    const ssize_t written = at < 0 ? WriteFile(fd, p, n) : PwriteFile(fd, p, n, at);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) throw Error(ErrorKind::kIo, ErrnoMessage(path, "cannot write", errno));
    p += written;
    n -= static_cast<size_t>(written);
    if (at >= 0) at += written;
  }
}

// Writes what *buffer holds to fd and empties it.
void Flush(int fd, std::string* buffer, const std::string& path) {
  WriteAll(fd, buffer->data(), buffer->size(), path);
  buffer->clear();
}

// Appends n bytes at data to fd through *buffer (kBufferBytes).
void BufferedAppend(int fd, std::string* buffer, const void* data, size_t n,
                    const std::string& path) {
  const char* p = static_cast<const char*>(data);
  if (buffer->size() + n > kBufferBytes) Flush(fd, buffer, path);
  if (n >= kBufferBytes) {
    WriteAll(fd, p, n, path);
  } else {
    buffer->append(p, n);
  }
}

}  // namespace

AtomicFileWriter::AtomicFileWriter(const std::string& path)
    : path_(path),
      tmp_path_(path + ".tmp." + std::to_string(::getpid()) + "." +
                std::to_string(writer_sequence.fetch_add(1))) {
  fd_ = CreateFile(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot create", errno));
  buffer_.reserve(kBufferBytes);
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) RemoveFile(tmp_path_.c_str());
}

void AtomicFileWriter::Append(const void* data, size_t n) {
  offset_ += n;
  BufferedAppend(fd_, &buffer_, data, n, tmp_path_);
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
  Flush(fd_, &buffer_, tmp_path_);
  WriteAll(fd_, static_cast<const char*>(data), n, tmp_path_, static_cast<off_t>(offset));
}

void AtomicFileWriter::Commit() {
  Flush(fd_, &buffer_, tmp_path_);
  if (SyncFile(fd_) != 0)
    throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot sync", errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    throw Error(ErrorKind::kIo, ErrnoMessage(tmp_path_, "cannot close", errno));
  }
  fd_ = -1;
  if (RenameFile(tmp_path_.c_str(), path_.c_str()) != 0) {
    throw Error(ErrorKind::kIo, ErrnoMessage(path_, "cannot replace", errno));
  }
  committed_ = true;
  int dir = ::open(DirectoryOf(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    SyncFile(dir);  // best effort: the rename is durable once the directory is synced
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
    if (!alive) RemoveFile((dir + "/" + name).c_str());
  }
  ::closedir(d);
}

ScratchFile::ScratchFile(const std::string& dir) : name_(dir + "/(scratch file)") {
  fd_ = CreateFile(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd_ < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // No O_TMPFILE here: a unique name, gone from the directory at once.
    std::string name = dir + "/.scratch.XXXXXX";
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ >= 0) RemoveFile(name.c_str());
  }
  if (fd_ < 0) throw Error(ErrorKind::kIo, ErrnoMessage(name_, "cannot create", errno));
  buffer_.reserve(kBufferBytes);
}

ScratchFile::~ScratchFile() {
  if (fd_ >= 0) ::close(fd_);
}

void ScratchFile::Append(const void* data, size_t n) {
  size_ += n;
  BufferedAppend(fd_, &buffer_, data, n, name_);
}

MappedFile ScratchFile::Map() {
  Flush(fd_, &buffer_, name_);
  return MappedFile::OfDescriptor(fd_, name_);
}
}  // namespace bitsift::storage
