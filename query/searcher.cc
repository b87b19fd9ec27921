#include "query/searcher.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>

#include "format/bloom.h"
#include "query/row_and.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"
#include "util/helper_thread.h"

namespace bitsift::query {
namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

double MicrosSince(Clock::time_point t) { return Micros(t, Clock::now()); }

// A sparse query's candidates (its sparse terms' lists intersected) are checked against the
// rows of its other terms first when they are at least this many, and the rarest of those
// terms is in at most kRowFilterMaxDfPerCandidate times as many documents (the AND's result,
// about that df, is mapped to ids through BAND_DOCS). Reading the rows (k a band for a Bloom
// term, one for an exact term) costs less than what each candidate would read otherwise: a
// forward record for a Bloom term, a DOCS record (its column) for an exact one, a page each
// in a fresh process. `nr_cpu_ids kmalloc` (df 300 and ~3,000, sparse_max_df 1024): 300
// candidates, 247 false, each a DOCS page, against 7 exact-row pieces and BAND_DOCS.
constexpr size_t kRowFilterMinCandidates = 64;
constexpr uint64_t kRowFilterMaxDfPerCandidate = 32;

// A one-shot reader takes a Bloom term's list (format::SegmentReader::UsesList) unless the
// candidates of the rarer lists are so few that reading their forward records costs less: decoding
// a list costs ~7 ns an id (its pages, checksums and varints), a candidate's record ~20-50 us by
// copy in a fresh process. linux-paras, `cells 193 keystone clocks` (5 candidates of the sparse
// terms, `cells` and `clocks` ~21k ids each): lists 420-500 us, records ~270 us.
constexpr uint64_t kListIdsPerCandidate = 4096;

// Verification of this many candidates or more is spread over threads.
constexpr size_t kParallelVerifyMin = 4096;
// A reader that reads by copy (a one-shot query where page faults are dear) pays a pread or
// two a candidate (~3.5 us each): from kSharedVerifyMin candidates on, verification is shared
// with the process's helper thread (util::RunShared: the caller never waits for it to start,
// as it would for TBB's workers in a fresh process) if it is polling already, and from
// kSharedVerifyStart on it is started (woken) as soon as the candidates are known: a thread
// start costs ~0.2-0.7 ms and the thread runs 0.6-4.5 ms later on a 2-core guest.
// linux-paras, `handler goto` (1,277 candidates, one-shot, helper polling): 8.4 -> ~5 ms.
constexpr size_t kSharedVerifyMin = 256;
constexpr size_t kSharedVerifyStart = 2048;
constexpr size_t kSharedVerifyPiece = 128;

// Verification prefetches the forward record of the candidate this many places ahead: the
// records of scattered candidates are cache misses, and several can be in flight at once.
constexpr size_t kPrefetchAhead = 8;

}  // namespace

std::vector<std::string> Searcher::ParseQuery(const std::vector<std::string>& args) {
  struct Collect : tokenizer::TokenSink {
    std::vector<std::string> tokens;
    void OnToken(std::string_view t, tokenizer::TokenRole role) override {
      if (role != tokenizer::TokenRole::kPart) tokens.emplace_back(t);  // implied by its whole
    }
  } collect;
  thread_local tokenizer::Tokenizer tok;
  for (const std::string& arg : args) tok.Tokenize(arg, collect);
  std::sort(collect.tokens.begin(), collect.tokens.end());
  collect.tokens.erase(std::unique(collect.tokens.begin(), collect.tokens.end()),
                       collect.tokens.end());
  Ensure(!collect.tokens.empty(), ErrorKind::kInvalidArgument,
         "the query has no terms (only punctuation, symbols or spaces?)");
  return collect.tokens;
}

Searcher::RowTerm Searcher::Plan(const std::string& term, uint64_t hash) const {
  if (std::optional<uint32_t> id = index_.dictionary().Find(term, hash))
    return PlanFound(*id, hash);
  return RowTerm{hash, -1, 0, 0, false};
}

Searcher::RowTerm Searcher::PlanFound(uint32_t id, uint64_t hash) const {
  RowTerm t{hash, -1, 0, id, false};
  t.df = index_.dictionary().Df(id);
  if (id < index_.exact_terms()) t.exact = id;
  t.sparse = index_.UsesList(id);
  return t;
}

