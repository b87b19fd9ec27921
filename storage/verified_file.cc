#include "storage/verified_file.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "util/error.h"
#include "util/files.h"
#include "util/spin_lock.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bitsift::storage {

uint64_t Checksum(const void* data, size_t length) { return XXH3_64bits(data, length); }

namespace {

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

std::atomic<uint64_t> one_shot_release_windows{VerifiedFile::kOneShotReleaseWindows};
std::atomic<OneShotReads> one_shot_reads{OneShotReads::kAuto};
}  // namespace

struct VerifiedFile::Arena {
  static constexpr size_t kBlock = 64 << 10;
  std::mutex mu;
  std::vector<std::unique_ptr<uint8_t[]>> blocks;
  uint8_t* next = nullptr;
  size_t left = 0;

  uint8_t* Allocate(size_t n) {
    n = (n + 7) & ~size_t{7};  // 8-byte aligned: records hold u64s
    std::lock_guard<std::mutex> lock(mu);
    if (n > kBlock / 4) return Block(n);
    if (left < n) {
      next = Block(kBlock);
      left = kBlock;
    }
    uint8_t* p = next;
    next += n;
    left -= n;
    return p;
  }
  uint8_t* Block(size_t n) {  // 64-byte aligned, as the mapping's sections are
    blocks.emplace_back(new uint8_t[n + 63]);
    const auto at = reinterpret_cast<uintptr_t>(blocks.back().get());
    return reinterpret_cast<uint8_t*>((at + 63) & ~uintptr_t{63});
  }
};

VerifiedFile::~VerifiedFile() = default;

int VerifiedFile::DecideCopyReads() const {
  const int state = OneShotCopyReads() ? kCopy : kMap;
  copy_state_.store(state, std::memory_order_relaxed);  // (threads that race decide alike)
  return state;
}

namespace {

// The read mode SetOneShotReads or BITSIFT_ONESHOT_READS sets, if one does.
std::optional<bool> ForcedCopyReads() {
  switch (one_shot_reads.load(std::memory_order_relaxed)) {
    case OneShotReads::kCopy:
      return true;
    case OneShotReads::kMap:
      return false;
    case OneShotReads::kAuto:
      break;
  }
  if (const char* env = std::getenv("BITSIFT_ONESHOT_READS")) {
    if (std::strcmp(env, "copy") == 0) return true;
    if (std::strcmp(env, "map") == 0) return false;
  }
  return std::nullopt;
}

}  // namespace

bool VerifiedFile::OneShotCopyReads() {
  if (std::optional<bool> forced = ForcedCopyReads()) return *forced;
  return true;
}

void VerifiedFile::SetOneShotReads(OneShotReads reads) {
  one_shot_reads.store(reads, std::memory_order_relaxed);
}

const uint8_t* VerifiedFile::CopyOut(uint32_t id, const Span& s, uint64_t offset,
                                     uint64_t length) const {
  uint8_t* p = arena_->Allocate(length);
  CopyRange(id, s, offset, length, p);
  return p;
}

namespace {

// The process's cache of the chunks read by copy (VerifiedFile::copies), shared by its threads
// (a query's results are looked at on several), kWays-way set-associative, least recently used
// out: a result's records are read from sections in step (DOC_FACTS_INDEX, DOC_FACTS; before
// format 8 also DOCS and PATHS), and in a direct-mapped cache two of them whose chunks fall on
// one slot evicted each other at every document (a 187k-match query read 83k chunks for 13k).
// Small, and its bytes left uninitialized, so that it touches few pages (each a trap where
// faults are dear): a slot's first use is a fresh page, which costs a one-shot query as much as
// the pread it saves. 16 slots instead of 64: 48 fewer faults and 0.5-2 ms off queries with
// hundreds of results, no change for those with tens of thousands (linux-paras). A miss is read
// and verified outside the lock. CHUNK_SUMS pieces have a cache of their own.
template <size_t kSlots>
class ChunkCache {
 public:
  // Copies n bytes from byte `from` of (file, chunk) to dst if the cache holds it.
  bool CopyOut(uint64_t file, uint64_t chunk, uint64_t from, uint64_t n, uint8_t* dst) {
    std::lock_guard<util::SpinLock> lock(mu_);
    const size_t i = Find(file, chunk);
    if (i == kSlots) return false;
    used_[i] = ++clock_;
    std::memcpy(dst, Bytes(i) + from, n);
    return true;
  }
  // Keeps `bytes` (length <= kChunkBytes) as (file, chunk), in place of the set's least
  // recently used chunk.
  void Put(uint64_t file, uint64_t chunk, const uint8_t* bytes, uint64_t length) {
    std::lock_guard<util::SpinLock> lock(mu_);
    if (Find(file, chunk) != kSlots) return;  // another thread put it meanwhile
    const size_t set = Set(file, chunk);
    size_t pick = set * kWays;
    for (size_t i = set * kWays; i < (set + 1) * kWays; ++i) {
      if (used_[i] < used_[pick]) pick = i;
    }
    std::memcpy(Bytes(pick), bytes, length);
    files_[pick] = file;
    chunks_[pick] = chunk;
    used_[pick] = ++clock_;
  }
  // Counts a read of section index `section` that found its chunk (hit) or not; returns
  // whether the section is read densely (VerifiedFile::copies).
  bool Count(uint32_t section, bool hit) {
    std::lock_guard<util::SpinLock> lock(mu_);
    if (hit) {
      ++hits_[section];
      return false;
    }
    const uint64_t misses = ++misses_[section];
    return misses >= VerifiedFile::kDenseMinMisses &&
           hits_[section] >= VerifiedFile::kDenseHits * misses;
  }

