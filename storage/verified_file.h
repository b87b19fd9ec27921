// Verified file access: how the bytes of a file of checksummed sections are read (through a
// mapping or by copy), verified (chunk by chunk, on first read) and let go (page release). The
// file's layout (which sections there are, where they lie, which ones a reader verifies at
// open) is the caller's: format::IndexFile reads the segment file's header and section table
// and places the sections here.
//
// A section is covered chunk by chunk: one section of the file holds an XXH3-64 of every
// kChunkBytes chunk of the other sections, in file order (the chunk sums), and another holds an
// XXH3-64 of every kChunkBytes piece of the chunk sums, so that they too are verified piece by
// piece. A chunk is trusted once its checksum matched, whether it was read through the mapping
// or by copy.
#ifndef BITSIFT_STORAGE_VERIFIED_FILE_H_
#define BITSIFT_STORAGE_VERIFIED_FILE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/mapped_file.h"

namespace bitsift::storage {

// Sections are checksummed in chunks of kChunkBytes, aligned to the section's start (the last
// chunk of a section is shorter). A section of L bytes has ChunkCount(L) chunks.
inline constexpr uint32_t kChunkShift = 12;
inline constexpr uint64_t kChunkBytes = uint64_t{1} << kChunkShift;  // 4 KiB
constexpr uint64_t ChunkCount(uint64_t length) { return (length + kChunkBytes - 1) >> kChunkShift; }

// XXH3-64 of bytes: the checksum of chunks, and of whatever else a layout checks.
uint64_t Checksum(const void* data, size_t length);

// How the file's reader will read it. kScan: in order (merges, check), with the kernel's
// read-around on page faults. kRandom: scattered pages (queries), as
// VerifiedFile::AdviseRandomAccess describes, from the very first byte opening reads: a fault
// there would otherwise read up to read_ahead_kb around its page (at 8 MiB, ~7 ms of a cold
// open).
// kOneShot: kRandom for a process that answers a query and exits; once chunks verified
// (first read) through the mapping have touched OneShotReleaseWindows() fault-around windows
// (64 KiB), the mapping's pages are dropped from the process's resident set
// (MappedFile::ReleasePages; the page cache keeps them, a later read faults them in again).
// A fault maps up to 16 neighbouring pages the page cache holds (fault-around, which
// MADV_RANDOM does not turn off), so a query reading thousands of scattered records counted
// 100-140 MB of them as resident (docs/design.md, "One-shot queries").
//
// A one-shot reader copies instead of mapping (copy_reads(); OneShotCopyReads decides): a
// first touch of a mapped page costs 7-15 us where it traps to the hypervisor (a
// paravirtualized guest) and ~2 us with fault-around on KVM, a 4 KiB pread ~2 us into a
// buffer reused; by copy was faster on both (docs/design.md, "One-shot queries").
enum class Access { kScan, kRandom, kOneShot };

// Whether files opened with Access::kOneShot read by copy (VerifiedFile::copy_reads()). kAuto:
// yes, unless the environment variable BITSIFT_ONESHOT_READS is "map" ("copy": yes).
// VerifiedFile::SetOneShotReads changes it for the files opened after it (tests, benchmarks).
// kAuto copies even where page faults are cheap: where a fault costs ~2 us, copying took
// `bench/oneshot-ab` p50 2.63 -> 2.44 ms, `timer.h` 9.05 -> 7.18, `void not struct i` 20.6 ->
// 12.4 (docs/design.md, "One-shot queries").
enum class OneShotReads { kAuto, kCopy, kMap };

// What a file's layout tells its VerifiedFile. Section ids are 1..VerifiedFile::kMaxSections.
struct Layout {
  // The name of section `id` in messages ("ROWS").
  const char* (*section_name)(uint32_t id);
  // Throws the error of a damaged or inconsistent file, "what" describing the damage. It must
  // not return (a VerifiedFile that finds damage never hands out the bytes).
  void (*corrupt)(const std::string& path, const std::string& what);
  uint32_t chunk_sums;        // the section of the chunk sums
  uint32_t chunk_sums_index;  // the section of the checksums of the chunk sums' pieces
  // Bit `id`: the sections a copying reader reads by copy (VerifiedFile::copies); the others
  // it reads through the mapping.
  uint64_t copied_sections;
};

// Where section `id` lies in the file.
struct SectionPlace {
  uint32_t id;
  uint64_t offset;
  uint64_t length;
};

// A mapped file of checksummed sections. The layout's reader opens it (the constructor maps the
// file), checks its header and section table through data() and places the sections
// (PlaceSections); after that every chunk a reader reads is verified on its first read (Touch,
// Read, ReadView, ScratchView), and VerifyEveryChunk verifies a section's chunks at once.
// Read-only after PlaceSections and MarkVerified, and safe to share between threads then (Touch
// included).
class VerifiedFile {
 public:
  static constexpr uint32_t kMaxSections = 32;

