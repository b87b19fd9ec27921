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
      // Counts: no repeats, a few, or many (large frequencies included).
      ForwardCounts counts;
      counts.length = static_cast<uint32_t>(rng() % 100000);
      // Both forms of the counts: pairs for the few repeated ids, gamma codes when many repeat.
      const uint64_t mode = rng() % 4;
      if (mode != 0) {
        for (size_t i = 0; i < n; ++i) {
          const uint64_t r = rng() % 100;
          if (mode == 1) {
            counts.tf.push_back(r < 60 ? 1 : r < 90 ? 2 + rng() % 5 : 1 + rng() % 1000000);
          } else if (mode == 2) {
            counts.tf.push_back(r < 98 ? 1 : 2 + rng() % 3);
          } else {
            counts.tf.push_back(r < 10 ? 1 : r < 99 ? 2 + rng() % 3 : UINT32_MAX - rng() % 3);
          }
        }
      }
      std::string rec;
      EncodeForwardRecord(ids, counts, rec);
      std::vector<uint32_t> back;
      REQUIRE(DecodeForwardRecord(Bytes(rec), Bytes(rec) + rec.size(), &back));
      CHECK(back == ids);
      ForwardCounts got_counts;
      std::string problem;
      StrictForward strict{universe, &problem};
      REQUIRE(
          DecodeForwardRecord(Bytes(rec), Bytes(rec) + rec.size(), &back, &strict, &got_counts));
      CHECK(got_counts.length == counts.length);
      for (size_t i = 0; i < n; ++i) REQUIRE(got_counts.TfAt(i) == counts.TfAt(i));
      // The counts of a few ids, present and absent, read without decoding the whole record.
      for (int q = 0; q < 20; ++q) {
        std::set<uint32_t> want;
        const size_t wanted = rng() % 6;
        while (want.size() < std::min<size_t>(wanted, universe)) {
          want.insert(!ids.empty() && rng() % 2 ? ids[rng() % ids.size()]
                                                : static_cast<uint32_t>(rng() % universe));
        }
        const std::vector<uint32_t> wv(want.begin(), want.end());
        std::vector<uint32_t> tf(wv.size(), 99);
        uint32_t length = 0;
        REQUIRE(ForwardRecordCounts(Bytes(rec), Bytes(rec) + rec.size(), wv.data(), wv.size(),
                                    tf.data(), &length));
        CHECK(length == counts.length);
        for (size_t i = 0; i < wv.size(); ++i) {
          auto at = std::lower_bound(ids.begin(), ids.end(), wv[i]);
          const uint32_t expected = at != ids.end() && *at == wv[i]
                                        ? counts.TfAt(static_cast<size_t>(at - ids.begin()))
                                        : 0;
          REQUIRE(tf[i] == expected);
        }
      }
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
  ForwardCounts counts;
  counts.length = 5000;
  for (size_t i = 0; i < ids.size(); ++i) counts.tf.push_back(1 + i % 3);
  std::string rec;
  EncodeForwardRecord(ids, counts, rec);
  // Where the ids end: a record without counts ends with two one-byte varints (0, 0).
  std::string plain;
  EncodeForwardRecord(ids, ForwardCounts{}, plain);
  const size_t ids_end = plain.size() - 2;
  for (size_t cut = 0; cut < rec.size(); cut += 7) {
    // A copy of exactly `cut` bytes, so a sanitizer sees any over-read.
    std::vector<uint8_t> part(rec.begin(), rec.begin() + cut);
    std::vector<uint32_t> out;
    ForwardCounts got;
    CHECK_FALSE(DecodeForwardRecord(part.data(), part.data() + part.size(), &out, nullptr, &got));
    uint32_t q = ids.back();
    ContainsResult r = ForwardRecordContainsAll(part.data(), part.data() + part.size(), &q, 1);
    // Reading a few counts stops at what it needs: a cut past that goes unseen, but what it
    // reports is never wrong.
    uint32_t tf = 0, length = 0;
    if (ForwardRecordCounts(part.data(), part.data() + part.size(), &ids[0], 1, &tf, &length)) {
      CHECK(tf == counts.TfAt(0));
      CHECK(length == counts.length);
    }
    // Containment reads the ids alone: a record cut in its counts still contains them.
    if (cut < ids_end) CHECK(r != ContainsResult::kYes);
  }
}

