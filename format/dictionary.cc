#include "format/dictionary.h"

#include <cstring>

#include "util/error.h"

namespace bitsift::format {

TermInterner::TermInterner() {
  for (int i = 0; i < (1 << kShardBits); ++i) shards_.push_back(std::make_unique<Shard>());
}

uint32_t TermInterner::Intern(std::string_view term, uint64_t hash) {
  const uint32_t s = static_cast<uint32_t>(hash >> (64 - kShardBits));
  const uint32_t tag = static_cast<uint32_t>(hash >> 32);
  Shard& shard = *shards_[s];
  std::lock_guard<std::mutex> lock(shard.mu);
  uint64_t mask = shard.table.size() - 1;
  uint64_t i = hash & mask;
  for (; shard.table[i].local != kEmpty; i = (i + 1) & mask) {
    const Slot& slot = shard.table[i];
    if (slot.tag == tag && shard.hashes[slot.local] == hash && shard.Term(slot.local) == term) {
      return (s << kLocalBits) | slot.local;
    }
  }
  Ensure(shard.hashes.size() + 1 < (1u << kLocalBits), ErrorKind::kInvalidArgument,
         "too many distinct terms for one index");
  const uint32_t local = static_cast<uint32_t>(shard.hashes.size());
  shard.bytes.append(term);
  shard.ends.push_back(shard.bytes.size());
  shard.hashes.push_back(hash);
  shard.table[i] = {tag, local};
  if (shard.hashes.size() * 2 > shard.table.size()) {
    // Grow to keep the load at most one half.
    std::vector<Slot> bigger(shard.table.size() * 2);
    mask = bigger.size() - 1;
    for (const Slot& slot : shard.table) {
      if (slot.local == kEmpty) continue;
      uint64_t j = shard.hashes[slot.local] & mask;
      while (bigger[j].local != kEmpty) j = (j + 1) & mask;
      bigger[j] = slot;
    }
    shard.table.swap(bigger);
  }
  return (s << kLocalBits) | local;
}

uint64_t TermInterner::size() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) n += shard->hashes.size();
  return n;
}

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
