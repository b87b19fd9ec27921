#include "indexer/bands.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>

using namespace bitsift::indexer;

namespace {
uint64_t MatrixBits(const std::vector<BandPlan>& bands) {
  uint64_t bits = 0;
  for (const auto& b : bands) bits += b.shape.width * ((b.count + 63) / 64 * 64);  // whole words
  return bits;
}
}  // namespace

TEST_CASE("bands cover every document and meet the target for their largest", "[bands]") {
  std::mt19937_64 rng(3);
  for (size_t n : {1, 5, 511, 512, 513, 5000, 200000}) {
    std::vector<uint64_t> counts(n);
    std::lognormal_distribution<double> len(4, 1.5);
    for (auto& c : counts) c = 1 + static_cast<uint64_t>(len(rng));
    std::sort(counts.begin(), counts.end());
    std::vector<BandPlan> bands = PlanBands(counts, 0.01);
    REQUIRE(!bands.empty());
    uint64_t next = 0;
    for (const BandPlan& b : bands) {
      CHECK(b.first == next);
      CHECK(b.count > 0);
      next += b.count;
      CHECK(b.max_terms == counts[b.first + b.count - 1]);
      CHECK(bitsift::format::ExpectedFalsePositiveRate(b.shape, b.max_terms) <= 0.01 * (1 + 1e-9));
    }
    CHECK(next == n);
    // Never worse than one band for everything (plus the per-band allowance).
    std::vector<BandPlan> one = {
        {0, n, counts.back(), bitsift::format::ShapeFor(counts.back(), 0.01)}};
    CHECK(MatrixBits(bands) <= MatrixBits(one) + bands.size() * 64 * 1024 * 8);
    if (n == 200000) {
      // A skewed collection gains a lot from several bands.
      CHECK(bands.size() > 3);
      CHECK(MatrixBits(bands) * 3 < MatrixBits(one));
    }
  }
  CHECK(PlanBands({}, 0.01).empty());
}

TEST_CASE("within a band, columns follow document ids", "[bands]") {
  // DOC_BANDS derives a document's column from its band and the band's documents below it
  // (format/doc_bands.h): that holds only if each band's BAND_DOCS ascend.
  std::mt19937_64 rng(3);
  std::vector<uint64_t> counts(20000);
  for (uint64_t& c : counts) c = rng() % 7 == 0 ? 0 : 1 + rng() % (rng() % 4 == 0 ? 3000 : 40);
  counts[5] = bitsift::format::kMaxSignatureTerms + 1;  // a huge document: the last band
  counts[17] = bitsift::format::kMaxSignatureTerms + 2;
  const RowPlan plan = PlanRows(counts, 0.01, 0);
  REQUIRE(plan.bands.size() > 2);
  uint64_t columns = 0;
  for (const bitsift::format::BandRecord& band : plan.bands) {
    const auto begin = plan.band_docs.begin() + static_cast<std::ptrdiff_t>(band.first_column);
    CHECK(std::is_sorted(begin, begin + band.doc_count));
    for (auto it = begin; it != begin + band.doc_count; ++it) CHECK(counts[*it] <= band.max_terms);
    columns += band.doc_count;
  }
  CHECK(columns == plan.band_docs.size());
  CHECK(plan.band_docs[plan.bands.back().first_column] == 5);
}

TEST_CASE("TermCountOrder gives the counts in order, and the bands the sorted counts give",
          "[bands]") {
  std::mt19937_64 rng(27);
  std::lognormal_distribution<double> len(4, 1.5);
  for (size_t n : {1, 2, 511, 513, 20000, 300000}) {
    TermCountOrder order;
    std::vector<uint64_t> counts;
    for (size_t i = 0; i < n; ++i) {
      // Both ends of the range included now and then.
      const uint64_t c = i % 97 == 1   ? bitsift::format::kMaxSignatureTerms
                         : i % 89 == 2 ? 1
                                       : std::min<uint64_t>(bitsift::format::kMaxSignatureTerms,
                                                            1 + static_cast<uint64_t>(len(rng)));
      order.Add(c);
      counts.push_back(c);
    }
    std::sort(counts.begin(), counts.end());
    REQUIRE(order.size() == n);
    for (uint64_t i = 0; i < n; i += 1 + n / 1000) REQUIRE(order.At(i) == counts[i]);
    REQUIRE(order.At(n - 1) == counts.back());
    const auto from_order = PlanBands(
        n, [&](uint64_t i) { return order.At(i); }, 0.01);
    const auto from_vector = PlanBands(counts, 0.01);
    REQUIRE(from_order.size() == from_vector.size());
    for (size_t b = 0; b < from_order.size(); ++b) {
      CHECK(from_order[b].first == from_vector[b].first);
      CHECK(from_order[b].count == from_vector[b].count);
      CHECK(from_order[b].max_terms == from_vector[b].max_terms);
      CHECK(from_order[b].shape.width == from_vector[b].shape.width);
    }
    order.Clear();
    CHECK(order.size() == 0);
    order.Add(7);
    CHECK(order.At(0) == 7);
  }
}