std::vector<uint32_t> Searcher::Candidates(const std::vector<std::string>& terms, bool parallel,
                                           QueryStats* stats) const {
  std::vector<RowTerm> planned;
  for (const std::string& t : terms) planned.push_back(Plan(t));
  std::stable_sort(planned.begin(), planned.end(),
                   [](const RowTerm& a, const RowTerm& b) { return a.df < b.df; });
  return CandidatesFor(&planned, parallel, stats, nullptr, nullptr, nullptr);
}

namespace {

// A term with at least this many documents makes a query's candidates many: its bands are
// ANDed in parallel (each band's AND and candidate extraction is independent). Below it, the
// tasks' start-up costs more than they save.
constexpr uint64_t kParallelBandsMinDf = 8192;

}  // namespace

void Searcher::RowsOf(const format::BandRecord& band, const std::vector<RowTerm>& terms,
                      std::vector<uint64_t>* row_ids) const {
  row_ids->clear();
  auto add_row = [&](uint64_t r) {
    if (std::find(row_ids->begin(), row_ids->end(), r) == row_ids->end()) row_ids->push_back(r);
  };
  for (const RowTerm& t : terms) {
    if (t.exact >= 0) {
      add_row(format::ExactRow(band, static_cast<uint32_t>(t.exact)));
    } else if (band.width > 0) {  // a band of width 0 (huge documents) has no Bloom rows
      format::ForEachPosition(t.hash, band.width, band.k, add_row);
    }
  }
}

void Searcher::WillNeedRows(const std::vector<RowTerm>& terms) const {
  if (!index_.file().random_access() || index_.file().Warm(format::SectionId::kRows)) return;
  std::vector<std::pair<uint64_t, uint64_t>> pieces;  // {offset, length} in ROWS
  std::vector<uint64_t> row_ids;
  for (uint64_t b = 0; b < index_.band_count(); ++b) {
    const format::BandRecord& band = index_.band(b);
    RowsOf(band, terms, &row_ids);
    for (uint64_t r : row_ids) {
      pieces.emplace_back(format::RowOffset(band, r), format::RowBytes(band));
    }
  }
  std::sort(pieces.begin(), pieces.end());
  index_.file().WillNeedPieces(format::SectionId::kRows, pieces.size(),
                               [&](size_t i) { return pieces[i]; });
}

void Searcher::BandBits(uint64_t b, const std::vector<RowTerm>& terms, bool parallel,
                        std::vector<uint64_t>* bits_out, BandOutput* o) const {
  const format::BandRecord& band = index_.band(b);
  std::vector<uint64_t> row_ids;
  std::vector<uint64_t>& bits = *bits_out;
  RowsOf(band, terms, &row_ids);
  uint64_t read = 0;  // words ANDed
  size_t rows_read = row_ids.size();
  if (row_ids.empty()) {  // every document of the band is a candidate
    bits.assign(band.words_per_row, ~uint64_t{0});
  } else if (index_.file().copies(format::SectionId::kRows)) {
    // Read by copy (a one-shot reader where page faults are dear): row by row (each verified
    // as it is read), the first into `bits`, each other ANDed in from the thread's scratch
    // (IndexFile::ScratchView), so that the memory touched is `bits` and the scratch however
    // many rows the terms have (a fresh page is a trap there). A row that leaves no bit set
    // ends the band: the rows after it are not read.
    const uint64_t words = band.words_per_row, bytes = words * 8;
    const format::IndexFile& file = index_.file();
    auto row_offset = [&](size_t i) { return format::RowOffset(band, row_ids[i]); };
    bits.resize(words);
    file.Read(format::SectionId::kRows, row_offset(0), bytes, bits.data());
    read = words;
    rows_read = 1;
    for (size_t i = 1; i < row_ids.size(); ++i) {
      if (std::all_of(bits.begin(), bits.end(), [](uint64_t w) { return w == 0; })) break;
      const uint8_t* row = file.ScratchView(format::SectionId::kRows, row_offset(i), bytes);
      ++rows_read;
      read += words;
      for (uint64_t w = 0; w < words; ++w) {
        uint64_t v;
        std::memcpy(&v, row + w * 8, 8);  // 64-byte aligned in the file, not in the scratch
        bits[w] &= v;
      }
    }
  } else {
    // Through the mapping: the AND verifies a row's chunks as it reaches them; the rows after
    // the one that zeroed every block are never touched.
    struct BandRows : RowVerifier {
      const format::SegmentReader* index = nullptr;
      const format::BandRecord* band = nullptr;
      const std::vector<uint64_t>* ids = nullptr;
      size_t Verify(size_t r, size_t begin, size_t end) const override {
        return index->VerifyRowWords(*band, (*ids)[r], begin, end);
      }
    } verify;
    verify.index = &index_;
    verify.ids = &row_ids;
    verify.band = &band;
    std::vector<const uint64_t*> rows;
    for (uint64_t r : row_ids) rows.push_back(index_.UnverifiedRow(band, r));
    bits.assign(band.words_per_row, 0);
    read = AndRowsBlocked(rows.data(), rows.size(), band.words_per_row, bits.data(), parallel,
                          &verify);
  }
  o->rows_read += rows_read;
  o->bytes_read += read * 8;
}