 private:
  static constexpr size_t kWays = 4, kSets = kSlots / kWays;
  // Consecutive chunks fall in consecutive sets (a scan does not evict itself).
  static size_t Set(uint64_t file, uint64_t chunk) {
    return (chunk + ((file * 0x9E3779B97F4A7C15ull) >> 40)) & (kSets - 1);
  }
  size_t Find(uint64_t file, uint64_t chunk) const {
    const size_t set = Set(file, chunk);
    for (size_t i = set * kWays; i < (set + 1) * kWays; ++i) {
      if (files_[i] == file && chunks_[i] == chunk) return i;
    }
    return kSlots;
  }
  uint8_t* Bytes(size_t i) {
    if (!bytes_) bytes_.reset(new uint8_t[kSlots * kChunkBytes]);
    return bytes_.get() + i * kChunkBytes;
  }

  util::SpinLock mu_;
  uint64_t files_[kSlots] = {};  // VerifiedFile::uid_; 0 = empty
  uint64_t chunks_[kSlots] = {};
  uint64_t used_[kSlots] = {};
  uint64_t clock_ = 0;
  uint64_t hits_[VerifiedFile::kMaxSections] = {};
  uint64_t misses_[VerifiedFile::kMaxSections] = {};
  std::unique_ptr<uint8_t[]> bytes_;
};

constexpr size_t kCachedChunks = 16;  // 4 sets of kWays
ChunkCache<kCachedChunks>& Chunks() {
  static ChunkCache<kCachedChunks> cache;
  return cache;
}
ChunkCache<8>& SumPieces() {
  static ChunkCache<8> cache;
  return cache;
}
std::atomic<uint64_t> next_file_uid{1};

}  // namespace

void VerifiedFile::CopyFromChunk(uint32_t id, const Span& s, uint64_t chunk, uint64_t from,
                                 uint64_t n, uint8_t* dst) const {
  ChunkCache<kCachedChunks>& cache = Chunks();
  const uint32_t i = id - 1;
  const bool hit = cache.CopyOut(uid_, chunk, from, n, dst);
  if (cache.Count(i, hit)) dense_[i].store(true, std::memory_order_relaxed);
  if (hit) return;
  thread_local uint8_t scratch[kChunkBytes];
  const uint64_t at = (chunk - s.first_chunk) << kChunkShift;
  const uint64_t length = std::min<uint64_t>(kChunkBytes, s.length - at);
  file_.Read(FileOffset(s, at), length, scratch);
  if (!IsVerified(chunk)) VerifyChunk(id, chunk, scratch, length);
  std::memcpy(dst, scratch + from, n);
  cache.Put(uid_, chunk, scratch, length);
}

namespace {

// The scratch of ReadToScratch, one a thread, reused: at least a span of entries
// (kScratchMinBytes) and grown to the longest piece read, its contents not kept when it grows
// (a vector's growth would copy them into fresh pages, each a trap where faults are dear).
class Scratch {
 public:
  uint8_t* Get(uint64_t bytes) {
    if (bytes > capacity_) {
      capacity_ = std::max<uint64_t>({bytes, capacity_ * 2, kScratchMinBytes});
      bytes_.reset(new uint8_t[capacity_]);  // uninitialized: pread fills what is read
    }
    return bytes_.get();
  }

