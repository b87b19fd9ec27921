// A file's bytes as the storage floor reads them: a read-only mapping, with the kernel hints
// (read-ahead, populate, random access, page release) and pread beside it.
#ifndef BITSIFT_STORAGE_MAPPED_FILE_H_
#define BITSIFT_STORAGE_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace bitsift::storage {

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
}  // namespace bitsift::storage

#endif  // BITSIFT_STORAGE_MAPPED_FILE_H_
