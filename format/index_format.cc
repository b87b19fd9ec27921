#include "format/index_format.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "util/error.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bitsift::format {

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
    case SectionId::kRankBounds:
      return "RANK_BOUNDS";
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

// Opening asks for the file's last bytes, and for sections up to this size, to be read ahead
// at once (storage::VerifiedFile::WillNeed): with a cold page cache, one round of parallel reads
// instead of a read per page in turn (docs/design.md, "One-shot queries").
constexpr size_t kOpenTailBytes = 64 << 10;

// Sections that opening verifies completely: the ones every query reads whole, and the small
// ones (a single chunk costs no more to verify at once). CHUNK_SUMS is verified piece by piece
// (storage::VerifiedFile::ChunkSum), whatever its size.
bool VerifiedAtOpen(SectionId id, uint64_t length) {
  if (id == SectionId::kChunkSums) return false;
  return id == SectionId::kMeta || id == SectionId::kBands || id == SectionId::kChunkSumsIndex ||
         length <= kChunkBytes;
}

const char* NameOfSection(uint32_t id) { return SectionName(SectionId{id}); }

// What storage::VerifiedFile needs to know of the segment file's layout.
static_assert(kMaxSectionId <= storage::VerifiedFile::kMaxSections && kMaxSectionId < 64);
constexpr storage::Layout kSegmentLayout = {
    .section_name = NameOfSection,
    .corrupt = CorruptIndex,
    .chunk_sums = static_cast<uint32_t>(SectionId::kChunkSums),
    .chunk_sums_index = static_cast<uint32_t>(SectionId::kChunkSumsIndex),
    .copied_sections = IndexFile::kCopiedSections,
};

}  // namespace

IndexFile::IndexFile(const std::string& path, Access access) : file_(path, access, kSegmentLayout) {
  // What opening reads first: the header, and the tail (section table, CHUNK_SUMS_INDEX and
  // the end of CHUNK_SUMS); the small sections follow once the table places them.
  const size_t size = file_.file_size();
  file_.WillNeed(0, sizeof(FileHeader));
  file_.WillNeed(size - std::min<size_t>(size, kOpenTailBytes), kOpenTailBytes);
  const FileHeader h = ReadHeader();
  PlaceSections(h);
  for (const SectionEntry& e : entries_) {
    if (VerifiedAtOpen(SectionId{e.id}, e.length) || e.length <= kOpenTailBytes)
      file_.WillNeed(e.offset, e.length);
  }
  VerifySectionsAtOpen();
  CheckChunkSums();
}

IndexFile::~IndexFile() = default;

FileHeader IndexFile::ReadHeader() const {
  const std::string& path = file_.path();
  const uint8_t* base = file_.data();
  const size_t size = file_.file_size();
  if (size < sizeof(FileHeader))
    CorruptIndex(path, "file too short (" + Plural(size, "byte", "bytes") + ")");
  file_.Prefault(0, sizeof(FileHeader));
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

void IndexFile::PlaceSections(const FileHeader& h) {
  const std::string& path = file_.path();
  const uint8_t* base = file_.data();
  const size_t size = file_.file_size();
  uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.section_table_offset > size || size - h.section_table_offset < table_bytes) {
    CorruptIndex(path, "section table out of bounds");
  }
  entries_.resize(h.section_count);
  file_.Prefault(h.section_table_offset, table_bytes);
  std::memcpy(entries_.data(), base + h.section_table_offset, table_bytes);
  if (Checksum(entries_.data(), table_bytes) != h.section_table_checksum) {
    CorruptIndex(path, "section table checksum mismatch");
  }
  if (h.section_table_offset + table_bytes != size)
    CorruptIndex(path, "bytes after the section table");
  table_offset_ = h.section_table_offset;
  // Sections are laid out in kSectionOrder, each 64-byte aligned. The padding between them is
  // not read here (VerifyAll checks that it is zero).
  uint64_t cursor = sizeof(FileHeader);
  storage::SectionPlace places[kSectionCount];
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    if (e.id != static_cast<uint32_t>(kSectionOrder[i]))
      CorruptIndex(path, "section table out of order");
    if (e.offset % 64 != 0 || e.offset < cursor || e.offset > h.section_table_offset ||
        h.section_table_offset - e.offset < e.length) {
      CorruptIndex(path, std::string("section ") + SectionName(SectionId{e.id}) + " out of bounds");
    }
    cursor = e.offset + e.length;
    places[i] = {e.id, e.offset, e.length};
  }
  // (kSectionOrder ends with CHUNK_SUMS and CHUNK_SUMS_INDEX, as VerifiedFile wants.)
  file_.PlaceSections(places, kSectionCount);
}

void IndexFile::VerifySectionsAtOpen() {
  const uint8_t* base = file_.data();
  PopulateVerifiedAtOpen();
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    const SectionId id{e.id};
    if (!VerifiedAtOpen(id, e.length)) continue;
    if (Checksum(base + e.offset, e.length) != e.checksum) {
      CorruptIndex(file_.path(), std::string("checksum mismatch in section ") + SectionName(id));
    }
    file_.MarkVerified(e.id);
  }
}

void IndexFile::CheckChunkSums() const {
  const std::string& path = file_.path();
  const uint64_t sums = Section(SectionId::kChunkSums).size();
  const uint64_t chunks = file_.chunk_count();
  if (sums != chunks * sizeof(uint64_t)) {
    CorruptIndex(path, "CHUNK_SUMS holds " + Plural(sums / 8, "checksum", "checksums") + " for " +
                           Plural(chunks, "chunk", "chunks"));
  }
  if (Section(SectionId::kChunkSumsIndex).size() != ChunkCount(sums) * sizeof(uint64_t))
    CorruptIndex(path, "CHUNK_SUMS_INDEX does not match CHUNK_SUMS");
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
    if (end != 0) file_.Prefault(begin, end - begin);
    begin = e.offset;
    end = e.offset + e.length;
  }
  if (end != 0) file_.Prefault(begin, end - begin);
}

void IndexFile::VerifyAll() const {
  const uint8_t* base = file_.data();
  uint64_t cursor = sizeof(FileHeader);
  auto check_gap = [&](uint64_t until) {
    for (uint64_t i = cursor; i < until; ++i) {
      if (base[i] != 0)
        CorruptIndex(file_.path(), "non-zero padding at offset " + std::to_string(i));
    }
  };
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries_[i];
    const SectionId id{e.id};
    check_gap(e.offset);
    cursor = e.offset + e.length;
    // Chunk by chunk first (the finer report), then the whole section: both must hold.
    file_.WillNeed(e.offset, e.length);  // read ahead even after AdviseRandomAccess
    if (id != SectionId::kChunkSums && id != SectionId::kChunkSumsIndex)
      file_.VerifyEveryChunk(e.id);
    if (Checksum(base + e.offset, e.length) != e.checksum) {
      CorruptIndex(file_.path(), std::string("checksum mismatch in section ") + SectionName(id));
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

}  // namespace bitsift::format
