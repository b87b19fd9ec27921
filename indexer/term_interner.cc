#include "indexer/term_interner.h"

#include "util/error.h"

namespace bitsift::indexer {

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

uint64_t TermInterner::MemoryBytes() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) {
    n += shard->bytes.capacity() + shard->ends.capacity() * sizeof(uint64_t) +
         shard->hashes.capacity() * sizeof(uint64_t) + shard->table.capacity() * sizeof(Slot);
  }
  return n;
}

uint64_t TermInterner::size() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) n += shard->hashes.size();
  return n;
}

}  // namespace bitsift::indexer
