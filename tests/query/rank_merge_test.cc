#include "query/rank_merge.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>
#include <vector>

namespace {

using bitsift::query::RankedPart;

// Documents of `segments` segments whose paths interleave as `run` says: rank r belongs to
// the segment that the runs give it; each segment's local ids follow its ranks (as a
// segment's ids follow its paths), global ids number the segments one after another.
struct Layout {
  std::vector<uint32_t> rank;                         // by global id
  std::vector<uint32_t> ids_by_rank;                  // the inverse
  std::vector<uint32_t> first;                        // a segment's first global id
  std::vector<std::vector<uint32_t>> locals_by_rank;  // a segment's local ids by rank order
};

Layout MakeLayout(std::mt19937& rng, size_t docs, size_t segments, size_t max_run) {
  std::vector<size_t> owner(docs);
  for (size_t r = 0; r < docs;) {
    const size_t s = rng() % segments, run = 1 + rng() % max_run;
    for (size_t k = 0; k < run && r < docs; ++k) owner[r++] = s;
  }
  Layout l;
  std::vector<uint32_t> count(segments, 0);
  for (size_t s : owner) ++count[s];
  l.first.assign(segments, 0);
  for (size_t s = 1; s < segments; ++s) l.first[s] = l.first[s - 1] + count[s - 1];
  l.rank.assign(docs, 0);
  l.ids_by_rank.assign(docs, 0);
  std::vector<uint32_t> next(segments, 0);
  for (size_t r = 0; r < docs; ++r) {
    const uint32_t id = l.first[owner[r]] + next[owner[r]]++;
    l.rank[id] = static_cast<uint32_t>(r);
    l.ids_by_rank[r] = id;
  }
  return l;
}

}  // namespace

TEST_CASE("merges by rank give the hits in rank order, whatever the interleaving and limit",
          "[merge][rank]") {
  std::mt19937 rng(20261125);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t docs = 1 + rng() % 3000, segments = 1 + rng() % 5;
    // Runs of 1 (hits alternate at random), of up to 30 (an update among a base), or long.
    const size_t max_run = std::vector<size_t>{1, 4, 30, 1000}[rng() % 4];
    const Layout l = MakeLayout(rng, docs, segments, max_run);
    // Hits: every document, one in a few, or one in many (the bitmap and the pairwise merge).
    const uint32_t keep_one_in = std::vector<uint32_t>{1, 3, 40, 500}[rng() % 4];
    std::vector<std::vector<uint32_t>> hits(segments);
    std::vector<uint32_t> expected;  // global ids in rank order
    for (size_t s = 0; s < segments; ++s) {
      const uint32_t end = s + 1 < segments ? l.first[s + 1] : static_cast<uint32_t>(docs);
      for (uint32_t id = l.first[s]; id < end; ++id) {
        if (rng() % keep_one_in == 0) hits[s].push_back(id - l.first[s]);
      }
    }
    for (uint32_t r = 0; r < docs; ++r) {
      const uint32_t id = l.ids_by_rank[r];
      const size_t s = static_cast<size_t>(std::upper_bound(l.first.begin(), l.first.end(), id) -
                                           l.first.begin() - 1);
      if (std::binary_search(hits[s].begin(), hits[s].end(), id - l.first[s]))
        expected.push_back(id);
    }
    std::vector<RankedPart> parts;
    for (size_t s = 0; s < segments; ++s)
      parts.push_back(RankedPart{hits[s].data(), hits[s].size(), l.first[s]});
    for (uint64_t room : {uint64_t{0}, uint64_t{1}, uint64_t{9}, uint64_t{UINT64_MAX}}) {
      INFO("trial " << trial << ": " << docs << " docs, " << segments << " segments, runs up to "
                    << max_run << ", one hit in " << keep_one_in << ", room " << room);
      const size_t n = static_cast<size_t>(std::min<uint64_t>(room, expected.size()));
      const std::vector<uint32_t> want(expected.begin(), expected.begin() + n);
      // What is in *out already stays; the merge appends.
      std::vector<uint32_t> out{7, 7};
      bitsift::query::MergeByRank(parts, l.rank.data(), l.ids_by_rank.data(), room, &out);
      REQUIRE(out.size() == 2 + n);
      REQUIRE(std::vector<uint32_t>(out.begin() + 2, out.end()) == want);
      // Each kernel on its own, whatever MergeByRank would choose.
      if (!expected.empty()) {
        const uint32_t lo = l.rank[expected.front()], span = l.rank[expected.back()] - lo + 1;
        out.clear();
        bitsift::query::MergeByRankBitmap(parts, l.rank.data(), l.ids_by_rank.data(), lo, span,
                                          room, &out);
        REQUIRE(out == want);
      }
      if (segments == 2) {
        out.clear();
        bitsift::query::MergeTwoByRank(parts[0], parts[1], l.rank.data(), room, &out);
        REQUIRE(out == want);
      }
    }
  }
}

