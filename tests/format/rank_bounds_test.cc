#include "format/rank_bounds.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <set>

using namespace bitsift::format;

TEST_CASE("a length code's floor is the largest at most the length, within 6.25%", "[bounds]") {
  uint32_t last = 0;
  for (uint32_t length = 0; length < 2000000; length += 1 + length / 97) {
    const uint8_t code = LengthCode(length);
    REQUIRE(LengthFloor(code) <= length);
    if (code < 255) REQUIRE(LengthFloor(static_cast<uint8_t>(code + 1)) > length);
    if (length < 32) REQUIRE(LengthFloor(code) == length);
    if (length < 400000) REQUIRE(LengthFloor(code) * 1.0625 >= length);
    REQUIRE(code >= last);
    last = code;
  }
  for (int c = 1; c < 256; ++c)
    REQUIRE(LengthFloor(static_cast<uint8_t>(c)) > LengthFloor(static_cast<uint8_t>(c - 1)));
  REQUIRE(LengthCode(UINT32_MAX) == 255);
}

TEST_CASE("rank bounds hold every document's length floor and each block's largest tf",
          "[bounds]") {
  std::mt19937_64 rng(5);
  for (uint64_t docs : {0, 1, 63, 64, 65, 500}) {
    const uint32_t terms = 40;
    std::vector<std::vector<uint32_t>> ids(docs), tf(docs);
    std::vector<uint32_t> lengths(docs);
    std::vector<uint32_t> df(terms, 0);
    for (uint64_t d = 0; d < docs; ++d) {
      std::set<uint32_t> held;
      for (int i = 0, n = static_cast<int>(rng() % 20); i < n; ++i)
        held.insert(static_cast<uint32_t>(std::min(rng() % terms, rng() % terms)));
      ids[d].assign(held.begin(), held.end());
      for (uint32_t id : ids[d]) {
        ++df[id];
        tf[d].push_back(rng() % 7 == 0 ? static_cast<uint32_t>(rng() % 600) + 1 : 1);
      }
      if (rng() % 2 == 0) tf[d].clear();  // every frequency 1
      lengths[d] = static_cast<uint32_t>(rng() % 100000);
    }
    const std::vector<uint32_t> bounded = BoundedTerms(df, docs);
    for (uint32_t t = 0; t < terms; ++t) {
      const bool in = std::binary_search(bounded.begin(), bounded.end(), t);
      REQUIRE(in == (df[t] >= kBoundedTermMinDf && df[t] * kBoundedTermShare >= docs));
    }
    const double a0 = 1000 + static_cast<double>(rng() % 50000);
    RankBoundsWriter w(docs, bounded, a0);
    // In a shuffled order, as a merge's threads add them.
    std::vector<uint64_t> order(docs);
    for (uint64_t d = 0; d < docs; ++d) order[d] = d;
    std::shuffle(order.begin(), order.end(), rng);
    for (uint64_t d : order) w.Add(d, ids[d], tf[d], lengths[d]);
    const std::string bytes = w.Finish();
    RankBoundsView v;
    REQUIRE(v.Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), docs, terms) ==
            "");
    REQUIRE(v.bounded_count() == bounded.size());
    for (uint32_t t = 0; t < terms; ++t) {
      const auto at = std::lower_bound(bounded.begin(), bounded.end(), t);
      const int64_t want = at != bounded.end() && *at == t ? at - bounded.begin() : -1;
      REQUIRE(v.Slot(t) == want);
    }
    for (uint64_t d = 0; d < docs; ++d) {
      REQUIRE(v.length_code(static_cast<uint32_t>(d)) == LengthCode(lengths[d]));
      for (size_t s = 0; s < bounded.size(); ++s) {
        // The block maximum, brute force.
        uint32_t most = 0;
        const uint64_t first = d / kBoundBlockDocs * kBoundBlockDocs;
        for (uint64_t e = first; e < std::min(docs, first + kBoundBlockDocs); ++e) {
          for (size_t i = 0; i < ids[e].size(); ++i) {
            if (ids[e][i] == bounded[s])
              most = std::max(most, std::min<uint32_t>(tf[e].empty() ? 1 : tf[e][i], 255));
          }
        }
        REQUIRE(v.tf_max(s, static_cast<uint32_t>(d)) == most);
      }
    }
    // The champions, brute force: the kChampions best weights at a0 (ties to the lower
    // document), and the best of the others.
    REQUIRE(v.a0() == a0);
    for (size_t s = 0; s < bounded.size(); ++s) {
      std::vector<std::pair<double, uint32_t>> holders;  // (-weight, doc)
      for (uint64_t d = 0; d < docs; ++d) {
        for (size_t i = 0; i < ids[d].size(); ++i) {
          if (ids[d][i] != bounded[s]) continue;
          const uint32_t f = tf[d].empty() ? 1 : tf[d][i];
          holders.emplace_back(-ChampionWeight(f, lengths[d], a0), static_cast<uint32_t>(d));
        }
      }
      std::sort(holders.begin(), holders.end());
      std::vector<uint32_t> want;
      for (size_t i = 0; i < std::min<size_t>(kChampions, holders.size()); ++i)
        want.push_back(holders[i].second);
      std::sort(want.begin(), want.end());
      want.resize(kChampions, kNoChampion);
      for (uint64_t i = 0; i < kChampions; ++i) REQUIRE(v.champion(s, i) == want[i]);
      REQUIRE(v.rest(s) == (holders.size() > kChampions ? -holders[kChampions].first : 0));
    }
    // Damaged: a wrong size, document count or term order is refused.
    RankBoundsView bad;
    REQUIRE(bad.Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size() - 1, docs,
                      terms) != "");
    REQUIRE(bad.Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), docs + 1,
                      terms) != "");
    if (bounded.size() >= 2) {
      std::string swapped = bytes;
      std::swap_ranges(swapped.begin() + 8, swapped.begin() + 12, swapped.begin() + 12);
      REQUIRE(bad.Parse(reinterpret_cast<const uint8_t*>(swapped.data()), swapped.size(), docs,
                        terms) != "");
    }
  }
}
