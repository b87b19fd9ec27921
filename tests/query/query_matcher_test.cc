#include "query/query_matcher.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "query/query_parser.h"
#include "tokenizer/tokenizer.h"

using bitsift::query::MatchSpan;
using bitsift::query::ParseQueryString;
using bitsift::query::QueryMatcher;
using bitsift::query::QueryMode;
using bitsift::query::QueryNode;
using bitsift::tokenizer::PositionedToken;

namespace {

// The phrase positions of a token sequence (its tokens but wholes).
std::vector<PositionedToken> Positions(const std::vector<PositionedToken>& all) {
  std::vector<PositionedToken> out;
  for (const PositionedToken& t : all) {
    if (bitsift::tokenizer::IsPosition(t.role)) out.push_back(t);
  }
  return out;
}

// Occurrences of a term, prefix or phrase node (pattern p) by brute force over the token
// sequence (a term or prefix: any token; a phrase: consecutive positions), each cut where a line
// break lies between two of its tokens (a span a line of its words).
std::vector<MatchSpan> Occurrences(const std::string& text, const QueryNode& n, uint32_t p,
                                   const std::vector<PositionedToken>& all) {
  std::vector<MatchSpan> out;
  const size_t m = n.terms.size();
  const std::vector<PositionedToken> toks = m == 1 ? all : Positions(all);
  for (size_t i = 0; i + m <= toks.size(); ++i) {
    bool all = true;
    for (size_t j = 0; j < m && all; ++j) {
      const bool prefix = n.kind == QueryNode::Kind::kPrefix || (n.last_is_prefix && j + 1 == m);
      all = prefix ? toks[i + j].text.compare(0, n.terms[j].size(), n.terms[j]) == 0
                   : toks[i + j].text == n.terms[j];
      all = all && (j == 0 || !n.joined[j] || toks[i + j].continues_run);
    }
    if (!all) continue;
    uint64_t from = toks[i].begin;
    for (size_t j = i; j + 1 < i + m; ++j) {
      if (toks[j + 1].begin > toks[j].end &&
          text.substr(toks[j].end, toks[j + 1].begin - toks[j].end).find('\n') !=
              std::string::npos) {
        out.push_back(MatchSpan{from, toks[j].end, p});
        from = toks[j + 1].begin;
      }
    }
    out.push_back(MatchSpan{from, toks[i + m - 1].end, p});
  }
  return out;
}

void Leaves(const QueryNode& n, bool positive,
            std::vector<std::pair<const QueryNode*, bool>>& out) {
  if (n.kind == QueryNode::Kind::kAnd || n.kind == QueryNode::Kind::kOr) {
    for (const QueryNode& c : n.children) Leaves(c, positive, out);
    for (const QueryNode& e : n.excluded) Leaves(e, false, out);
  } else {
    out.emplace_back(&n, positive);
  }
}

bool Less(const MatchSpan& a, const MatchSpan& b) {
  if (a.begin != b.begin) return a.begin < b.begin;
  return a.end != b.end ? a.end < b.end : a.pattern < b.pattern;
}

}  // namespace