namespace {

// Calls fn(d) for the document d of every set bit of `bits` (band `band`'s columns), in column
// order, from BAND_DOCS; on a cold index, the span they cover is asked for first.
template <typename Fn>
void ForEachBandDoc(const format::SegmentReader& index, const format::BandRecord& band,
                    const std::vector<uint64_t>& bits, const Fn& fn) {
  if (index.file().random_access() && !index.file().Warm(format::SectionId::kBandDocs)) {
    uint64_t lo = band.words_per_row, hi = 0;
    for (uint64_t w = 0; w < band.words_per_row; ++w) {
      if (bits[w] != 0) {
        lo = std::min(lo, w);
        hi = w;
      }
    }
    if (lo <= hi) {
      const uint64_t first = band.first_column + lo * 64;
      const uint64_t end = band.first_column + std::min<uint64_t>(band.doc_count, (hi + 1) * 64);
      index.file().WillNeedPieces(format::SectionId::kBandDocs, 1, [&](size_t) {
        return std::pair<uint64_t, uint64_t>{first * 4, end > first ? (end - first) * 4 : 0};
      });
    }
  }
  // In batches of columns, whose entries are read in spans (format::SegmentReader::BandDocs).
  constexpr size_t kBatch = 1024;
  uint32_t columns[kBatch], docs[kBatch];
  size_t n = 0;
  auto flush = [&] {
    index.BandDocs(band, columns, n, docs);
    for (size_t i = 0; i < n; ++i) fn(docs[i]);
    n = 0;
  };
  for (uint64_t w = 0; w < band.words_per_row; ++w) {
    for (uint64_t v = bits[w]; v != 0; v &= v - 1) {
      const uint64_t col = w * 64 + static_cast<uint64_t>(__builtin_ctzll(v));
      if (col >= band.doc_count) continue;
      columns[n++] = static_cast<uint32_t>(col);
      if (n == kBatch) flush();
    }
  }
  flush();
}

}  // namespace

void Searcher::BandCandidates(uint64_t b, const std::vector<RowTerm>& terms, bool parallel,
                              const std::vector<IdRange>* scope, BandOutput* o) const {
  std::vector<uint64_t> bits;
  BandBits(b, terms, parallel, &bits, o);
  // A band's columns are ordered by document size, not id, so a scope cannot narrow the rows
  // read (docs/design.md, "The row AND"); it drops candidates as they become ids.
  ForEachBandDoc(index_, index_.band(b), bits, [&](uint32_t d) {
    if (scope == nullptr || InRanges(scope->data(), scope->size(), d)) {
      o->ids.push_back(d);
    } else {
      ++o->scoped_out;
    }
  });
}