 private:
  static constexpr uint64_t kScratchMinBytes = 128 << 10;
  std::unique_ptr<uint8_t[]> bytes_;
  uint64_t capacity_ = 0;
};
thread_local Scratch scratch;

}  // namespace

const uint8_t* VerifiedFile::ReadToScratch(uint32_t id, const Span& s, uint64_t offset,
                                           uint64_t length) const {
  if (offset > s.length || length > s.length - offset) [[unlikely]] {
    OutOfBounds(id, offset, length);
  }
  if (length == 0) return scratch.Get(0);
  const uint64_t first = s.first_chunk + (offset >> kChunkShift);
  const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
  // A cold run of chunks is asked for at once (one round of reads, as VerifyChunks does).
  if (last > first && !IsVerified(first)) WillNeedRun(id, s, first, last);
  const uint64_t begin = (first - s.first_chunk) << kChunkShift;
  const uint64_t end = std::min<uint64_t>(s.length, (last + 1 - s.first_chunk) << kChunkShift);
  uint8_t* bytes = scratch.Get(end - begin);
  file_.Read(FileOffset(s, begin), end - begin, bytes);
  for (uint64_t c = first; c <= last; ++c) {
    if (IsVerified(c)) continue;
    const uint64_t at = (c - first) << kChunkShift;
    VerifyChunk(id, c, bytes + at, std::min<uint64_t>(kChunkBytes, end - begin - at));
  }
  return bytes + (offset - begin);
}

void VerifiedFile::CopyRange(uint32_t id, const Span& s, uint64_t offset, uint64_t length,
                             void* dst) const {
  if (offset > s.length || length > s.length - offset) [[unlikely]] {
    OutOfBounds(id, offset, length);
  }
  if (length == 0) return;
  const uint64_t first = s.first_chunk + (offset >> kChunkShift);
  const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
  if (last - first <= 1) {  // a record (one that straddles two chunks too): from the cache
    if (last > first && !IsVerified(first)) WillNeedRun(id, s, first, last);
    uint8_t* out = static_cast<uint8_t*>(dst);
    const uint64_t chunk_start = (first - s.first_chunk) << kChunkShift;
    const uint64_t head = std::min<uint64_t>(length, chunk_start + kChunkBytes - offset);
    CopyFromChunk(id, s, first, offset - chunk_start, head, out);
    if (head < length) CopyFromChunk(id, s, last, 0, length - head, out + head);
    return;
  }
  // A longer piece (a row, a dictionary's runs): its chunks whole in one read into the
  // thread's scratch, each verified there if it is not yet, then the piece copied.
  std::memcpy(dst, ReadToScratch(id, s, offset, length), length);
}

uint64_t VerifiedFile::OneShotReleaseWindows() {
  return one_shot_release_windows.load(std::memory_order_relaxed);
}

void VerifiedFile::SetOneShotReleaseWindows(uint64_t windows) {
  one_shot_release_windows.store(windows, std::memory_order_relaxed);
}

void VerifiedFile::SetUpOneShot() {
  populate_ = PageFaultsAreDear();
  // A mode that is set is taken now (SetOneShotReads may change before the first read);
  // the machine's measure waits for a read that needs it.
  const std::optional<bool> forced = ForcedCopyReads();
  copy_state_.store(forced ? (*forced ? kCopy : kMap) : kUndecided, std::memory_order_relaxed);
  arena_ = std::make_unique<Arena>();
  uid_ = next_file_uid.fetch_add(1, std::memory_order_relaxed);
  release_every_ = OneShotReleaseWindows();  // what is read through the mapping
}

