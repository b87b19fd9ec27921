#include "indexer/dictionary.h"

#include "util/error.h"

namespace bitsift::indexer {

TermInterner::TermInterner() {
  for (int i = 0; i < (1 << kShardBits); ++i) shards_.push_back(std::make_unique<Shard>());
}

uint32_t TermInterner::Intern(std::string_view term, uint64_t hash) {
  const uint32_t s = static_cast<uint32_t>(hash >> (64 - kShardBits));
  Shard& shard = *shards_[s];
  std::lock_guard<std::mutex> lock(shard.mu);
  // Heterogeneous lookup is C++20 for unordered_map but needs a transparent hash; a key copy
  // only happens on a miss below, the lookup itself builds one std::string.
  auto [it, inserted] = shard.ids.try_emplace(std::string(term), 0);
  if (inserted) {
    Ensure(shard.terms.size() < (1u << kLocalBits), ErrorKind::kInvalidArgument,
           "too many distinct terms for one index");
    it->second = static_cast<uint32_t>(shard.terms.size());
    shard.terms.push_back(&it->first);
    shard.hashes.push_back(hash);
  }
  return (s << kLocalBits) | it->second;
}

uint64_t TermInterner::size() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) n += shard->terms.size();
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

std::optional<uint32_t> DictionaryView::Find(std::string_view term, uint64_t hash) const {
  if (slots == 0) return std::nullopt;
  for (uint64_t i = hash & (slots - 1), probes = 0; probes < slots; i = (i + 1) & (slots - 1), ++probes) {
    uint32_t v = table[i];
    if (v == 0) return std::nullopt;
    if (v - 1 < term_count && Term(v - 1) == term) return v - 1;
  }
  return std::nullopt;
}

}  // namespace bitsift::indexer
