#include "format/index_format.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>

#include "util/error.h"
#include "util/spin_lock.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bitsift::format {

uint64_t Checksum(const void* data, size_t length) { return XXH3_64bits(data, length); }

const char* SectionName(SectionId id) {
  switch (id) {
    case SectionId::kMeta:
      return "META";
    case SectionId::kBands:
      return "BANDS";
    case SectionId::kBandDocs:
      return "BAND_DOCS";
    case SectionId::kRows:
      return "ROWS";
    case SectionId::kDocBands:
      return "DOC_BANDS";
    case SectionId::kForwardOffsets:
      return "FORWARD_OFFSETS";
    case SectionId::kForwardData:
      return "FORWARD_DATA";
    case SectionId::kChunkSums:
      return "CHUNK_SUMS";
    case SectionId::kEncodings:
      return "ENCODINGS";
    case SectionId::kDictIndex:
      return "DICT_INDEX";
    case SectionId::kDictBlocks:
      return "DICT_BLOCKS";
    case SectionId::kDfRuns:
      return "DF_RUNS";
    case SectionId::kSparseData:
      return "SPARSE_DATA";
    case SectionId::kSparseIndex:
      return "SPARSE_INDEX";
    case SectionId::kDictTop:
      return "DICT_TOP";
    case SectionId::kChunkSumsIndex:
      return "CHUNK_SUMS_INDEX";
    case SectionId::kDocFacts:
      return "DOC_FACTS";
    case SectionId::kDocFactsIndex:
      return "DOC_FACTS_INDEX";
    case SectionId::kTermFilter:
      return "TERM_FILTER";
  }
  return "UNKNOWN";
}

// The state of a section being written: its checksum so far and its last partial chunk.
struct IndexFileWriter::Streaming {
  SectionEntry entry{};
  XXH3_state_t hash;
  std::string chunk;  // bytes of the current chunk (< kChunkBytes)
};

IndexFileWriter::IndexFileWriter(const std::string& path) : out_(path) {
  out_.AppendZeros(sizeof(FileHeader));  // filled in by Finish
}

IndexFileWriter::~IndexFileWriter() = default;

void IndexFileWriter::AddSection(SectionId id, const void* data, size_t length) {
  BeginSection(id);
  Append(data, length);
  EndSection();
}

void IndexFileWriter::BeginSection(SectionId id) {
  Ensure(open_ == nullptr && entries_.size() < kSectionCount - 2 &&
             id == kSectionOrder[entries_.size()],
         ErrorKind::kInvalidArgument,
         std::string("section ") + SectionName(id) + " added out of order");
  out_.AppendZeros((64 - out_.offset() % 64) % 64);
  open_ = std::make_unique<Streaming>();
  open_->entry.id = static_cast<uint32_t>(id);
  open_->entry.offset = out_.offset();
  XXH3_64bits_reset(&open_->hash);
}

void IndexFileWriter::Append(const void* data, size_t length) {
  Ensure(open_ != nullptr, ErrorKind::kInvalidArgument,
         "IndexFileWriter::Append outside a section");
  const auto* bytes = static_cast<const uint8_t*>(data);
  XXH3_64bits_update(&open_->hash, bytes, length);
  out_.Append(bytes, length);
  open_->entry.length += length;
  // Chunk checksums: whole chunks straight from the input, a partial one through `chunk`.
  std::string& chunk = open_->chunk;
  size_t at = 0;
  if (!chunk.empty()) {
    const size_t take = std::min<size_t>(length, kChunkBytes - chunk.size());
    chunk.append(reinterpret_cast<const char*>(bytes), take);
    at = take;
    if (chunk.size() < kChunkBytes) return;
    chunk_sums_.push_back(Checksum(chunk.data(), chunk.size()));
    chunk.clear();
  }
  for (; length - at >= kChunkBytes; at += kChunkBytes)
    chunk_sums_.push_back(Checksum(bytes + at, kChunkBytes));
  chunk.assign(reinterpret_cast<const char*>(bytes + at), length - at);
}