  // Maps `path` for readers reading it as `access` says. Throws Error(kNotFound) if it does not
  // exist, Error(kIo) if it cannot be mapped.
  VerifiedFile(const std::string& path, Access access, const Layout& layout);
  ~VerifiedFile();
  VerifiedFile(const VerifiedFile&) = delete;
  VerifiedFile& operator=(const VerifiedFile&) = delete;

  // Opening, for the layout's reader. The file's bytes, not verified.
  const uint8_t* data() const { return file_.data(); }
  size_t file_size() const { return file_.size(); }
  // MappedFile::WillNeed: a hint to read [offset, offset + length) of the file ahead.
  void WillNeed(uint64_t offset, uint64_t length) const { file_.WillNeed(offset, length); }
  // For a one-shot reader where page faults are dear: maps the pages of [offset, offset +
  // length) of the file in one request (MappedFile::Populate) before they are read; otherwise
  // nothing. A hint.
  void Prefault(uint64_t offset, uint64_t length) const {
    if (populate_) file_.Populate(offset, length);
  }
  // Places the sections (places[0..n-1], in file order, each inside the file, the layout's
  // chunk sums and their index last) and numbers their chunks in that order; no chunk is
  // verified yet. Call once, before reading a section.
  void PlaceSections(const SectionPlace* places, size_t n);
  // Records every chunk of section `id` as verified: the caller has checked the section whole.
  void MarkVerified(uint32_t id);

