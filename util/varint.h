// LEB128 variable-length unsigned integers (7 bits per byte, low bits first).
#ifndef BITSIFT_UTIL_VARINT_H_
#define BITSIFT_UTIL_VARINT_H_

#include <cstdint>
#include <string>

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

}  // namespace bitsift

#endif  // BITSIFT_UTIL_VARINT_H_
