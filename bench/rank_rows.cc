// rank_rows SEGMENT_FILE QUERIES_FILE [--max-rank R]: what BitFunnel-style higher-rank rows
// would cost and save on an existing segment (docs/design.md, "Signatures and rows"). A
// measurement, not a feature.
//
// A rank-r row holds one bit per group of 2^r consecutive columns of a band. A query would AND
// its rows at rank r first and read rank-0 words only where a group survives. For every query
// of QUERIES_FILE (one a line, tokenized as Searcher::ParseQuery does) whose terms are all in
// the segment and none sparse (the queries that AND rows), and for every band, this computes
// from the segment's own rank-0 rows:
//   - rank 0: the bytes of the query's rows (rows x words_per_row x 8), the bytes the blocked
//     AND reads today (query/row_and.cc: a 512-column block stops at its first zero AND), the
//     candidates, and the true matches among them (forward records);
//   - rank r = 1..R, folded: each row folded to rank r (a group's bit is the OR of its columns'
//     bits), the folded rows ANDed: rank-r bytes rows x ceil(columns / 2^r / 8), surviving
//     groups, the rank-0 bytes that expand them (each 64-bit word of each row covering a
//     surviving group, once; also counted in 64-byte lines), the candidates after expansion
//     (checked equal to rank 0's: the program stops if not), the folded rows' density;
//   - rank r with rows of its own (BitFunnel: separate hash positions, as many rows as keep
//     rank 0's density), estimated: a group survives a term surely if one of its documents
//     holds the term (exact terms: their folded row; Bloom terms: their rank-0 candidates in
//     the group verified against the forward records), otherwise with probability
//     prod(density of the term's rank-0 rows) (its k rows at rank-0 density, independent).
//     Expected survivors = sum over groups of prod over terms; expected expansion words =
//     sum over words of 1 - prod(1 - p) over its groups. A simpler estimate, true groups +
//     other groups x prod(density of every query row), is printed as well: it ignores that a
//     group holding some of the query's terms keeps their rows set, so it is too low.
// It also prints each band's rank-0 fill and folded fill, and the index bytes of one more
// rank: folded rows cost 1/2^r of the rows; rows of their own filled as rank 0's need, per
// band, width x (distinct Bloom terms per group) / (Bloom terms per column) rows of 1/2^r the
// length (same k, same fill), the distinct terms counted from the forward records.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "format/bloom.h"
#include "format/segment_reader.h"
#include "query/row_and.h"
#include "query/searcher.h"
#include "util/error.h"