void IndexFileWriter::EndSection() {
  Ensure(open_ != nullptr, ErrorKind::kInvalidArgument,
         "IndexFileWriter::EndSection outside a section");
  if (!open_->chunk.empty())
    chunk_sums_.push_back(Checksum(open_->chunk.data(), open_->chunk.size()));
  open_->entry.checksum = XXH3_64bits_digest(&open_->hash);
  entries_.push_back(open_->entry);
  open_.reset();
}

uint64_t IndexFileWriter::Finish() {
  Ensure(open_ == nullptr && entries_.size() == kSectionCount - 2, ErrorKind::kInvalidArgument,
         "IndexFileWriter::Finish before every section was written");
  auto append = [&](SectionId id, const void* data, uint64_t length) {
    out_.AppendZeros((64 - out_.offset() % 64) % 64);
    SectionEntry e{};
    e.id = static_cast<uint32_t>(id);
    e.offset = out_.offset();
    e.length = length;
    e.checksum = Checksum(data, length);
    out_.Append(data, length);
    entries_.push_back(e);
  };
  const uint64_t sums_bytes = chunk_sums_.size() * sizeof(uint64_t);
  append(SectionId::kChunkSums, chunk_sums_.data(), sums_bytes);
  std::vector<uint64_t> pieces;
  const auto* sums = reinterpret_cast<const uint8_t*>(chunk_sums_.data());
  for (uint64_t at = 0; at < sums_bytes; at += kChunkBytes)
    pieces.push_back(Checksum(sums + at, std::min<uint64_t>(kChunkBytes, sums_bytes - at)));
  append(SectionId::kChunkSumsIndex, pieces.data(), pieces.size() * sizeof(uint64_t));
  out_.AppendZeros((64 - out_.offset() % 64) % 64);
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format_version = kFormatVersion;
  h.section_count = static_cast<uint32_t>(entries_.size());
  h.section_table_offset = out_.offset();
  size_t table_bytes = entries_.size() * sizeof(SectionEntry);
  h.section_table_checksum = Checksum(entries_.data(), table_bytes);
  out_.Append(entries_.data(), table_bytes);
  h.file_size = out_.offset();
  h.header_checksum = Checksum(&h, offsetof(FileHeader, header_checksum));
  out_.Overwrite(0, &h, sizeof(h));
  out_.Commit();
  return h.file_size;
}

std::string EncodeEncodingTable(const std::vector<std::string>& names) {
  const auto count = static_cast<uint32_t>(names.size());
  std::string out(reinterpret_cast<const char*>(&count), sizeof(count));
  for (const std::string& name : names) {
    out += static_cast<char>(static_cast<uint8_t>(name.size()));
    out += name;
  }
  return out;
}

std::string ParseEncodingTable(std::string_view bytes, std::vector<std::string>* names) {
  names->clear();
  uint32_t count;
  if (bytes.size() < sizeof(count)) return "no name count";
  std::memcpy(&count, bytes.data(), sizeof(count));
  // Each name takes at least 2 bytes: a count past that cannot be right (and is not reserved).
  if (count == 0 || count > (bytes.size() - sizeof(count)) / 2) {
    return "name count " + std::to_string(count) + " does not fit the section";
  }
  size_t at = sizeof(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (at >= bytes.size()) return "name " + std::to_string(i) + " past the end";
    const size_t length = static_cast<uint8_t>(bytes[at++]);
    if (length == 0 || length > bytes.size() - at) {
      return "name " + std::to_string(i) + " of length " + std::to_string(length) + " past the end";
    }
    std::string_view name = bytes.substr(at, length);
    at += length;
    for (char c : name) {
      if (c < 0x21 || c > 0x7e) return "name " + std::to_string(i) + " is not printable ASCII";
    }
    if (std::find(names->begin(), names->end(), name) != names->end()) {
      return "name '" + std::string(name) + "' twice";
    }
    names->emplace_back(name);
  }
  if (at != bytes.size()) return "bytes after the last name";
  if ((*names)[0] != kUtf8EncodingName) return "name 0 is not UTF-8";
  return "";
}