  // The bytes of a section, NOT verified unless MarkVerified or VerifyEveryChunk covered it:
  // read a lazily verified section through Touch.
  std::string_view Section(uint32_t id) const {
    const Span& s = span(id);
    return std::string_view(reinterpret_cast<const char*>(s.data), s.length);
  }
  // Section(id) as an array of T. Same caveat as Section.
  template <typename T>
  const T* SectionAs(uint32_t id) const {
    return reinterpret_cast<const T*>(span(id).data);
  }
  // The bytes [offset, offset + length) of section `id`, after verifying every chunk they
  // cover that is not verified yet. Throws (Layout::corrupt) naming the path, the chunk and the
  // section if a chunk's checksum does not match, or if the range is not inside the section.
  // A chunk already verified costs one relaxed atomic load and a bit test.
  //
  // With copy_reads(), the bytes are read with pread into memory the file owns until it is
  // closed (each call copies again: for what a one-shot query reads a few times, such as paths
  // and dictionary blocks; what it reads per candidate goes through Read or ReadView).
  const uint8_t* Touch(uint32_t id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (copies(id)) [[unlikely]]
      return CopyOut(id, s, offset, length);
    return Mapped(id, s, offset, length);
  }
  // Touch's bytes copied to dst (length bytes): with copy_reads() read with pread straight
  // into dst. Same checks and errors as Touch.
  void Read(uint32_t id, uint64_t offset, uint64_t length, void* dst) const {
    const Span& s = span(id);
    if (copies(id)) [[unlikely]] {
      CopyRange(id, s, offset, length, dst);
      return;
    }
    Verify(id, s, offset, length);
    if (length != 0) std::memcpy(dst, s.data + offset, length);
  }
  // Touch's bytes, valid until *buffer is next used: the mapping itself (no copy) unless
  // copy_reads(), then read into *buffer (grown as needed and reused: a reader of many
  // records passes the same buffer, so no new memory is touched for each).
  const uint8_t* ReadView(uint32_t id, uint64_t offset, uint64_t length,
                          std::vector<uint8_t>* buffer) const {
    const Span& s = span(id);
    if (!copies(id)) return Mapped(id, s, offset, length);
    if (buffer->size() < length) buffer->resize(length);
    CopyRange(id, s, offset, length, buffer->data());
    return buffer->data();
  }
  // Touch's bytes, valid until this thread's next read of a copied section through Read,
  // ReadView or ScratchView: the mapping itself unless copies(id), then the chunks around them
  // read with one pread into the thread's scratch, the one buffer of all such reads (no copy
  // out of it, no chunk cache: a scan of long pieces, as a row's AND or a span of entries,
  // touches no memory but the scratch, whose pages are fresh only the first time).
  const uint8_t* ScratchView(uint32_t id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (!copies(id)) return Mapped(id, s, offset, length);
    return ReadToScratch(id, s, offset, length);
  }
  // Whether reads go through pread instead of the mapping (Access::kOneShot, unless
  // OneShotCopyReads says otherwise). The mapping is then only used for read-ahead hints, the
  // parts opening verifies and the sections copies() leaves mapped. Decided when first asked.
  bool copy_reads() const {
    const int state = copy_state_.load(std::memory_order_relaxed);
    return (state == kUndecided ? DecideCopyReads() : state) == kCopy;
  }
  // Whether section `id` is read by copy now: copy_reads() and the layout copies it
  // (Layout::copied_sections), until the section turns out to be read densely (a query with
  // many results reads most of its records: kDenseHits cache hits a chunk read, after
  // kDenseMinMisses chunks), where the mapping's faults, each mapping 16 neighbouring pages,
  // cost less than a copy per record. From then on it is read through the mapping, as without
  // copy_reads().
  bool copies(uint32_t id) const {
    return copy_state_.load(std::memory_order_relaxed) != kMap &&  // (a query's reader: no)
           ((layout_.copied_sections >> id) & 1) &&
           !dense_[id - 1].load(std::memory_order_relaxed) && copy_reads();
  }
  // Makes section `id` read through the mapping from now on, as if it had turned out to be
  // read densely: for a reader that knows it will read a large share of its chunks (a query's
  // many results). No effect on what reads return.
  void ReadDensely(uint32_t id) const { dense_[id - 1].store(true, std::memory_order_relaxed); }
  static constexpr uint64_t kDenseMinMisses = 256, kDenseHits = 8;
  // Verifies every chunk of section `id` through the mapping. Throws as Touch does at the first
  // damaged chunk.
  void VerifyEveryChunk(uint32_t id) const;
  // For readers that touch scattered pages (queries): no read-around on page faults
  // (MappedFile::AdviseRandom); instead each chunk is asked for whole (one request) before it
  // is verified, and WillNeedPieces asks for a batch's chunks at once. Call it before the file
  // is shared between threads. Scans (merges, check) leave the kernel's read-around on.
  void AdviseRandomAccess() {
    file_.AdviseRandom();
    random_ = true;
  }
  bool random_access() const { return random_; }
  // Access::kOneShot's period, in fault-around windows (64 KiB) first touched by chunks
  // verified through the mapping since the last drop: kOneShotReleaseWindows by default, ~32
  // MiB of mapped pages between drops whether the reads are scattered (a window a chunk) or
  // dense (16 chunks a window). Counted in chunks (512), a dense read of DOC_FACTS would drop
  // its pages every 2 MiB and the listing that read the records again faulted them all back in
  // (`printk`, 13k results: 1,234 page faults, 863 with a period 8 times longer).
  // SetOneShotReleaseWindows changes it for the files opened after it (tests).
  static constexpr uint64_t kOneShotReleaseWindows = 512;
  static constexpr uint32_t kFaultAroundShift = 16;
  static uint64_t OneShotReleaseWindows();
  static void SetOneShotReleaseWindows(uint64_t windows);
  // The read mode of one-shot readers (OneShotReads): OneShotCopyReads whether they copy,
  // SetOneShotReads sets it for the files opened after it.
  static bool OneShotCopyReads();
  static void SetOneShotReads(OneShotReads reads);
  // Whether read-ahead requests for section `id` have stopped: kWarmAfter of its chunks in a
  // row were found in the page cache (mincore) when they were about to be asked for. A warm
  // file stays warm, and then each request would be a wasted system call.
  bool Warm(uint32_t id) const { return warm_[id - 1].load(std::memory_order_relaxed); }
  // With AdviseRandomAccess: asks for the not yet verified chunks covering pieces
  // piece(0..n-1) (each a {offset, length} in section `id`, best in ascending order) to be read
  // ahead, each run of consecutive chunks (and the chunk sums they need) in one request, so
  // that a cold batch waits for one round of parallel reads instead of a read per chunk in
  // turn. Pieces outside the section are ignored (a hint: it verifies and returns nothing).
  // Does nothing when the first such chunk is in the page cache already (a warm file) or
  // without AdviseRandomAccess.
  template <typename PieceFn>
  void WillNeedPieces(uint32_t id, size_t n, PieceFn piece) const {
    if (!random_ || n == 0 || Warm(id)) return;
    const Span& s = span(id);
    uint64_t first = 0, last = 0;  // the run of chunks being collected, if `run`
    bool run = false;
    for (size_t i = 0; i < n; ++i) {
      const auto [offset, length] = piece(i);
      if (length == 0 || offset > s.length || length > s.length - offset) continue;
      const uint64_t c0 = s.first_chunk + (offset >> kChunkShift);
      const uint64_t c1 = s.first_chunk + ((offset + length - 1) >> kChunkShift);
      for (uint64_t c = c0; c <= c1; ++c) {
        if (IsVerified(c)) {  // read before, so most likely cached still: counts as Cold's would
          if (NoteResident(id)) return;
          continue;
        }
        if (IsRequested(c) || (run && c >= first && c <= last)) continue;
        if (run && c == last + 1) {
          last = c;
          continue;
        }
        if (run && ColdRun(id, first, last)) WillNeedChunks(s, first, last);
        if (Warm(id)) return;
        first = last = c;
        run = true;
      }
    }
    if (run && ColdRun(id, first, last)) WillNeedChunks(s, first, last);
  }
  // For a one-shot reader (Access::kOneShot): maps the pages of [offset, offset + length) of
  // section `id` into the process in one request (MappedFile::Populate), for a reader about to
  // walk them in the mapping before it knows where it stops (a sparse list's group). A hint: it
  // verifies and returns nothing; a range outside the section is ignored.
  void Populate(uint32_t id, uint64_t offset, uint64_t length) const {
    const Span& s = span(id);
    if (!populate_ || offset > s.length || length > s.length - offset) return;
    file_.Populate(FileOffset(s, offset), length);
  }
  // Whether chunk `chunk` (< ChunkCount(Section(id).size())) of section `id` has been verified.
  bool ChunkVerified(uint32_t id, uint64_t chunk) const {
    return IsVerified(span(id).first_chunk + chunk);
  }
  // The number of chunks of the sections but the chunk sums verified so far (those verified at
  // open included).
  uint64_t verified_chunks() const;
  // The number of chunks of the sections but the chunk sums (they hold one checksum for each).
  uint64_t chunk_count() const { return chunk_count_; }
  const std::string& path() const { return path_; }
  // MappedFile::ReleasePages: verified chunks stay verified (the files read are immutable).
  void ReleasePages() const { file_.ReleasePages(); }
  // MappedFile::PopulateResident over the file's bytes [offset, offset + length): maps what
  // the page cache holds, reads nothing, verifies nothing (Touch still verifies a chunk on
  // its first read). Returns the bytes asked to be mapped.
  size_t PopulateResident(uint64_t offset, uint64_t length) const {
    return file_.PopulateResident(offset, length);
  }