namespace {

// Positions for a random subset of a record's ids: a random token sequence over the ids
// (each id's tf its occurrences), of which some ids keep their lists; in half the records, some
// positions start kana/ideographic runs.
ForwardPositions RandomPositions(std::mt19937_64& rng, size_t n, ForwardCounts* counts) {
  ForwardPositions p;
  if (n == 0) return p;
  std::vector<uint32_t> sequence;
  const size_t length = n + rng() % (3 * n + 1);
  for (size_t i = 0; i < length; ++i) {
    sequence.push_back(i < n ? static_cast<uint32_t>(i) : static_cast<uint32_t>(rng() % n));
  }
  std::shuffle(sequence.begin(), sequence.end(), rng);
  if (rng() % 4 == 0) {  // a long document: large gaps and Rice parameters
    sequence.resize(sequence.size() + 200000, static_cast<uint32_t>(rng() % n));
  }
  counts->tf.assign(n, 0);
  std::vector<std::vector<uint32_t>> lists(n);
  for (uint32_t at = 0; at < sequence.size(); ++at) {
    ++counts->tf[sequence[at]];
    lists[sequence[at]].push_back(at);
  }
  p.count = static_cast<uint32_t>(sequence.size());
  p.begin.push_back(0);
  for (uint32_t k = 0; k < n; ++k) {
    if (rng() % 3 == 0) continue;
    p.which.push_back(k);
    p.at.insert(p.at.end(), lists[k].begin(), lists[k].end());
    p.begin.push_back(static_cast<uint32_t>(p.at.size()));
  }
  if (rng() % 2 == 0) {
    const uint64_t every = 1 + rng() % 8;
    for (uint32_t at = 0; at < p.count; ++at) {
      if (rng() % every == 0) p.run_starts.push_back(at);
    }
  }
  if (p.which.empty()) p.clear();
  return p;
}

bool SamePositions(const ForwardPositions& a, const ForwardPositions& b) {
  return a.count == b.count && a.which == b.which && a.begin == b.begin && a.at == b.at &&
         a.run_starts == b.run_starts;
}

}  // namespace

