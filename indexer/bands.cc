#include "indexer/bands.h"

#include <limits>

namespace bitsift::indexer {
namespace {

// Per-band overhead, in matrix bits, that a split must save to be worth it (64 KiB).
constexpr double kBandPenaltyBits = 64.0 * 1024 * 8;
// Upper bound on cut candidates, which keeps the quadratic search under ~10^7 steps.
constexpr uint64_t kMaxCandidates = 3000;

// Columns a band of n documents occupies: rows are whole 64-bit words.
uint64_t RoundUpToWord(uint64_t n) { return (n + 63) / 64 * 64; }

}  // namespace

std::vector<BandPlan> PlanBands(const std::vector<uint64_t>& counts, double fp_rate) {
  std::vector<BandPlan> bands;
  const uint64_t n = counts.size();
  if (n == 0) return bands;
  uint64_t step = format::kDocsPerBlock;
  while (n / step > kMaxCandidates) step *= 2;
  // Candidate cut points: 0, step, 2*step, ..., n.
  std::vector<uint64_t> cuts;
  for (uint64_t c = 0; c < n; c += step) cuts.push_back(c);
  // The largest documents may form small bands of their own (a band of 64 columns sized for
  // a huge document costs far less than 512): cut points n - 2^i below the top.
  for (uint64_t d = step / 2; d >= 1; d /= 2) {
    if (n > d && n - d > cuts.back()) cuts.push_back(n - d);
  }
  cuts.push_back(n);
  const size_t c = cuts.size();
  std::vector<double> best(c, std::numeric_limits<double>::infinity());
  std::vector<size_t> from(c, 0);
  std::vector<double> width_at(c, 0);  // width for a band ending at cut j
  for (size_t j = 1; j < c; ++j) width_at[j] = format::ShapeFor(counts[cuts[j] - 1], fp_rate).width;
  best[0] = 0;
  for (size_t j = 1; j < c; ++j) {
    for (size_t i = 0; i < j; ++i) {
      double cost = best[i] + width_at[j] * static_cast<double>(RoundUpToWord(cuts[j] - cuts[i])) +
                    kBandPenaltyBits;
      if (cost < best[j]) {
        best[j] = cost;
        from[j] = i;
      }
    }
  }
  std::vector<size_t> ends;
  for (size_t j = c - 1; j > 0; j = from[j]) ends.push_back(j);
  for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
    BandPlan band;
    band.first = cuts[from[*it]];
    band.count = cuts[*it] - band.first;
    band.max_terms = counts[cuts[*it] - 1];
    band.shape = format::ShapeFor(band.max_terms, fp_rate);
    bands.push_back(band);
  }
  return bands;
}

}  // namespace bitsift::indexer