std::vector<uint32_t> Searcher::SparseCandidates(std::vector<RowTerm>* terms, QueryStats* stats,
                                                 const std::vector<IdRange>* scope,
                                                 uint64_t* all) const {
  std::vector<uint32_t> out, list, both;
  bool first = true;
  for (RowTerm& t : *terms) {  // rarest first (the caller sorted them by df)
    if (!t.sparse) continue;
    // A Bloom term's list (sparse terms, with df at most sparse_max_df, come before any):
    // not when the candidates so far are too few to be worth it.
    if (!first && !index_.IsSparse(t.id) && out.size() * kListIdsPerCandidate < t.df) {
      t.sparse = false;
      continue;
    }
    index_.SparseRow(t.id, first ? &out : &list);
    ++stats->rows_read;
    if (!first) {
      both.clear();
      std::set_intersection(out.begin(), out.end(), list.begin(), list.end(),
                            std::back_inserter(both));
      out.swap(both);
    }
    first = false;
    if (out.empty()) break;
  }
  FilterByRows(terms, &out, stats);
  const uint64_t before = out.size();
  if (scope != nullptr) {
    out.erase(
        std::remove_if(out.begin(), out.end(),
                       [&](uint32_t d) { return !InRanges(scope->data(), scope->size(), d); }),
        out.end());
  }
  stats->candidates = out.size();
  if (all != nullptr) *all = before;
  return out;
}

void Searcher::ReadColumnsByBand(const std::vector<uint32_t>& candidates,
                                 std::vector<std::pair<uint32_t, uint32_t>>* by_band,
                                 std::vector<size_t>* band_first) const {
  const uint64_t bands = index_.band_count();
  index_.WillNeedColumns(candidates.data(), candidates.size());
  std::vector<uint32_t> column_of(candidates.size());
  index_.Columns(candidates.data(), candidates.size(), column_of.data());
  // Each candidate's band (a document without terms is in none: it lacks the rows' terms, and
  // takes band `bands`, never read), counted, then placed.
  std::vector<uint32_t> band_of(candidates.size());
  band_first->assign(bands + 2, 0);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const uint32_t column = column_of[i];
    uint64_t b = bands;
    if (column != format::kNoColumn) {
      b = 0;
      while (b + 1 < bands && index_.band(b + 1).first_column <= column) ++b;
      const format::BandRecord& band = index_.band(b);
      // (As format::SegmentReader::HasExactTerm: a column outside the bands is a damaged file's.)
      if (bands == 0 || column - band.first_column >= band.doc_count) [[unlikely]]
        format::CorruptIndex(index_.path(), "document " + std::to_string(candidates[i]) +
                                                " has column " + std::to_string(column) +
                                                ", outside the bands' columns");
    }
    band_of[i] = static_cast<uint32_t>(b);
    ++(*band_first)[b + 1];
  }
  for (uint64_t b = 0; b <= bands; ++b) (*band_first)[b + 1] += (*band_first)[b];
  by_band->resize(candidates.size());
  std::vector<size_t> next(band_first->begin(), band_first->end() - 1);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const uint64_t b = band_of[i];
    const uint32_t local = b < bands ? column_of[i] - index_.band(b).first_column : 0;
    (*by_band)[next[b]++] = {local, static_cast<uint32_t>(i)};
  }
}

namespace {

// The 4 KiB chunks that n reads spread evenly over `chunks` chunks touch, about.
double ChunksTouched(double n, double chunks) {
  return chunks <= 0 ? 0 : chunks * (1 - std::exp(-n / chunks));
}

}  // namespace

bool RowFilterColumnsCheaper(bool copies, uint64_t set, uint64_t band_docs, uint64_t candidates,
                             uint64_t doc_count, uint64_t band_count) {
  if (!copies) return set > candidates;
  const double doc_bands_chunks =
      static_cast<double>(format::ChunkCount(format::DocBandsBytes(doc_count, band_count)));
  const double by_bits = ChunksTouched(static_cast<double>(set),
                                       static_cast<double>(format::ChunkCount(band_docs * 4)));
  const double by_columns = ChunksTouched(static_cast<double>(candidates), doc_bands_chunks) +
                            static_cast<double>(candidates) * 16 / format::kChunkBytes;
  return by_bits > by_columns;
}