TEST_CASE("forward records round-trip their positions, sorted with their ids", "[forward]") {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 300; ++round) {
    const size_t n = rng() % 3 == 0 ? rng() % 4 : rng() % 400;
    std::vector<uint32_t> ids = RandomSortedIds(rng, n, 1000000);
    ForwardCounts counts;
    counts.length = static_cast<uint32_t>(rng() % 1000);
    const ForwardPositions positions = RandomPositions(rng, n, &counts);
    std::string rec;
    EncodeForwardRecord(ids, counts, rec, &positions);
    std::vector<uint32_t> back;
    ForwardCounts got_counts;
    ForwardPositions got;
    std::string problem;
    StrictForward strict{1000000, &problem};
    INFO("round " << round << ": " << problem);
    REQUIRE(DecodeForwardRecord(Bytes(rec), Bytes(rec) + rec.size(), &back, &strict, &got_counts,
                                &got));
    CHECK(back == ids);
    CHECK(SamePositions(got, positions));
    ForwardPositions alone;
    REQUIRE(ForwardRecordPositions(Bytes(rec), Bytes(rec) + rec.size(), &alone));
    CHECK(SamePositions(alone, positions));
    // The lists of a few ids, found without decoding the rest: held with positions, held
    // without, or absent.
    for (int q = 0; q < 10 && n > 0; ++q) {
      std::set<uint32_t> want;
      const size_t wanted = 1 + rng() % 3;
      while (want.size() < wanted) {
        want.insert(rng() % 8 != 0 ? ids[rng() % n] : static_cast<uint32_t>(rng() % 1000000));
      }
      const std::vector<uint32_t> wv(want.begin(), want.end());
      PhraseLists expected = PhraseLists::kFound;
      std::vector<uint32_t> expected_at, expected_begin = {0};
      for (uint32_t id : wv) {
        const auto it = std::lower_bound(ids.begin(), ids.end(), id);
        if (it == ids.end() || *it != id) {
          expected = PhraseLists::kAbsent;
          break;
        }
        const auto index = static_cast<uint32_t>(it - ids.begin());
        const auto k = std::lower_bound(positions.which.begin(), positions.which.end(), index);
        if (k == positions.which.end() || *k != index) {
          expected = PhraseLists::kUnpositioned;
          continue;
        }
        size_t size = 0;
        const uint32_t* list =
            positions.List(static_cast<size_t>(k - positions.which.begin()), &size);
        expected_at.insert(expected_at.end(), list, list + size);
        expected_begin.push_back(static_cast<uint32_t>(expected_at.size()));
      }
      std::vector<uint32_t> at, begin;
      const PhraseLists found = ForwardRecordLists(Bytes(rec), Bytes(rec) + rec.size(), wv.data(),
                                                   wv.size(), &at, &begin);
      REQUIRE(found == expected);
      if (found == PhraseLists::kFound) {
        CHECK(at == expected_at);
        CHECK(begin == expected_begin);
      }
      // With the run starts after the lists (a record without any: kUnpositioned).
      const PhraseLists with_runs = ForwardRecordLists(Bytes(rec), Bytes(rec) + rec.size(),
                                                       wv.data(), wv.size(), &at, &begin, true);
      if (found != PhraseLists::kFound || !positions.run_starts.empty()) {
        REQUIRE(with_runs == found);
      } else {
        REQUIRE(with_runs == PhraseLists::kUnpositioned);
      }
      if (with_runs == PhraseLists::kFound) {
        expected_at.insert(expected_at.end(), positions.run_starts.begin(),
                           positions.run_starts.end());
        expected_begin.push_back(static_cast<uint32_t>(expected_at.size()));
        CHECK(at == expected_at);
        CHECK(begin == expected_begin);
      }
    }
    // The ids shuffled and sorted again: every id keeps its frequency and its positions.
    if (n > 1 && !positions.empty()) {
      std::vector<uint32_t> order(n);
      for (uint32_t i = 0; i < n; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<uint32_t> shuffled(n), rank(n);
      ForwardCounts shuffled_counts = counts;
      for (uint32_t r = 0; r < n; ++r) {
        shuffled[r] = ids[order[r]];
        shuffled_counts.tf[r] = counts.tf[order[r]];
        rank[order[r]] = r;
      }
      ForwardPositions moved;
      moved.count = positions.count;
      moved.run_starts = positions.run_starts;
      moved.begin.push_back(0);
      for (size_t k = 0; k < positions.which.size(); ++k) {  // lists in any order
        size_t size = 0;
        const uint32_t* list = positions.List(k, &size);
        moved.which.push_back(rank[positions.which[k]]);
        moved.at.insert(moved.at.end(), list, list + size);
        moved.begin.push_back(static_cast<uint32_t>(moved.at.size()));
      }
      SortRecord(&shuffled, &shuffled_counts, &moved);
      CHECK(shuffled == ids);
      CHECK(shuffled_counts.tf == counts.tf);
      CHECK(SamePositions(moved, positions));
    }
  }
}

