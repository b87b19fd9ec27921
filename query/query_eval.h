// Answering a parsed query (query_parser.h) over one segment, exactly.
//
//   required terms  the rows of all of them ANDed (Searcher::Search), candidates verified
//                   against their forward records;
//   OR              the union of its operands' exact answers, or, inside an AND that has
//                   candidates already, a test of each candidate's forward record;
//   exclusion       candidates whose forward record (or text, for a phrase) matches are dropped;
//   prefix          the dictionary's terms with that prefix (a scan of the segment's term
//                   bytes: O(term bytes) per prefix and query), as an OR of them;
//   phrase          its terms ANDed as above, then each candidate is decided from the
//                   positions its forward record holds for frequent terms
//                   (format::ForwardRecordLists), or else its text is re-read through the
//                   TextProvider and tokenized with offsets to check that the tokens are
//                   contiguous and in order (query_matcher.h). docs/design.md, "Phrases".
//
// A candidate whose text is needed but cannot be read is reported (EvalResult::unreadable),
// never counted as a match, and never taken to lack an excluded phrase.
#ifndef BITSIFT_QUERY_QUERY_EVAL_H_
#define BITSIFT_QUERY_QUERY_EVAL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/segment_reader.h"
#include "query/query_parser.h"
#include "query/scope.h"
#include "query/searcher.h"

namespace bitsift::query {

// Reads the text of document `doc` (a local id of the segment) as it was indexed into *text.
// Returns false if it cannot (the file is gone, changed since indexing, unreadable). Called
// only for candidates of phrases, at most once per document and query; from several threads
// at once (for different documents) unless EvalOptions::parallel is false.
using TextProvider = std::function<bool(uint32_t doc, std::string* text)>;

struct EvalOptions {
  uint64_t limit = 0;                 // at most this many documents (the first ones); 0 = all
  const uint64_t* deleted = nullptr;  // bitmap over local ids: never returned, never read
  // The only local ids that may be returned (sorted disjoint ranges, RangesUnder), or null for
  // all: others are dropped before verification, never read and not counted against the limit.
  const std::vector<IdRange>* scope = nullptr;
  TextProvider text;            // needed when the query has a phrase
  tokenizer::TokenRules rules;  // the index's: texts are tokenized under them
  bool parallel = true;         // texts of many candidates are checked on TBB's threads
};

struct EvalStats : QueryStats {
  uint64_t row_searches = 0;       // row ANDs run (Searcher::Search calls)
  uint64_t prefix_terms = 0;       // dictionary terms the prefixes expanded to
  uint64_t prefix_scan_bytes = 0;  // dictionary block bytes decoded to expand them
  uint64_t forward_scans = 0;      // documents whose forward records were scanned for a
                                   // prefix with too many terms for row ANDs
  uint64_t phrase_candidates = 0;  // documents whose text was checked for a phrase
  uint64_t phrase_positions = 0;   // phrase tests decided by a record's positions
  uint64_t phrase_pairs = 0;       // of those, refuted by the record's pair filter alone
  uint64_t text_bytes = 0;         // bytes of text read and tokenized for that
  uint64_t unreadable = 0;         // documents whose text was needed but could not be read
  double phrase_us = 0;            // time reading and tokenizing texts
};

struct EvalResult {
  std::vector<uint32_t> documents;   // matching local ids, ascending
  std::vector<uint32_t> unreadable;  // undecided: their text was needed and could not be read
};

// Answers `query` (a tree from ParseQueryString/ParseQueryArguments without error) over the
// segment `index` exactly. A plain conjunction of terms runs Searcher::Search unchanged. When
// the query cannot match in this segment for want of a term (an exact term absent from its
// dictionary, a prefix of no term), stats->absent_term is set and no row is read.
// Throws Error(kCorrupt) if a damaged part of the segment is met, Error(kInvalidArgument) if
// the query has a phrase and options.text is empty. Exceptions thrown by options.text pass.
EvalResult Evaluate(const format::SegmentReader& index, const Searcher& searcher,
                    const QueryNode& query, const EvalOptions& options, EvalStats* stats);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_QUERY_EVAL_H_