uint64_t VerifiedFile::ChunkSum(uint64_t chunk) const {
  const Span& sums = span(layout_.chunk_sums);
  const uint64_t at = chunk * sizeof(uint64_t);
  const uint64_t piece = at >> kChunkShift;
  const uint64_t begin = piece << kChunkShift;
  const uint64_t length = std::min<uint64_t>(kChunkBytes, sums.length - begin);
  const bool verified = PieceVerified(piece);
  if (copying()) {  // the piece from the cache, or read (and verified) into it
    uint64_t sum;
    if (verified && SumPieces().CopyOut(uid_, piece, at - begin, sizeof(sum),
                                        reinterpret_cast<uint8_t*>(&sum))) {
      return sum;
    }
    thread_local uint8_t scratch[kChunkBytes];
    file_.Read(FileOffset(sums, begin), length, scratch);
    if (!verified) PieceMatches(piece, scratch, length);
    SumPieces().Put(uid_, piece, scratch, length);
    return LoadU64(scratch + (at - begin));
  }
  if (!verified) {
    if (populate_) file_.Populate(FileOffset(sums, begin), length);
    PieceMatches(piece, sums.data + begin, length);
  }
  return LoadU64(sums.data + at);
}

void VerifiedFile::PieceMatches(uint64_t piece, const uint8_t* bytes, uint64_t length) const {
  if (Checksum(bytes, length) !=
      LoadU64(span(layout_.chunk_sums_index).data + piece * sizeof(uint64_t))) {
    Corrupt("checksum mismatch in chunk " + std::to_string(piece) + " of section " +
            layout_.section_name(layout_.chunk_sums));
  }
  SetBit(sums_verified_.get(), piece);
}

void VerifiedFile::VerifyChunk(uint32_t id, uint64_t chunk, const uint8_t* bytes,
                               uint64_t length) const {
  if (Checksum(bytes, length) != ChunkSum(chunk)) ChunkDamaged(id, chunk);
  SetBit(verified_.get(), chunk);
}

void VerifiedFile::VerifyMappedChunk(uint32_t id, const Span& s, uint64_t chunk) const {
  const uint64_t at = (chunk - s.first_chunk) << kChunkShift;
  VerifyChunk(id, chunk, s.data + at, std::min<uint64_t>(kChunkBytes, s.length - at));
}

void VerifiedFile::ChunkDamaged(uint32_t id, uint64_t chunk) const {
  Corrupt("checksum mismatch in chunk " + std::to_string(chunk - span(id).first_chunk) +
          " of section " + layout_.section_name(id));
}

bool VerifiedFile::Cold(uint32_t id, uint64_t chunk) const {
  if (Warm(id)) return false;
  const uint32_t i = id - 1;
  if (!file_.Resident(ChunkFileOffset(span(id), chunk))) {
    resident_in_a_row_[i].store(0, std::memory_order_relaxed);
    return true;
  }
  NoteResident(id);
  return false;
}

bool VerifiedFile::NoteResident(uint32_t id) const {
  const uint32_t i = id - 1;
  if (resident_in_a_row_[i].fetch_add(1, std::memory_order_relaxed) + 1 >= kWarmAfter)
    warm_[i].store(true, std::memory_order_relaxed);
  return Warm(id);
}

void VerifiedFile::WillNeedChunks(const Span& s, uint64_t first, uint64_t last) const {
  const size_t begin = ChunkFileOffset(s, first);
  const size_t end = std::min<size_t>(ChunkFileOffset(s, last + 1),
                                      static_cast<size_t>(s.data - file_.data()) + s.length);
  file_.WillNeed(begin, end - begin);
  for (uint64_t c = first; c <= last; ++c) SetBit(requested_.get(), c);
  const Span& sums = span(layout_.chunk_sums);
  for (uint64_t piece = (first * sizeof(uint64_t)) >> kChunkShift;
       piece <= (last * sizeof(uint64_t)) >> kChunkShift; ++piece) {
    if (!PieceVerified(piece))
      file_.WillNeed(ChunkFileOffset(sums, sums.first_chunk + piece), kChunkBytes);
  }
}