TEST_CASE("damaged positions are refused", "[forward]") {
  std::mt19937_64 rng(29);
  std::vector<uint32_t> ids = RandomSortedIds(rng, 200, 100000);
  ForwardCounts counts;
  ForwardPositions positions;
  while (positions.empty()) positions = RandomPositions(rng, ids.size(), &counts);
  std::string rec;
  EncodeForwardRecord(ids, counts, rec, &positions);
  std::string plain;
  EncodeForwardRecord(ids, counts, plain);
  REQUIRE(rec.size() > plain.size());
  std::string problem;
  const StrictForward strict{100000, &problem};
  std::vector<uint32_t> out;
  ForwardPositions got;
  // Cut short anywhere in the positions: refused, never read past the end.
  for (size_t cut = plain.size() + 1; cut < rec.size(); ++cut) {
    std::vector<uint8_t> part(rec.begin(), rec.begin() + cut);
    CHECK_FALSE(ForwardRecordPositions(part.data(), part.data() + part.size(), &got));
    CHECK_FALSE(
        DecodeForwardRecord(part.data(), part.data() + part.size(), &out, &strict, nullptr, &got));
  }
  // A byte more than they take.
  std::string longer = rec + '\x01';
  CHECK_FALSE(ForwardRecordPositions(Bytes(longer), Bytes(longer) + longer.size(), &got));
  // The lists of the last positioned id, from every cut: damaged or found, never read past
  // the end.
  const uint32_t last = ids[positions.which.back()];
  for (size_t cut = 0; cut < rec.size(); ++cut) {
    std::vector<uint8_t> part(rec.begin(), rec.begin() + cut);
    std::vector<uint32_t> at, begin;
    const PhraseLists found =
        ForwardRecordLists(part.data(), part.data() + part.size(), &last, 1, &at, &begin);
    CHECK(found != PhraseLists::kFound);
  }
  // A list longer than its id's frequency (the strict check knows the frequencies).
  ForwardCounts fewer = counts;
  fewer.tf[positions.which[0]] = 1;
  if (positions.begin[1] > 1) {
    std::string bad;
    EncodeForwardRecord(ids, fewer, bad, &positions);
    CHECK_FALSE(
        DecodeForwardRecord(Bytes(bad), Bytes(bad) + bad.size(), &out, &strict, nullptr, &got));
    CHECK(problem == "bad positions");
  }
  // Every single bit flipped in the positions: refused or decoded within bounds.
  for (size_t i = plain.size(); i < rec.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = rec;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      if (!ForwardRecordPositions(Bytes(flipped), Bytes(flipped) + flipped.size(), &got)) continue;
      for (size_t k = 0; k < got.which.size(); ++k) {
        REQUIRE(got.which[k] < ids.size());
        size_t size = 0;
        const uint32_t* list = got.List(k, &size);
        for (size_t j = 0; j < size; ++j) REQUIRE(list[j] < got.count);
      }
    }
  }
}

