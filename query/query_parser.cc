#include "query/query_parser.h"

#include <algorithm>
#include <exception>
#include <new>

#include "tokenizer/stemmer.h"
#include "tokenizer/tokenizer.h"

namespace bitsift::query {
namespace {

using Kind = QueryNode::Kind;

// Deeper nesting is refused (recursion depth; no real query nests this deep).
constexpr const char* kWildcardPlace =
    "a wildcard * is supported only at the end of a word, once (licen* finds license and "
    "licensed); a * elsewhere and ? are not (quote the text, or use --words, to search for it "
    "as words)";
constexpr int kMaxDepth = 64;

const char* const kOrNeedsTerms = "OR must stand between two terms";
const char* const kExclusionInOr =
    "an exclusion cannot be an operand of OR (write -(a OR b) to exclude both, or -a -b)";
const char* const kOnlyExclusions =
    "only exclusions: a query, group or OR operand needs a term that is not excluded";
const char* const kNoTerms = "the query has no terms (only punctuation, symbols or spaces?)";

struct Failure {
  size_t position;
  std::string reason;
};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Bytes of the quote character at text[i] ('"', U+201C or U+201D), or 0.
size_t QuoteLength(std::string_view text, size_t i) {
  if (text[i] == '"') return 1;
  if (text.size() - i >= 3 && text[i] == '\xE2' && text[i + 1] == '\x80' &&
      (text[i + 2] == '\x9C' || text[i + 2] == '\x9D')) {
    return 3;
  }
  return 0;
}

// The end of the word starting at i: it stops at whitespace, a quote, or a ')' that does not
// close a '(' of the word itself.
size_t WordEnd(std::string_view text, size_t i) {
  int local = 0;
  for (size_t start = i; i < text.size(); ++i) {
    char c = text[i];
    if (IsSpace(c) || QuoteLength(text, i) > 0) break;
    if (c == '(' && i > start) ++local;
    if (c == ')') {
      if (local == 0) break;
      --local;
    }
  }
  return i;
}

// Whether the '-' at text[i] starts an exclusion: something other than whitespace, '-' or ')'
// follows at once.
bool IsExclusionAt(std::string_view text, size_t i) {
  return text[i] == '-' && i + 1 < text.size() && !IsSpace(text[i + 1]) && text[i + 1] != '-' &&
         text[i + 1] != ')';
}

QueryNode TokensNode(std::vector<std::string> tokens, std::vector<bool> joined, bool prefix,
                     size_t position) {
  QueryNode node;
  node.position = position;
  if (tokens.size() == 1) {
    node.kind = prefix ? Kind::kPrefix : Kind::kTerm;
  } else {
    node.kind = Kind::kPhrase;
    node.joined = std::move(joined);
    node.last_is_prefix = prefix;
  }
  node.terms = std::move(tokens);
  return node;
}

// ANDs `part` into `and_node`: an AND's parts and exclusions are merged into it.
void AddPart(QueryNode& and_node, QueryNode part) {
  if (part.kind == Kind::kAnd) {
    for (QueryNode& c : part.children) and_node.children.push_back(std::move(c));
    for (QueryNode& e : part.excluded) and_node.excluded.push_back(std::move(e));
  } else {
    and_node.children.push_back(std::move(part));
  }
}

// An AND of one part and no exclusion is that part.
QueryNode Simplify(QueryNode and_node) {
  if (and_node.kind == Kind::kAnd && and_node.children.size() == 1 && and_node.excluded.empty()) {
    QueryNode only = std::move(and_node.children[0]);
    return only;
  }
  return and_node;
}

class Parser {
 public:
  Parser(std::string_view text, const tokenizer::TokenRules& rules) : text_(text), rules_(rules) {}

