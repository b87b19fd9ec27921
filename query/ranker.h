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

// The best `k` (0 = all) documents of `set` that `query` matches (with `any`: AnyOf(query)),
// best first (ties in path order), with their BM25 scores: the sum, over the scoring parts a
// document matches, of idf(part) x tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen)). A term's
// tf is its frequency in the document; a phrase or a prefix counts once. `scope`, `text`,
// `parallel`, `stats` and `unreadable` as IndexSet::Evaluate takes them (the scope selects the
// documents ranked; the statistics are the whole set's). Throws as Evaluate throws.
std::vector<RankedHit> Rank(const IndexSet& set, const QueryNode& query, bool any, uint64_t k,
                            const IndexSet::SegmentText& text, bool parallel, SetQueryStats* stats,
                            const std::vector<IndexScope>* scope, std::vector<uint32_t>* unreadable,
                            const Bm25& params = {});

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_RANKER_H_
