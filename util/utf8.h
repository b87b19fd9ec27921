// Well-formed UTF-8, as Unicode defines it: shortest forms only, no surrogates (U+D800..DFFF),
// nothing above U+10FFFF. One definition for every place that validates bytes (decoding
// documents, JSON output, `check`).
#ifndef BITSIFT_UTIL_UTF8_H_
#define BITSIFT_UTIL_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace bitsift {

// The length (1 to 4) of the well-formed UTF-8 sequence that starts at p, or 0 if the bytes
// there start none. When the bytes end (at `end`) inside a sequence that is well-formed so far,
// returns 0 and sets *cut (if given) to true; otherwise *cut is set to false.
// Precondition: p < end.
inline size_t Utf8SequenceLength(const uint8_t* p, const uint8_t* end, bool* cut = nullptr) {
  if (cut != nullptr) *cut = false;
  const uint8_t c = *p;
  if (c < 0x80) return 1;
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // shorter forms
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // shorter forms
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (always a shorter form) or F5..FF
  }
  size_t i = 1;
  for (; i < len && p + i < end; ++i) {
    const uint8_t b = p[i];
    if (i == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) return 0;
  }
  if (i < len) {
    if (cut != nullptr) *cut = true;
    return 0;
  }
  return len;
}

// The offset of the first byte at or after `from` that is not ASCII (>= 0x80), or s.size().
// Eight bytes at a time: most text is ASCII.
inline size_t FindNonAscii(std::string_view s, size_t from) {
  const auto* b = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  size_t i = from;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, b + i, 8);
    if ((w & 0x8080808080808080ULL) != 0) break;
  }
  while (i < n && b[i] < 0x80) ++i;
  return i;
}

// Whether all of s is well-formed UTF-8.
inline bool IsUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    const size_t len = Utf8SequenceLength(p, end);
    if (len == 0) return false;
    p += len;
  }
  return true;
}

// `s` with every byte that does not begin a valid UTF-8 sequence replaced by U+FFFD.
inline std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    const size_t len = Utf8SequenceLength(p, end);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++p;
    } else {
      out.append(reinterpret_cast<const char*>(p), len);
      p += len;
    }
  }
  return out;
}

}  // namespace bitsift

#endif  // BITSIFT_UTIL_UTF8_H_