 private:
  struct Span {
    const uint8_t* data = nullptr;
    uint64_t length = 0;
    uint64_t first_chunk = 0;  // number of the section's chunk 0 among all chunks
  };
  const Span& span(uint32_t id) const { return spans_[id - 1]; }
  size_t FileOffset(const Span& s, uint64_t offset) const {
    return static_cast<size_t>(s.data - file_.data()) + offset;
  }
  // Throws OutOfBounds unless [offset, offset + length) lies in span s of section id, then
  // verifies the chunks it covers that are not verified yet.
  void Verify(uint32_t id, const Span& s, uint64_t offset, uint64_t length) const {
    if (offset > s.length || length > s.length - offset) [[unlikely]] {
      OutOfBounds(id, offset, length);
    }
    if (length != 0) {
      const uint64_t first = s.first_chunk + (offset >> kChunkShift);
      const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
      for (uint64_t c = first; c <= last; ++c) {
        if (!IsVerified(c)) [[unlikely]] {
          VerifyChunks(id, c, last);
          break;
        }
      }
    }
  }
  // [offset, offset + length) of span s (section id) in the mapping, after Verify.
  const uint8_t* Mapped(uint32_t id, const Span& s, uint64_t offset, uint64_t length) const {
    Verify(id, s, offset, length);
    return s.data + offset;
  }
  // copy_reads(): [offset, offset + length) of span s (section id) copied to dst, chunk by
  // chunk from the process's chunk cache (CopyFromChunk), after the bounds check.
  void CopyRange(uint32_t id, const Span& s, uint64_t offset, uint64_t length, void* dst) const;
  // copy_reads(): [offset, offset + length) of span s (section id), after the bounds check,
  // with the chunks around it read in one pread into the thread's scratch and verified there
  // (those not yet); returns where the range starts in the scratch.
  const uint8_t* ReadToScratch(uint32_t id, const Span& s, uint64_t offset, uint64_t length) const;
  // copy_reads(): CopyRange into the arena.
  const uint8_t* CopyOut(uint32_t id, const Span& s, uint64_t offset, uint64_t length) const;
  // copy_reads(): n bytes from byte `from` of chunk `chunk` (a number among all chunks) of
  // span s copied to dst, from the process's cache of recently read chunks (on a miss the
  // chunk is read with pread, verified if it is not yet, and kept).
  void CopyFromChunk(uint32_t id, const Span& s, uint64_t chunk, uint64_t from, uint64_t n,
                     uint8_t* dst) const;
  // The file offset of chunk `chunk` (a number among all chunks) of section span `s`.
  size_t ChunkFileOffset(const Span& s, uint64_t chunk) const {
    return static_cast<size_t>(s.data - file_.data()) + ((chunk - s.first_chunk) << kChunkShift);
  }
  // Whether to ask for chunk `chunk` of section `id` (and what follows it): not if the
  // section is known warm (Warm), nor if the chunk is in the page cache (mincore). A section
  // becomes warm after kWarmAfter such chunks in a row: one resident chunk proves little (the
  // chunks opening read, a neighbour of one asked for), and taking a cold section for warm
  // costs a fault per page, while the opposite costs a system call per request.
  static constexpr uint32_t kWarmAfter = 8;
  bool Cold(uint32_t id, uint64_t chunk) const;
  // Counts one more chunk of section `id` found resident (or verified, so read before) in a
  // row; returns whether the section is warm now. A long-lived reader whose requests meet only
  // verified chunks (a small dictionary read whole by earlier queries) so stops asking, as it
  // does once mincore finds chunks resident: each query's requests would be work for nothing.
  bool NoteResident(uint32_t id) const;
  // Whether to ask for the run of chunks [first, last]: Cold at its first chunk or, for a
  // longer run, at its last. A run's first page is often resident alone (opening read a small
  // section that shares it, or a neighbouring request brought it): judging by it alone skipped
  // whole spans, and then each of their pages faulted in turn (linux-paras: 958 faults, 60 ms).
  bool ColdRun(uint32_t id, uint64_t first, uint64_t last) const {
    return Cold(id, first) || (last > first && Cold(id, last));
  }
  // With random access advised, asks for the run of chunks [first, last] of span s (section
  // id) at once (WillNeedChunks) if ColdRun says so: one round of reads instead of a read per
  // chunk. A run an earlier request covered is on its way: neither asked for again nor taken as
  // a sign of a warm file.
  void WillNeedRun(uint32_t id, const Span& s, uint64_t first, uint64_t last) const {
    if (random_ && !(IsRequested(first) && IsRequested(last)) && ColdRun(id, first, last))
      WillNeedChunks(s, first, last);
  }
  // Asks for chunks [first, last] of span `s` and the chunk sums' pieces they need.
  void WillNeedChunks(const Span& s, uint64_t first, uint64_t last) const;
  bool IsVerified(uint64_t chunk) const { return TestBit(verified_.get(), chunk); }
  bool IsRequested(uint64_t chunk) const { return TestBit(requested_.get(), chunk); }
  bool PieceVerified(uint64_t piece) const { return TestBit(sums_verified_.get(), piece); }
  static bool TestBit(const std::atomic<uint64_t>* bits, uint64_t i) {
    return (bits[i >> 6].load(std::memory_order_relaxed) >> (i & 63)) & 1;
  }
  static void SetBit(std::atomic<uint64_t>* bits, uint64_t i) {
    bits[i >> 6].fetch_or(uint64_t{1} << (i & 63), std::memory_order_relaxed);
  }
  // Verifies the not yet verified chunks in [from, last] (numbers among all chunks) of `id`.
  void VerifyChunks(uint32_t id, uint64_t from, uint64_t last) const;
  // Throws ChunkDamaged unless `bytes` (chunk `chunk`, a number among all chunks, of section
  // `id`, wherever they were read to) match its checksum in the chunk sums (whose piece holding
  // it is verified first: corrupt if that piece is damaged); then records the chunk as
  // verified. The one place a chunk becomes trusted, whether read through the mapping or by
  // copy.
  void VerifyChunk(uint32_t id, uint64_t chunk, const uint8_t* bytes, uint64_t length) const;
  // VerifyChunk over the chunk's bytes in the mapping (sections read in place, also in
  // copy_reads() mode: the reader touches those pages next anyway, so verifying them by pread
  // would read each chunk twice).
  void VerifyMappedChunk(uint32_t id, const Span& s, uint64_t chunk) const;
  // A one-shot open's read mode, arena and windows.
  void SetUpOneShot();
  // The checksum of chunk `chunk` from the chunk sums, after verifying the piece that holds it.
  uint64_t ChunkSum(uint64_t chunk) const;
  // Throws (Layout::corrupt) unless the bytes of piece `piece` of the chunk sums match their
  // index; records the piece as verified.
  void PieceMatches(uint64_t piece, const uint8_t* bytes, uint64_t length) const;
  [[noreturn]] void Corrupt(const std::string& what) const;
  [[noreturn]] void ChunkDamaged(uint32_t id, uint64_t chunk) const;
  [[noreturn]] void OutOfBounds(uint32_t id, uint64_t offset, uint64_t length) const;

