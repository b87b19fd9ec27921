// A query as the library keeps it once parsed: what bitsift::ParsedQuery holds. A plain
// conjunction keeps its sorted terms (answered by the rows and the forward store alone); a word
// list makes its tree only when asked; any query can be read again under another index's token
// rules (Under).
#ifndef BITSIFT_ANSWERS_QUERY_FORM_H_
#define BITSIFT_ANSWERS_QUERY_FORM_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bitsift/query.h"
#include "query/query_parser.h"
#include "tokenizer/tokenizer.h"

namespace bitsift::answers {

class QueryForm {
 public:
  // Parses `texts` (one query string, or command-line arguments when `arguments`) in `syntax`
  // under `rules` into *form (a new object). Returns the parse error, or nullopt. Never throws
  // for a text that is not a query; throws Error only when ICU fails.
  static std::optional<query::ParseError> Parse(std::vector<std::string> texts, QuerySyntax syntax,
                                                bool arguments, const tokenizer::TokenRules& rules,
                                                QueryForm* form);

  QueryForm() = default;
  QueryForm(const QueryForm&) = delete;
  QueryForm& operator=(const QueryForm&) = delete;

  // Whether it is a conjunction of terms alone; terms() are then its terms, sorted and
  // distinct.
  bool plain() const { return plain_; }
  const std::vector<std::string>& terms() const { return terms_; }
  // The query's tree (a word list's is made the first time it is asked for: answering it
  // needs only terms(), and its nodes cost an allocation a term, for every query of a
  // --queries file). Safe to call from several threads.
  const query::QueryNode& root() const;

  // The query as an index built under `rules` reads it: itself for the default rules or a
  // query of ASCII text (which all rules read alike); else parsed again, once. Throws
  // Error(kInvalidArgument) if that parse fails. Safe to call from several threads.
  const QueryForm& Under(const tokenizer::TokenRules& rules) const;

 private:
  bool plain_ = false;
  bool words_ = false;  // a word list (QuerySyntax::kWords string): root() made of terms_
  std::vector<std::string> terms_;
  mutable query::QueryNode tree_;
  mutable std::once_flag root_made_;

  // What was parsed, under the default token rules: to read it again (Under).
  std::vector<std::string> texts_;
  QuerySyntax syntax_ = QuerySyntax::kLanguage;
  bool arguments_ = false;
  mutable std::once_flag other_made_;
  mutable std::unique_ptr<QueryForm> other_;
  mutable std::string other_error_;
};

}  // namespace bitsift::answers

#endif  // BITSIFT_ANSWERS_QUERY_FORM_H_
