// Interning the terms of documents being indexed: term strings -> provisional ids, from many
// threads at once. The segment builder turns them into final ids (format/dictionary.h).
#ifndef BITSIFT_INDEXER_TERM_INTERNER_H_
#define BITSIFT_INDEXER_TERM_INTERNER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bitsift::indexer {

// Maps term strings to provisional ids. Intern is safe to call from several threads.
class TermInterner {
 public:
  static constexpr int kShardBits = 6;
  static constexpr int kLocalBits = 32 - kShardBits;

  TermInterner();

  // Returns the provisional id of term (adding it if new). `hash` must be HashTerm(term).
  uint32_t Intern(std::string_view term, uint64_t hash);

  // Number of distinct terms interned so far.
  uint64_t size() const;

  // Bytes of memory held (term bytes, offsets, hashes, tables). Not concurrent with Intern.
  uint64_t MemoryBytes() const;

  // The shard and the shard-local index of a provisional id.
  static uint32_t ShardOf(uint32_t pid) { return pid >> kLocalBits; }
  static uint32_t LocalOf(uint32_t pid) { return pid & ((1u << kLocalBits) - 1); }

  // Calls f(provisional_id, term, hash) for every term. Not concurrent with Intern.
  template <typename F>
  void ForEach(F&& f) const {
    for (uint32_t s = 0; s < (1u << kShardBits); ++s) {
      const Shard& shard = *shards_[s];
      for (uint32_t i = 0; i < shard.hashes.size(); ++i)
        f((s << kLocalBits) | i, shard.Term(i), shard.hashes[i]);
    }
  }

  // The term with provisional id pid, and its hash. Not concurrent with Intern.
  std::string_view Term(uint32_t pid) const { return shards_[ShardOf(pid)]->Term(LocalOf(pid)); }
  uint64_t Hash(uint32_t pid) const { return shards_[ShardOf(pid)]->hashes[LocalOf(pid)]; }

 private:
  // Memory per term matters (linux-paras has 5.7M distinct terms): a term costs its bytes in
  // one arena per shard, an 8-byte end offset, its 8-byte hash and 2 to 4 slots of 8 bytes.
  // A slot holds the high half of the hash as a tag, so most probes settle without looking
  // at the term's bytes.
  struct Slot {
    uint32_t tag = 0;
    uint32_t local = kEmpty;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Shard {
    std::mutex mu;
    std::vector<Slot> table = std::vector<Slot>(1024);
    std::string bytes;                 // the terms, concatenated by local id
    std::vector<uint64_t> ends = {0};  // ends[i + 1] = end of term i in bytes
    std::vector<uint64_t> hashes;      // by local id
    std::string_view Term(uint32_t i) const {
      return std::string_view(bytes.data() + ends[i], ends[i + 1] - ends[i]);
    }
  };
  std::vector<std::unique_ptr<Shard>> shards_;
};

}  // namespace bitsift::indexer

#endif  // BITSIFT_INDEXER_TERM_INTERNER_H_