void CorruptIndex(const std::string& path, const std::string& what) {
  throw Error(ErrorKind::kCorrupt, path + ": not a usable bitsift index: " + what);
}

namespace {

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Opening asks for the file's last bytes, and for sections up to this size, to be read ahead
// at once (MappedFile::WillNeed): with a cold page cache, one round of parallel reads instead
// of a read per page in turn (docs/design.md, "One-shot queries").
constexpr size_t kOpenTailBytes = 64 << 10;

// Sections that opening verifies completely: the ones every query reads whole, and the small
// ones (a single chunk costs no more to verify at once). CHUNK_SUMS is verified piece by piece
// (IndexFile::ChunkSum), whatever its size.
bool VerifiedAtOpen(SectionId id, uint64_t length) {
  if (id == SectionId::kChunkSums) return false;
  return id == SectionId::kMeta || id == SectionId::kBands || id == SectionId::kChunkSumsIndex ||
         length <= kChunkBytes;
}

}  // namespace

namespace {
std::atomic<uint64_t> one_shot_release_windows{IndexFile::kOneShotReleaseWindows};
std::atomic<IndexFile::OneShotReads> one_shot_reads{IndexFile::OneShotReads::kAuto};
}  // namespace

struct IndexFile::Arena {
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

IndexFile::~IndexFile() = default;

int IndexFile::DecideCopyReads() const {
  const int state = OneShotCopyReads() ? kCopy : kMap;
  copy_state_.store(state, std::memory_order_relaxed);  // (threads that race decide alike)
  return state;
}

namespace {

// The read mode SetOneShotReads or BITSIFT_ONESHOT_READS sets, if one does.
std::optional<bool> ForcedCopyReads() {
  switch (one_shot_reads.load(std::memory_order_relaxed)) {
    case IndexFile::OneShotReads::kCopy:
      return true;
    case IndexFile::OneShotReads::kMap:
      return false;
    case IndexFile::OneShotReads::kAuto:
      break;
  }
  if (const char* env = std::getenv("BITSIFT_ONESHOT_READS")) {
    if (std::strcmp(env, "copy") == 0) return true;
    if (std::strcmp(env, "map") == 0) return false;
  }
  return std::nullopt;
}

}  // namespace

bool IndexFile::OneShotCopyReads() {
  if (std::optional<bool> forced = ForcedCopyReads()) return *forced;
  return true;
}

void IndexFile::SetOneShotReads(OneShotReads reads) {
  one_shot_reads.store(reads, std::memory_order_relaxed);
}

const uint8_t* IndexFile::CopyOut(SectionId id, const Span& s, uint64_t offset,
                                  uint64_t length) const {
  uint8_t* p = arena_->Allocate(length);
  CopyRange(id, s, offset, length, p);
  return p;
}

namespace {

// The process's cache of the chunks read by copy (IndexFile::copies), shared by its threads
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
  // whether the section is read densely (IndexFile::copies).
  bool Count(uint32_t section, bool hit) {
    std::lock_guard<util::SpinLock> lock(mu_);
    if (hit) {
      ++hits_[section];
      return false;
    }
    const uint64_t misses = ++misses_[section];
    return misses >= IndexFile::kDenseMinMisses && hits_[section] >= IndexFile::kDenseHits * misses;
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
  uint64_t files_[kSlots] = {};  // IndexFile::uid_; 0 = empty
  uint64_t chunks_[kSlots] = {};
  uint64_t used_[kSlots] = {};
  uint64_t clock_ = 0;
  uint64_t hits_[kMaxSectionId] = {};
  uint64_t misses_[kMaxSectionId] = {};
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

void IndexFile::CopyFromChunk(SectionId id, const Span& s, uint64_t chunk, uint64_t from,
                              uint64_t n, uint8_t* dst) const {
  ChunkCache<kCachedChunks>& cache = Chunks();
  const uint32_t i = static_cast<uint32_t>(id) - 1;
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

const uint8_t* IndexFile::ReadToScratch(SectionId id, const Span& s, uint64_t offset,
                                        uint64_t length) const {
  if (offset > s.length || length > s.length - offset) [[unlikely]] {
    OutOfBounds(id, offset, length);
  }
  if (length == 0) return scratch.Get(0);
  const uint64_t first = s.first_chunk + (offset >> kChunkShift);
  const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
  // A cold run of chunks is asked for at once (one round of reads, as VerifyChunks does).
  if (random_ && last > first && !IsVerified(first) && !(IsRequested(first) && IsRequested(last)) &&
      ColdRun(id, first, last)) {
    WillNeedChunks(s, first, last);
  }
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

void IndexFile::CopyRange(SectionId id, const Span& s, uint64_t offset, uint64_t length,
                          void* dst) const {
  if (offset > s.length || length > s.length - offset) [[unlikely]] {
    OutOfBounds(id, offset, length);
  }
  if (length == 0) return;
  const uint64_t first = s.first_chunk + (offset >> kChunkShift);
  const uint64_t last = s.first_chunk + ((offset + length - 1) >> kChunkShift);
  if (last - first <= 1) {  // a record (one that straddles two chunks too): from the cache
    if (random_ && last > first && !IsVerified(first) &&
        !(IsRequested(first) && IsRequested(last)) && ColdRun(id, first, last)) {
      WillNeedChunks(s, first, last);
    }
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

uint64_t IndexFile::OneShotReleaseWindows() {
  return one_shot_release_windows.load(std::memory_order_relaxed);
}

void IndexFile::SetOneShotReleaseWindows(uint64_t windows) {
  one_shot_release_windows.store(windows, std::memory_order_relaxed);
}

IndexFile::IndexFile(const std::string& path, Access access) : path_(path), file_(path) {
  if (access != Access::kScan) AdviseRandomAccess();
  if (access == Access::kOneShot) SetUpOneShot();
  if (release_every_ != 0) {
    touched_window_words_ = ((file_.size() >> kFaultAroundShift) >> 6) + 1;
    touched_windows_ = std::make_unique<std::atomic<uint64_t>[]>(touched_window_words_);
  }
  // What opening reads first: the header, and the tail (section table, CHUNK_SUMS_INDEX and
  // the end of CHUNK_SUMS); the small sections follow once the table places them.
  file_.WillNeed(0, sizeof(FileHeader));
  file_.WillNeed(file_.size() - std::min<size_t>(file_.size(), kOpenTailBytes), kOpenTailBytes);
  const FileHeader h = ReadHeader();
  const uint64_t chunks = PlaceSections(h);
  for (const SectionEntry& e : entries_) {
    if (VerifiedAtOpen(SectionId{e.id}, e.length) || e.length <= kOpenTailBytes)
      file_.WillNeed(e.offset, e.length);
  }
  VerifySectionsAtOpen(chunks);
  CheckChunkSums();
}

void IndexFile::SetUpOneShot() {
  populate_ = PageFaultsAreDear();
  // A mode that is set is taken now (SetOneShotReads may change before the first read);
  // the machine's measure waits for a read that needs it.
  const std::optional<bool> forced = ForcedCopyReads();
  copy_state_.store(forced ? (*forced ? kCopy : kMap) : kUndecided, std::memory_order_relaxed);
  arena_ = std::make_unique<Arena>();
  uid_ = next_file_uid.fetch_add(1, std::memory_order_relaxed);
  release_every_ = OneShotReleaseWindows();  // what is read through the mapping
}

FileHeader IndexFile::ReadHeader() const {
  const std::string& path = path_;
  const uint8_t* base = file_.data();
  const size_t size = file_.size();
  if (size < sizeof(FileHeader))
    CorruptIndex(path, "file too short (" + Plural(size, "byte", "bytes") + ")");
  if (populate_) file_.Populate(0, sizeof(FileHeader));
  FileHeader h;
  std::memcpy(&h, base, sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) CorruptIndex(path, "bad magic number");
  if (h.header_checksum != Checksum(&h, offsetof(FileHeader, header_checksum))) {
    CorruptIndex(path, "header checksum mismatch");
  }
  if (h.format_version != kFormatVersion) {
    CorruptIndex(path, "format version " + std::to_string(h.format_version) +
                           " (written by another bitsift; this one reads format " +
                           std::to_string(kFormatVersion) + ")");
  }
  if (h.file_size != size) {
    CorruptIndex(path, "size is " + Plural(size, "byte", "bytes") + ", header says " +
                           std::to_string(h.file_size) + " (truncated or extended)");
  }
  if (h.section_count != kSectionCount) CorruptIndex(path, "unexpected section count");
  return h;
}

uint64_t IndexFile::PlaceSections(const FileHeader& h) {
  const std::string& path = path_;
  const uint8_t* base = file_.data();
  const size_t size = file_.size();
  uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.section_table_offset > size || size - h.section_table_offset < table_bytes) {
    CorruptIndex(path, "section table out of bounds");
  }
  entries_.resize(h.section_count);
  if (populate_) file_.Populate(h.section_table_offset, table_bytes);
  std::memcpy(entries_.data(), base + h.section_table_offset, table_bytes);
  if (Checksum(entries_.data(), table_bytes) != h.section_table_checksum) {
    CorruptIndex(path, "section table checksum mismatch");
  }
  if (h.section_table_offset + table_bytes != size)
    CorruptIndex(path, "bytes after the section table");
  table_offset_ = h.section_table_offset;
  // Sections are laid out in kSectionOrder, each 64-byte aligned. The padding between them is
  // not read here (VerifyAll checks that it is zero).
  uint64_t cursor = sizeof(FileHeader), chunks = 0;
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    if (e.id != static_cast<uint32_t>(kSectionOrder[i]))
      CorruptIndex(path, "section table out of order");
    if (e.offset % 64 != 0 || e.offset < cursor || e.offset > h.section_table_offset ||
        h.section_table_offset - e.offset < e.length) {
      CorruptIndex(path, std::string("section ") + SectionName(SectionId{e.id}) + " out of bounds");
    }
    cursor = e.offset + e.length;
    spans_[e.id - 1] = {base + e.offset, e.length, chunks};
    chunks += ChunkCount(e.length);
  }
  return chunks;
}

void IndexFile::VerifySectionsAtOpen(uint64_t chunks) {
  const std::string& path = path_;
  const uint8_t* base = file_.data();
  chunk_count_ = span(SectionId::kChunkSums).first_chunk;
  verified_ = std::make_unique<std::atomic<uint64_t>[]>((chunks + 63) / 64);
  requested_ = std::make_unique<std::atomic<uint64_t>[]>((chunks + 63) / 64);
  for (uint64_t w = 0; w < (chunks + 63) / 64; ++w) {
    verified_[w].store(0, std::memory_order_relaxed);
    requested_[w].store(0, std::memory_order_relaxed);
  }
  if (populate_) PopulateVerifiedAtOpen();
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    const SectionId id{e.id};
    if (!VerifiedAtOpen(id, e.length)) continue;
    if (Checksum(base + e.offset, e.length) != e.checksum) {
      CorruptIndex(path, std::string("checksum mismatch in section ") + SectionName(id));
    }
    const Span& s = span(id);
    for (uint64_t c = s.first_chunk; c < s.first_chunk + ChunkCount(e.length); ++c)
      verified_[c >> 6].fetch_or(uint64_t{1} << (c & 63), std::memory_order_relaxed);
  }
}

void IndexFile::CheckChunkSums() {
  const std::string& path = path_;
  const Span& sums = span(SectionId::kChunkSums);
  if (sums.length != chunk_count_ * sizeof(uint64_t)) {
    CorruptIndex(path, "CHUNK_SUMS holds " + Plural(sums.length / 8, "checksum", "checksums") +
                           " for " + Plural(chunk_count_, "chunk", "chunks"));
  }
  const uint64_t pieces = ChunkCount(sums.length);
  if (span(SectionId::kChunkSumsIndex).length != pieces * sizeof(uint64_t))
    CorruptIndex(path, "CHUNK_SUMS_INDEX does not match CHUNK_SUMS");
  sums_verified_ = std::make_unique<std::atomic<uint64_t>[]>((pieces + 63) / 64);
  for (uint64_t w = 0; w < (pieces + 63) / 64; ++w)
    sums_verified_[w].store(0, std::memory_order_relaxed);
}

void IndexFile::PopulateVerifiedAtOpen() const {
  // Sections that lie less than a page apart share a request.
  constexpr uint64_t kGap = 4096;
  uint64_t begin = 0, end = 0;
  for (const SectionEntry& e : entries_) {
    if (!VerifiedAtOpen(SectionId{e.id}, e.length) || e.length == 0) continue;
    if (end != 0 && e.offset <= end + kGap) {
      end = std::max(end, e.offset + e.length);
      continue;
    }
    if (end != 0) file_.Populate(begin, end - begin);
    begin = e.offset;
    end = e.offset + e.length;
  }
  if (end != 0) file_.Populate(begin, end - begin);
}

uint64_t IndexFile::ChunkSum(uint64_t chunk) const {
  const Span& sums = span(SectionId::kChunkSums);
  const uint64_t at = chunk * sizeof(uint64_t);
  const uint64_t piece = at >> kChunkShift;
  const uint64_t begin = piece << kChunkShift;
  const uint64_t length = std::min<uint64_t>(kChunkBytes, sums.length - begin);
  const bool verified =
      (sums_verified_[piece >> 6].load(std::memory_order_relaxed) >> (piece & 63)) & 1;
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

void IndexFile::PieceMatches(uint64_t piece, const uint8_t* bytes, uint64_t length) const {
  if (Checksum(bytes, length) !=
      LoadU64(span(SectionId::kChunkSumsIndex).data + piece * sizeof(uint64_t))) {
    CorruptIndex(path_,
                 "checksum mismatch in chunk " + std::to_string(piece) + " of section CHUNK_SUMS");
  }
  sums_verified_[piece >> 6].fetch_or(uint64_t{1} << (piece & 63), std::memory_order_relaxed);
}

void IndexFile::VerifyChunk(SectionId id, uint64_t chunk, const uint8_t* bytes,
                            uint64_t length) const {
  if (Checksum(bytes, length) != ChunkSum(chunk)) ChunkDamaged(id, chunk);
  verified_[chunk >> 6].fetch_or(uint64_t{1} << (chunk & 63), std::memory_order_relaxed);
}

void IndexFile::VerifyMappedChunk(SectionId id, const Span& s, uint64_t chunk) const {
  const uint64_t at = (chunk - s.first_chunk) << kChunkShift;
  VerifyChunk(id, chunk, s.data + at, std::min<uint64_t>(kChunkBytes, s.length - at));
}

void IndexFile::ChunkDamaged(SectionId id, uint64_t chunk) const {
  CorruptIndex(path_, "checksum mismatch in chunk " + std::to_string(chunk - span(id).first_chunk) +
                          " of section " + SectionName(id));
}

bool IndexFile::Cold(SectionId id, uint64_t chunk) const {
  if (Warm(id)) return false;
  const uint32_t i = static_cast<uint32_t>(id) - 1;
  if (!file_.Resident(ChunkFileOffset(span(id), chunk))) {
    resident_in_a_row_[i].store(0, std::memory_order_relaxed);
    return true;
  }
  NoteResident(id);
  return false;
}

bool IndexFile::NoteResident(SectionId id) const {
  const uint32_t i = static_cast<uint32_t>(id) - 1;
  if (resident_in_a_row_[i].fetch_add(1, std::memory_order_relaxed) + 1 >= kWarmAfter)
    warm_[i].store(true, std::memory_order_relaxed);
  return Warm(id);
}

void IndexFile::WillNeedChunks(const Span& s, uint64_t first, uint64_t last) const {
  const size_t begin = ChunkFileOffset(s, first);
  const size_t end = std::min<size_t>(ChunkFileOffset(s, last + 1),
                                      static_cast<size_t>(s.data - file_.data()) + s.length);
  file_.WillNeed(begin, end - begin);
  for (uint64_t c = first; c <= last; ++c)
    requested_[c >> 6].fetch_or(uint64_t{1} << (c & 63), std::memory_order_relaxed);
  const Span& sums = span(SectionId::kChunkSums);
  for (uint64_t piece = (first * sizeof(uint64_t)) >> kChunkShift;
       piece <= (last * sizeof(uint64_t)) >> kChunkShift; ++piece) {
    if (!((sums_verified_[piece >> 6].load(std::memory_order_relaxed) >> (piece & 63)) & 1)) {
      file_.WillNeed(ChunkFileOffset(sums, sums.first_chunk + piece), kChunkBytes);
    }
  }
}

void IndexFile::VerifyChunks(SectionId id, uint64_t from, uint64_t last) const {
  const Span& s = span(id);
  // With random access advised, the chunks come in one request (not a fault per page).
  // (Chunks an earlier request covered are on their way: neither asked for again nor taken as
  // a sign of a warm file.)
  if (random_ && !(IsRequested(from) && IsRequested(last)) && ColdRun(id, from, last))
    WillNeedChunks(s, from, last);
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

void IndexFile::OutOfBounds(SectionId id, uint64_t offset, uint64_t length) const {
  CorruptIndex(path_, std::string("a record points outside section ") + SectionName(id) +
                          " (offset " + std::to_string(offset) + ", length " +
                          std::to_string(length) + ", section " +
                          Plural(span(id).length, "byte", "bytes") + ")");
}

void IndexFile::VerifyAll() const {
  const uint8_t* base = file_.data();
  uint64_t cursor = sizeof(FileHeader);
  auto check_gap = [&](uint64_t until) {
    for (uint64_t i = cursor; i < until; ++i) {
      if (base[i] != 0) CorruptIndex(path_, "non-zero padding at offset " + std::to_string(i));
    }
  };
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    const SectionId id{e.id};
    check_gap(e.offset);
    cursor = e.offset + e.length;
    // Chunk by chunk first (the finer report), then the whole section: both must hold.
    file_.WillNeed(e.offset, e.length);  // read ahead even after AdviseRandomAccess
    if (id != SectionId::kChunkSums && id != SectionId::kChunkSumsIndex) {
      const Span& s = span(id);
      for (uint64_t c = s.first_chunk; c < s.first_chunk + ChunkCount(s.length); ++c)
        VerifyMappedChunk(id, s, c);
    }
    if (Checksum(base + e.offset, e.length) != e.checksum) {
      CorruptIndex(path_, std::string("checksum mismatch in section ") + SectionName(id));
    }
  }
  check_gap(table_offset_);
}

uint32_t PeekFormatVersion(const std::string& path) {
  FileHeader h;
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(&h), sizeof(h))) return 0;
  return std::memcmp(h.magic, kMagic, sizeof(kMagic)) == 0 ? h.format_version : 0;
}

uint64_t IndexFile::verified_chunks() const {
  uint64_t n = 0;
  for (uint64_t w = 0; w < (chunk_count_ + 63) / 64; ++w) {
    uint64_t bits = verified_[w].load(std::memory_order_relaxed);
    if (w == chunk_count_ / 64) bits &= (uint64_t{1} << (chunk_count_ % 64)) - 1;
    n += static_cast<uint64_t>(__builtin_popcountll(bits));
  }
  return n;
}

}  // namespace bitsift::format
