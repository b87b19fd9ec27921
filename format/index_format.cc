#include "format/index_format.h"

#include <cstddef>
#include <cstring>

#include "util/error.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace bitsift::format {

uint64_t Checksum(const void* data, size_t length) { return XXH3_64bits(data, length); }

IndexFileWriter::IndexFileWriter(const std::string& path) : out_(path) {
  out_.AppendZeros(sizeof(FileHeader));  // filled in by Finish
}

void IndexFileWriter::AddSection(SectionId id, const void* data, size_t length) {
  out_.AppendZeros((64 - out_.offset() % 64) % 64);
  SectionEntry e{};
  e.id = static_cast<uint32_t>(id);
  e.offset = out_.offset();
  e.length = length;
  e.checksum = Checksum(data, length);
  out_.Append(data, length);
  entries_.push_back(e);
}

uint64_t IndexFileWriter::Finish() {
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

namespace {
[[noreturn]] void Corrupt(const std::string& path, const std::string& what) {
  throw Error(ErrorKind::kCorrupt, path + ": not a usable bitsift index: " + what);
}
}  // namespace

IndexFile::IndexFile(const std::string& path) : path_(path), file_(path) {
  const uint8_t* base = file_.data();
  const size_t size = file_.size();
  if (size < sizeof(FileHeader))
    Corrupt(path, "file too short (" + std::to_string(size) + " bytes)");
  FileHeader h;
  std::memcpy(&h, base, sizeof(h));
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0) Corrupt(path, "bad magic number");
  if (h.header_checksum != Checksum(&h, offsetof(FileHeader, header_checksum))) {
    Corrupt(path, "header checksum mismatch");
  }
  if (h.format_version != kFormatVersion) {
    Corrupt(path, "format version " + std::to_string(h.format_version) + ", this bitsift reads " +
                      std::to_string(kFormatVersion) + " (rebuild the index)");
  }
  if (h.file_size != size) {
    Corrupt(path, "size is " + std::to_string(size) + " bytes, header says " +
                      std::to_string(h.file_size) + " (truncated or extended)");
  }
  if (h.section_count != kSectionCount) Corrupt(path, "unexpected section count");
  uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.section_table_offset > size || size - h.section_table_offset < table_bytes) {
    Corrupt(path, "section table out of bounds");
  }
  std::vector<SectionEntry> entries(h.section_count);
  std::memcpy(entries.data(), base + h.section_table_offset, table_bytes);
  if (Checksum(entries.data(), table_bytes) != h.section_table_checksum) {
    Corrupt(path, "section table checksum mismatch");
  }
  if (h.section_table_offset + table_bytes != size) Corrupt(path, "bytes after the section table");
  sections_.resize(kSectionCount);
  // Sections are laid out in id order; the alignment padding between them must be zero, so that
  // every byte of the file is checked by something.
  uint64_t cursor = sizeof(FileHeader);
  auto check_gap = [&](uint64_t until) {
    for (uint64_t i = cursor; i < until; ++i) {
      if (base[i] != 0) Corrupt(path, "non-zero padding at offset " + std::to_string(i));
    }
  };
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    const SectionEntry& e = entries[i];
    if (e.id != i + 1) Corrupt(path, "section table out of order");
    if (e.offset % 64 != 0 || e.offset < cursor || e.offset > h.section_table_offset ||
        h.section_table_offset - e.offset < e.length) {
      Corrupt(path, "section " + std::to_string(e.id) + " out of bounds");
    }
    check_gap(e.offset);
    cursor = e.offset + e.length;
    if (Checksum(base + e.offset, e.length) != e.checksum) {
      Corrupt(path, "checksum mismatch in section " + std::to_string(e.id));
    }
    sections_[i] = std::string_view(reinterpret_cast<const char*>(base + e.offset), e.length);
  }
  check_gap(h.section_table_offset);
}

}  // namespace bitsift::format
