#include "storage/file_system.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace bitsift::storage {

namespace {

std::atomic<bool> armed{false};
std::atomic<uint64_t> calls_seen{0};
std::atomic<uint64_t> fail_at{0};
std::atomic<Fault> fault_kind{Fault::kError};
std::atomic<int> fault_error{0};
std::atomic<bool> fault_fired{false};
std::atomic<bool> next_write_full{false};  // after a short write

// What an armed hook does to one call.
enum class Verdict { kProceed, kFail, kShort };

// Counts the call and decides its fate; on kFail, errno is set.
Verdict Decide(bool is_write) {
  if (!armed.load(std::memory_order_relaxed)) return Verdict::kProceed;
  const uint64_t n = calls_seen.fetch_add(1) + 1;
  const uint64_t at = fail_at.load();
  const Fault kind = fault_kind.load();
  if (at != 0 && kind == Fault::kCrash && n >= at) {
    fault_fired = true;
    errno = EIO;
    return Verdict::kFail;
  }
  if (is_write && next_write_full.exchange(false)) {
    errno = ENOSPC;
    return Verdict::kFail;
  }
  if (at == 0 || n != at) return Verdict::kProceed;
  fault_fired = true;
  if (kind == Fault::kKill) ::kill(::getpid(), SIGKILL);
  if (kind == Fault::kShortWrite) {
    if (is_write) {
      next_write_full = true;
      return Verdict::kShort;
    }
    errno = ENOSPC;
    return Verdict::kFail;
  }
  errno = fault_error.load();
  return Verdict::kFail;
}

}  // namespace

int CreateFile(const char* path, int flags, mode_t mode) {
  if (Decide(false) == Verdict::kFail) return -1;
  return ::open(path, flags, mode);
}

ssize_t WriteFile(int fd, const void* data, size_t n) {
  switch (Decide(true)) {
    case Verdict::kFail:
      return -1;
    case Verdict::kShort:
      return ::write(fd, data, n > 1 ? n / 2 : n);
    case Verdict::kProceed:
      break;
  }
  return ::write(fd, data, n);
}

ssize_t PwriteFile(int fd, const void* data, size_t n, off_t offset) {
  switch (Decide(true)) {
    case Verdict::kFail:
      return -1;
    case Verdict::kShort:
      return ::pwrite(fd, data, n > 1 ? n / 2 : n, offset);
    case Verdict::kProceed:
      break;
  }
  return ::pwrite(fd, data, n, offset);
}

int SyncFile(int fd) {
  if (Decide(false) == Verdict::kFail) return -1;
  return ::fsync(fd);
}

int RenameFile(const char* from, const char* to) {
  if (Decide(false) == Verdict::kFail) return -1;
  return ::rename(from, to);
}

int RemoveFile(const char* path) {
  if (Decide(false) == Verdict::kFail) return -1;
  return ::unlink(path);
}

int MakeDirectory(const char* path, mode_t mode) {
  if (Decide(false) == Verdict::kFail) return -1;
  return ::mkdir(path, mode);
}

void FaultInjection::Arm(uint64_t at, Fault fault, int error) {
  armed = false;
  calls_seen = 0;
  fail_at = at;
  fault_kind = fault;
  fault_error = error;
  fault_fired = false;
  next_write_full = false;
  armed = true;
}

void FaultInjection::Disarm() {
  armed = false;
  next_write_full = false;
}

uint64_t FaultInjection::calls() { return calls_seen.load(); }

bool FaultInjection::fired() { return fault_fired.load(); }

}  // namespace bitsift::storage
