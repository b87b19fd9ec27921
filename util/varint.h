// LEB128 variable-length unsigned integers (7 bits per byte, low bits first).
#ifndef BITSIFT_UTIL_VARINT_H_
#define BITSIFT_UTIL_VARINT_H_

#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bitsift {

inline void PutVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Decodes one varint from [*p, end). Returns false (leaving *p unspecified) if the bytes end
// first or the value would exceed 64 bits: a damaged record can never read past `end`.
inline bool GetVarint(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t byte = *(*p)++;
    result |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if (byte < 0x80) {
      *v = result;
      return true;
    }
  }
  return false;
}

// Returns the position just past the n-th varint starting at p, or nullptr if [p, end) ends
// first. The values are not decoded: a varint ends at each byte below 0x80, so this counts
// such bytes, 16 at a time where SSE2 is there (a sparse row's term is found by skipping the
// lists before it in its group: up to ~16k varints, 10 us decoded one by one).
inline const uint8_t* SkipVarints(const uint8_t* p, const uint8_t* end, uint64_t n) {
  if (n == 0) return p;
#if defined(__SSE2__)
  while (end - p >= 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    auto stops = static_cast<uint32_t>(~_mm_movemask_epi8(bytes) & 0xFFFF);
    const auto count = static_cast<uint64_t>(__builtin_popcount(stops));
    if (count < n) {
      n -= count;
      p += 16;
      continue;
    }
    for (; n > 1; --n) stops &= stops - 1;  // the n-th stop is now the lowest
    return p + __builtin_ctz(stops) + 1;
  }
#endif
  for (; p < end; ++p) {
    if (*p < 0x80 && --n == 0) return p + 1;
  }
  return nullptr;
}

}  // namespace bitsift

#endif  // BITSIFT_UTIL_VARINT_H_