void VerifiedFile::VerifyChunks(uint32_t id, uint64_t from, uint64_t last) const {
  const Span& s = span(id);
  // With random access advised, the chunks come in one request (not a fault per page).
  WillNeedRun(id, s, from, last);
  if (populate_) {  // the pages of the chunks not yet verified, mapped in one request
    uint64_t first = from;
    while (first <= last && IsVerified(first)) ++first;
    uint64_t end = last;
    while (end > first && IsVerified(end)) --end;
    if (first <= end) {
      const uint64_t at = (first - s.first_chunk) << kChunkShift;
      const uint64_t to = std::min<uint64_t>((end + 1 - s.first_chunk) << kChunkShift, s.length);
      file_.Populate(FileOffset(s, at), to - at);
    }
  }
  uint64_t windows = 0;  // fault-around windows first touched since the last drop
  for (uint64_t c = from; c <= last; ++c) {
    if (IsVerified(c)) continue;
    VerifyMappedChunk(id, s, c);
    if (release_every_ != 0) {
      const uint64_t w = ChunkFileOffset(s, c) >> kFaultAroundShift;
      const uint64_t bit = uint64_t{1} << (w & 63);
      windows += !(touched_windows_[w >> 6].fetch_or(bit, std::memory_order_relaxed) & bit);
    }
  }
  // A one-shot reader's resident set: the pages stay valid (they fault in again), so readers
  // on other threads are not disturbed. Whoever crosses the period drops them.
  if (windows != 0) {
    const uint64_t before = windows_since_release_.fetch_add(windows, std::memory_order_relaxed);
    if (before < release_every_ && before + windows >= release_every_) {
      windows_since_release_.fetch_sub(before + windows, std::memory_order_relaxed);
      for (size_t i = 0; i < touched_window_words_; ++i)
        touched_windows_[i].store(0, std::memory_order_relaxed);
      file_.ReleasePages();
    }
  }
}

void VerifiedFile::OutOfBounds(uint32_t id, uint64_t offset, uint64_t length) const {
  Corrupt(std::string("a record points outside section ") + layout_.section_name(id) + " (offset " +
          std::to_string(offset) + ", length " + std::to_string(length) + ", section " +
          Plural(span(id).length, "byte", "bytes") + ")");
}

uint64_t VerifiedFile::verified_chunks() const {
  uint64_t n = 0;
  for (uint64_t w = 0; w < (chunk_count_ + 63) / 64; ++w) {
    uint64_t bits = verified_[w].load(std::memory_order_relaxed);
    if (w == chunk_count_ / 64) bits &= (uint64_t{1} << (chunk_count_ % 64)) - 1;
    n += static_cast<uint64_t>(__builtin_popcountll(bits));
  }
  return n;
}

VerifiedFile::VerifiedFile(const std::string& path, Access access, const Layout& layout)
    : path_(path), layout_(layout), file_(path) {
  if (access != Access::kScan) AdviseRandomAccess();
  if (access == Access::kOneShot) SetUpOneShot();
  if (release_every_ != 0) {
    touched_window_words_ = ((file_.size() >> kFaultAroundShift) >> 6) + 1;
    touched_windows_ = std::make_unique<std::atomic<uint64_t>[]>(touched_window_words_);
  }
}

void VerifiedFile::PlaceSections(const SectionPlace* places, size_t n) {
  uint64_t chunks = 0;
  for (size_t i = 0; i < n; ++i) {
    spans_[places[i].id - 1] = {file_.data() + places[i].offset, places[i].length, chunks};
    chunks += ChunkCount(places[i].length);
  }
  chunk_count_ = span(layout_.chunk_sums).first_chunk;
  const uint64_t words = (chunks + 63) / 64;
  verified_ = std::make_unique<std::atomic<uint64_t>[]>(words);
  requested_ = std::make_unique<std::atomic<uint64_t>[]>(words);
  for (uint64_t w = 0; w < words; ++w) {
    verified_[w].store(0, std::memory_order_relaxed);
    requested_[w].store(0, std::memory_order_relaxed);
  }
  const uint64_t pieces = ChunkCount(span(layout_.chunk_sums).length);
  sums_verified_ = std::make_unique<std::atomic<uint64_t>[]>((pieces + 63) / 64);
  for (uint64_t w = 0; w < (pieces + 63) / 64; ++w)
    sums_verified_[w].store(0, std::memory_order_relaxed);
}

void VerifiedFile::MarkVerified(uint32_t id) {
  const Span& s = span(id);
  for (uint64_t c = s.first_chunk; c < s.first_chunk + ChunkCount(s.length); ++c)
    SetBit(verified_.get(), c);
}

void VerifiedFile::VerifyEveryChunk(uint32_t id) const {
  const Span& s = span(id);
  for (uint64_t c = s.first_chunk; c < s.first_chunk + ChunkCount(s.length); ++c)
    VerifyMappedChunk(id, s, c);
}

void VerifiedFile::Corrupt(const std::string& what) const {
  layout_.corrupt(path_, what);
  std::abort();  // Layout::corrupt throws: damaged bytes are never handed out
}

}  // namespace bitsift::storage
