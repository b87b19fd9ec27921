// Answering a conjunctive query: parse -> look up terms -> AND their rows band by band ->
// verify candidates against the forward store. The result is exact.
#ifndef BITSIFT_QUERY_SEARCHER_H_
#define BITSIFT_QUERY_SEARCHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/bloom.h"
#include "format/segment_reader.h"
#include "query/scope.h"

namespace bitsift::query {

struct QueryStats {
  uint64_t terms = 0;            // distinct query terms
  uint64_t candidates = 0;       // documents whose signatures matched (verified or not)
  uint64_t false_positives = 0;  // candidates removed by verification
  uint64_t matches = 0;          // documents returned
  uint64_t rows_read = 0;        // rows ANDed, summed over bands
  uint64_t bytes_read = 0;       // row bytes actually read (zero blocks skip the rest)
  bool absent_term = false;      // a term is in no document: answered without reading a row
  // Bands where the row filter (FilterByRows) mapped the rows' set bits to documents
  // (BAND_DOCS), and where it tested the candidates' columns (DOC_BANDS).
  uint64_t bands_by_bits = 0, bands_by_columns = 0;
  double parse_us = 0, and_us = 0, verify_us = 0, total_us = 0;
};

// Runs queries against one format::SegmentReader. Safe to use from several threads at once.
class Searcher {
 public:
  explicit Searcher(const format::SegmentReader& index) : index_(index) {}

  // Returns the sorted distinct tokens of all arguments together (the token contract).
  // Throws Error(kInvalidArgument) if there are none (a query of punctuation, say).
  static std::vector<std::string> ParseQuery(const std::vector<std::string>& args);

  // Returns the ids (ascending, i.e. in path order) of the documents containing every term,
  // at most `limit` of them (0 = no limit). Terms absent from the dictionary give an empty
  // result at once. Throws Error(kCorrupt) if a damaged record is met.
  // `deleted`, if not null, is a bitmap over document ids: those documents are never returned
  // (nor counted against the limit). `scope`, if not null, holds the only ids that may be
  // returned (sorted, disjoint ranges, as RangesUnder gives): candidates outside it are dropped
  // as the rows' bits become ids, before verification and the limit.
  std::vector<uint32_t> Search(const std::vector<std::string>& terms, uint64_t limit,
                               QueryStats* stats, const uint64_t* deleted = nullptr,
                               const std::vector<IdRange>* scope = nullptr) const;

  // Returns the documents whose signature rows contain every term (ascending): a superset of
  // the exact answer, before verification and without the dictionary's absent-term shortcut.
  // Frequent terms use their exact rows, the others their k Bloom rows; rows are ANDed rarest
  // term first. With sparse terms (format/sparse_rows.h), the candidates are the documents of
  // all of them (their lists intersected) and no other row is read.
  std::vector<uint32_t> Candidates(const std::vector<std::string>& terms, bool parallel,
                                   QueryStats* stats) const;

