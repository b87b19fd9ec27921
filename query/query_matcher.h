// Finding a query's terms, prefixes and phrases in a document's text, by position: the exact
// check of phrases (query_eval) and the spans of matching lines (answers/lines) both come from
// one pass of the offsets tokenizer over the text.
#ifndef BITSIFT_QUERY_QUERY_MATCHER_H_
#define BITSIFT_QUERY_QUERY_MATCHER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "query/query_parser.h"
#include "tokenizer/tokenizer.h"

namespace bitsift::query {

// A byte range [begin, end) of a text, where pattern `pattern` occurs (QueryMatcher's).
struct MatchSpan {
  uint64_t begin = 0, end = 0;
  uint32_t pattern = 0;
  bool operator==(const MatchSpan& o) const {
    return begin == o.begin && end == o.end && pattern == o.pattern;
  }
};

// The patterns of a query: one per term, prefix and phrase node of its tree (a term or prefix
// is a pattern of one element). A pattern of one element occurs where a token of the text
// matches it, whatever the token's role (a word, a whole or a part); a longer one where
// consecutive phrase positions of the text (tokenizer::IsPosition) match its elements in
// order. An exact element matches by equality, a prefix element (a phrase's last, or a prefix
// node) by starting with it, and an element joined to the previous one (QueryNode::joined)
// only by a token that continues the previous token's run.
//
// Not thread-safe (it owns a tokenizer and scratch state); use one per thread. The query tree
// given to the constructor must outlive it (nodes are identified by address).
class QueryMatcher {
 public:
  // Texts are tokenized under `rules` (the index's).
  explicit QueryMatcher(const QueryNode& root, tokenizer::TokenRules rules = {});

  size_t pattern_count() const { return patterns_.size(); }
  // The pattern of a term, prefix or phrase node of the tree, or -1.
  int PatternOf(const QueryNode* node) const;
  // Whether pattern p lies under no exclusion (its occurrences are what a user looks for).
  bool positive(size_t p) const { return patterns_[p].positive; }
  // Whether pattern p comes from a phrase node.
  bool is_phrase(size_t p) const { return patterns_[p].elements.size() > 1; }
  // The first pattern with the same elements as p (p itself if none comes before it): a term,
  // prefix or phrase the query names twice (`a a`, `a OR (a b)`) is one pattern by this.
  uint32_t first_alike(size_t p) const { return first_alike_[p]; }

  struct Result {
    std::vector<bool> found;  // found[p]: pattern p occurs in the text
    // With spans: every occurrence of every positive pattern (MatchSpan::pattern), from its
    // first token's begin to its last token's end, cut at each line break between two of its
    // tokens (one span for each line holding its tokens: a phrase across lines marks the lines
    // of its words only); a whole word's span covers the word, a part's its own characters.
    // Neither sorted nor merged.
    std::vector<MatchSpan> spans;
  };
  // Tokenizes text (the offsets tokenizer) and records where the patterns occur. Without
  // `spans`, only the patterns marked in `wanted` (size pattern_count()) are sure to be
  // reported, and the scan stops as soon as every one of them has been found. Without spans, a
  // text of ASCII bytes only is not tokenized whole: each wanted pattern's bytes are searched
  // for, and only the lines around such places are tokenized (FindInAscii). Throws
  // std::runtime_error only if ICU fails.
  void Scan(std::string_view text, bool spans, const std::vector<bool>& wanted, Result* out);

 private:
  struct Element {
    std::string text;
    bool prefix = false;
    bool joined = false;  // must continue the previous token's run
  };
  struct Pattern {
    std::vector<Element> elements;
    bool positive = true;
    const QueryNode* node = nullptr;
  };
  struct Hit {
    uint32_t pattern;
    uint32_t element;
  };
  class Sink;
  // Lets the token map be searched with a string_view (no string built per token).
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  void Collect(const QueryNode& node, bool positive);
  // Calls consider(hit) for every element the token `token` matches: exactly, as a prefix, or
  // by its stem.
  template <typename F>
  void ForEachHit(std::string_view token, F&& consider) const;
  // For a text of ASCII bytes only (lowered A-Z -> a-z in `lower`): whether pattern p occurs,
  // or -1 if this cannot tell (a window too long). NFKC_Casefold maps ASCII only by lowering
  // A-Z, and every ASCII letter or digit is in a kept word segment, so where tokens are adjacent
  // in the token sequence the bytes hold the first's bytes, then bytes other than letters and
  // digits, then the second's (AsciiEnd finds such places). A place is then settled by
  // tokenizing the window around it between safe cuts (after a space, tab or newline: the cuts
  // that chunking makes, which leave the tokens unchanged). No such place: p does not occur.
  int FindInAscii(size_t p, std::string_view text, std::string_view lower);
  // For a text that holds non-ASCII bytes (`lower`: its ASCII letters lowered, other bytes as
  // they are): whether pattern p occurs, or -1 if this cannot tell. The text is cut into pieces
  // at safe places (after a space, tab or newline, before an ASCII byte: chunking may cut
  // there, so tokens never span them). Maximal runs of ASCII pieces are searched as
  // FindInAscii does; each piece with a non-ASCII byte is tokenized with enough pieces on each
  // side to hold the phrase's other tokens (a piece with an ASCII letter or digit holds at
  // least one token), so an occurrence that touches such a piece, or spans one without tokens,
  // is seen there.
  int FindInMixed(size_t p, std::string_view text, std::string_view lower);
  // Whether pattern p occurs in text[begin, end) (cut at safe places), tokenized whole; -1 if
  // the window is too long to be sure that chunking would not cut it elsewhere.
  int FindInWindow(size_t p, std::string_view text, size_t begin, size_t end);
  // The largest end of the bytes of elements e.. of pattern p following byte i as above, or
  // npos if they cannot follow.
  size_t AsciiEnd(size_t p, size_t e, size_t i, std::string_view lower) const;

  std::vector<Pattern> patterns_;
  std::vector<uint32_t> first_alike_;  // first_alike(p)
  std::unordered_map<std::string, std::vector<Hit>, Hash, std::equal_to<>>
      exact_;                                          // token -> elements it matches
  std::vector<std::pair<std::string, Hit>> prefixes_;  // prefix elements
  std::unordered_map<std::string, std::vector<Hit>, Hash, std::equal_to<>>
      stems_;           // stem term (tokenizer/stemmer.h) -> elements whose tokens have that stem
  size_t longest_ = 1;  // elements of the longest pattern
  tokenizer::Tokenizer tokenizer_;
  std::string lower_;         // scratch: the lowered ASCII text
  std::vector<bool> single_;  // scratch: one pattern wanted
  Result window_;             // scratch: the result of one window
};

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_QUERY_MATCHER_H_