namespace {

using bitsift::format::BandRecord;
using bitsift::format::SegmentReader;

uint64_t Popcount(const std::vector<uint64_t>& v) {
  uint64_t n = 0;
  for (uint64_t x : v) n += static_cast<uint64_t>(__builtin_popcountll(x));
  return n;
}

uint64_t Popcount(const uint64_t* v, uint64_t words) {
  uint64_t n = 0;
  for (uint64_t w = 0; w < words; ++w) n += static_cast<uint64_t>(__builtin_popcountll(v[w]));
  return n;
}

bool Bit(const std::vector<uint64_t>& v, uint64_t i) { return (v[i / 64] >> (i % 64)) & 1; }

// Bit g of *out is the OR of bits [g 2^r, (g + 1) 2^r) of the words-long bitmap `bits`.
void Fold(const uint64_t* bits, uint64_t words, unsigned r, std::vector<uint64_t>* out) {
  const uint64_t groups = ((words * 64) + (uint64_t{1} << r) - 1) >> r;
  out->assign((groups + 63) / 64, 0);
  if (r <= 6) {
    const unsigned s = 1u << r, per = 64u >> r;
    for (uint64_t w = 0; w < words; ++w) {
      uint64_t x = bits[w];
      if (x == 0) continue;
      for (unsigned sh = 1; sh < s; sh <<= 1) x |= x >> sh;  // bit j s: OR of bits j s.. +s-1
      uint64_t y = 0;
      for (unsigned j = 0; j < per; ++j) y |= ((x >> (j * s)) & 1) << j;
      const uint64_t g = w * per;
      (*out)[g / 64] |= y << (g % 64);
    }
  } else {
    const uint64_t span = uint64_t{1} << (r - 6);
    for (uint64_t g = 0; g < groups; ++g) {
      uint64_t any = 0;
      for (uint64_t w = g * span; w < std::min(words, (g + 1) * span); ++w) any |= bits[w];
      if (any != 0) (*out)[g / 64] |= uint64_t{1} << (g % 64);
    }
  }
}

// The columns of word w whose group (rank r <= 6) is set in `groups`.
uint64_t ColumnMask(const std::vector<uint64_t>& groups, uint64_t w, unsigned r) {
  const unsigned s = 1u << r, per = 64u >> r;
  const uint64_t g0 = w * per;
  const uint64_t y = per == 64 ? groups[w] : (groups[g0 / 64] >> (g0 % 64)) & ((1ULL << per) - 1);
  if (y == 0) return 0;
  const uint64_t ones = s == 64 ? ~uint64_t{0} : (uint64_t{1} << s) - 1;
  uint64_t mask = 0;
  for (unsigned j = 0; j < per; ++j) {
    if ((y >> j) & 1) mask |= ones << (j * s);
  }
  return mask;
}

struct Term {
  std::string text;
  uint64_t hash = 0;
  uint32_t id = 0;
  uint32_t df = 0;
  bool exact = false;
};

// One query at one rank, summed over bands.
struct RankCost {
  uint64_t rank_bytes = 0;         // rank-r rows
  uint64_t expand_bytes = 0;       // rank-0 words under surviving groups, 8 bytes per word per row
  uint64_t expand_line_bytes = 0;  // the same counted in 64-byte lines
  uint64_t groups = 0, survivors = 0;
  uint64_t ones = 0, bits = 0;  // of the folded query rows (density)
  double own_survivors = 0;     // estimated, rows of their own
  double own_expand_bytes = 0;
  double simple_survivors = 0;  // true groups + other groups x prod(row densities)
};

struct QueryCost {
  uint64_t bytes0 = 0;       // all of the query's rows
  uint64_t bytes_today = 0;  // what the blocked AND reads (early exit per 512 columns)
  uint64_t candidates = 0, matches = 0, columns = 0;
  uint64_t ones0 = 0, bits0 = 0;  // rank-0 density of the query's rows
  std::vector<RankCost> rank;     // [r], r = 1..R (rank[0] unused)
};

// Per band and rank, over the band's Bloom rows (and, separately, its exact rows).
struct BandFill {
  std::vector<uint64_t> bloom_ones, bloom_bits, exact_ones, exact_bits;  // [r], r = 0..R
  std::vector<uint64_t> distinct;  // [r]: Bloom terms summed over groups, each once a group
};

// Expected number of units (unit = `unit` columns, a multiple of 64) that hold a surviving group
// when group g (2^r columns) survives with probability p[g] independently; `words`: the row's.
double ExpectedUnits(const std::vector<double>& p, unsigned r, uint64_t unit, uint64_t words) {
  const uint64_t s = uint64_t{1} << r;
  double e = 0;
  if (s <= unit) {
    const uint64_t per = unit / s;
    for (uint64_t g0 = 0; g0 < p.size(); g0 += per) {
      double none = 1;
      for (uint64_t g = g0; g < std::min<uint64_t>(p.size(), g0 + per); ++g) none *= 1 - p[g];
      e += 1 - none;
    }
  } else {
    const uint64_t total_units = (words * 64 + unit - 1) / unit;
    for (uint64_t g = 0; g < p.size(); ++g) {
      const uint64_t first = g * s / unit;
      const uint64_t end = std::min(total_units, (g + 1) * s / unit);
      e += p[g] * static_cast<double>(end > first ? end - first : 0);
    }
  }
  return e;
}

class Measure {
 public:
  Measure(const bitsift::format::SegmentReader& index, unsigned max_rank)
      : index_(index), max_rank_(max_rank) {}

