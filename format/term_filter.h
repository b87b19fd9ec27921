// TERM_FILTER: a split-block Bloom filter over a segment's dictionary terms, so that a lookup
// of a term the segment does not hold usually ends after one cache line instead of a search
// of DICT_TOP, DICT_INDEX and a block (~1-2 us on a large dictionary; an absent-term query on
// linux-paras cost 4.9 us with 2 segments).
//
// The section is an array of 32-byte blocks (8 x u32). A term with hash h = HashTerm(term)
// sets, in block (h * block_count) >> 64 (128-bit product), bit (lo32(h) * kSalt[i]) >> 27
// of word i for i < 8 (the layout of Parquet's split-block filters). About 10 bits a term
// (block_count = max(1, ceil(terms * kTermFilterBitsPerTerm / 256))): ~1% of absent terms
// pass to the dictionary, which answers exactly. No false negatives: `check` recomputes the
// bits of every term.
#ifndef BITSIFT_FORMAT_TERM_FILTER_H_
#define BITSIFT_FORMAT_TERM_FILTER_H_

#include <cstdint>
#include <vector>

namespace bitsift::format {

inline constexpr uint64_t kTermFilterBitsPerTerm = 10;
inline constexpr uint64_t kTermFilterBlockWords = 8;  // u32 words, 32 bytes a block

// Blocks of a filter sized for `terms` terms (at least 1).
constexpr uint64_t TermFilterBlocks(uint64_t terms) {
  return terms == 0 ? 1 : (terms * kTermFilterBitsPerTerm + 255) / 256;
}

// The block of hash h among block_count, and the 8 words' masks.
inline uint64_t TermFilterBlock(uint64_t h, uint64_t block_count) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * block_count) >> 64);
}
inline void TermFilterMasks(uint64_t h, uint32_t mask[kTermFilterBlockWords]) {
  static constexpr uint32_t kSalt[kTermFilterBlockWords] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU,
                                                            0xa2b7289dU, 0x705495c7U, 0x2df1424bU,
                                                            0x9efc4947U, 0x5c6bfb31U};
  const auto key = static_cast<uint32_t>(h);
  for (uint64_t i = 0; i < kTermFilterBlockWords; ++i) mask[i] = 1U << ((key * kSalt[i]) >> 27);
}

// Whether a term of hash h may be in the filter `block` (the 8 words of its block, found by
// TermFilterBlock). False: certainly not in the dictionary.
inline bool TermFilterMayContain(const uint32_t* block, uint64_t h) {
  uint32_t mask[kTermFilterBlockWords];
  TermFilterMasks(h, mask);
  uint32_t missing = 0;
  for (uint64_t i = 0; i < kTermFilterBlockWords; ++i) missing |= mask[i] & ~block[i];
  return missing == 0;
}

// Builds a filter in memory: Add every term's hash, then words() is the section.
class TermFilterWriter {
 public:
  // Sized for `expected_terms` (an upper bound is fine: the filter is then sparser).
  explicit TermFilterWriter(uint64_t expected_terms)
      : blocks_(TermFilterBlocks(expected_terms)), words_(blocks_ * kTermFilterBlockWords, 0) {}
  void Add(uint64_t h) {
    uint32_t mask[kTermFilterBlockWords];
    TermFilterMasks(h, mask);
    uint32_t* block = &words_[TermFilterBlock(h, blocks_) * kTermFilterBlockWords];
    for (uint64_t i = 0; i < kTermFilterBlockWords; ++i) block[i] |= mask[i];
  }
  const std::vector<uint32_t>& words() const { return words_; }

 private:
  uint64_t blocks_;
  std::vector<uint32_t> words_;
};

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_TERM_FILTER_H_