  std::string path_;
  Layout layout_;
  MappedFile file_;
  Span spans_[kMaxSections];
  uint64_t chunk_count_ = 0;
  // One bit per chunk: set once the chunk's checksum matched. Two threads may verify the same
  // chunk at once; both then set the same bit.
  std::unique_ptr<std::atomic<uint64_t>[]> verified_;
  // One bit per kChunkBytes piece of the chunk sums, set once it matched their index.
  std::unique_ptr<std::atomic<uint64_t>[]> sums_verified_;
  // One bit per chunk: set once a read-ahead request covered it (WillNeedChunks). Such a chunk
  // is not asked for again, and finding it in the page cache says nothing about the file being
  // warm: the request put it there.
  std::unique_ptr<std::atomic<uint64_t>[]> requested_;
  bool random_ = false;  // AdviseRandomAccess was called
  // Access::kOneShot where page faults are dear (PageFaultsAreDear): pages are mapped
  // (MappedFile::Populate) before they are touched. A reader of many queries keeps the faults,
  // whose fault-around maps the neighbours its later queries read, instead of a request for
  // only what each verification covers. Where faults are cheap, a one-shot reader keeps them
  // too: where a fault costs ~2 us the requests cost more than the faults they replaced for queries
  // that read most of DOC_FACTS (`then`, 26,928 results: 45.0 -> 40.6 ms) and saved nothing on
  // light queries (bench/oneshot-ab p50 1.99 against 1.97 ms).
  bool populate_ = false;
  // Access::kOneShot: drop the mapped pages once this many fault-around windows were first
  // touched by chunks verified through the mapping (0: never); the windows touched since the
  // last drop, a bit each, and their count.
  uint64_t release_every_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> touched_windows_;
  size_t touched_window_words_ = 0;
  mutable std::atomic<uint64_t> windows_since_release_{0};
  // copy_reads(): what Touch copied, kept until the file is closed (8-byte aligned pieces of
  // blocks of 64 KiB; a piece over 16 KiB gets a block of its own).
  enum : int { kUndecided = 0, kCopy = 1, kMap = 2 };
  mutable std::atomic<int> copy_state_{kMap};  // Access::kOneShot: kUndecided at open
  int DecideCopyReads() const;
  // Whether copy_reads() was decided true already (verification then reads the chunk sums by
  // copy too; it does not decide).
  bool copying() const { return copy_state_.load(std::memory_order_relaxed) == kCopy; }
  uint64_t uid_ = 0;  // this file among the process's open files: the chunk caches' key
  mutable std::atomic<bool> dense_[kMaxSections] = {};  // see copies()
  struct Arena;
  std::unique_ptr<Arena> arena_;
  mutable std::atomic<bool> warm_[kMaxSections] = {};                   // see Warm
  mutable std::atomic<uint32_t> resident_in_a_row_[kMaxSections] = {};  // see Cold
};

}  // namespace bitsift::storage

#endif  // BITSIFT_STORAGE_VERIFIED_FILE_H_
