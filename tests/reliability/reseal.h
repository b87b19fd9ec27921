// Recomputing the checksums of a deliberately damaged index image, so that the damage gets
// past checksum verification and reaches the structural checks. Shared by the reliability
// tests and the index fuzzer (fuzz/).
#ifndef BITSIFT_TESTS_RELIABILITY_RESEAL_H_
#define BITSIFT_TESTS_RELIABILITY_RESEAL_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/index_format.h"

namespace bitsift::testing {

// Recomputes the checksums of an index image (the chunk checksums in CHUNK_SUMS, theirs in
// CHUNK_SUMS_INDEX, and the
// checksum of every section the table places inside the image, the table, the header) and the
// header's file size, so that a mutated image gets past
// checksum verification and exercises the structural checks. Bytes it cannot place are left
// as they are.
inline void ResealIndex(std::string& image) {
  using format::FileHeader;
  using format::SectionEntry;
  if (image.size() < sizeof(FileHeader)) return;
  FileHeader h;
  std::memcpy(&h, image.data(), sizeof(h));
  h.file_size = image.size();
  const uint64_t table_bytes = uint64_t{h.section_count} * sizeof(SectionEntry);
  if (h.section_count > 0 && h.section_count <= 4096 && h.section_table_offset <= image.size() &&
      image.size() - h.section_table_offset >= table_bytes) {
    std::vector<SectionEntry> entries(h.section_count);
    std::memcpy(entries.data(), image.data() + h.section_table_offset, table_bytes);
    auto placed = [&](const SectionEntry& e) {
      return e.offset <= image.size() && image.size() - e.offset >= e.length;
    };
    // The chunk checksums of the other sections, in table order, into CHUNK_SUMS (as many as
    // it has room for), before the section checksums, which cover CHUNK_SUMS too.
    std::vector<uint64_t> sums;
    const auto sums_id = static_cast<uint32_t>(format::SectionId::kChunkSums);
    const auto sums_index_id = static_cast<uint32_t>(format::SectionId::kChunkSumsIndex);
    for (const SectionEntry& e : entries) {
      if (e.id == sums_id || e.id == sums_index_id) continue;
      for (uint64_t at = 0; placed(e) && at < e.length; at += format::kChunkBytes) {
        sums.push_back(format::Checksum(image.data() + e.offset + at,
                                        std::min<uint64_t>(format::kChunkBytes, e.length - at)));
      }
    }
    for (const SectionEntry& e : entries) {
      if (e.id != sums_id || !placed(e) || sums.empty()) continue;
      std::memcpy(image.data() + e.offset, sums.data(),
                  std::min<uint64_t>(e.length / 8, sums.size()) * 8);
    }
    // Then the checksums of CHUNK_SUMS's pieces into CHUNK_SUMS_INDEX.
    std::vector<uint64_t> pieces;
    for (const SectionEntry& e : entries) {
      for (uint64_t at = 0; e.id == sums_id && placed(e) && at < e.length;
           at += format::kChunkBytes) {
        pieces.push_back(format::Checksum(image.data() + e.offset + at,
                                          std::min<uint64_t>(format::kChunkBytes, e.length - at)));
      }
    }
    for (const SectionEntry& e : entries) {
      if (e.id != sums_index_id || !placed(e) || pieces.empty()) continue;
      std::memcpy(image.data() + e.offset, pieces.data(),
                  std::min<uint64_t>(e.length / 8, pieces.size()) * 8);
    }
    for (SectionEntry& e : entries) {
      if (placed(e)) {
        e.checksum = format::Checksum(image.data() + e.offset, e.length);
      }
    }
    std::memcpy(image.data() + h.section_table_offset, entries.data(), table_bytes);
    h.section_table_checksum = format::Checksum(entries.data(), table_bytes);
  }
  h.header_checksum = format::Checksum(&h, offsetof(FileHeader, header_checksum));
  std::memcpy(image.data(), &h, sizeof(h));
}

}  // namespace bitsift::testing

#endif  // BITSIFT_TESTS_RELIABILITY_RESEAL_H_
