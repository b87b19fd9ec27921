// Files written by the storage floor: a new version of a file that replaces the old one
// atomically, and a nameless scratch file read back through a mapping.
#ifndef BITSIFT_STORAGE_FILE_WRITERS_H_
#define BITSIFT_STORAGE_FILE_WRITERS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "storage/mapped_file.h"

namespace bitsift::storage {

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
  std::string name_;  // for messages
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string buffer_;
};

}  // namespace bitsift::storage

#endif  // BITSIFT_STORAGE_FILE_WRITERS_H_