  // Fills *q for terms (all present, none sparse), rarest first.
  void Query(const std::vector<Term>& terms, QueryCost* q) const {
    q->rank.assign(max_rank_ + 1, RankCost{});
    std::vector<uint32_t> ids;
    bool all_exact = true;
    for (const Term& t : terms) {
      ids.push_back(t.id);
      all_exact = all_exact && t.exact;
    }
    std::sort(ids.begin(), ids.end());
    for (uint64_t b = 0; b < index_.band_count(); ++b) Band(b, terms, ids, all_exact, q);
  }

  // Fills *fills with every band's rank-0 and folded fill and its distinct Bloom terms per group.
  void BandFills(std::vector<BandFill>* fills) const {
    fills->assign(index_.band_count(), BandFill{});
    std::vector<uint64_t> folded;
    for (uint64_t b = 0; b < index_.band_count(); ++b) {
      const BandRecord& band = index_.band(b);
      BandFill& f = (*fills)[b];
      for (auto* v : {&f.bloom_ones, &f.bloom_bits, &f.exact_ones, &f.exact_bits}) {
        v->assign(max_rank_ + 1, 0);
      }
      for (uint64_t row = 0; row < band.width + index_.exact_terms(); ++row) {
        const bool bloom = row < band.width;
        const uint64_t* bits = index_.Row(band, row);
        (bloom ? f.bloom_ones : f.exact_ones)[0] += Popcount(bits, band.words_per_row);
        (bloom ? f.bloom_bits : f.exact_bits)[0] += band.doc_count;
        for (unsigned r = 1; r <= max_rank_; ++r) {
          Fold(bits, band.words_per_row, r, &folded);
          (bloom ? f.bloom_ones : f.exact_ones)[r] += Popcount(folded);
          (bloom ? f.bloom_bits : f.exact_bits)[r] += Groups(band, r);
        }
      }
      Distinct(band, &f.distinct);
    }
  }

  static uint64_t Groups(const BandRecord& band, unsigned r) {
    return (uint64_t{band.doc_count} + (uint64_t{1} << r) - 1) >> r;
  }

 private:
  // (*distinct)[r]: the distinct Bloom terms (ids in [exact_terms, sparse_first)) of each group
  // of 2^r columns of the band, summed over its groups (from the forward records).
  void Distinct(const BandRecord& band, std::vector<uint64_t>* distinct) const {
    distinct->assign(max_rank_ + 1, 0);
    std::vector<uint32_t> ids, next;               // groups' sorted ids, one after another
    std::vector<uint64_t> starts{0}, next_starts;  // where each group's ids start, then the end
    for (uint64_t c = 0; c < band.doc_count; ++c) {
      for (uint32_t t : index_.DocumentTerms(index_.BandDoc(band, c))) {
        if (t >= index_.exact_terms() && !index_.IsSparse(t)) ids.push_back(t);
      }
      starts.push_back(ids.size());
    }
    (*distinct)[0] = ids.size();
    for (unsigned r = 1; r <= max_rank_; ++r) {  // merge groups two by two
      next.clear();
      next_starts.assign(1, 0);
      const uint64_t groups = starts.size() - 1;
      for (uint64_t g = 0; g < groups; g += 2) {
        const uint32_t* a = ids.data() + starts[g];
        const uint32_t* a_end = ids.data() + starts[g + 1];
        const uint32_t* b = a_end;
        const uint32_t* b_end = g + 1 < groups ? ids.data() + starts[g + 2] : a_end;
        std::set_union(a, a_end, b, b_end, std::back_inserter(next));
        next_starts.push_back(next.size());
      }
      ids.swap(next);
      starts.swap(next_starts);
      (*distinct)[r] = ids.size();
    }
  }

