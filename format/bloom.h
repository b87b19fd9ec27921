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

// Calls f(position) for the k positions of a term in [0, width): Kirsch-Mitzenmacher double
// hashing g_i = h1 + i * h2 over 64 bits, mapped to the width by a multiply-shift (no modulo).
// Positions may repeat. Precondition: width > 0.
template <typename F>
inline void ForEachPosition(uint64_t hash, uint64_t width, uint32_t k, F&& f) {
  const uint64_t h1 = hash;
  // A second, well-mixed value derived from the same 64 bits (odd, so it never sticks at 0).
  const uint64_t h2 = ((hash ^ (hash >> 31)) * 0x9E3779B97F4A7C15ULL) | 1;
  uint64_t g = h1;
  for (uint32_t i = 0; i < k; ++i, g += h2) {
    f(static_cast<uint64_t>((static_cast<unsigned __int128>(g) * width) >> 64));
  }
}

}  // namespace bitsift::format

#endif  // BITSIFT_FORMAT_BLOOM_H_