 private:
  // A term as the rows see it: its hash, its exact-row id if it has one, its df (0 if absent),
  // its id (if df > 0) and whether the query takes its list (a sparse term, or a Bloom term
  // whose list the reader prefers: format::SegmentReader::UsesList) instead of its rows. `settled`:
  // the candidates are exact for it already (its exact rows filtered them: FilterByRows).
  struct RowTerm {
    uint64_t hash;
    int64_t exact;
    uint32_t df;
    uint32_t id;
    bool sparse;
    bool settled = false;
  };
  RowTerm Plan(const std::string& term) const { return Plan(term, format::HashTerm(term)); }
  // Plan for a term whose HashTerm is `hash`.
  RowTerm Plan(const std::string& term, uint64_t hash) const;
  // Plan for a term found in the dictionary under `id`.
  RowTerm PlanFound(uint32_t id, uint64_t hash) const;
  // One band's candidates (document ids in `scope`, or all if null, in column order) and what
  // reading them cost, added to *o.
  struct BandOutput {
    std::vector<uint32_t> ids;
    uint64_t rows_read = 0;
    uint64_t bytes_read = 0;
    uint64_t scoped_out = 0;  // candidates outside the scope
  };
  void BandCandidates(uint64_t b, const std::vector<RowTerm>& terms, bool parallel,
                      const std::vector<IdRange>* scope, BandOutput* o) const;
  // Band b's AND of the rows of `terms` into *bits (words_per_row words, a bit per column; all
  // set if the terms have no row there), its rows and bytes read added to *o.
  void BandBits(uint64_t b, const std::vector<RowTerm>& terms, bool parallel,
                std::vector<uint64_t>* bits, BandOutput* o) const;
  // The row ids band b's AND reads for `terms`, each once, in the order the terms give them.
  void RowsOf(const format::BandRecord& band, const std::vector<RowTerm>& terms,
              std::vector<uint64_t>* row_ids) const;
  // Asks for every band's rows of `terms` to be read ahead at once (a hint for a cold index:
  // format::SegmentReader::AdviseRandomAccess), before the bands are ANDed one after another.
  void WillNeedRows(const std::vector<RowTerm>& terms) const;
  // The documents of every sparse term of *terms (in `scope` if not null), ascending: their
  // lists intersected, rarest first. *all, if not null, receives the number before the scope.
  // A Bloom term whose list is longer than the candidates so far warrant
  // (kListIdsPerCandidate, searcher.cc) is not read: its `sparse` becomes false, and its rows
  // or the candidates' forward records settle it.
  std::vector<uint32_t> SparseCandidates(std::vector<RowTerm>* terms, QueryStats* stats,
                                         const std::vector<IdRange>* scope, uint64_t* all) const;
  // Drops from *candidates (a sparse query's, ascending) the documents whose rows show they
  // lack one of the non-sparse terms of `terms`, when that pays (kRowFilterMinCandidates,
  // searcher.cc). Rows have no false negatives, so no match is dropped; verification still
  // settles the Bloom terms. The exact terms' rows are exact: when the filter runs, it marks
  // them `settled`, and verification tests none of their bits again.
  void FilterByRows(std::vector<RowTerm>* terms, std::vector<uint32_t>* candidates,
                    QueryStats* stats) const;
  // For FilterByRows: each candidate's column within its band (DOC_BANDS), grouped by band:
  // band b's {column - b's first column, position in candidates} are
  // (*by_band)[(*band_first)[b], (*band_first)[b + 1]); candidates in no band (no terms) come
  // last, after band_count() bands. Throws Error(kCorrupt) for a column outside the bands.
  void ReadColumnsByBand(const std::vector<uint32_t>& candidates,
                         std::vector<std::pair<uint32_t, uint32_t>>* by_band,
                         std::vector<size_t>* band_first) const;
  // The candidates of `terms` (in `scope` if not null, and not in `deleted`, a bitmap over the
  // segment's ids, if not null), ascending. *all, if not null, receives the number of
  // candidates before the scope and the deletions were applied (what a term's df counts).
  // With a sparse term, they are SparseCandidates (which may turn a Bloom term's `sparse` off:
  // the caller settles the terms by their flags afterwards); otherwise the rows' AND.
  std::vector<uint32_t> CandidatesFor(std::vector<RowTerm>* terms, bool parallel, QueryStats* stats,
                                      const std::vector<IdRange>* scope, const uint64_t* deleted,
                                      uint64_t* all) const;
  // Search's phases. LookUp: every term looked up in the dictionary at once (their cache
  // misses overlap: DictionaryView::FindEvery) and planned, rarest first, into *planned;
  // *sparse: one of them takes its list. Returns false if a term is absent (TERM_FILTER or the
  // dictionary), which settles the query.
  bool LookUp(const std::vector<std::string>& terms, std::vector<RowTerm>* planned,
              bool* sparse) const;
  // The terms the candidates of `planned` do not settle (after CandidatesFor): exact terms of
  // a sparse query, tested by one bit of their rows per candidate (bit_terms: exact-row ids),
  // and the others, by the candidates' forward records (verify_ids: term ids, ascending).
  struct Unsettled {
    std::vector<uint32_t> verify_ids, bit_terms;
  };
  Unsettled UnsettledTerms(const std::vector<RowTerm>& planned, bool sparse) const;
  // The candidates (ascending) that hold every unsettled term, at most `limit` (0 = all); with
  // `exact` the candidates themselves. *verified: how many candidates were tested.
  std::vector<uint32_t> Verify(std::vector<uint32_t> candidates, const Unsettled& u, bool exact,
                               uint64_t limit, uint64_t* verified) const;

  const format::SegmentReader& index_;
};

// Searcher::FilterByRows' choice at a band of `band_docs` documents whose rows' AND left `set`
// bits, before the columns of the `candidates` candidates have been read (an index of
// `doc_count` documents in `band_count` bands): whether to read the candidates' columns
// (DOC_BANDS, once for this band and every later one) rather than map the set bits to
// documents (BAND_DOCS). With the pages in the process, the lookups decide: columns once the
// bits outnumber the candidates. Read by copy (`copies`: a one-shot query, where each chunk
// is a pread and a hash, each fresh page a fault), the chunks decide: the band's BAND_DOCS
// chunks under its bits against the DOC_BANDS chunks under the candidates plus the fresh
// pages of the columns' arrays (16 bytes a candidate). linux-paras, `mutex lock` (10,983
// candidates of `mutex`'s list, `lock` an exact term): band 0's bits, fewer than the
// candidates, spread over all 422 chunks of its BAND_DOCS, against DOC_BANDS' 164; the AND
// took 1.3 ms, 0.9 ms with the columns.
bool RowFilterColumnsCheaper(bool copies, uint64_t set, uint64_t band_docs, uint64_t candidates,
                             uint64_t doc_count, uint64_t band_count);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_SEARCHER_H_
