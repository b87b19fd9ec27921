#include "format/dictionary.h"

#include <cstring>

#include "util/error.h"

namespace bitsift::format {

std::vector<uint32_t> BuildTermTable(const std::vector<uint64_t>& hashes) {
  uint64_t slots = 64;
  while (slots < hashes.size() * 2) slots *= 2;
  std::vector<uint32_t> table(slots, 0);
  for (uint32_t id = 0; id < hashes.size(); ++id) {
    uint64_t i = hashes[id] & (slots - 1);
    while (table[i] != 0) i = (i + 1) & (slots - 1);
    table[i] = id + 1;
  }
  return table;
}

namespace {

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

[[noreturn]] void BadTerm(const IndexFile& file, uint32_t id, const char* what) {
  throw Error(ErrorKind::kCorrupt, file.path() + ": not a usable bitsift index: term " +
                                       std::to_string(id) + ": " + what);
}

}  // namespace

std::string_view DictionaryView::Term(uint32_t id) const {
  if (id >= term_count) [[unlikely]]
    BadTerm(*file, id, "id out of range");
  const uint8_t* offsets = file->Touch(SectionId::kTermOffsets, uint64_t{id} * 8, 16);
  const uint64_t begin = Load<uint64_t>(offsets), end = Load<uint64_t>(offsets + 8);
  if (begin > end) [[unlikely]]
    BadTerm(*file, id, "offsets out of order");
  return std::string_view(
      reinterpret_cast<const char*>(file->Touch(SectionId::kTermBytes, begin, end - begin)),
      end - begin);
}

uint32_t DictionaryView::Df(uint32_t id) const {
  if (id >= term_count) [[unlikely]]
    BadTerm(*file, id, "id out of range");
  return Load<uint32_t>(file->Touch(SectionId::kTermDf, uint64_t{id} * 4, 4));
}

std::optional<uint32_t> DictionaryView::Find(std::string_view term, uint64_t hash) const {
  if (slots == 0) return std::nullopt;
  for (uint64_t i = hash & (slots - 1), probes = 0; probes < slots;
       i = (i + 1) & (slots - 1), ++probes) {
    const uint32_t v = Load<uint32_t>(file->Touch(SectionId::kTermTable, i * 4, 4));
    if (v == 0) return std::nullopt;
    if (v - 1 < term_count && Term(v - 1) == term) return v - 1;
  }
  return std::nullopt;
}

}  // namespace bitsift::format
