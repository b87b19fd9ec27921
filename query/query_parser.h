// The query language: a query string -> a tree of terms, phrases, prefixes, OR and exclusions.
//
// Grammar (README "Query language" has examples):
//
//   query    := item+                         items are ANDed
//   item     := '-' primary                   exclusion: drop documents matching primary
//             | primary ('OR' primary)*       either of adjacent primaries
//   primary  := '"' text '"'                  phrase: its tokens contiguous and in order
//             | '(' item+ ')'                 group
//             | word '*'                      prefix: any term starting with word's term
//             | word                          one word: its term; several: a phrase
//
// Lexical rules, decided as Xapian's QueryParser decides them where the specification is open:
//   - Words are separated by ASCII whitespace; each word is tokenized under the token contract
//     (tokenizer.h). One word of the contract is its whole term (`Straße` is `strasse`,
//     `stdio.h` the term `stdio.h`, `José` the term `jose`); text that makes several words is
//     the phrase of their positions (`std::vector` is "std vector", `obj.method(x)` is
//     "obj method x", `布隆过滤器` the phrase of its bigrams), and punctuation alone is nothing.
//   - A quoted phrase is the sequence of its text's positions: a word's parts stand for it
//     (`"stdio.h"` is the phrase "stdio h", which `<stdio.h>` and `stdio h` both hold).
//   - `OR` is an operator only in upper case and as a word of its own; `or`, `Or`, `"OR"` and
//     `-OR` are ordinary text. `AND` and `NOT` are ordinary words: adjacency already means AND
//     and `-` excludes, and since OR binds tighter than AND here (as in web search boxes, unlike
//     Xapian's explicit AND), an explicit AND would read differently to Xapian users.
//   - `-` excludes only at the start of a word (start of the query, after whitespace or `(`)
//     and only when a word, quote or `(` follows at once: `a - b` and `e-mail` exclude nothing.
//   - `*` makes a prefix only at the end of a word (`licen*`; `**` counts as one); elsewhere it
//     is punctuation. The text before it is normalized as a word is (`Licen*` = `licen*`). If
//     the word splits into several tokens the last one is the prefix of a phrase
//     (`std::vec*`). Inside quotes `*` is plain text.
//   - `"`, U+201C and U+201D all open and close phrases. A phrase without tokens (`""`) is
//     nothing.
//   - `(` opens a group at the start of a word; inside a word it is text, and so is the `)`
//     that closes it (`f(x)` is the phrase "f x"). Any other `)` closes a group.
//   - Something with no tokens (`&`, `""`, `()`) is dropped, as Xapian drops it.
//
// Errors (ParseError: byte position + reason; no exception is thrown): an unbalanced quote or
// parenthesis; an OR without a term on both sides; an exclusion as an operand of OR (write
// `-(a OR b)` or `-a -b`); a `*` with no letters or digits before it; a query, group or OR
// operand made only of exclusions; a query with no terms.
//
// In words mode (QueryMode::kWords, 0.1's meaning) nothing is an operator: every token of the
// text is a required term (quotes, dashes, stars and OR are plain text, `grep -F` in spirit).
#ifndef BITSIFT_QUERY_QUERY_PARSER_H_
#define BITSIFT_QUERY_QUERY_PARSER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace bitsift::query {

enum class QueryMode { kLanguage, kWords };

// A node of a parsed query. After parsing, a tree is normalized: an AND has at least two
// parts or an exclusion, an OR at least two operands and no OR operand, a phrase at least two
// elements, and AND operands are never ANDs themselves.
struct QueryNode {
  enum class Kind { kTerm, kPrefix, kPhrase, kAnd, kOr };
  Kind kind = Kind::kAnd;
  // kTerm: the term. kPrefix: the normalized prefix. kPhrase: its tokens in order.
  std::vector<std::string> terms;
  // kPhrase: joined[i] (i >= 1) is true when tokens i - 1 and i are overlapping bigrams of one
  // kana/ideographic run of the query; the document's tokens must then overlap too, so a CJK
  // phrase matches as a substring. Otherwise only contiguity in the token sequence is needed.
  std::vector<bool> joined;
  bool last_is_prefix = false;      // kPhrase: the last token matches as a prefix
  std::vector<QueryNode> children;  // kAnd: required parts; kOr: operands
  std::vector<QueryNode> excluded;  // kAnd: documents matching any of these are dropped
  size_t position = 0;              // byte offset of the node's text in its argument

  // A compact form for tests and messages: term, prefix*, "a b", "布隆 隆过"~ (joined bigrams
  // marked by ~ between them: "布隆~隆过"), (and x y -z), (or x y).
  std::string ToString() const;
};

struct ParseError {
  size_t argument = 0;  // the argument (0 for a single string)
  size_t position = 0;  // byte offset in that argument
  std::string reason;   // e.g. "unbalanced quote: no closing \""
};

// A parse: either a query or an error.
struct ParsedQuery {
  QueryNode root;
  std::optional<ParseError> error;
  bool ok() const { return !error.has_value(); }
};

// Parses one query string (a line of a --queries file, the string an embedder passes), its
// words tokenized under `rules` (the index's). Never throws (an ICU failure becomes an error
// too).
ParsedQuery ParseQueryString(std::string_view text, QueryMode mode,
                             tokenizer::TokenRules rules = {}) noexcept;

// Parses command-line arguments as one query: the arguments joined with single spaces, read as
// ParseQueryString reads a string (the rule of Xapian's quest and of web search boxes), so
// `gpl bsd` and `'gpl bsd'` are the same AND and a phrase needs its quotes. An error names the
// argument that holds it and the byte offset there.
ParsedQuery ParseQueryArguments(const std::vector<std::string>& args, QueryMode mode,
                                tokenizer::TokenRules rules = {}) noexcept;

// Words mode without the tree: sets *terms to the sorted, distinct terms of `text`, of which
// ParseQueryString(text, QueryMode::kWords, rules) is the AND (its root is WordsRoot(*terms)),
// or returns the error that parse gives (no terms; ICU's data missing). The terms are the
// text's words and bigrams: a document holds a word's parts whenever it holds the word. For a
// caller that needs the tree only sometimes: its nodes cost an allocation a term. Never throws.
std::optional<ParseError> ParseWordTerms(std::string_view text, std::vector<std::string>* terms,
                                         tokenizer::TokenRules rules = {}) noexcept;
// The tree of a words-mode query of `terms` (sorted, distinct, at least one): the term, or the
// AND of the terms.
QueryNode WordsRoot(std::vector<std::string> terms);

// The tokens a query text stands for, with joined[i] as QueryNode::joined: with `word` (an
// unquoted word of the language) and a text of one word under the contract, that word's whole
// term alone; otherwise the text's phrase positions in order (words without parts, parts,
// bigrams). Throws std::runtime_error if ICU's data cannot be loaded.
void TokenizeQueryText(std::string_view text, bool word, const tokenizer::TokenRules& rules,
                       std::vector<std::string>* tokens, std::vector<bool>* joined);

// Whether the query is a plain conjunction of terms (0.1's query): no phrase, prefix, OR or
// exclusion. Then *terms gets its terms, sorted and distinct.
bool IsPlainConjunction(const QueryNode& root, std::vector<std::string>* terms);

}  // namespace bitsift::query

#endif  // BITSIFT_QUERY_QUERY_PARSER_H_
