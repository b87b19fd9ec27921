// Term hashing and Bloom-filter arithmetic shared by the index builder and the query engine.
#ifndef BITSIFT_FORMAT_BLOOM_H_
#define BITSIFT_FORMAT_BLOOM_H_

#include <cstdint>
#include <string_view>

namespace bitsift::format {

// The one 64-bit hash of a term: XXH3-64 of its UTF-8 bytes with seed 0. Stored indexes depend
// on it: never change it without a format version bump.
uint64_t HashTerm(std::string_view term);

// The signature shape of a band: `width` bits, `k` bit positions per term.
struct BloomShape {
  uint64_t width = 0;
  uint32_t k = 0;
};

// Returns the number of hash functions for a per-term false-positive target p (0 < p < 1):
// round(log2(1/p)), at least 1. For p = 0.01 this is 7.
uint32_t HashCountFor(double fp_rate);

// Returns the smallest shape whose per-term false-positive rate (1 - e^{-kn/m})^k is at most
// fp_rate for a document of `max_terms` distinct terms. max_terms == 0 gives width 0.
BloomShape ShapeFor(uint64_t max_terms, double fp_rate);

// The expected per-term false-positive rate of a document with n distinct terms.
double ExpectedFalsePositiveRate(BloomShape shape, uint64_t n);

// Calls f(position) for the k positions of a term in [0, width): position i is the i-th value
// of SplitMix64's sequence seeded with the term's hash (hash + (i + 1) * golden gamma, then its
// finalizer), mapped to the width by a multiply-shift (no modulo). Positions may repeat, as
// independent hash functions' do, which is what the Bloom arithmetic above assumes.
// Until format 7 this was double hashing, g_i = h1 + i * h2 mapped by the same multiply-shift:
// when h2 / 2^64 x width fell near a small fraction, the k positions fell on one to three rows
// (3% of terms at width 48, 1.8% at 87), and such a term's false candidates were the row
// fill itself: linux-paras' `slot` (8,042 documents) had 163,518 candidates, 41 rows read
// over 11 bands instead of ~75 (docs/design.md, "Signatures and rows").
template <typename F>
inline void ForEachPosition(uint64_t hash, uint64_t width, uint32_t k, F&& f) {
  constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ULL;
  uint64_t state = hash;
  for (uint32_t i = 0; i < k; ++i) {
    state += kGamma;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    f(static_cast<uint64_t>((static_cast<unsigned __int128>(z) * width) >> 64));
  }
}

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_BLOOM_H_