  void Band(uint64_t b, const std::vector<Term>& terms, const std::vector<uint32_t>& ids,
            bool all_exact, QueryCost* q) const {
    const BandRecord& band = index_.band(b);
    const uint64_t words = band.words_per_row;
    const uint64_t columns = band.doc_count;
    q->columns += columns;
    // The band's rows as Searcher::RowsOf gives them (each once, rarest term first), and the
    // rows of each term (indexes into row_ids).
    std::vector<uint64_t> row_ids;
    std::vector<std::vector<size_t>> term_rows(terms.size());
    for (size_t i = 0; i < terms.size(); ++i) {
      auto add = [&](uint64_t r) {
        size_t at = std::find(row_ids.begin(), row_ids.end(), r) - row_ids.begin();
        if (at == row_ids.size()) row_ids.push_back(r);
        if (std::find(term_rows[i].begin(), term_rows[i].end(), at) == term_rows[i].end()) {
          term_rows[i].push_back(at);
        }
      };
      if (terms[i].exact) {
        add(band.width + terms[i].id);
      } else if (band.width > 0) {
        bitsift::format::ForEachPosition(terms[i].hash, band.width, band.k, add);
      }
    }
    const size_t nrows = row_ids.size();
    if (nrows == 0) {  // every column is a candidate and no row is read, at any rank
      q->candidates += columns;
      q->matches += columns;
      for (unsigned r = 1; r <= max_rank_; ++r) {
        RankCost& c = q->rank[r];
        c.groups += Groups(band, r);
        c.survivors += Groups(band, r);
        c.own_survivors += static_cast<double>(Groups(band, r));
        c.simple_survivors += static_cast<double>(Groups(band, r));
      }
      return;
    }
    std::vector<const uint64_t*> rows;
    std::vector<double> density(nrows);
    for (size_t i = 0; i < nrows; ++i) {
      rows.push_back(index_.Row(band, row_ids[i]));
      const uint64_t ones = Popcount(rows[i], words);
      density[i] = columns == 0 ? 0 : static_cast<double>(ones) / static_cast<double>(columns);
      q->ones0 += ones;
      q->bits0 += columns;
    }
    // Rank 0: the whole rows, and what the blocked AND reads of them.
    std::vector<uint64_t> and0(words);
    bitsift::query::AndRowsScalar(rows.data(), nrows, words, and0.data());
    const uint64_t candidates = Popcount(and0);
    q->bytes0 += nrows * words * 8;
    q->bytes_today += 8 * bitsift::query::AndRowsBlocked(rows.data(), nrows, words,
                                                         std::vector<uint64_t>(words).data(),
                                                         /*parallel=*/false);
    q->candidates += candidates;
    // The true matches, and where each term truly is (for the rows-of-their-own estimate).
    std::vector<uint64_t> truth = and0;
    if (!all_exact) Verify(band, ids.data(), ids.size(), &truth);
    q->matches += Popcount(truth);
    std::vector<std::vector<uint64_t>> present(terms.size());
    std::vector<double> miss(terms.size());  // P(a term's rows all set in a group without it)
    for (size_t i = 0; i < terms.size(); ++i) {
      std::vector<const uint64_t*> mine;
      double p = 1;
      for (size_t at : term_rows[i]) {
        mine.push_back(rows[at]);
        p *= density[at];
      }
      miss[i] = terms[i].exact ? 0 : p;
      if (mine.empty()) {  // a Bloom term in a band of width 0: present everywhere
        present[i].assign(words, ~uint64_t{0});
        miss[i] = 1;
        continue;
      }
      present[i].assign(words, 0);
      bitsift::query::AndRowsScalar(mine.data(), mine.size(), words, present[i].data());
      if (!terms[i].exact) Verify(band, &terms[i].id, 1, &present[i]);
    }
    double all_rows = 1;
    for (double d : density) all_rows *= d;

    std::vector<std::vector<uint64_t>> folded(nrows);
    std::vector<std::vector<uint64_t>> folded_present(terms.size());
    std::vector<uint64_t> fand, fold_truth;
    std::vector<char> needed(words);
    std::vector<double> p;
    for (unsigned r = 1; r <= max_rank_; ++r) {
      RankCost& c = q->rank[r];
      const uint64_t groups = Groups(band, r);
      c.groups += groups;
      for (size_t i = 0; i < nrows; ++i) {
        Fold(rows[i], words, r, &folded[i]);
        c.ones += Popcount(folded[i]);
        c.bits += groups;
      }
      fand = folded[0];
      for (size_t i = 1; i < nrows; ++i) {
        for (size_t w = 0; w < fand.size(); ++w) fand[w] &= folded[i][w];
      }
      const uint64_t survivors = Popcount(fand);
      c.survivors += survivors;
      c.rank_bytes += nrows * ((groups + 7) / 8);
      // Expansion: the rank-0 words under the surviving groups, ANDed there only.
      uint64_t after = 0;
      for (uint64_t w = 0; w < words; ++w) {
        uint64_t mask;
        if (r <= 6) {
          mask = ColumnMask(fand, w, r);
        } else {
          mask = Bit(fand, w >> (r - 6)) ? ~uint64_t{0} : 0;
        }
        needed[w] = mask != 0;
        if (mask == 0) continue;
        uint64_t v = mask;
        for (size_t i = 0; i < nrows; ++i) v &= rows[i][w];
        after += static_cast<uint64_t>(__builtin_popcountll(v));
      }
      if (after != candidates) {
        std::fprintf(stderr,
                     "rank_rows: band %" PRIu64 " rank %u: %" PRIu64
                     " candidates after expansion, %" PRIu64 " at rank 0: the folding is wrong\n",
                     b, r, after, candidates);
        std::abort();
      }
      uint64_t word_count = 0, line_count = 0;
      for (uint64_t w = 0; w < words; ++w) word_count += needed[w] ? 1 : 0;
      for (uint64_t l = 0; l < words; l += bitsift::query::kBlockWords) {
        bool any = false;
        for (uint64_t w = l; w < std::min(words, l + bitsift::query::kBlockWords); ++w) {
          any = any || needed[w];
        }
        line_count += any ? 1 : 0;
      }
      c.expand_bytes += word_count * nrows * 8;
      c.expand_line_bytes += line_count * nrows * 64;
      // Rows of their own: group g survives with probability prod over terms of (1 if the
      // group holds the term, else miss[term]).
      for (size_t i = 0; i < terms.size(); ++i) {
        Fold(present[i].data(), words, r, &folded_present[i]);
      }
      p.assign(groups, 0);
      double sum = 0;
      for (uint64_t g = 0; g < groups; ++g) {
        double pg = 1;
        for (size_t i = 0; i < terms.size() && pg > 0; ++i) {
          if (!Bit(folded_present[i], g)) pg *= miss[i];
        }
        p[g] = pg;
        sum += pg;
      }
      c.own_survivors += sum;
      c.own_expand_bytes += ExpectedUnits(p, r, 64, words) * static_cast<double>(nrows * 8);
      Fold(truth.data(), words, r, &fold_truth);
      const double true_groups = static_cast<double>(Popcount(fold_truth));
      c.simple_survivors += true_groups + (static_cast<double>(groups) - true_groups) * all_rows;
    }
  }

