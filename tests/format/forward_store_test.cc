#include "format/forward_store.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>

using namespace bitsift::format;

namespace {
std::vector<uint32_t> RandomSortedIds(std::mt19937_64& rng, size_t n, uint32_t universe) {
  std::set<uint32_t> s;
  while (s.size() < n) s.insert(static_cast<uint32_t>(rng() % universe));
  return {s.begin(), s.end()};
}
const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
}  // namespace

TEST_CASE("forward records round-trip and answer containment exactly", "[forward]") {
  std::mt19937_64 rng(11);
  for (size_t n : {0, 1, 2, 127, 128, 129, 300, 1000, 5000}) {
    for (uint32_t universe : {static_cast<uint32_t>(n + 1), 10000u, 4000000000u}) {
      if (universe <= n) continue;
      std::vector<uint32_t> ids = RandomSortedIds(rng, n, universe);
      std::string rec;
      EncodeForwardRecord(ids, rec);
      std::vector<uint32_t> back;
      REQUIRE(DecodeForwardRecord(Bytes(rec), Bytes(rec) + rec.size(), &back));
      CHECK(back == ids);
      for (int q = 0; q < 200; ++q) {
        // Queries mixing present and absent ids.
        std::set<uint32_t> query;
        size_t terms = std::min<size_t>(1 + rng() % 4, universe);
        while (query.size() < terms) {
          if (!ids.empty() && rng() % 2) {
            query.insert(ids[rng() % ids.size()]);
          } else {
            query.insert(static_cast<uint32_t>(rng() % universe));
          }
        }
        std::vector<uint32_t> qv(query.begin(), query.end());
        bool expected = std::includes(ids.begin(), ids.end(), qv.begin(), qv.end());
        ContainsResult got =
            ForwardRecordContainsAll(Bytes(rec), Bytes(rec) + rec.size(), qv.data(), qv.size());
        CHECK(got == (expected ? ContainsResult::kYes : ContainsResult::kNo));
      }
    }
  }
}

TEST_CASE("damaged forward records are reported, never read past the end", "[forward]") {
  std::mt19937_64 rng(5);
  std::vector<uint32_t> ids = RandomSortedIds(rng, 700, 100000);
  std::string rec;
  EncodeForwardRecord(ids, rec);
  for (size_t cut = 0; cut < rec.size(); cut += 7) {
    // A copy of exactly `cut` bytes, so a sanitizer sees any over-read.
    std::vector<uint8_t> part(rec.begin(), rec.begin() + cut);
    std::vector<uint32_t> out;
    CHECK_FALSE(DecodeForwardRecord(part.data(), part.data() + part.size(), &out));
    uint32_t q = ids.back();
    ContainsResult r = ForwardRecordContainsAll(part.data(), part.data() + part.size(), &q, 1);
    CHECK(r != ContainsResult::kYes);
  }
}