void Searcher::FilterByRows(std::vector<RowTerm>* terms, std::vector<uint32_t>* candidates,
                            QueryStats* stats) const {
  std::vector<RowTerm> rows;  // the terms whose rows are read: the non-sparse ones
  uint64_t min_df = UINT64_MAX;
  for (const RowTerm& t : *terms) {
    if (t.sparse) continue;
    rows.push_back(t);
    min_df = std::min<uint64_t>(min_df, t.df);
  }
  if (rows.empty() || candidates->size() < kRowFilterMinCandidates ||
      min_df > kRowFilterMaxDfPerCandidate * candidates->size())
    return;
  // Band by band, the rows' AND settles the candidates whose columns fall in the band. Two
  // ways to meet them: map every set bit to its document (BAND_DOCS, a read a bit) and look
  // the documents up among the candidates, or look up every candidate's column (DOC_BANDS, its
  // 512-document block, once for all bands) and test its bit. The cheaper is taken per band
  // (RowFilterColumnsCheaper): with the pages in the process, the columns once a band has more
  // set bits than there are candidates (linux-paras, `res pm_runtime_mark_last_busy`: ~800
  // candidates against ~13k bits of `res`); read by copy, by the chunks each way would read,
  // the fresh pages of the columns' arrays counted (chunks alone chose the columns for `break
  // second s more`, whose arrays cost more: 13.3 -> 15.1 ms).
  WillNeedRows(rows);  // a cold file: all the rows in one round of reads, not a fault a page
  BandOutput o;
  std::vector<uint64_t> bits;
  std::vector<uint8_t> keep(candidates->size(), 0);  // by position in *candidates
  // When read: the candidates' {column within its band, position}, grouped by band (band b's
  // from by_band[band_first[b]] to by_band[band_first[b + 1]]): a counting sort, not a sort by
  // column (0.4 ms for 10.7k candidates).
  std::vector<std::pair<uint32_t, uint32_t>> by_band;
  std::vector<size_t> band_first;
  bool columns_read = false;
  const format::IndexFile& file = index_.file();
  const bool by_copy =
      file.copies(format::SectionId::kBandDocs) && !file.Warm(format::SectionId::kBandDocs);
  // Candidates met through BAND_DOCS are looked up by binary search among the candidates
  // (ascending): no table, whose fresh pages cost more where a first touch traps (a bitmap over
  // all documents would touch N / 8 bytes; an open-addressed table, 16 bytes a candidate).
  for (uint64_t b = 0; b < index_.band_count(); ++b) {
    const format::BandRecord& band = index_.band(b);
    BandBits(b, rows, false, &bits, &o);
    uint64_t set = 0;
    for (uint64_t w : bits) set += static_cast<uint64_t>(__builtin_popcountll(w));
    if (!columns_read && RowFilterColumnsCheaper(by_copy, set, band.doc_count, candidates->size(),
                                                 index_.doc_count(), index_.band_count())) {
      ReadColumnsByBand(*candidates, &by_band, &band_first);
      columns_read = true;
    }
    if (columns_read) {
      ++stats->bands_by_columns;
      for (size_t k = band_first[b]; k < band_first[b + 1]; ++k) {
        const auto [local, position] = by_band[k];
        if ((bits[local / 64] >> (local % 64)) & 1) keep[position] = 1;
      }
      continue;
    }
    ++stats->bands_by_bits;
    ForEachBandDoc(index_, band, bits, [&](uint32_t d) {
      const auto it = std::lower_bound(candidates->begin(), candidates->end(), d);
      if (it != candidates->end() && *it == d) keep[it - candidates->begin()] = 1;
    });
  }
  stats->rows_read += o.rows_read;
  stats->bytes_read += o.bytes_read;
  size_t kept = 0;
  for (size_t i = 0; i < candidates->size(); ++i) {
    if (keep[i]) (*candidates)[kept++] = (*candidates)[i];
  }
  candidates->resize(kept);
  for (RowTerm& t : *terms) t.settled = t.settled || (!t.sparse && t.exact >= 0);
}