TEST_CASE("SpineOrder merges segments' hits in path order: the spine by position, the rest by rank",
          "[merge][rank]") {
  std::mt19937 rng(20261126);
  for (int trial = 0; trial < 400; ++trial) {
    const size_t docs = 1 + rng() % 3000, segments = 1 + rng() % 6;
    const size_t max_run = std::vector<size_t>{1, 4, 30, 1000}[rng() % 4];
    // A base segment that holds most documents (an update's case), or segments alike.
    const Layout l = MakeLayout(rng, docs, segments, max_run);
    std::vector<uint32_t> counts(segments);
    for (size_t s = 0; s < segments; ++s) {
      const uint32_t end = s + 1 < segments ? l.first[s + 1] : static_cast<uint32_t>(docs);
      counts[s] = end - l.first[s];
    }
    bitsift::query::SpineOrder order(counts);
    REQUIRE(counts[order.spine()] == *std::max_element(counts.begin(), counts.end()));
    auto segment_of = [&](uint32_t id) {
      return static_cast<size_t>(std::upper_bound(l.first.begin(), l.first.end(), id) -
                                 l.first.begin() - 1);
    };
    uint32_t spine_before = 0;  // spine documents of lower rank
    for (uint32_t r = 0; r < docs; ++r) {
      const uint32_t id = l.ids_by_rank[r];
      const size_t s = segment_of(id);
      if (s == order.spine()) {
        ++spine_before;
      } else {
        order.Next(s, id - l.first[s], spine_before);
      }
    }
    const uint32_t keep_one_in = std::vector<uint32_t>{1, 3, 40, 500}[rng() % 4];
    std::vector<std::vector<uint32_t>> hits(segments);
    for (size_t s = 0; s < segments; ++s) {
      for (uint32_t local = 0; local < counts[s]; ++local) {
        if (rng() % keep_one_in == 0) hits[s].push_back(local);
      }
    }
    std::vector<uint32_t> expected;
    for (uint32_t r = 0; r < docs; ++r) {
      const uint32_t id = l.ids_by_rank[r];
      const size_t s = segment_of(id);
      if (std::binary_search(hits[s].begin(), hits[s].end(), id - l.first[s]))
        expected.push_back(id);
    }
    // The parts in any order, segments without hits left out or given empty.
    std::vector<bitsift::query::SpineOrder::Hits> parts;
    for (size_t s = 0; s < segments; ++s) {
      if (hits[s].empty() && rng() % 2 == 0) continue;
      parts.push_back({s, hits[s].data(), hits[s].size(), l.first[s]});
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    for (uint64_t room : {uint64_t{0}, uint64_t{1}, uint64_t{9}, uint64_t{UINT64_MAX}}) {
      INFO("trial " << trial << ": " << docs << " docs, " << segments << " segments, runs up to "
                    << max_run << ", one hit in " << keep_one_in << ", room " << room);
      const size_t n = static_cast<size_t>(std::min<uint64_t>(room, expected.size()));
      std::vector<uint32_t> out{7, 7};
      order.Merge(parts, room, &out);
      REQUIRE(out.size() == 2 + n);
      REQUIRE(std::vector<uint32_t>(out.begin() + 2, out.end()) ==
              std::vector<uint32_t>(expected.begin(), expected.begin() + n));
    }
  }
}
