#include "answers/query_form.h"

#include <algorithm>
#include <utility>

#include "util/error.h"
#include "util/utf8.h"

namespace bitsift::answers {

std::optional<query::ParseError> QueryForm::Parse(std::vector<std::string> texts,
                                                  QuerySyntax syntax, bool arguments,
                                                  const tokenizer::TokenRules& rules,
                                                  QueryForm* form) {
  const query::QueryMode mode =
      syntax == QuerySyntax::kWords ? query::QueryMode::kWords : query::QueryMode::kLanguage;
  if (syntax == QuerySyntax::kWords && !arguments) {
    if (auto error = query::ParseWordTerms(texts.at(0), &form->terms_, rules)) return error;
    form->plain_ = form->words_ = true;
  } else {
    query::ParsedQuery parsed = arguments ? query::ParseQueryArguments(texts, mode, rules)
                                          : query::ParseQueryString(texts.at(0), mode, rules);
    if (!parsed.ok()) return parsed.error;
    form->tree_ = std::move(parsed.root);
    form->plain_ = query::IsPlainConjunction(form->tree_, &form->terms_);
  }
  form->texts_ = std::move(texts);
  form->syntax_ = syntax;
  form->arguments_ = arguments;
  return std::nullopt;
}

const query::QueryNode& QueryForm::root() const {
  if (words_) std::call_once(root_made_, [this] { tree_ = query::WordsRoot(terms_); });
  return tree_;
}

const QueryForm& QueryForm::Under(const tokenizer::TokenRules& rules) const {
  const bool ascii = std::all_of(texts_.begin(), texts_.end(), [](const std::string& t) {
    return FindNonAscii(t, 0) == t.size();
  });
  // ASCII text folds alike under either diacritics rule; stems change what a word stands for.
  if (rules == tokenizer::TokenRules{} || (ascii && !rules.stem_english)) return *this;
  std::call_once(other_made_, [&] {
    auto other = std::make_unique<QueryForm>();
    if (auto error = Parse(texts_, syntax_, arguments_, rules, other.get())) {
      other_error_ =
          "query: " + error->reason + " (at byte " + std::to_string(error->position) + ")";
    } else {
      other_ = std::move(other);
    }
  });
  Ensure(other_ != nullptr, ErrorKind::kInvalidArgument, other_error_);
  return *other_;
}

}  // namespace bitsift::answers