std::vector<uint32_t> Searcher::CandidatesFor(std::vector<RowTerm>* planned, bool parallel,
                                              QueryStats* stats, const std::vector<IdRange>* scope,
                                              const uint64_t* deleted, uint64_t* all) const {
  auto is_deleted = [deleted](uint32_t d) { return (deleted[d / 64] >> (d % 64)) & 1; };
  const std::vector<RowTerm>& terms = *planned;
  for (const RowTerm& t : terms) {
    if (!t.sparse) continue;
    std::vector<uint32_t> out = SparseCandidates(planned, stats, scope, all);
    if (deleted != nullptr) {
      out.erase(std::remove_if(out.begin(), out.end(), is_deleted), out.end());
      stats->candidates = out.size();
    }
    return out;
  }
  std::vector<uint32_t> out;
  uint64_t scoped_out = 0;  // candidates outside the scope
  uint64_t min_df = UINT64_MAX;
  for (const RowTerm& t : terms) min_df = std::min<uint64_t>(min_df, t.df);
  const uint64_t bands = index_.band_count();
  WillNeedRows(terms);
  if (parallel && bands > 1 && min_df >= kParallelBandsMinDf) {
    // Many candidates: bands in parallel, each into its own output, joined in band order.
    std::vector<BandOutput> outputs(bands);
    tbb::parallel_for(uint64_t{0}, bands,
                      [&](uint64_t b) { BandCandidates(b, terms, false, scope, &outputs[b]); });
    size_t total = 0;
    for (const BandOutput& o : outputs) total += o.ids.size();
    out.reserve(total);
    for (const BandOutput& o : outputs) {
      out.insert(out.end(), o.ids.begin(), o.ids.end());
      stats->rows_read += o.rows_read;
      stats->bytes_read += o.bytes_read;
      scoped_out += o.scoped_out;
    }
  } else {
    BandOutput o;
    for (uint64_t b = 0; b < bands; ++b) BandCandidates(b, terms, parallel, scope, &o);
    out = std::move(o.ids);
    stats->rows_read += o.rows_read;
    stats->bytes_read += o.bytes_read;
    scoped_out = o.scoped_out;
  }
  // Candidates come band by band; return them in document order. Many candidates are put in
  // order through a bitmap over all documents, which costs a pass over N/64 words instead of a
  // sort (a sort of 20k ids took 15% of single-term query time on linux-paras). The deletions
  // are masked off a word at a time there (dropping them one by one, a mispredicted branch
  // each, cost 87 us of the mean heavy query on a 10%-updated index).
  const uint64_t docs = index_.doc_count();
  if (all != nullptr) *all = out.size() + scoped_out;
  if (out.size() > 64 && out.size() * 64 > docs) {
    std::vector<uint64_t> seen((docs + 63) / 64, 0);
    for (uint32_t d : out) seen[d / 64] |= uint64_t{1} << (d % 64);
    out.clear();
    for (uint64_t w = 0; w < seen.size(); ++w) {
      uint64_t v = seen[w];
      if (deleted != nullptr) v &= ~deleted[w];
      for (; v != 0; v &= v - 1) {
        out.push_back(static_cast<uint32_t>(w * 64 + static_cast<uint64_t>(__builtin_ctzll(v))));
      }
    }
  } else {
    std::sort(out.begin(), out.end());
    if (deleted != nullptr)
      out.erase(std::remove_if(out.begin(), out.end(), is_deleted), out.end());
  }
  stats->candidates = out.size();
  return out;
}

bool Searcher::LookUp(const std::vector<std::string>& terms, std::vector<RowTerm>* planned,
                      bool* sparse) const {
  // Look up every term at once (their cache misses overlap: FindEvery). A term the segment's
  // TERM_FILTER rules out settles the query before any dictionary search; so does a term the
  // dictionary lacks. Each term is hashed once: the filter, the dictionary and the Bloom rows
  // take that hash.
  // (On the stack for up to kStackTerms terms: no heap allocation for the lookups.)
  constexpr size_t kStackTerms = 16;
  const size_t n = terms.size();
  uint64_t stack_hashes[kStackTerms];
  std::string_view stack_views[kStackTerms];
  uint32_t stack_ids[kStackTerms];
  std::vector<uint64_t> heap_hashes;
  std::vector<std::string_view> heap_views;
  std::vector<uint32_t> heap_ids;
  uint64_t* hashes = stack_hashes;
  std::string_view* views = stack_views;
  uint32_t* ids = stack_ids;
  if (n > kStackTerms) {
    heap_hashes.resize(n);
    heap_views.resize(n);
    heap_ids.resize(n);
    hashes = heap_hashes.data();
    views = heap_views.data();
    ids = heap_ids.data();
  }
  for (size_t i = 0; i < n; ++i) {
    hashes[i] = format::HashTerm(terms[i]);
    views[i] = terms[i];
  }
  if (!index_.dictionary().FindEvery(views, hashes, n, ids)) return false;
  planned->clear();
  planned->reserve(n);
  *sparse = false;
  for (size_t i = 0; i < n; ++i) {
    const RowTerm rt = PlanFound(ids[i], hashes[i]);
    *sparse = *sparse || rt.sparse;
    planned->push_back(rt);
  }
  // Rarest terms first: their rows are sparsest and zero whole blocks soonest. Ties by id, so
  // the order is fixed without a stable sort (which allocates a buffer for every query).
  std::sort(planned->begin(), planned->end(), [](const RowTerm& a, const RowTerm& b) {
    return a.df != b.df ? a.df < b.df : a.id < b.id;
  });
  return true;
}

