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