  // Parses items until the end (depth 0) or the ')' closing the group opened at open_pos.
  // Returns an AND node (possibly without parts).
  QueryNode ParseItems(int depth, size_t open_pos) {
    if (depth > kMaxDepth) throw Failure{open_pos, "too many nested parentheses"};
    QueryNode group;
    group.kind = Kind::kAnd;
    group.position = open_pos;
    for (;;) {
      SkipSpace();
      if (i_ == text_.size()) {
        if (depth > 0) throw Failure{open_pos, "unbalanced parenthesis: this ( is never closed"};
        break;
      }
      if (text_[i_] == ')') {
        if (depth == 0) throw Failure{i_, "unbalanced parenthesis: ) without a ("};
        ++i_;
        break;
      }
      if (IsExclusionAt(text_, i_)) {
        ++i_;
        Primary p = ParsePrimary(depth, /*or_is_keyword=*/false);
        if (std::optional<size_t> or_at = NextOr()) throw Failure{*or_at, kExclusionInOr};
        if (p.kind == Primary::kNode) group.excluded.push_back(std::move(p.node));
        continue;
      }
      Primary first = ParsePrimary(depth);
      if (first.kind == Primary::kOr) throw Failure{first.position, kOrNeedsTerms};
      QueryNode either;
      either.kind = Kind::kOr;
      either.position = first.position;
      bool any_nothing = first.kind == Primary::kNothing;
      size_t first_or = 0;
      if (first.kind == Primary::kNode) AddOperand(either, std::move(first.node));
      while (std::optional<size_t> or_at = NextOr()) {
        if (first_or == 0) first_or = *or_at;
        i_ = *or_at + 2;
        SkipSpace();
        if (i_ == text_.size() || text_[i_] == ')') throw Failure{*or_at, kOrNeedsTerms};
        if (IsExclusionAt(text_, i_)) throw Failure{i_, kExclusionInOr};
        Primary next = ParsePrimary(depth);
        if (next.kind == Primary::kOr) throw Failure{next.position, kOrNeedsTerms};
        if (next.kind == Primary::kNothing) throw Failure{*or_at, kOrNeedsTerms};
        if (any_nothing) throw Failure{first_or, kOrNeedsTerms};
        AddOperand(either, std::move(next.node));
      }
      if (either.children.size() == 1) {
        AddPart(group, std::move(either.children[0]));
      } else if (either.children.size() > 1) {
        group.children.push_back(std::move(either));
      }
    }
    if (depth > 0 && group.children.empty() && !group.excluded.empty()) {
      throw Failure{group.excluded.front().position - 1, kOnlyExclusions};
    }
    return group;
  }

 private:
  struct Primary {
    enum { kNothing, kNode, kOr } kind = kNothing;
    QueryNode node;
    size_t position = 0;
  };

  void SkipSpace() {
    while (i_ < text_.size() && IsSpace(text_[i_])) ++i_;
  }

  // The position of an OR keyword that is the next word, if it is one.
  std::optional<size_t> NextOr() {
    size_t j = i_;
    while (j < text_.size() && IsSpace(text_[j])) ++j;
    if (j < text_.size() && text_[j] != '(' && WordEnd(text_, j) == j + 2 &&
        text_.substr(j, 2) == "OR") {
      return j;
    }
    return std::nullopt;
  }

  static void AddOperand(QueryNode& either, QueryNode operand) {
    if (operand.kind == Kind::kOr) {
      for (QueryNode& c : operand.children) either.children.push_back(std::move(c));
    } else {
      either.children.push_back(std::move(operand));
    }
  }

  // With or_is_keyword false (after an exclusion's '-'), a word OR is the term "or".
  Primary ParsePrimary(int depth, bool or_is_keyword = true) {
    Primary p;
    p.position = i_;
    if (size_t q = QuoteLength(text_, i_)) {
      size_t j = i_ + q;
      while (j < text_.size() && QuoteLength(text_, j) == 0) ++j;
      if (j == text_.size()) throw Failure{i_, "unbalanced quote: no closing \""};
      std::vector<std::string> tokens;
      std::vector<bool> joined;
      TokenizeQueryText(text_.substr(i_ + q, j - i_ - q), false, rules_, &tokens, &joined);
      i_ = j + QuoteLength(text_, j);
      if (!tokens.empty()) {
        p.kind = Primary::kNode;
        p.node = TokensNode(std::move(tokens), std::move(joined), false, p.position);
      }
      return p;
    }
    if (text_[i_] == '(') {
      ++i_;
      QueryNode group = ParseItems(depth + 1, p.position);
      if (!group.children.empty()) {
        p.kind = Primary::kNode;
        p.node = Simplify(std::move(group));
      }
      return p;
    }
    const size_t end = WordEnd(text_, i_);
    std::string_view word = text_.substr(i_, end - i_);
    i_ = end;
    if (word == "OR" && or_is_keyword) {
      p.kind = Primary::kOr;
      return p;
    }
    size_t stars = 0;
    while (stars < word.size() && word[word.size() - 1 - stars] == '*') ++stars;
    // A wildcard is a prefix: one * at the end of a word. Any other * or ? is refused rather
    // than read as punctuation, which would answer another query without a word of warning.
    if (size_t w = word.find_first_of("*?"); w < word.size() - stars || stars > 1) {
      throw Failure{p.position + std::min(w, word.size() - stars + 1), kWildcardPlace};
    }
    std::vector<std::string> tokens;
    std::vector<bool> joined;
    TokenizeQueryText(word.substr(0, word.size() - stars), true, rules_, &tokens, &joined);
    // A stemmed index reads an unquoted word by its stem (a quoted one stays exact).
    if (rules_.stem_english && stars == 0 && tokens.size() == 1 &&
        tokenizer::Stemmable(tokens[0])) {
      tokens[0] = tokenizer::StemTerm(tokens[0]);
    }
    if (stars > 0 && tokens.empty()) {
      throw Failure{p.position + word.size() - stars,
                    "a * needs letters or digits before it (it makes a prefix: licen*)"};
    }
    if (!tokens.empty()) {
      p.kind = Primary::kNode;
      p.node = TokensNode(std::move(tokens), std::move(joined), stars > 0, p.position);
    }
    return p;
  }

