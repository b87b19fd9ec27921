#include "indexer/bands.h"

#include <algorithm>
#include <limits>

namespace bitsift::indexer {
namespace {

// Per-band overhead, in matrix bits, that a split must save to be worth it (512 KiB). Every
// band costs a query k row reads per term (a page each for a one-shot process) and a pass of
// its own; on linux-files 512 KiB against 64 KiB gave 42 bands instead of 82 for 4% more
// index (186 -> 193 MB), one-shot queries ~8% and in-process p50 ~15% faster.
constexpr double kBandPenaltyBits = 512.0 * 1024 * 8;
// Upper bound on cut candidates, which keeps the quadratic search under ~10^7 steps.
constexpr uint64_t kMaxCandidates = 3000;

// Columns a band of n documents occupies: rows are whole 64-bit words.
uint64_t RoundUpToWord(uint64_t n) { return (n + 63) / 64 * 64; }

// A term gets an exact row when it is in at least 1/kExactRowDensity of the documents.
constexpr uint64_t kExactRowDensity = 32;

}  // namespace

uint32_t CountExactTerms(const std::vector<format::DfRun>& runs, uint64_t term_count,
                         uint64_t nonempty_docs) {
  uint64_t exact = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (runs[r].df < 2 || uint64_t{runs[r].df} * kExactRowDensity < nonempty_docs) break;
    exact = r + 1 < runs.size() ? runs[r + 1].first_id : term_count;
  }
  return static_cast<uint32_t>(exact);
}

uint64_t BloomTermCount(const std::vector<uint32_t>& ids, uint32_t exact_terms,
                        uint32_t sparse_first) {
  if (ids.empty()) return 0;
  const auto first = std::lower_bound(ids.begin(), ids.end(), exact_terms);
  return std::max<uint64_t>(1, std::lower_bound(first, ids.end(), sparse_first) - first);
}

RowPlan PlanRows(const std::vector<uint64_t>& bloom_counts, double fp_rate, uint32_t exact_terms) {
  std::vector<uint32_t> by_size, huge;
  const std::vector<uint64_t>& bloom_count = bloom_counts;
  for (size_t d = 0; d < bloom_count.size(); ++d) {
    if (bloom_count[d] == 0) continue;
    (bloom_count[d] > format::kMaxSignatureTerms ? huge : by_size)
        .push_back(static_cast<uint32_t>(d));
  }
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](uint32_t a, uint32_t b) { return bloom_count[a] < bloom_count[b]; });
  std::vector<uint64_t> sorted_counts(by_size.size());
  for (size_t i = 0; i < by_size.size(); ++i) sorted_counts[i] = bloom_count[by_size[i]];
  std::vector<BandPlan> plan = PlanBands(sorted_counts, fp_rate);
  RowPlan out;
  out.bands.resize(plan.size());
  uint64_t row_words = 0;
  for (size_t b = 0; b < plan.size(); ++b) {
    format::BandRecord& r = out.bands[b];
    r.rows_offset = row_words * 8;
    r.width = plan[b].shape.width;
    r.k = plan[b].shape.k;
    r.words_per_row = (plan[b].count + 63) / 64;
    r.first_column = plan[b].first;
    r.max_terms = plan[b].max_terms;
    r.doc_count = static_cast<uint32_t>(plan[b].count);
    row_words += (r.width + exact_terms) * r.words_per_row;
    row_words = (row_words + 7) / 8 * 8;  // every band's rows start 64-byte aligned
  }
  // Within a band, columns follow document ids: a document's column is then its band's first
  // column plus the band's documents below it, which DOC_BANDS stores in a few bits a document
  // (format/doc_bands.h). Their order within a band is otherwise free.
  for (const format::BandRecord& r : out.bands) {
    std::sort(by_size.begin() + static_cast<std::ptrdiff_t>(r.first_column),
              by_size.begin() + static_cast<std::ptrdiff_t>(r.first_column + r.doc_count));
  }
  // Documents too large for signatures: a last band without Bloom rows (exact rows only), in
  // id order too.
  if (!huge.empty()) {
    format::BandRecord r{};
    r.rows_offset = row_words * 8;
    r.width = 0;
    r.k = 0;
    r.words_per_row = (huge.size() + 63) / 64;
    r.first_column = by_size.size();
    for (uint32_t d : huge) r.max_terms = std::max(r.max_terms, bloom_count[d]);
    r.doc_count = static_cast<uint32_t>(huge.size());
    out.bands.push_back(r);
    by_size.insert(by_size.end(), huge.begin(), huge.end());
  }
  out.band_docs = std::move(by_size);
  return out;
}

std::vector<BandPlan> PlanBands(const std::vector<uint64_t>& counts, double fp_rate) {
  return PlanBands(
      counts.size(), [&](uint64_t i) { return counts[i]; }, fp_rate);
}

std::vector<BandPlan> PlanBands(uint64_t n, const std::function<uint64_t(uint64_t)>& count_at,
                                double fp_rate) {
  std::vector<BandPlan> bands;
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
  for (size_t j = 1; j < c; ++j)
    width_at[j] = format::ShapeFor(count_at(cuts[j] - 1), fp_rate).width;
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
    band.max_terms = count_at(cuts[*it] - 1);
    band.shape = format::ShapeFor(band.max_terms, fp_rate);
    bands.push_back(band);
  }
  return bands;
}

void TermCountOrder::Add(uint64_t count) {
  constexpr uint64_t kSize = format::kMaxSignatureTerms;
  if (tree_.empty()) tree_.assign(kSize + 1, 0);
  for (uint64_t i = count; i <= kSize; i += i & (~i + 1)) ++tree_[i];
  ++size_;
}

uint64_t TermCountOrder::At(uint64_t i) const {
  // The smallest count whose prefix holds more than i counts: descend the tree by halves.
  constexpr uint64_t kSize = format::kMaxSignatureTerms;
  static_assert((kSize & (kSize - 1)) == 0, "the descent needs a power of two");
  uint64_t at = 0, rest = i;
  for (uint64_t step = kSize; step > 0; step >>= 1) {
    if (at + step <= kSize && tree_[at + step] <= rest) {
      at += step;
      rest -= tree_[at];
    }
  }
  return at + 1;
}

void TermCountOrder::Clear() {
  std::vector<uint32_t>().swap(tree_);
  size_ = 0;
}

}  // namespace bitsift::indexer
