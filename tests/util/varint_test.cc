#include "util/varint.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

using namespace bitsift;

namespace {

// The position after the n-th varint, read one byte at a time (SkipVarints' reference).
const uint8_t* SkipOneByOne(const uint8_t* p, const uint8_t* end, uint64_t n) {
  if (n == 0) return p;
  for (; p < end; ++p) {
    if (*p < 0x80 && --n == 0) return p + 1;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("SkipVarints lands after the n-th varint, or says the bytes ended", "[varint]") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes;
    std::vector<size_t> ends;  // ends[i]: the offset just past varint i
    const size_t count = rng() % 120;
    for (size_t i = 0; i < count; ++i) {
      // Values of 1 to 10 bytes, small ones most often (as gaps between document ids are).
      const int bits = static_cast<int>(rng() % 8 == 0 ? rng() % 64 : rng() % 14);
      PutVarint(bits == 0 ? 0 : rng() >> (64 - bits), bytes);
      ends.push_back(bytes.size());
    }
    // A damaged tail: continuation bytes with no end (the last varint never finishes).
    const bool truncated = rng() % 4 == 0;
    if (truncated) bytes.append(rng() % 20, '\x80');
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
    const uint8_t* end = p + bytes.size();
    for (uint64_t n = 0; n <= count + 2; ++n) {
      INFO("trial " << trial << ", " << count << " varints, skip " << n);
      const uint8_t* got = SkipVarints(p, end, n);
      REQUIRE(got == SkipOneByOne(p, end, n));
      if (n == 0)
        REQUIRE(got == p);
      else if (n <= count)
        REQUIRE(got == p + ends[n - 1]);
      else
        REQUIRE(got == nullptr);
      // Decoding after the skip reads the next value exactly.
      if (n < count) {
        const uint8_t* q = got;
        uint64_t v;
        REQUIRE(GetVarint(&q, end, &v));
        REQUIRE(q == p + ends[n]);
      }
    }
  }
}