TEST_CASE("a list that claims more positions than its bytes hold is refused before room is made",
          "[forward]") {
  // A record of ids that occur once (so positions may follow its counts), then positions
  // written by hand: 2^32 - 1 tokens, one list (of the first id) claiming 2^32 - 2 positions,
  // and a few bytes of body.
  const std::vector<uint32_t> ids = {3, 9, 27};
  ForwardCounts counts;
  counts.length = 3;
  counts.tf = {1, 1, 1};
  std::string rec;
  EncodeForwardRecord(ids, counts, rec);
  std::vector<bool> bits;
  auto gamma = [&](uint64_t v) {  // Elias gamma, least significant bit first as the store
    const int z = 63 - __builtin_clzll(v);
    for (int i = 0; i < z; ++i) bits.push_back(false);
    bits.push_back(true);
    for (int i = 0; i < z; ++i) bits.push_back((v >> i) & 1);
  };
  const uint64_t count = UINT32_MAX, c = uint64_t{UINT32_MAX} - 1;
  gamma(count);
  gamma(2);               // one list (2 lists + no run starts)
  gamma(1 + 2 * 31 + 1);  // its header's bits: gamma(1), gamma(c)
  gamma(1);               // no skip entries
  gamma(1);               // index gap: the first id
  gamma(c);
  for (int i = 0; i < 64; ++i) bits.push_back(i % 3 == 0);  // a few bits of body
  std::string positions((bits.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bits.size(); ++i)
    if (bits[i]) positions[i / 8] = static_cast<char>(positions[i / 8] | (1 << (i % 8)));
  const std::string damaged = rec + positions;
  ForwardPositions got;
  CHECK_FALSE(ForwardRecordPositions(Bytes(damaged), Bytes(damaged) + damaged.size(), &got));
  std::vector<uint32_t> at, begin;
  CHECK(ForwardRecordLists(Bytes(damaged), Bytes(damaged) + damaged.size(), &ids[0], 1, &at,
                           &begin) == PhraseLists::kCorrupt);
  CHECK(at.capacity() < 1024);
}

TEST_CASE("the counts read by block agree with the whole decode on any record it accepts",
          "[forward]") {
  // A record of 700 ids with many repeats (gamma codes and their block table), with and without
  // positions; every single-bit change of it is either refused by the strict decode or read
  // alike by the ranked reader (which seeks through the table) and the whole decode.
  std::mt19937_64 rng(41);
  for (bool with_positions : {false, true}) {
    std::vector<uint32_t> ids = RandomSortedIds(rng, 700, 100000);
    ForwardCounts counts;
    counts.length = 9000;
    ForwardPositions positions;
    if (with_positions) {
      positions = RandomPositions(rng, ids.size(), &counts);
    } else {
      for (size_t i = 0; i < ids.size(); ++i) counts.tf.push_back(1 + (i * 7) % 5);
    }
    std::string rec;
    EncodeForwardRecord(ids, counts, rec, &positions);
    size_t accepted = 0, refused = 0;
    for (size_t bit = 0; bit < rec.size() * 8; ++bit) {
      std::vector<uint8_t> flipped(rec.begin(), rec.end());
      flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      const uint8_t* b = flipped.data();
      const uint8_t* e = b + flipped.size();
      std::vector<uint32_t> back;
      ForwardCounts whole;
      std::string problem;
      StrictForward strict{100000, &problem};
      if (!DecodeForwardRecord(b, e, &back, &strict, &whole)) {
        ++refused;
        continue;
      }
      ++accepted;
      // Every 37th id and the first of each block, read by the ranked reader (through the
      // table, as the previous id wanted is in an earlier block).
      std::vector<uint32_t> want;
      for (size_t i = 0; i < back.size(); ++i) {
        if (i % 37 == 0 || i % kForwardBlock == 0) want.push_back(back[i]);
      }
      std::vector<uint32_t> tf(want.size(), 0);
      uint32_t length = 0;
      REQUIRE(ForwardRecordCounts(b, e, want.data(), want.size(), tf.data(), &length));
      CHECK(length == whole.length);
      for (size_t k = 0, i = 0; k < want.size(); ++k) {
        while (back[i] != want[k]) ++i;
        REQUIRE(tf[k] == whole.TfAt(i));
      }
    }
    CHECK(refused > 0);
    CHECK(accepted > 0);
  }
}

namespace {

// The distinct pairs of pair-term hashes at consecutive positions of `p` (whose pair_hash
// names them), as the pair filter should hold them.
std::set<std::pair<uint64_t, uint64_t>> AdjacentPairs(const ForwardPositions& p) {
  std::vector<uint64_t> at(p.count, 0);
  for (size_t k = 0; k < p.which.size(); ++k) {
    size_t n = 0;
    const uint32_t* list = p.List(k, &n);
    for (size_t i = 0; i < n; ++i) at[list[i]] = p.pair_hash[k];
  }
  std::set<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i + 1 < at.size(); ++i) {
    if (at[i] != 0 && at[i + 1] != 0) out.insert({at[i], at[i + 1]});
  }
  return out;
}

}  // namespace