  // Clears the bits of *cols (a band's columns) whose document lacks one of ids (ascending).
  void Verify(const BandRecord& band, const uint32_t* ids, size_t n,
              std::vector<uint64_t>* cols) const {
    for (uint64_t w = 0; w < cols->size(); ++w) {
      for (uint64_t v = (*cols)[w]; v != 0; v &= v - 1) {
        const uint64_t bit = static_cast<uint64_t>(__builtin_ctzll(v));
        const uint64_t col = w * 64 + bit;
        if (col >= band.doc_count || !index_.Contains(index_.BandDoc(band, col), ids, n)) {
          (*cols)[w] &= ~(uint64_t{1} << bit);
        }
      }
    }
  }

  const bitsift::format::SegmentReader& index_;
  unsigned max_rank_;
};

double Mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0; }

// The per-rank table over queries `qs`.
void PrintTable(const std::vector<const QueryCost*>& qs, unsigned max_rank) {
  std::printf(
      "| rank | rows KB | expansion KB | total / rank 0: mean | median | total / today: median "
      "| mean, expansion in 64-byte lines | surviving groups | row density | own rows (est.): "
      "total / rank 0 mean | median | total / today: median | surviving groups | simple est. "
      "surviving |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const double n = static_cast<double>(qs.size());
  auto kb = [n](double sum) { return sum / n / 1024; };
  {
    std::vector<double> today_full, full_today;
    double bytes0 = 0, today = 0;
    std::vector<double> surv, dens;
    for (const QueryCost* q : qs) {
      bytes0 += static_cast<double>(q->bytes0);
      today += static_cast<double>(q->bytes_today);
      today_full.push_back(Ratio(static_cast<double>(q->bytes_today), q->bytes0));
      full_today.push_back(Ratio(static_cast<double>(q->bytes0), q->bytes_today));
      surv.push_back(Ratio(static_cast<double>(q->candidates), q->columns));
      dens.push_back(Ratio(static_cast<double>(q->ones0), q->bits0));
    }
    std::printf(
        "| 0, whole rows | %.1f | - | 1 | 1 | %.2f | 1 | %.4f | %.3f | - | - | - | - | - |\n",
        kb(bytes0), Median(full_today), Mean(surv), Mean(dens));
    std::printf(
        "| 0, today (a block stops at its first zero AND) | %.1f | - | %.3f | %.3f | 1 | - "
        "| - | - | - | - | - | - | - |\n",
        kb(today), Mean(today_full), Median(today_full));
  }
  for (unsigned r = 1; r <= max_rank; ++r) {
    double rank_bytes = 0, expand = 0;
    std::vector<double> rel, rel_today, rel_lines, surv, dens, own_rel, own_today, own_surv,
        simple_surv;
    for (const QueryCost* q : qs) {
      const RankCost& c = q->rank[r];
      const double total = static_cast<double>(c.rank_bytes + c.expand_bytes);
      rank_bytes += static_cast<double>(c.rank_bytes);
      expand += static_cast<double>(c.expand_bytes);
      rel.push_back(Ratio(total, q->bytes0));
      rel_today.push_back(Ratio(total, q->bytes_today));
      rel_lines.push_back(
          Ratio(static_cast<double>(c.rank_bytes + c.expand_line_bytes), q->bytes0));
      surv.push_back(Ratio(static_cast<double>(c.survivors), c.groups));
      dens.push_back(Ratio(static_cast<double>(c.ones), c.bits));
      own_rel.push_back(Ratio(static_cast<double>(c.rank_bytes) + c.own_expand_bytes, q->bytes0));
      own_today.push_back(
          Ratio(static_cast<double>(c.rank_bytes) + c.own_expand_bytes, q->bytes_today));
      own_surv.push_back(Ratio(c.own_survivors, c.groups));
      simple_surv.push_back(Ratio(c.simple_survivors, c.groups));
    }
    std::printf(
        "| %u | %.1f | %.1f | %.3f | %.3f | %.3f | %.3f | %.4f | %.3f | %.3f | %.3f | %.3f | %.4f "
        "| %.4f |\n",
        r, kb(rank_bytes), kb(expand), Mean(rel), Median(rel), Median(rel_today), Mean(rel_lines),
        Mean(surv), Mean(dens), Mean(own_rel), Median(own_rel), Median(own_today), Mean(own_surv),
        Mean(simple_surv));
  }
}

int Run(const std::string& segment, const std::string& queries_file, unsigned max_rank) {
  bitsift::format::SegmentReader index(segment);
  Measure measure(index, max_rank);
  std::ifstream in(queries_file);
  if (!in) {
    std::fprintf(stderr, "rank_rows: %s: cannot read\n", queries_file.c_str());
    return 2;
  }
  uint64_t lines = 0, no_terms = 0, absent = 0, sparse = 0;
  std::vector<QueryCost> costs;
  std::string line;
  while (std::getline(in, line)) {
    ++lines;
    std::vector<std::string> tokens;
    try {
      tokens = bitsift::query::Searcher::ParseQuery({line});
    } catch (const bitsift::Error&) {
      ++no_terms;
      continue;
    }
    std::vector<Term> terms;
    bool is_absent = false, is_sparse = false;
    for (const std::string& t : tokens) {
      Term term;
      term.text = t;
      term.hash = bitsift::format::HashTerm(t);
      std::optional<uint32_t> id = index.dictionary().Find(t, term.hash);
      if (!id) {
        is_absent = true;
        break;
      }
      term.id = *id;
      term.df = index.dictionary().Df(*id);
      term.exact = *id < index.exact_terms();
      is_sparse = is_sparse || index.IsSparse(*id);
      terms.push_back(term);
    }
    if (is_absent) {
      ++absent;
      continue;
    }
    if (is_sparse) {
      ++sparse;
      continue;
    }
    std::stable_sort(terms.begin(), terms.end(),
                     [](const Term& a, const Term& b) { return a.df < b.df; });
    costs.emplace_back();
    measure.Query(terms, &costs.back());
  }

  const auto& meta = index.meta();
  std::printf("# rank_rows %s\n\n", segment.c_str());
  std::printf("%" PRIu64 " documents, %" PRIu64
              " bands, %u exact terms, sparse_max_df %u; %s: %" PRIu64
              " lines, %zu measured (rows ANDed), %" PRIu64 " with a sparse term, %" PRIu64
              " with an absent term, %" PRIu64 " without terms\n\n",
              index.doc_count(), index.band_count(), index.exact_terms(), meta.sparse_max_df,
              queries_file.c_str(), lines, costs.size(), sparse, absent, no_terms);

  // Bands: rank-0 and folded fill; what the measured queries' rows hold.
  std::vector<BandFill> fills;
  measure.BandFills(&fills);
  std::printf(
      "Bands: fill (fraction of 1 bits) of the Bloom rows at rank 0 and folded to rank r; "
      "exact rows' at rank 0.\n\n| band | columns | width | k | exact rows fill");
  for (unsigned r = 0; r <= max_rank; ++r) std::printf(" | Bloom fill r%u", r);
  std::printf(" |\n|---|---|---|---|---");
  for (unsigned r = 0; r <= max_rank; ++r) std::printf("|---");
  std::printf("|\n");
  for (uint64_t b = 0; b < index.band_count(); ++b) {
    const BandRecord& band = index.band(b);
    const BandFill& f = fills[b];
    std::printf("| %" PRIu64 " | %u | %" PRIu64 " | %u | %.3f", b, band.doc_count, band.width,
                band.k, Ratio(static_cast<double>(f.exact_ones[0]), f.exact_bits[0]));
    for (unsigned r = 0; r <= max_rank; ++r) {
      std::printf(" | %.3f", Ratio(static_cast<double>(f.bloom_ones[r]), f.bloom_bits[r]));
    }
    std::printf(" |\n");
  }

  // Index bytes per rank: folded rows (1/2^r) and rows of their own at rank-0 fill.
  uint64_t rows_bytes = 0;
  for (uint64_t b = 0; b < index.band_count(); ++b) {
    const BandRecord& band = index.band(b);
    rows_bytes += (band.width + index.exact_terms()) * band.words_per_row * 8;
  }
  std::printf(
      "\nBands: Bloom terms at rank r, each counted once per group of 2^r columns, as a "
      "fraction of rank 0's (from the forward records). Rows of their own at rank r, filled as "
      "rank 0's, cost this fraction of the band's rank-0 Bloom row bits.\n\n| band | Bloom "
      "postings r0");
  for (unsigned r = 1; r <= max_rank; ++r) std::printf(" | r%u", r);
  std::printf(" |\n|---|---");
  for (unsigned r = 1; r <= max_rank; ++r) std::printf("|---");
  std::printf("|\n");
  for (uint64_t b = 0; b < index.band_count(); ++b) {
    const BandFill& f = fills[b];
    std::printf("| %" PRIu64 " | %" PRIu64, b, f.distinct[0]);
    for (unsigned r = 1; r <= max_rank; ++r) {
      std::printf(" | %.3f", Ratio(static_cast<double>(f.distinct[r]), f.distinct[0]));
    }
    std::printf(" |\n");
  }
  std::printf(
      "\nIndex bytes of one more rank r (ROWS today: %.2f MB, file %.2f MB). Folded: every row "
      "at rank r. Own rows: the exact rows folded, and Bloom rows filled as rank 0's: width x "
      "(distinct terms per group) / (terms per column) rows of ceil(columns / 2^r / 8) bytes "
      "(Bloom arithmetic: same k, same fill).\n\n"
      "| rank | folded MB | %% of ROWS | own rows MB (est.) | %% of ROWS | %% of file |\n"
      "|---|---|---|---|---|---|\n",
      static_cast<double>(rows_bytes) / 1e6, static_cast<double>(index.file_size()) / 1e6);
  for (unsigned r = 1; r <= max_rank; ++r) {
    double folded = 0, own = 0;
    for (uint64_t b = 0; b < index.band_count(); ++b) {
      const BandRecord& band = index.band(b);
      const BandFill& f = fills[b];
      const uint64_t groups = Measure::Groups(band, r);
      const double row_bytes = static_cast<double>((groups + 7) / 8);
      folded += row_bytes * static_cast<double>(band.width + index.exact_terms());
      own += row_bytes * static_cast<double>(index.exact_terms());
      if (f.distinct[0] > 0 && groups > 0) {
        const double per_group = static_cast<double>(f.distinct[r]) / static_cast<double>(groups);
        const double per_column =
            static_cast<double>(f.distinct[0]) / static_cast<double>(band.doc_count);
        own += row_bytes * static_cast<double>(band.width) * per_group / per_column;
      }
    }
    std::printf("| %u | %.2f | %.1f | %.2f | %.1f | %.1f |\n", r, folded / 1e6,
                100 * folded / static_cast<double>(rows_bytes), own / 1e6,
                100 * own / static_cast<double>(rows_bytes),
                100 * own / static_cast<double>(index.file_size()));
  }

  if (costs.empty()) {
    std::printf("\nNo query ANDs rows.\n");
    return 0;
  }
  // Query rows' rank-0 density per band is in the tables below (row density, rank 0).
  uint64_t candidates = 0, matches = 0;
  for (const QueryCost& q : costs) {
    candidates += q.candidates;
    matches += q.matches;
  }
  std::printf(
      "\nAll %zu measured queries (mean candidates %.1f, mean matches %.1f; bytes are "
      "means per query over all bands, ratios per query then mean or median):\n\n",
      costs.size(), static_cast<double>(candidates) / static_cast<double>(costs.size()),
      static_cast<double>(matches) / static_cast<double>(costs.size()));
  std::vector<const QueryCost*> all;
  for (const QueryCost& q : costs) all.push_back(&q);
  PrintTable(all, max_rank);
  struct Class {
    const char* name;
    uint64_t lo, hi;
  };
  for (const Class& k : {Class{"<= 100", 0, 100}, Class{"101-10,000", 101, 10000},
                         Class{"> 10,000", 10001, UINT64_MAX}}) {
    std::vector<const QueryCost*> qs;
    for (const QueryCost& q : costs) {
      if (q.candidates >= k.lo && q.candidates <= k.hi) qs.push_back(&q);
    }
    std::printf("\nCandidates %s: %zu queries\n\n", k.name, qs.size());
    if (!qs.empty()) PrintTable(qs, max_rank);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  unsigned max_rank = 6;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--max-rank" && i + 1 < args.size()) {
      char* end = nullptr;
      const unsigned long v = std::strtoul(args[++i].c_str(), &end, 10);
      if (*end != '\0' || v < 1 || v > 16) {
        std::fprintf(stderr, "rank_rows: --max-rank takes 1..16\n");
        return 2;
      }
      max_rank = static_cast<unsigned>(v);
    } else {
      files.push_back(args[i]);
    }
  }
  if (files.size() != 2) {
    std::fprintf(stderr, "usage: rank_rows SEGMENT_FILE QUERIES_FILE [--max-rank R (default 6)]\n");
    return 2;
  }
  try {
    return Run(files[0], files[1], max_rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank_rows: %s\n", e.what());
    return 2;
  }
}
