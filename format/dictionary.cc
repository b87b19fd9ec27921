#include "format/dictionary.h"

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

std::optional<uint32_t> DictionaryView::Find(std::string_view term, uint64_t hash) const {
  if (slots == 0) return std::nullopt;
  for (uint64_t i = hash & (slots - 1), probes = 0; probes < slots;
       i = (i + 1) & (slots - 1), ++probes) {
    uint32_t v = table[i];
    if (v == 0) return std::nullopt;
    if (v - 1 < term_count && Term(v - 1) == term) return v - 1;
  }
  return std::nullopt;
}

}  // namespace bitsift::format
