// Utf8SequenceLength and IsUtf8 against two oracles: Unicode's definition written out (decode
// the code point, then refuse longer forms, surrogates and values past U+10FFFF) and ICU's own
// UTF-8 conversion.
#include "util/utf8.h"

#include <unicode/ustring.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bitsift {
namespace {

// The length of the well-formed sequence at the start of b (0: none), by the definition.
size_t DefinedLength(const std::vector<uint8_t>& b) {
  if (b.empty()) return 0;
  const uint8_t c = b[0];
  size_t len;
  uint32_t cp;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    len = 2, cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (b.size() < len) return 0;
  for (size_t i = 1; i < len; ++i) {
    if ((b[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b[i] & 0x3F);
  }
  const uint32_t shortest_from[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < shortest_from[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Whether ICU converts all of s from UTF-8 without finding an ill-formed sequence.
bool IcuAccepts(const std::string& s) {
  UChar out[16];
  int32_t length = 0;
  UErrorCode status = U_ZERO_ERROR;
  u_strFromUTF8(out, 16, &length, s.data(), static_cast<int32_t>(s.size()), &status);
  return U_SUCCESS(status);
}

size_t LengthOf(const std::vector<uint8_t>& b, bool* cut = nullptr) {
  return Utf8SequenceLength(b.data(), b.data() + b.size(), cut);
}

TEST_CASE("Utf8SequenceLength agrees with the definition and with ICU on every short sequence",
          "[utf8]") {
  // Every sequence of one and two bytes, every three-byte sequence that starts with a lead
  // byte of two or more: each the definition's length, and well-formed exactly when ICU
  // converts it whole.
  size_t well_formed = 0;
  for (uint32_t a = 0; a < 256; ++a) {
    std::vector<uint8_t> one{static_cast<uint8_t>(a)};
    REQUIRE(LengthOf(one) == DefinedLength(one));
    for (uint32_t b = 0; b < 256; ++b) {
      std::vector<uint8_t> two{static_cast<uint8_t>(a), static_cast<uint8_t>(b)};
      const size_t len = LengthOf(two);
      REQUIRE(len == DefinedLength(two));
      const std::string s(two.begin(), two.end());
      REQUIRE(IsUtf8(s) == IcuAccepts(s));
      if (a < 0xE0) continue;
      for (uint32_t c = 0; c < 256; ++c) {
        std::vector<uint8_t> three{static_cast<uint8_t>(a), static_cast<uint8_t>(b),
                                   static_cast<uint8_t>(c)};
        const size_t l3 = LengthOf(three);
        REQUIRE(l3 == DefinedLength(three));
        if (l3 == 3) ++well_formed;
      }
    }
  }
  // U+0800..U+FFFF without the 2,048 surrogates.
  CHECK(well_formed == 0x10000 - 0x800 - 0x800);
}

TEST_CASE("Utf8SequenceLength agrees with ICU on random four-byte sequences", "[utf8]") {
  std::mt19937 rng(20261127);
  std::uniform_int_distribution<int> byte(0, 255), tail(0x80, 0xBF), lead(0xF0, 0xF7);
  for (int n = 0; n < 200000; ++n) {
    // Mostly sequences that look like four-byte forms, so that the range checks are reached.
    std::vector<uint8_t> b{static_cast<uint8_t>(n % 4 == 0 ? byte(rng) : lead(rng))};
    for (int i = 0; i < 3; ++i)
      b.push_back(static_cast<uint8_t>(n % 8 == 1 ? byte(rng) : tail(rng)));
    const size_t len = LengthOf(b);
    REQUIRE(len == DefinedLength(b));
    if (len == 4) REQUIRE(IcuAccepts(std::string(b.begin(), b.end())));
  }
  CHECK(LengthOf({0xF0, 0x90, 0x80, 0x80}) == 4);  // U+10000
  CHECK(LengthOf({0xF4, 0x8F, 0xBF, 0xBF}) == 4);  // U+10FFFF
  CHECK(LengthOf({0xF4, 0x90, 0x80, 0x80}) == 0);  // U+110000
  CHECK(LengthOf({0xF0, 0x8F, 0xBF, 0xBF}) == 0);  // U+FFFF in four bytes
}

TEST_CASE("Utf8SequenceLength tells a sequence cut by the end from an ill-formed one", "[utf8]") {
  const std::vector<std::vector<uint8_t>> whole = {
      {0xC3, 0xA9}, {0xE4, 0xB8, 0xAD}, {0xED, 0x9F, 0xBF}, {0xF0, 0x9F, 0x98, 0x80}};
  for (const std::vector<uint8_t>& w : whole) {
    bool cut = true;
    REQUIRE(LengthOf(w, &cut) == w.size());
    CHECK_FALSE(cut);
    for (size_t n = 1; n < w.size(); ++n) {  // every proper prefix: cut, not ill-formed
      std::vector<uint8_t> prefix(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(n));
      REQUIRE(LengthOf(prefix, &cut) == 0);
      CHECK(cut);
    }
  }
  bool cut = true;
  CHECK(LengthOf({0xED, 0xA0}, &cut) == 0);  // a surrogate's start: ill-formed at once
  CHECK_FALSE(cut);
  CHECK(LengthOf({0xE4, 0x41}, &cut) == 0);  // a lead byte before ASCII
  CHECK_FALSE(cut);
  CHECK(LengthOf({0x80}, &cut) == 0);
  CHECK_FALSE(cut);
}

TEST_CASE("IsUtf8 over strings", "[utf8]") {
  CHECK(IsUtf8(""));
  CHECK(IsUtf8("plain ascii"));
  CHECK(IsUtf8("\xE4\xB8\xAD\xE6\x96\x87 and \xF0\x9F\x98\x80"));
  CHECK_FALSE(IsUtf8("caf\xE9"));       // Latin-1
  CHECK_FALSE(IsUtf8("\xC0\xAF"));      // an overlong '/'
  CHECK_FALSE(IsUtf8("\xED\xA0\x80"));  // U+D800
  CHECK_FALSE(IsUtf8("ok \xE4\xB8"));   // cut at the end
  CHECK_FALSE(IsUtf8(std::string("\x00\xFF", 2)));
}

}  // namespace
}  // namespace bitsift
