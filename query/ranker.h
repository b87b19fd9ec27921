// Ranked answers: BM25 over the exact answers of a query's parts. The documents a query matches
// (or, with `any`, those matching at least one of its parts) are scored with the term
// frequencies and lengths their forward records hold (format/forward_store.h) and collection
// statistics taken over the whole set: N its live documents, a part's document frequency the
// size of its exact answer, the average length from the segments' totals. A document's score
// therefore does not depend on how the documents are split into segments or indexes.
#ifndef BITSIFT_QUERY_RANKER_H_
#define BITSIFT_QUERY_RANKER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "query/index_set.h"
#include "query/query_parser.h"

namespace bitsift::query {

// BM25's parameters: Lucene's and FTS5's defaults, with FTS5's (and Xapian's, PISA's) idf,
// ln((N - df + 0.5) / (df + 0.5)) floored at 1e-6: a part in most documents adds nearly
// nothing. Lucene's ln(1 + ...) keeps adding for such parts, and the stop words of pasted
// questions then weigh: MAP 0.1595 against 0.1973 with repeats counted on CISI
// (bench/ranking).
struct Bm25 {
  double k1 = 1.2;
  double b = 0.75;
};

struct RankedHit {
  uint32_t id = 0;  // global id in the set
  double score = 0;
};

// A part of a query that scores: a term, phrase or prefix outside exclusions (an OR's operands
// each), and how often the query names it (its score counts that many times, as FTS5's and
// Lucene's sums of repeated clauses do: a word a pasted question repeats matters more).
struct ScoringPart {
  const QueryNode* node = nullptr;
  uint32_t repeats = 1;
};

// The scoring parts of `query`, each once, in the order they first appear.
std::vector<ScoringPart> ScoringParts(const QueryNode& query);

// The query whose answer `any` ranks: the OR of the query's top-level parts, its exclusions
// kept. (A query of one part is itself.)
QueryNode AnyOf(const QueryNode& query);

// The statistics BM25 reads from a collection: over one set, or summed over the sets of
// several processes that each hold a part of the collection (bitsift-mpi's shards), so that a
// document's score does not depend on which part holds it.
struct CollectionStats {
  uint64_t documents = 0;                // live documents (N)
  uint64_t length = 0;                   // their lengths, summed
  std::vector<uint64_t> part_documents;  // each scoring part's df, in ScoringParts' order
  // Adds `other`'s counts (of the same query's parts) to these.
  void Add(const CollectionStats& other);
};

// The statistics of `set` for `query`'s scoring parts: its live documents, their length, and
// the size of each part's exact answer over the whole set. `text`, `parallel` and `stats` as
// Rank takes them. Throws as Evaluate throws.
CollectionStats CollectionStatsOf(const IndexSet& set, const QueryNode& query,
                                  const IndexSet::SegmentText& text, bool parallel,
                                  SetQueryStats* stats);

// The best `k` (0 = all) documents of `set` that `query` matches (with `any`: AnyOf(query)),
// best first (ties in path order), with their BM25 scores: the sum, over the scoring parts a
// document matches, of idf(part) x tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen)). A term's
// tf is its frequency in the document; a phrase or a prefix counts once. `scope`, `text`,
// `parallel`, `stats` and `unreadable` as IndexSet::Evaluate takes them (the scope selects the
// documents ranked; the statistics are the whole set's, or `global`'s if not null: N, the
// average length and each part's df then come from it, and a score is the one the documents of
// every part of the collection ranked together would give). Throws as Evaluate throws, and
// Error(kInvalidArgument) if `global` has not one df per scoring part.
std::vector<RankedHit> Rank(const IndexSet& set, const QueryNode& query, bool any, uint64_t k,
                            const IndexSet::SegmentText& text, bool parallel, SetQueryStats* stats,
                            const std::vector<IndexScope>* scope, std::vector<uint32_t>* unreadable,
                            const Bm25& params = {}, const CollectionStats* global = nullptr);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_RANKER_H_