  std::string_view text_;
  const tokenizer::TokenRules& rules_;
  size_t i_ = 0;
};

void AppendNode(const QueryNode& n, std::string& out) {
  switch (n.kind) {
    case Kind::kTerm:
      out += n.terms[0];
      break;
    case Kind::kPrefix:
      out += n.terms[0] + "*";
      break;
    case Kind::kPhrase:
      out += '"';
      for (size_t i = 0; i < n.terms.size(); ++i) {
        if (i > 0) out += n.joined[i] ? "~" : " ";
        out += n.terms[i];
      }
      if (n.last_is_prefix) out += '*';
      out += '"';
      break;
    case Kind::kAnd:
    case Kind::kOr:
      out += n.kind == Kind::kAnd ? "(and" : "(or";
      for (const QueryNode& c : n.children) {
        out += ' ';
        AppendNode(c, out);
      }
      for (const QueryNode& e : n.excluded) {
        out += " -";
        AppendNode(e, out);
      }
      out += ')';
      break;
  }
}

// A thread's tokenizer for queries, set to `rules`.
tokenizer::Tokenizer& QueryTokenizer(const tokenizer::TokenRules& rules) {
  thread_local tokenizer::Tokenizer tok;
  if (tok.rules() != rules) tok.SetRules(rules);
  return tok;
}

// Words mode's terms: every text's words and bigrams, sorted and distinct (no run flags: a
// plain word list has no phrases; no parts: a document holds a word's parts whenever it holds
// the word). Throws as a Tokenizer does.
std::vector<std::string> WordTerms(const std::vector<std::string_view>& texts,
                                   const tokenizer::TokenRules& rules) {
  struct Collect : tokenizer::TokenSink {
    std::vector<std::string> terms;
    void OnToken(std::string_view t, tokenizer::TokenRole role) override {
      if (role != tokenizer::TokenRole::kPart) terms.emplace_back(t);
    }
  } collect;
  collect.terms.reserve(16);
  for (std::string_view t : texts) {
    tokenizer::Tokenizer& tok = QueryTokenizer(rules);
    // Plain ASCII words need no Tokenizer (nor ICU's data).
    if (!tokenizer::AsciiWordTokens(t, &collect.terms)) tok.Tokenize(t, collect);
  }
  std::vector<std::string>& terms = collect.terms;
  if (rules.stem_english) {
    for (std::string& t : terms) {
      if (tokenizer::Stemmable(t)) t = tokenizer::StemTerm(t);
    }
  }
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
  return std::move(terms);
}

ParsedQuery Words(const std::vector<std::string_view>& texts, const tokenizer::TokenRules& rules) {
  ParsedQuery out;
  std::vector<std::string> terms = WordTerms(texts, rules);
  if (terms.empty()) {
    out.error = ParseError{0, 0, kNoTerms};
  } else {
    out.root = WordsRoot(std::move(terms));
  }
  return out;
}

// Parses the language in `text`.
ParsedQuery Language(std::string_view text, const tokenizer::TokenRules& rules) {
  ParsedQuery out;
  QueryNode root;
  root.kind = Kind::kAnd;
  {
    Parser parser(text, rules);
    try {
      AddPart(root, parser.ParseItems(0, 0));
    } catch (const Failure& f) {
      out.error = ParseError{0, f.position, f.reason};
      return out;
    }
  }
  if (root.children.empty()) {
    if (!root.excluded.empty()) {
      const QueryNode& first = root.excluded.front();
      out.error = ParseError{0, first.position > 0 ? first.position - 1 : 0, kOnlyExclusions};
    } else {
      out.error = ParseError{0, 0, kNoTerms};
    }
    return out;
  }
  out.root = Simplify(std::move(root));
  return out;
}

// The error a parse that threw reports (call it inside a catch block).
ParseError ThrownError() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return ParseError{0, 0, "out of memory"};
  } catch (const std::exception& e) {
    return ParseError{0, 0, std::string("internal error: ") + e.what()};
  } catch (...) {
    return ParseError{0, 0, "internal error"};
  }
}

