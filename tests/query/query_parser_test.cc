#include "query/query_parser.h"

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

using bitsift::query::ParsedQuery;
using bitsift::query::ParseQueryArguments;
using bitsift::query::ParseQueryString;
using bitsift::query::QueryMode;

namespace {

// The parse of `text` in compact form, or "error@POS: reason".
std::string P(std::string_view text, QueryMode mode = QueryMode::kLanguage) {
  ParsedQuery q = ParseQueryString(text, mode);
  if (!q.ok()) return "error@" + std::to_string(q.error->position) + ": " + q.error->reason;
  return q.root.ToString();
}

std::string Args(const std::vector<std::string>& args, QueryMode mode = QueryMode::kLanguage) {
  ParsedQuery q = ParseQueryArguments(args, mode);
  if (!q.ok()) {
    return "error@" + std::to_string(q.error->argument) + ":" + std::to_string(q.error->position) +
           ": " + q.error->reason;
  }
  return q.root.ToString();
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

TEST_CASE("parser: words, phrases and split words", "[parser]") {
  CHECK(P("bloom") == "bloom");
  CHECK(P("Bloom FILTER") == "(and bloom filter)");
  CHECK(P("Straße") == "strasse");
  CHECK(P("\"free software\"") == "\"free software\"");
  CHECK(P("“free software”") == "\"free software\"");  // typographic quotes
  CHECK(P("\"free\"") == "free");                      // a phrase of one token is a term
  CHECK(P("std::vector") == "\"std vector\"");
  CHECK(P("e-mail") == "\"e mail\"");
  CHECK(P("3.14") == "3.14");  // ICU keeps it whole
  CHECK(P("kennedy's") == "kennedy's");
  CHECK(P("f(x)") == "\"f x\"");  // a parenthesis inside a word is text
  // A CJK run of 3+ characters: its bigrams, joined (a substring).
  CHECK(P("布隆过滤器") == "\"布隆~隆过~过滤~滤器\"");
  CHECK(P("过滤") == "过滤");
  CHECK(P("\"过滤 滤器\"") == "\"过滤 滤器\"");  // separate runs are not joined
  CHECK(P("Bloom过滤器") == "\"bloom 过滤~滤器\"");
  // Things without tokens are dropped.
  CHECK(P("bloom & \"\" () ...") == "bloom");
  CHECK(P("a - b") == "(and a b)");
  CHECK(P("--verbose") == "verbose");
}

TEST_CASE("parser: a word is its whole term, a phrase runs over parts (token contract v2)",
          "[parser]") {
  // One word of the contract: its whole term, however many parts it has.
  CHECK(P("stdio.h") == "stdio.h");
  CHECK(P("LICENSE.txt") == "license.txt");
  CHECK(P("user@example.org") == "user@example.org");
  CHECK(P("José") == "jose");
  CHECK(P("Résumé.PDF") == "resume.pdf");
  CHECK(P("stdio.h*") == "stdio.h*");
  CHECK(P("stdio.*") == "stdio*");  // the '.' is not part of the word
  CHECK(P("Caf*") == "caf*");
  // Several words: the phrase of their positions, parts standing for their word.
  CHECK(P("obj.method(x)") == "\"obj method x\"");
  CHECK(P("<stdio.h>") == "stdio.h");
  CHECK(P("a.b::c") == "\"a b c\"");
  CHECK(P("std::vec.to*") == "\"std vec to*\"");
  // Quoted: always the positions.
  CHECK(P("\"stdio.h\"") == "\"stdio h\"");
  CHECK(P("\"#include <stdio.h>\"") == "\"include stdio h\"");
  CHECK(P("\"don't.stop now\"") == "\"don t stop now\"");
  CHECK(P("\"résumé.pdf\"") == "\"resume pdf\"");
  // Arguments are one query: a phrase needs its quotes.
  CHECK(Args({"see stdio.h"}) == "(and see stdio.h)");
  CHECK(Args({"\"see stdio.h\""}) == "\"see stdio h\"");
  // Words mode: the words (a document holds a word's parts whenever it holds the word).
  CHECK(P("stdio.h José", QueryMode::kWords) == "(and jose stdio.h)");
  CHECK(P("\"stdio.h\" e-mail", QueryMode::kWords) == "(and e mail stdio.h)");
}

TEST_CASE("parser: the index's token rules read the words", "[parser]") {
  bitsift::tokenizer::TokenRules keep;
  keep.fold_diacritics = false;
  auto K = [&](std::string_view text, QueryMode mode = QueryMode::kLanguage) {
    ParsedQuery q = ParseQueryString(text, mode, keep);
    REQUIRE(q.ok());
    return q.root.ToString();
  };
  CHECK(K("José") == "josé");
  CHECK(K("\"José Saramago\"") == "\"josé saramago\"");
  CHECK(K("CAFÉ*") == "café*");
  CHECK(K("José naïve", QueryMode::kWords) == "(and josé naïve)");
  CHECK(K("stdio.h") == "stdio.h");
  std::vector<std::string> terms;
  REQUIRE(!bitsift::query::ParseWordTerms("José cafe", &terms, keep));
  CHECK(terms == std::vector<std::string>{"cafe", "josé"});
  REQUIRE(!bitsift::query::ParseWordTerms("José cafe", &terms));
  CHECK(terms == std::vector<std::string>{"cafe", "jose"});
  ParsedQuery a = ParseQueryArguments({"Ångström", "x"}, QueryMode::kLanguage, keep);
  REQUIRE(a.ok());
  CHECK(a.root.ToString() == "(and ångström x)");
}

TEST_CASE("parser: OR binds adjacent terms, tighter than AND", "[parser]") {
  CHECK(P("gpl OR bsd") == "(or gpl bsd)");
  CHECK(P("a b OR c d") == "(and a (or b c) d)");
  CHECK(P("a OR b OR c") == "(or a b c)");
  CHECK(P("(a b) OR c") == "(or (and a b) c)");
  CHECK(P("(a OR b) OR c") == "(or a b c)");
  CHECK(P("(a OR b) (c OR d)") == "(and (or a b) (or c d))");
  CHECK(P("\"free software\" OR gpl") == "(or \"free software\" gpl)");
  CHECK(P("a or b") == "(and a or b)");  // only upper-case OR is an operator
  CHECK(P("a \"OR\" b") == "(and a or b)");
  CHECK(P("a AND b") == "(and a and b)");  // AND is a word
  CHECK(P("a OR* b") == "(and a or* b)");
  CHECK(P("licen* OR copyright") == "(or licen* copyright)");
}

TEST_CASE("parser: exclusions", "[parser]") {
  CHECK(P("cargo -ship") == "(and cargo -ship)");
  CHECK(P("Copyright -GPL") == "(and copyright -gpl)");
  CHECK(P("a -\"free software\"") == "(and a -\"free software\")");
  CHECK(P("a -(b c)") == "(and a -(and b c))");
  CHECK(P("a -(b OR c)") == "(and a -(or b c))");
  CHECK(P("a -lic*") == "(and a -lic*)");
  CHECK(P("a -OR") == "(and a -or)");
  CHECK(P("(a -b) c") == "(and a c -b)");  // a group ANDed in is merged
  CHECK(P("(a -b) OR c") == "(or (and a -b) c)");
  CHECK(P("a -&") == "a");  // nothing to exclude
}

TEST_CASE("parser: prefixes", "[parser]") {
  CHECK(P("licen*") == "licen*");
  CHECK(P("Licen*") == "licen*");
  CHECK(StartsWith(P("LICEN**"), "error@5: a wildcard * is supported only at the end"));
  CHECK(P("ＬＩＣＥＮ*") == "licen*");  // normalized as a word is
  CHECK(P("std::vec*") == "\"std vec*\"");
  CHECK(P("\"free soft*\"") == "\"free soft\"");  // inside quotes * is text
  // A * elsewhere, or a ?, is refused: read as punctuation it would answer another query.
  CHECK(StartsWith(P("a*b"), "error@1: a wildcard"));
  CHECK(StartsWith(P("x *readline"), "error@2: a wildcard"));
  CHECK(StartsWith(P("re*line"), "error@2: a wildcard"));
  CHECK(StartsWith(P("readlin?"), "error@7: a wildcard"));
  CHECK(StartsWith(P("what?"), "error@4: a wildcard"));
  CHECK(StartsWith(P("-re*d"), "error@3: a wildcard"));
  CHECK(P("\"what? re*d\"") == "\"what re d\"");  // inside quotes both are text
  CHECK(P("\"free software\" licen*") == "(and \"free software\" licen*)");
}

TEST_CASE("parser: every error is a value with a position", "[parser]") {
  // Unbalanced quotes and parentheses.
  CHECK(StartsWith(P("\"free software"), "error@0: unbalanced quote"));
  CHECK(StartsWith(P("a \"b\" \"c"), "error@6: unbalanced quote"));
  CHECK(StartsWith(P("(a b"), "error@0: unbalanced parenthesis"));
  CHECK(StartsWith(P("a (b (c)"), "error@2: unbalanced parenthesis"));
  CHECK(StartsWith(P("a b)"), "error@3: unbalanced parenthesis"));
  CHECK(StartsWith(P(")"), "error@0: unbalanced parenthesis"));
  CHECK(StartsWith(P(":-)"), "error@2: unbalanced parenthesis"));
  // A lone OR.
  CHECK(StartsWith(P("OR"), "error@0: OR must stand"));
  CHECK(StartsWith(P("OR a"), "error@0: OR must stand"));
  CHECK(StartsWith(P("a OR"), "error@2: OR must stand"));
  CHECK(StartsWith(P("a OR OR b"), "error@5: OR must stand"));
  CHECK(StartsWith(P("(a OR) b"), "error@3: OR must stand"));
  CHECK(StartsWith(P("a OR &"), "error@2: OR must stand"));
  CHECK(StartsWith(P("& OR a"), "error@2: OR must stand"));
  CHECK(StartsWith(P("a OR \"\""), "error@2: OR must stand"));
  // A lone star.
  CHECK(StartsWith(P("*"), "error@0: a * needs"));
  CHECK(StartsWith(P("a **"), "error@2: a wildcard"));
  CHECK(StartsWith(P("a .*"), "error@3: a * needs"));
  CHECK(StartsWith(P("-*"), "error@1: a * needs"));
  // Only exclusions, and exclusions as OR operands.
  CHECK(StartsWith(P("-gpl"), "error@0: only exclusions"));
  CHECK(StartsWith(P("-a -\"b c\""), "error@0: only exclusions"));
  CHECK(StartsWith(P("a (-b)"), "error@3: only exclusions"));
  CHECK(StartsWith(P("a OR -b"), "error@5: an exclusion cannot be an operand of OR"));
  CHECK(StartsWith(P("a -b OR c"), "error@5: an exclusion cannot be an operand of OR"));
  CHECK(StartsWith(P("a OR (-b)"), "error@6: only exclusions"));
  // No terms at all.
  CHECK(StartsWith(P(""), "error@0: the query has no terms"));
  CHECK(StartsWith(P("  ...  "), "error@0: the query has no terms"));
  CHECK(StartsWith(P("\"\" ()"), "error@0: the query has no terms"));
  // Nesting is bounded.
  CHECK(StartsWith(P(std::string(1000, '(') + "a" + std::string(1000, ')')),
                   "error@64: too many nested"));
}

TEST_CASE("parser: words mode takes everything as text", "[parser]") {
  const QueryMode w = QueryMode::kWords;
  CHECK(P("\"free software\" -gpl OR licen* (x", w) == "(and free gpl licen or software x)");
  CHECK(P("std::vector", w) == "(and std vector)");
  CHECK(P("a a A", w) == "a");
  CHECK(StartsWith(P("*** ---", w), "error@0: the query has no terms"));
  CHECK(Args({"-gpl", "\"x"}, w) == "(and gpl x)");
}

TEST_CASE("parser: command-line arguments", "[parser]") {
  // The arguments joined with spaces are one query, read as a string is.
  CHECK(Args({"free", "software"}) == "(and free software)");
  CHECK(Args({"free software"}) == "(and free software)");
  CHECK(Args({"\"free software\"", "licen*"}) == "(and \"free software\" licen*)");
  CHECK(Args({"gpl", "OR", "bsd"}) == "(or gpl bsd)");
  CHECK(Args({"gpl OR bsd"}) == "(or gpl bsd)");
  CHECK(Args({"\"free", "software\""}) == "\"free software\"");
  CHECK(Args({"(a", "b)"}) == "(and a b)");
  CHECK(Args({"f(x) y"}) == "(and \"f x\" y)");  // an in-word parenthesis is not an operator
  CHECK(Args({"copyright", "-gpl"}) == "(and copyright -gpl)");
  // Errors name the argument and the byte in it.
  CHECK(StartsWith(Args({"-gpl"}), "error@0:0: only exclusions"));
  CHECK(StartsWith(Args({"-a", "-b"}), "error@0:0: only exclusions"));
  CHECK(StartsWith(Args({"a", "b OR"}), "error@1:2: OR must stand"));
  CHECK(StartsWith(Args({"a", "b", "re*d"}), "error@2:2: a wildcard"));
  CHECK(StartsWith(Args({"...", "&"}), "error@0:0: the query has no terms"));
  CHECK(StartsWith(Args({}), "error@0:0: the query has no terms"));
}

TEST_CASE("parser: arguments and their joined string are one query", "[parser]") {
  const std::vector<std::string> pieces = {"gpl",    "bsd",     "OR",         "-x",  "\"free",
                                           "soft\"", "(a",      "b)",         "li*", "stdio.h",
                                           "José",   "\"a b\"", "布隆过滤器", "&",   "re*d"};
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> args(1 + rng() % 5);
    std::string joined;
    for (std::string& a : args) {
      a = pieces[rng() % pieces.size()];
      if (rng() % 4 == 0) a += " " + pieces[rng() % pieces.size()];
      joined += (joined.empty() ? "" : " ") + a;
    }
    ParsedQuery by_args = ParseQueryArguments(args, QueryMode::kLanguage);
    ParsedQuery by_string = ParseQueryString(joined, QueryMode::kLanguage);
    INFO(joined);
    REQUIRE(by_args.ok() == by_string.ok());
    if (by_args.ok()) REQUIRE(by_args.root.ToString() == by_string.root.ToString());
    if (!by_args.ok()) REQUIRE(by_args.error->reason == by_string.error->reason);
  }
}

TEST_CASE("parser: random input never throws and errors point inside it", "[parser]") {
  std::mt19937_64 rng(3);
  const std::vector<std::string> pieces = {
      "a", "bc", "OR",   "-",      "*",  "\"", "(",  ")", " ",  " ",        "布",
      "“", "”",  "\xff", "e-mail", "x*", "-y", "or", ".", "\t", "\xe2\x80", "隆过滤"};
  for (int round = 0; round < 5000; ++round) {
    std::string text;
    for (size_t i = 0, n = rng() % 12; i < n; ++i) text += pieces[rng() % pieces.size()];
    for (QueryMode mode : {QueryMode::kLanguage, QueryMode::kWords}) {
      ParsedQuery q = ParseQueryString(text, mode);
      if (!q.ok()) {
        INFO(text);
        CHECK(q.error->position <= text.size());
        CHECK(!q.error->reason.empty());
      }
    }
  }
}

TEST_CASE("parser: a stemmed index reads an unquoted word by its stem", "[parser]") {
  bitsift::tokenizer::TokenRules stem;
  stem.stem_english = true;
  auto p = [&](std::string_view text, QueryMode mode = QueryMode::kLanguage) {
    ParsedQuery q = ParseQueryString(text, mode, stem);
    return q.ok() ? q.root.ToString() : "error: " + q.error->reason;
  };
  CHECK(p("models") == "~model");
  CHECK(p("modelling Running") == "(and ~model ~run)");
  CHECK(p("\"models\"") == "models");                      // quoted: exact
  CHECK(p("\"running models\"") == "\"running models\"");  // phrases: exact positions
  CHECK(p("model*") == "model*");                          // prefixes: as written
  CHECK(p("2024 布隆") == "(and 2024 布隆)");              // not stemmed: digits, other scripts
  CHECK(p("models -running") == "(and ~model -~run)");
  CHECK(p("Models running", QueryMode::kWords) == "(and ~model ~run)");
  CHECK(ParseQueryString("models", QueryMode::kLanguage).root.ToString() == "models");
}