TEST_CASE("matcher: found patterns and spans equal brute force, the ASCII pre-check agrees",
          "[matcher]") {
  std::mt19937_64 rng(17);
  const std::vector<std::string> ascii = {"free",
                                          "Free",
                                          "software",
                                          "SOFTWARE",
                                          "_foo",
                                          "foo_",
                                          "x_y",
                                          "3.14",
                                          "a.b",
                                          "kennedy's",
                                          "std",
                                          "vector",
                                          "e",
                                          "mail",
                                          "__",
                                          "_",
                                          "'",
                                          ".",
                                          ",",
                                          "-",
                                          " ",
                                          " ",
                                          " ",
                                          "\n",
                                          "\t",
                                          "::",
                                          "(",
                                          ")",
                                          "1,000",
                                          "fo",
                                          "oo",
                                          "free_software",
                                          "stdio.h",
                                          "LICENSE.txt",
                                          "free.software",
                                          "a.b@c.d",
                                          "don't.stop"};
  // Non-ASCII pieces: CJK runs, full-width and ligature letters that fold to ASCII, pieces
  // without tokens (a symbol, an emoji, a dash), combining marks (alone after a space, and
  // after a letter), a character NFKC expands into a CJK pair, an invalid byte.
  const std::vector<std::string> other = {
      "布隆过滤器", "过滤",       "滤器",         "ｆｒｅｅ", "Straße",
      "ﬁne",        "東京タワー", "\xff",         "©",        "😀",
      "—",          "\xcc\x81",   "e\xcc\x81",    "ＦＲＥＥ", "ﬁ",
      "㍻",         "soft©ware",  "x😀y",          "free—",    "José",
      "résumé.pdf", "FRÉE",       "frée.software"};
  for (int round = 0; round < 1600; ++round) {
    const bool only_ascii = round % 2 == 0;
    std::string text;
    for (size_t i = 0, n = 1 + rng() % 60; i < n; ++i) {
      text +=
          !only_ascii && rng() % 4 == 0 ? other[rng() % other.size()] : ascii[rng() % ascii.size()];
      if (rng() % 2) text += " ";
    }
    std::vector<PositionedToken> toks = bitsift::tokenizer::TokenSequence(text);
    // A query of a few phrases (windows of the text and random pairs), terms and prefixes.
    std::string q;
    for (int k = 0; k < 4; ++k) {
      if (!toks.empty() && rng() % 2) {
        size_t at = rng() % toks.size(), len = 1 + rng() % 3;
        q += " \"";
        for (size_t i = at; i < std::min(toks.size(), at + len); ++i) q += toks[i].text + " ";
        q += "\"";
      } else {
        // (Appends, not a chain of operator+: GCC 12 warns falsely on those.)
        q.append(" \"").append(ascii[rng() % 4]).append(" ");
        q.append(ascii[rng() % ascii.size()]).append("\"");
      }
      if (rng() % 4 == 0) q.append(" ").append(ascii[rng() % 4].substr(0, 2)).append("*");
    }
    bitsift::query::ParsedQuery parsed = ParseQueryString(q, QueryMode::kLanguage);
    if (!parsed.ok()) continue;
    INFO("text: " << text << "\nquery: " << parsed.root.ToString());
    QueryMatcher matcher(parsed.root);
    std::vector<std::pair<const QueryNode*, bool>> leaves;
    Leaves(parsed.root, true, leaves);
    REQUIRE(leaves.size() == matcher.pattern_count());
    std::vector<MatchSpan> want_spans;
    std::vector<bool> want_found(matcher.pattern_count());
    for (const auto& [node, positive] : leaves) {
      const int p = matcher.PatternOf(node);
      REQUIRE(p >= 0);
      std::vector<MatchSpan> occ = Occurrences(text, *node, static_cast<uint32_t>(p), toks);
      want_found[p] = !occ.empty();
      if (positive) want_spans.insert(want_spans.end(), occ.begin(), occ.end());
    }
    QueryMatcher::Result with_spans, without;
    std::vector<bool> all(matcher.pattern_count(), true);
    matcher.Scan(text, true, all, &with_spans);
    CHECK(with_spans.found == want_found);
    std::sort(want_spans.begin(), want_spans.end(), Less);
    std::sort(with_spans.spans.begin(), with_spans.spans.end(), Less);
    CHECK(with_spans.spans == want_spans);
    // Without spans (the ASCII pre-check may answer alone), for all patterns and for one.
    matcher.Scan(text, false, all, &without);
    CHECK(without.found == want_found);
    std::vector<bool> one(matcher.pattern_count(), false);
    const size_t p = rng() % matcher.pattern_count();
    one[p] = true;
    matcher.Scan(text, false, one, &without);
    CHECK(without.found[p] == want_found[p]);
  }
}

TEST_CASE("matcher: a term, prefix or phrase named twice is one pattern by first_alike",
          "[matcher]") {
  bitsift::query::ParsedQuery parsed = ParseQueryString(
      "alpha beta* (alpha OR \"x y\") beta* \"x y\" beta -alpha", QueryMode::kLanguage);
  REQUIRE(parsed.ok());
  QueryMatcher matcher(parsed.root);
  std::vector<std::pair<const QueryNode*, bool>> leaves;
  Leaves(parsed.root, true, leaves);
  REQUIRE(leaves.size() == matcher.pattern_count());
  std::vector<std::string> text(matcher.pattern_count());
  for (const auto& [node, positive] : leaves) text[matcher.PatternOf(node)] = node->ToString();
  for (size_t p = 0; p < matcher.pattern_count(); ++p) {
    const uint32_t first = matcher.first_alike(p);
    CHECK(first <= p);
    CHECK(text[first] == text[p]);
    // No pattern before the first alike is the same.
    for (size_t q = 0; q < first; ++q) CHECK(text[q] != text[p]);
  }
  std::vector<uint32_t> firsts;
  for (size_t p = 0; p < matcher.pattern_count(); ++p) firsts.push_back(matcher.first_alike(p));
  std::sort(firsts.begin(), firsts.end());
  firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
  CHECK(firsts.size() == 4);  // alpha, beta*, "x y", beta
}
