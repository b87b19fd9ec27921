// The calls through which the index changes files on disk: create, write, sync, rename, remove,
// make a directory. Every writer of the library (storage's AtomicFileWriter and ScratchFile, the
// indexer's directory, lock and clean-up) goes through these, so that a test can make the N-th
// call fail and check that the index still answers exactly as before or as after, and that the
// next run recovers (tests/reliability/fault_injection_test.cc, docs/fuzzing.md). Outside a
// test they are the system calls of the same names, plus one relaxed atomic load.
#ifndef BITSIFT_STORAGE_FILE_SYSTEM_H_
#define BITSIFT_STORAGE_FILE_SYSTEM_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace bitsift::storage {

// Each returns what the system call of its name returns (-1 with errno on failure). Thread-safe.
int CreateFile(const char* path, int flags, mode_t mode);  // open(2) with O_CREAT or O_TMPFILE
ssize_t WriteFile(int fd, const void* data, size_t n);
ssize_t PwriteFile(int fd, const void* data, size_t n, off_t offset);
int SyncFile(int fd);  // fsync(2), of a file or of a directory
int RenameFile(const char* from, const char* to);
int RemoveFile(const char* path);  // unlink(2)
int MakeDirectory(const char* path, mode_t mode);

// How an injected fault behaves.
enum class Fault {
  kError,       // the call fails with the errno given, without effect; later calls succeed
  kShortWrite,  // a write writes half its bytes, and the next write fails with ENOSPC (a full
                // disk); any other call fails with ENOSPC
  kCrash,       // the call and every later one fail with EIO without effect: the disk is left
                // as a kill -9 at that moment leaves it (the page cache keeps what was written)
  kKill,        // the process kills itself with SIGKILL instead of making the call
};

// The test hook: faults of the calls above. Process-wide; arm it while no other thread writes
// an index than the one under test.
class FaultInjection {
 public:
  // Counts calls from 0 again and makes the call numbered `at` (from 1) fail by `fault`, with
  // `error` for kError. at = 0 only counts.
  static void Arm(uint64_t at, Fault fault, int error = 0);
  // No more faults or counting.
  static void Disarm();
  // Calls counted since Arm.
  static uint64_t calls();
  // Whether the armed fault has happened.
  static bool fired();
};

}  // namespace bitsift::storage

#endif  // BITSIFT_STORAGE_FILE_SYSTEM_H_
