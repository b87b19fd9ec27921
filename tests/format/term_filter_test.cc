#include "format/term_filter.h"

#include <catch2/catch.hpp>
#include <random>
#include <vector>

using namespace bitsift::format;

namespace {

bool MayContain(const std::vector<uint32_t>& words, uint64_t h) {
  const uint64_t blocks = words.size() / kTermFilterBlockWords;
  return TermFilterMayContain(&words[TermFilterBlock(h, blocks) * kTermFilterBlockWords], h);
}

}  // namespace

TEST_CASE("the term filter never drops a term and passes few others", "[term_filter]") {
  std::mt19937_64 rng(99);
  for (const uint64_t n : {0, 1, 7, 1000, 100000}) {
    TermFilterWriter w(n);
    std::vector<uint64_t> in(n);
    for (uint64_t& h : in) {
      h = rng();
      w.Add(h);
    }
    REQUIRE(w.words().size() == TermFilterBlocks(n) * kTermFilterBlockWords);
    for (uint64_t h : in) REQUIRE(MayContain(w.words(), h));
    uint64_t passed = 0;
    const uint64_t probes = 200000;
    for (uint64_t i = 0; i < probes; ++i) passed += MayContain(w.words(), rng());
    INFO(n << " terms: " << passed << " of " << probes << " absent hashes passed");
    if (n == 0) CHECK(passed == 0);
    // ~10 bits a term in 256-bit blocks of 8 bits a term: ~1% at full load.
    if (n >= 1000) CHECK(passed < probes * 2 / 100);
  }
  // Sized for more terms than it holds (a merge's upper bound): sparser, still exact.
  TermFilterWriter loose(5000);
  loose.Add(42);
  CHECK(MayContain(loose.words(), 42));
}