Searcher::Unsettled Searcher::UnsettledTerms(const std::vector<RowTerm>& planned,
                                             bool sparse) const {
  Unsettled u;
  // The ids of the terms the candidates do not settle: with a sparse term the candidates are
  // its documents, exact for every term whose list was read; otherwise the rows are exact for
  // exact terms. A sparse query's exact terms are settled by one bit of their rows per
  // candidate (bit_terms) unless FilterByRows ANDed their rows already (`settled`), its other
  // terms by the candidates' forward records (verify_ids). (After CandidatesFor: it may leave
  // a Bloom term's list unread.)
  for (const RowTerm& rt : planned) {
    if (rt.settled) continue;  // its exact rows filtered the candidates
    if (sparse && !rt.sparse && rt.exact >= 0) {
      u.bit_terms.push_back(static_cast<uint32_t>(rt.exact));
    } else if (sparse ? !rt.sparse : rt.exact < 0) {
      u.verify_ids.push_back(rt.id);
    }
  }
  std::sort(u.verify_ids.begin(), u.verify_ids.end());
  return u;
}

std::vector<uint32_t> Searcher::Verify(std::vector<uint32_t> candidates, const Unsettled& u,
                                       bool exact, uint64_t limit, uint64_t* verified_out) const {
  std::vector<uint32_t> matches;
  uint64_t& verified = *verified_out;
  verified = 0;
  const std::vector<uint32_t>& bit_terms = u.bit_terms;
  const std::vector<uint32_t>& verify_ids = u.verify_ids;
  // column: d's column, read by the caller (a piece's candidates read their DOC_BANDS blocks
  // at once: format::SegmentReader::Columns), or kNoRead to read it here if a bit term needs it.
  constexpr uint32_t kNoRead = 0xfffffffe;
  static_assert(kNoRead != format::kNoColumn);
  auto holds_all = [&](uint32_t d, uint32_t column) {
    if (!bit_terms.empty() && column == kNoRead) column = index_.column(d);
    for (uint32_t t : bit_terms) {
      if (!index_.HasExactTermInColumn(d, column, t)) return false;
    }
    return verify_ids.empty() || index_.Contains(d, verify_ids.data(), verify_ids.size());
  };
  // Forward records are read only for verify_ids (a prefetch reads FORWARD_OFFSETS: a page).
  const bool prefetch = !verify_ids.empty();
  if (!exact) {
    // A cold index: what verification reads is asked for at once (for a limited query, about
    // the candidates it may reach).
    const size_t ahead =
        limit == 0 ? candidates.size()
                   : std::min<size_t>(candidates.size(), std::max<uint64_t>(4 * limit, 256));
    if (!bit_terms.empty()) {
      index_.WillNeedColumns(candidates.data(), ahead);
      for (uint32_t t : bit_terms) index_.WillNeedExactRow(t);
    }
    if (prefetch) index_.WillNeedRecords(candidates.data(), ahead);
  }
  if (exact) {
    if (limit != 0 && candidates.size() > limit) candidates.resize(limit);
    matches.swap(candidates);
    verified = matches.size();
  } else if (limit == 0 && (candidates.size() >= kParallelVerifyMin ||
                            (candidates.size() >= kSharedVerifyMin &&
                             index_.file().copy_reads()))) {  // (decided at the first need)
    std::vector<uint8_t> ok(candidates.size(), 0);
    // The bit terms' columns, read a piece at a time: a DOC_BANDS chunk covers thousands of
    // documents, and read by copy one candidate at a time it costs a pread each.
    std::vector<uint32_t> columns(bit_terms.empty() ? 0 : candidates.size());
    auto verify = [&](size_t begin, size_t end) {
      if (!bit_terms.empty()) index_.Columns(&candidates[begin], end - begin, &columns[begin]);
      for (size_t i = begin; i != end; ++i) {
        if (prefetch && i + kPrefetchAhead < end) {
          index_.PrefetchRecord(candidates[i + kPrefetchAhead]);
        }
        ok[i] = holds_all(candidates[i], bit_terms.empty() ? kNoRead : columns[i]);
      }
    };
    if (candidates.size() < kParallelVerifyMin) {  // read by copy
      util::RunShared((candidates.size() + kSharedVerifyPiece - 1) / kSharedVerifyPiece,
                      [&](size_t k) {
                        verify(k * kSharedVerifyPiece,
                               std::min(candidates.size(), (k + 1) * kSharedVerifyPiece));
                      },
                      candidates.size() >= kSharedVerifyStart ? util::HelperNeed::kStart
                                                              : util::HelperNeed::kIfPolling);
    } else {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, candidates.size(), 256),
                        [&](const tbb::blocked_range<size_t>& r) { verify(r.begin(), r.end()); });
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (ok[i]) matches.push_back(candidates[i]);
    }
    verified = candidates.size();
  } else {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (limit != 0 && matches.size() >= limit) break;
      if (prefetch && i + kPrefetchAhead < candidates.size())
        index_.PrefetchRecord(candidates[i + kPrefetchAhead]);
      ++verified;
      if (holds_all(candidates[i], kNoRead)) matches.push_back(candidates[i]);
    }
  }
  return matches;
}

