#include "format/bloom.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>
#include <string>

using namespace bitsift::format;

TEST_CASE("shape meets the false-positive target with the fewest bits", "[bloom]") {
  CHECK(HashCountFor(0.01) == 7);
  CHECK(HashCountFor(0.5) == 1);
  CHECK(HashCountFor(0.001) == 10);
  for (double p : {0.1, 0.01, 0.001}) {
    for (uint64_t n : {1, 2, 10, 100, 1000, 123457}) {
      BloomShape s = ShapeFor(n, p);
      INFO("p=" << p << " n=" << n << " m=" << s.width << " k=" << s.k);
      CHECK(ExpectedFalsePositiveRate(s, n) <= p * (1 + 1e-9));
      BloomShape smaller{s.width - 1, s.k};
      if (s.width > s.k) CHECK(ExpectedFalsePositiveRate(smaller, n) > p);
    }
  }
  // About 9.6 bits per element at 1% (the textbook figure).
  CHECK(ShapeFor(100000, 0.01).width == Approx(959000).epsilon(0.01));
  CHECK(ShapeFor(0, 0.01).width == 0);
}

TEST_CASE("positions are in range, deterministic, and spread evenly", "[bloom]") {
  std::mt19937_64 rng(7);
  const uint64_t width = 1000;
  std::vector<uint64_t> hits(width, 0);
  for (int t = 0; t < 20000; ++t) {
    uint64_t h = HashTerm("term" + std::to_string(t));
    std::vector<uint64_t> a, b;
    ForEachPosition(h, width, 7, [&](uint64_t p) { a.push_back(p); });
    ForEachPosition(h, width, 7, [&](uint64_t p) { b.push_back(p); });
    CHECK(a == b);
    for (uint64_t p : a) {
      REQUIRE(p < width);
      hits[p]++;
    }
  }
  // 140,000 positions over 1000 rows: each row near 140 (chi-square-like bound).
  double mean = 140000.0 / width, worst = 0;
  for (uint64_t h : hits) worst = std::max(worst, std::abs(h - mean) / std::sqrt(mean));
  CHECK(worst < 5.5);
  CHECK(HashTerm("a") != HashTerm("b"));
  CHECK(HashTerm("") == HashTerm(""));
}

// The k positions behave as k independent hash functions: the number of distinct rows a term
// gets matches the balls-in-bins expectation, and hardly any term lands on three rows or fewer
// (double hashing, before format 7, put 3% of terms there at width 48: each such term's false
// candidates were the fill of one to three rows instead of fill^7).
TEST_CASE("a term's positions are as independent as the Bloom arithmetic assumes", "[bloom]") {
  for (const uint64_t width : {48, 87, 125, 432}) {
    const int terms = 50000;
    double distinct_sum = 0;
    int few = 0;
    for (int t = 0; t < terms; ++t) {
      std::vector<uint64_t> p;
      std::string term = "w";
      term += std::to_string(t);
      ForEachPosition(HashTerm(term), width, 7, [&](uint64_t r) { p.push_back(r); });
      std::sort(p.begin(), p.end());
      const auto d = static_cast<int>(std::unique(p.begin(), p.end()) - p.begin());
      distinct_sum += d;
      few += d <= 3;
    }
    const double expected = width * (1 - std::pow(1 - 1.0 / width, 7));
    INFO("width " << width);
    CHECK(distinct_sum / terms == Approx(expected).epsilon(0.01));
    CHECK(few < terms / 1000);
  }
}