ParsedQuery Guarded(std::string_view text, QueryMode mode,
                    const tokenizer::TokenRules& rules) noexcept {
  try {
    return mode == QueryMode::kWords ? Words({text}, rules) : Language(text, rules);
  } catch (...) {
    ParsedQuery out;
    out.error = ThrownError();
    return out;
  }
}

}  // namespace

std::string QueryNode::ToString() const {
  std::string out;
  AppendNode(*this, out);
  return out;
}

void TokenizeQueryText(std::string_view text, bool word, const tokenizer::TokenRules& rules,
                       std::vector<std::string>* tokens, std::vector<bool>* joined) {
  tokens->clear();
  joined->clear();
  std::string token;
  if (tokenizer::AsciiWordToken(text, &token)) {  // no ICU needed (its data stays unloaded)
    // One ASCII word: its whole term, or its positions, the runs of letters, digits and '_'
    // between its other characters (AsciiWordToken allows only '.', '\'', ',' and ';').
    auto apart = [](char c) { return c == '.' || c == '\'' || c == ',' || c == ';'; };
    if (word || std::none_of(token.begin(), token.end(), apart)) {
      tokens->push_back(std::move(token));
      joined->push_back(false);
      return;
    }
    for (size_t i = 0; i < token.size();) {
      size_t end = i;
      while (end < token.size() && !apart(token[end])) ++end;
      tokens->push_back(token.substr(i, end - i));
      joined->push_back(false);
      i = end + 1;
    }
    return;
  }
  struct Collect : tokenizer::OffsetTokenSink {
    std::vector<std::string>* tokens;
    std::vector<bool>* joined;
    std::string first_word;  // the text's first word (a word without parts, or a whole)
    size_t words = 0;
    bool OnToken(std::string_view t, uint64_t, uint64_t, bool continues_run,
                 tokenizer::TokenRole role) override {
      if (role != tokenizer::TokenRole::kPart && words++ == 0) first_word.assign(t);
      if (tokenizer::IsPosition(role)) {
        tokens->emplace_back(t);
        joined->push_back(continues_run);
      }
      return true;
    }
  } collect;
  collect.tokens = tokens;
  collect.joined = joined;
  QueryTokenizer(rules).TokenizeWithOffsets(text, collect);
  if (word && collect.words == 1) {
    tokens->assign(1, std::move(collect.first_word));
    joined->assign(1, false);
  }
}

ParsedQuery ParseQueryString(std::string_view text, QueryMode mode,
                             tokenizer::TokenRules rules) noexcept {
  return Guarded(text, mode, rules);
}

std::optional<ParseError> ParseWordTerms(std::string_view text, std::vector<std::string>* terms,
                                         tokenizer::TokenRules rules) noexcept {
  try {
    *terms = WordTerms({text}, rules);
    if (terms->empty()) return ParseError{0, 0, kNoTerms};
    return std::nullopt;
  } catch (...) {
    return ThrownError();
  }
}

QueryNode WordsRoot(std::vector<std::string> terms) {
  if (terms.size() == 1) return TokensNode(std::move(terms), {}, false, 0);
  QueryNode root;
  root.kind = Kind::kAnd;
  root.children.resize(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    QueryNode& c = root.children[i];
    c.kind = Kind::kTerm;
    c.terms.push_back(std::move(terms[i]));
  }
  return root;
}

ParsedQuery ParseQueryArguments(const std::vector<std::string>& args, QueryMode mode,
                                tokenizer::TokenRules rules) noexcept {
  std::string text;
  std::vector<size_t> starts;  // where each argument starts in `text`
  try {
    for (const std::string& a : args) {
      if (!starts.empty()) text += ' ';
      starts.push_back(text.size());
      text += a;
    }
  } catch (...) {
    ParsedQuery out;
    out.error = ThrownError();
    return out;
  }
  ParsedQuery out = Guarded(text, mode, rules);
  if (out.error && !starts.empty()) {  // where the error is, in the argument that holds it
    ParseError& e = *out.error;
    const size_t a =
        std::upper_bound(starts.begin(), starts.end(), e.position) - starts.begin() - 1;
    e.argument = a;
    e.position = std::min(e.position - starts[a], args[a].size());
  }
  return out;
}

bool IsPlainConjunction(const QueryNode& root, std::vector<std::string>* terms) {
  terms->clear();
  if (root.kind == Kind::kTerm) {
    terms->push_back(root.terms[0]);
    return true;
  }
  if (root.kind != Kind::kAnd || !root.excluded.empty()) return false;
  for (const QueryNode& c : root.children) {
    if (c.kind != Kind::kTerm) return false;
    terms->push_back(c.terms[0]);
  }
  std::sort(terms->begin(), terms->end());
  terms->erase(std::unique(terms->begin(), terms->end()), terms->end());
  return true;
}

}  // namespace bitsift::query