std::vector<uint32_t> Searcher::Search(const std::vector<std::string>& terms, uint64_t limit,
                                       QueryStats* stats, const uint64_t* deleted,
                                       const std::vector<IdRange>* scope) const {
  const auto start = Clock::now();
  *stats = QueryStats{};
  stats->terms = terms.size();
  if (scope != nullptr && scope->empty()) {
    stats->total_us = MicrosSince(start);
    return {};
  }
  std::vector<RowTerm> planned;
  bool sparse = false;
  if (!LookUp(terms, &planned, &sparse)) {
    stats->absent_term = true;
    stats->parse_us = stats->total_us = MicrosSince(start);
    return {};
  }
  // A lone Bloom term's answer is its document list: exact, where its rows leave false
  // positives to verify by their forward records (~0.3 us a candidate against ~7 ns an id).
  if (planned.size() == 1 && !sparse && index_.HasList(planned[0].id)) {
    planned[0].sparse = sparse = true;
  }
  // Each phase's end is the next one's start (one clock read fewer a phase).
  const auto looked_up = Clock::now();
  stats->parse_us = Micros(start, looked_up);

  uint64_t all_candidates = 0;
  std::vector<uint32_t> candidates =
      CandidatesFor(&planned, true, stats, scope, deleted, &all_candidates);
  const auto anded = Clock::now();
  stats->and_us = Micros(looked_up, anded);
  // (After CandidatesFor: it may leave a Bloom term's list unread.)
  const Unsettled unsettled = UnsettledTerms(planned, sparse);
  // Thousands of candidates read by copy: verification, the merge and the stale-hit checks
  // will share their reads with the helper thread; have it running by then.
  if (limit == 0 && candidates.size() >= kSharedVerifyStart && index_.file().copy_reads())
    util::WakeHelper();

  // Exact and sparse rows answer their terms exactly. With only such terms, or with one Bloom
  // term whose df equals the candidate count (candidates contain all df true matches), the
  // candidates are the answer (counted before the scope: the df counts documents everywhere).
  const bool exact = (unsettled.verify_ids.empty() && unsettled.bit_terms.empty()) ||
                     (planned.size() == 1 && all_candidates == planned[0].df);
  uint64_t verified = 0;
  std::vector<uint32_t> matches = Verify(std::move(candidates), unsettled, exact, limit, &verified);
  stats->false_positives = verified - matches.size();
  stats->matches = matches.size();
  const auto verified_at = Clock::now();
  stats->verify_us = Micros(anded, verified_at);
  stats->total_us = Micros(start, verified_at);
  return matches;
}

}  // namespace bitsift::query