TEST_CASE("a record's pair filter holds every pair of pair terms at consecutive positions",
          "[forward][pairs]") {
  std::mt19937_64 rng(41);
  uint64_t absent_probes = 0, absent_maybe = 0, with_pairs = 0, with_unlisted = 0, plain = 0;
  for (int round = 0; round < 400; ++round) {
    const size_t n = 2 + rng() % 300;
    std::vector<uint32_t> ids = RandomSortedIds(rng, n, 100000);
    ForwardCounts counts;
    counts.length = static_cast<uint32_t>(rng() % 1000);
    ForwardPositions positions = RandomPositions(rng, n, &counts);
    if (positions.empty()) continue;
    // Pair terms, with a hash by term id: two lists of three, and one id of four without a
    // list (a term that stands at positions without them here); none in one round of ten.
    const bool none = rng() % 10 == 0;
    std::vector<uint64_t> hash_of(100000, 0);
    for (size_t k = 0, j = 0; k < n; ++k) {
      const bool listed = j < positions.which.size() && positions.which[j] == k;
      if (!none && (listed ? rng() % 3 != 0 : rng() % 4 == 0)) hash_of[ids[k]] = rng() | 1;
      if (listed) {
        positions.pair_hash.push_back(hash_of[ids[k]]);
        ++j;
      } else if (hash_of[ids[k]] != 0) {
        positions.unlisted.push_back(LoneFingerprint(hash_of[ids[k]]));
      }
    }
    std::sort(positions.unlisted.begin(), positions.unlisted.end());
    positions.unlisted.erase(std::unique(positions.unlisted.begin(), positions.unlisted.end()),
                             positions.unlisted.end());
    std::string rec;
    EncodeForwardRecord(ids, counts, rec, &positions);
    const uint8_t* begin = Bytes(rec);
    const uint8_t* end = begin + rec.size();
    const std::set<std::pair<uint64_t, uint64_t>> pairs = AdjacentPairs(positions);
    std::vector<uint64_t> listed_terms;
    for (uint64_t h : positions.pair_hash) {
      if (h != 0) listed_terms.push_back(h);
    }
    INFO("round " << round << ", " << pairs.size() << " pairs, " << positions.unlisted.size()
                  << " unlisted");
    const std::string filter = PairFilter(positions);
    if (listed_terms.empty() && positions.unlisted.empty()) {
      // No pair term: no filter, the same record as without hashes, nothing refuted.
      ++plain;
      CHECK(filter.empty());
      ForwardPositions without = positions;
      without.pair_hash.clear();
      std::string again;
      EncodeForwardRecord(ids, counts, again, &without);
      CHECK(again == rec);
      const uint64_t key = rng();
      CHECK(ForwardRecordMayHavePairs(begin, end, &key, 1, nullptr, 0));
      continue;
    }
    REQUIRE(!filter.empty());
    // Where the filter ends in the record: after two varints (the id count, the id bytes).
    size_t filter_end = 0;
    for (int v = 0; v < 2; ++v) {
      while (static_cast<uint8_t>(rec[filter_end]) & 0x80) ++filter_end;
      ++filter_end;
    }
    filter_end += filter.size();
    REQUIRE(filter_end < rec.size());
    with_pairs += !pairs.empty();
    with_unlisted += !positions.unlisted.empty();
    // Every pair is held, alone and all together.
    std::vector<uint64_t> keys;
    for (auto [a, b] : pairs) {
      keys.push_back(PairKey(a, b));
      REQUIRE(ForwardRecordMayHavePairs(begin, end, &keys.back(), 1, nullptr, 0));
      size_t heads_holding = 0;
      for (size_t k = 0; k < rec.size(); ++k)
        heads_holding += ForwardRecordMayHavePairs(begin, begin + k, &keys.back(), 1, nullptr, 0);
      REQUIRE(heads_holding == rec.size());
    }
    REQUIRE(ForwardRecordMayHavePairs(begin, end, keys.data(), keys.size(), nullptr, 0));
    // Two listed pair terms that never stand together: refuted but for the filter's false
    // positives (kPairFilterBits a key: about 28%), also beside a held pair; never when a term
    // of the phrase is one the record holds without its list.
    for (int q = 0; q < 20 && listed_terms.size() > 1; ++q) {
      const uint64_t a = listed_terms[rng() % listed_terms.size()];
      const uint64_t b = listed_terms[rng() % listed_terms.size()];
      if (pairs.count({a, b})) continue;
      const uint64_t key = PairKey(a, b);
      const bool maybe = ForwardRecordMayHavePairs(begin, end, &key, 1, nullptr, 0);
      ++absent_probes;
      absent_maybe += maybe;
      // The record's first bytes alone (a long record's head, read by copy) answer as the
      // whole record once they hold the filter, before its ids end; cut shorter, they refute
      // nothing.
      if (!maybe) {
        size_t k = 0;
        while (ForwardRecordMayHavePairs(begin, begin + k, &key, 1, nullptr, 0)) ++k;
        CHECK(k == filter_end);
        size_t refuting = 0;
        for (size_t j = k; j <= rec.size(); ++j)
          refuting += !ForwardRecordMayHavePairs(begin, begin + j, &key, 1, nullptr, 0);
        CHECK(refuting == rec.size() + 1 - k);
      }
      if (!keys.empty()) {
        const uint64_t two[2] = {keys[0], key};
        CHECK(ForwardRecordMayHavePairs(begin, end, two, 2, nullptr, 0) == maybe);
      }
      const uint16_t listed_lone[2] = {LoneFingerprint(a), LoneFingerprint(b)};
      // (unless a fingerprint is one of the unlisted terms': 16 bits, so it can be)
      const bool alike =
          std::count(positions.unlisted.begin(), positions.unlisted.end(), listed_lone[0]) +
              std::count(positions.unlisted.begin(), positions.unlisted.end(), listed_lone[1]) >
          0;
      CHECK(ForwardRecordMayHavePairs(begin, end, &key, 1, listed_lone, 2) == (maybe || alike));
      if (!positions.unlisted.empty()) {
        const uint16_t lone[2] = {LoneFingerprint(a), positions.unlisted[0]};
        CHECK(ForwardRecordMayHavePairs(begin, end, &key, 1, lone, 2));
      }
    }
    // The strict decode recomputes the filter from the positions and the pair terms' hashes.
    std::vector<uint32_t> back;
    ForwardCounts got_counts;
    ForwardPositions got;
    std::string problem;
    StrictForward strict{100000, &problem, &hash_of};
    REQUIRE(DecodeForwardRecord(begin, end, &back, &strict, &got_counts, &got));
    CHECK(got.pair_hash == positions.pair_hash);
    CHECK(got.unlisted == positions.unlisted);
    std::string again;
    EncodeForwardRecord(back, got_counts, again, &got);
    CHECK(again == rec);
    // Without the pair terms' hashes, the filter is not the one its positions make.
    std::vector<uint64_t> no_hashes(100000, 0);
    const StrictForward without{100000, &problem, &no_hashes};
    CHECK_FALSE(DecodeForwardRecord(begin, end, &back, &without, &got_counts, &got));
    CHECK(problem.find("pair filter") != std::string::npos);
    // Any bit of the filter changed is found. It follows n and the id bytes (with the filter's
    // flag), each a varint.
    size_t at = 0;
    for (int v = 0; v < 2; ++v) {
      while (static_cast<uint8_t>(rec[at]) & 0x80) ++at;
      ++at;
    }
    REQUIRE(rec.compare(at, filter.size(), filter) == 0);
    std::string damaged = rec;
    const size_t bit = rng() % (filter.size() * 8);
    damaged[at + bit / 8] = static_cast<char>(damaged[at + bit / 8] ^ (1 << (bit % 8)));
    CHECK_FALSE(DecodeForwardRecord(Bytes(damaged), Bytes(damaged) + damaged.size(), &back, &strict,
                                    &got_counts, &got));
  }
  INFO(absent_maybe << " of " << absent_probes << " absent pairs kept");
  CHECK(with_pairs > 100);
  CHECK(with_unlisted > 50);
  CHECK(plain > 10);
  CHECK(absent_probes > 1000);
  // Some absent pairs hash alike with a held one (a shared bit): the reader of the lists
  // decides those.
  CHECK(absent_maybe > 0);
  CHECK(absent_maybe * 100 < absent_probes * 40);
}
