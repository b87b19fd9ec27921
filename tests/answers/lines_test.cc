// Matching lines (answers/lines) against a slow reference: lines split byte by byte, every
// occurrence of every positive term, prefix and phrase found by trying each token position,
// spans clipped to lines and merged; the best lines by the distinct nodes on each, as the nodes'
// text; context lines and groups counted by hand.
#include "answers/lines.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "query/query_matcher.h"
#include "query/query_parser.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::answers::LineOptions;
using bitsift::answers::LineSpan;
using bitsift::query::QueryNode;
using bitsift::tokenizer::PositionedToken;

namespace {

struct RefLine {
  uint64_t number;
  bool match;
  std::vector<LineSpan> spans;
  bool operator==(const RefLine& o) const {
    return number == o.number && match == o.match && spans == o.spans;
  }
};

// Whether the tokens from position i hold pattern node n (all of its elements in order).
bool OccursAt(const QueryNode& n, const std::vector<PositionedToken>& toks, size_t i) {
  const bool prefix_node = n.kind == QueryNode::Kind::kPrefix;
  for (size_t j = 0; j < n.terms.size(); ++j) {
    if (i + j >= toks.size()) return false;
    const std::string& tok = toks[i + j].text;
    const std::string& want = n.terms[j];
    const bool prefix = prefix_node || (n.last_is_prefix && j + 1 == n.terms.size());
    if (prefix ? tok.rfind(want, 0) != 0 : tok != want) return false;
    if (j > 0 && n.joined[j] && !toks[i + j].continues_run) return false;
  }
  return true;
}

// An occurrence's piece: its bytes [begin, end) and its node, as the node's text.
struct Piece {
  uint64_t begin, end;
  std::string node;
};

// Byte ranges of every occurrence of the nodes that lie under no exclusion (a term or prefix:
// of any token, a whole word's included; a phrase: of consecutive phrase positions), each cut
// where a line break lies between two of its tokens (its pieces, one a line of its words).
void Occurrences(const std::string& text, const QueryNode& n, bool positive,
                 const std::vector<PositionedToken>& all, std::vector<Piece>* out) {
  if (n.kind == QueryNode::Kind::kAnd || n.kind == QueryNode::Kind::kOr) {
    for (const QueryNode& c : n.children) Occurrences(text, c, positive, all, out);
    for (const QueryNode& e : n.excluded) Occurrences(text, e, false, all, out);
    return;
  }
  if (!positive) return;
  std::vector<PositionedToken> toks;
  for (const PositionedToken& t : all) {
    if (n.terms.size() == 1 || bitsift::tokenizer::IsPosition(t.role)) toks.push_back(t);
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    if (!OccursAt(n, toks, i)) continue;
    uint64_t from = toks[i].begin;
    for (size_t j = i; j + 1 < i + n.terms.size(); ++j) {
      const std::string gap = text.substr(toks[j].end, toks[j + 1].begin - toks[j].end);
      if (gap.find('\n') != std::string::npos) {
        out->push_back({from, toks[j].end, n.ToString()});
        from = toks[j + 1].begin;
      }
    }
    out->push_back({from, toks[i + n.terms.size() - 1].end, n.ToString()});
  }
}

// The lines MatchingLines should give: every matching line, or with best > 0 the best lines,
// each with its context.
std::vector<RefLine> Reference(const std::string& text, const QueryNode& root, uint64_t before,
                               uint64_t after, uint64_t best, std::vector<size_t>* group_starts) {
  std::vector<std::pair<size_t, size_t>> lines;  // [begin, end) without '\n'
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      lines.emplace_back(begin, i);
      begin = i + 1;
    }
  }
  if (begin < text.size()) lines.emplace_back(begin, text.size());
  std::vector<Piece> occ;
  Occurrences(text, root, true, bitsift::tokenizer::TokenSequence(text), &occ);
  std::vector<std::vector<LineSpan>> spans(lines.size());
  std::vector<std::set<std::string>> nodes(lines.size());  // the distinct nodes on each line
  for (size_t l = 0; l < lines.size(); ++l) {
    std::vector<LineSpan> raw;
    for (const Piece& o : occ) {
      const size_t lb = std::max<size_t>(o.begin, lines[l].first);
      const size_t le = std::min<size_t>(o.end, lines[l].second);
      if (lb < le) {
        raw.push_back({lb - lines[l].first, le - lines[l].first});
        nodes[l].insert(o.node);
      }
    }
    std::sort(raw.begin(), raw.end(), [](const LineSpan& a, const LineSpan& b) {
      return a.start < b.start || (a.start == b.start && a.end < b.end);
    });
    for (const LineSpan& s : raw) {
      if (!spans[l].empty() && s.start <= spans[l].back().end) {
        spans[l].back().end = std::max(spans[l].back().end, s.end);
      } else {
        spans[l].push_back(s);
      }
    }
  }
  // The chosen lines: every matching line; with best, the first `best` matching lines of the
  // line numbers sorted by distinct nodes, most first, then by number (every pair compared).
  std::vector<bool> chosen(lines.size(), false);
  for (size_t l = 0; l < lines.size(); ++l) {
    if (spans[l].empty()) continue;
    size_t better = 0;  // matching lines that come before l in that order
    for (size_t k = 0; k < lines.size(); ++k) {
      if (spans[k].empty() || k == l) continue;
      better += nodes[k].size() > nodes[l].size() || (nodes[k].size() == nodes[l].size() && k < l);
    }
    chosen[l] = best == 0 || better < best;
  }
  std::vector<bool> shown(lines.size(), false);
  for (size_t l = 0; l < lines.size(); ++l) {
    if (!chosen[l]) continue;
    for (size_t k = l >= before ? l - before : 0; k <= std::min(lines.size() - 1, l + after); ++k)
      shown[k] = true;
  }
  std::vector<RefLine> out;
  for (size_t l = 0; l < lines.size(); ++l) {
    if (!shown[l]) continue;
    if (l == 0 || !shown[l - 1]) group_starts->push_back(out.size());
    out.push_back({l + 1, !spans[l].empty(), spans[l]});
  }
  return out;
}

std::string Generate(std::mt19937_64& rng, const std::vector<std::string>& vocab) {
  // Punctuation at line breaks too ("offset;\n}\n\n/* Silicon"): a phrase across lines marks
  // its words, not what lies around the break.
  static const char* kSeparators[] = {" ", " ",  " ",  "\n",  "\r\n",  "\n\n",    ", ",
                                      "-", "。", "\t", ";\n", "\n}\n", " */\n/* "};
  static const char* kExtra[] = {"std::vector", "e-mail", "布隆过滤器", "过滤器很好", "Straße",
                                 "STRASSE",     "ﬁnance", "東京タワー", "3.14",       "stdio.h",
                                 "LICENSE.txt", "José",   "résumé.pdf", "a.b@c.d"};
  std::string text;
  for (size_t w = rng() % 120; w > 0; --w) {
    text += rng() % 5 == 0 ? kExtra[rng() % std::size(kExtra)] : vocab[rng() % vocab.size()];
    text += kSeparators[rng() % std::size(kSeparators)];
    if (rng() % 4 == 0) text += kSeparators[rng() % std::size(kSeparators)];
  }
  if (rng() % 3 == 0 && !text.empty()) text.pop_back();  // sometimes no final newline
  return text;
}

std::string MakeQuery(const std::vector<PositionedToken>& toks, std::mt19937_64& rng) {
  auto token = [&]() {
    return toks.empty() ? std::string("zzabsent") : toks[rng() % toks.size()].text;
  };
  auto item = [&]() -> std::string {
    switch (rng() % 6) {
      case 0:
        return token();
      case 1: {
        if (toks.size() < 2) return token();
        size_t i = rng() % (toks.size() - 1);
        return "\"" + toks[i].text + " " + toks[i + 1].text + "\"";
      }
      case 2: {
        std::string t = token();
        size_t n = 1;
        while (n < t.size() && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) ++n;
        return t.substr(0, n) + "*";
      }
      case 3:
        return token() + " OR " + token();
      case 4:
        return "过滤器";
      default:
        return "std::vector";
    }
  };
  std::string q = item();
  for (size_t n = rng() % 3; n > 0; --n) q += (rng() % 4 == 0 ? " -" : " ") + item();
  return q;
}

}  // namespace

TEST_CASE("matching lines, spans and best lines equal the slow reference", "[lines]") {
  std::mt19937_64 rng(61);
  const std::vector<std::string> vocab = bitsift::testing::MixedVocabulary(60, rng);
  size_t with_lines = 0, with_context = 0, with_fewer = 0, cases = 0;
  for (int i = 0; i < 600; ++i) {
    const std::string text = Generate(rng, vocab);
    const std::string q = MakeQuery(bitsift::tokenizer::TokenSequence(text), rng);
    bitsift::query::ParsedQuery parsed =
        bitsift::query::ParseQueryString(q, bitsift::query::QueryMode::kLanguage);
    if (!parsed.ok()) continue;
    ++cases;
    LineOptions options;
    options.before = rng() % 3 == 0 ? rng() % 3 : 0;
    options.after = rng() % 3 == 0 ? rng() % 3 : 0;
    options.best = rng() % 3 == 0 ? 1 + rng() % 3 : 0;
    INFO("query " << q << " before " << options.before << " after " << options.after << " best "
                  << options.best);
    std::vector<size_t> starts;
    const std::vector<RefLine> want =
        Reference(text, parsed.root, options.before, options.after, options.best, &starts);
    // How many lines a snippet left out.
    if (options.best > 0) {
      std::vector<size_t> all_starts;
      const size_t matching = Reference(text, parsed.root, 0, 0, 0, &all_starts).size();
      const size_t kept = Reference(text, parsed.root, 0, 0, options.best, &all_starts).size();
      CHECK(kept == std::min<size_t>(matching, options.best));
      with_fewer += kept < matching;
    }
    bitsift::query::QueryMatcher matcher(parsed.root);
    std::vector<RefLine> got;
    std::vector<size_t> got_starts;
    for (const auto& g : bitsift::answers::MatchingLines(text, matcher, options)) {
      got_starts.push_back(got.size());
      for (const auto& l : g.lines) {
        got.push_back({l.number, l.match, l.spans});
        // The line's bytes are the text's, without the '\n'.
        CHECK(text.find('\n', l.begin) >= l.end);
        CHECK((l.end == text.size() || text[l.end] == '\n'));
      }
    }
    REQUIRE(got == want);
    REQUIRE(got_starts == starts);
    with_lines += !want.empty();
    with_context += options.before + options.after > 0 && !want.empty();
  }
  CHECK(with_lines > cases / 2);
  CHECK(with_context > 20);
  CHECK(with_fewer > 20);
}

TEST_CASE("the best lines hold the most distinct terms, ties to the earlier, in text order",
          "[lines]") {
  // Line 1 holds alpha three times (one term), line 2 alpha and beta, line 3 nothing, line 4
  // alpha, beta and "gamma delta", line 5 beta and "gamma delta", line 6 alpha and beta again.
  const std::string text =
      "alpha alpha alpha\nalpha beta\nnothing\ngamma delta beta alpha\nbeta gamma delta\n"
      "beta alpha\n";
  // alpha is named twice: it counts once.
  bitsift::query::ParsedQuery parsed = bitsift::query::ParseQueryString(
      "alpha OR beta OR \"gamma delta\" OR alpha", bitsift::query::QueryMode::kLanguage);
  REQUIRE(parsed.ok());
  bitsift::query::QueryMatcher matcher(parsed.root);
  auto numbers = [&](uint64_t best, uint64_t before) {
    LineOptions options;
    options.best = best;
    options.before = before;
    std::vector<std::string> out;  // number, ':' for a match line or '-', per group "--"
    for (const auto& g : bitsift::answers::MatchingLines(text, matcher, options)) {
      if (!out.empty()) out.push_back("--");
      for (const auto& l : g.lines) out.push_back(std::to_string(l.number) + (l.match ? ":" : "-"));
    }
    return out;
  };
  using V = std::vector<std::string>;
  CHECK(numbers(0, 0) == V{"1:", "2:", "--", "4:", "5:", "6:"});
  CHECK(numbers(1, 0) == V{"4:"});
  CHECK(numbers(2, 0) == V{"2:", "--", "4:"});  // 2, 5 and 6 tie: the earliest
  // Were alpha counted twice, 2 and 6 would come before 5.
  CHECK(numbers(3, 0) == V{"2:", "--", "4:", "5:"});
  CHECK(numbers(9, 0) == numbers(0, 0));
  // Context around the chosen line; a matching line in it is still a match line.
  CHECK(numbers(1, 2) == V{"2:", "3-", "4:"});
}

TEST_CASE("long lines are trimmed around the first match at code point boundaries", "[lines]") {
  using bitsift::answers::TrimLine;
  const std::string line = "αβγδεζηθικλμνξοπρστυφχψω and then the match is here";
  const size_t at = line.find("match");
  auto t = TrimLine(line, {{at, at + 5}}, 12);
  CHECK(t.cut_before);
  CHECK(t.cut_after);
  const std::string kept = line.substr(t.start, t.end - t.start);
  CHECK(kept.find("match") != std::string::npos);
  REQUIRE(t.spans.size() == 1);
  CHECK(kept.substr(t.spans[0].start, 5) == "match");
  // Code points, not bytes: 12 of them, never a cut inside a character.
  size_t cps = 0;
  for (unsigned char c : kept) cps += (c & 0xC0) != 0x80;
  CHECK(cps == 12);
  CHECK((static_cast<unsigned char>(line[t.start]) & 0xC0) != 0x80);
  // Short lines and 0 keep everything; a match at the start keeps the start.
  CHECK_FALSE(TrimLine("short", {{0, 5}}, 10).cut_after);
  CHECK_FALSE(TrimLine(line, {{at, at + 5}}, 0).cut_before);
  auto head = TrimLine(line, {{0, 2}}, 10);
  CHECK(head.start == 0);
  CHECK_FALSE(head.cut_before);
  CHECK(head.cut_after);
}

TEST_CASE("a phrase across lines marks the lines of its words, from its first word to its last",
          "[lines]") {
  // A line between the phrase's words that holds none of them (only punctuation here) is no
  // match line, and each piece starts and ends on the phrase's words.
  bitsift::query::ParsedQuery parsed = bitsift::query::ParseQueryString(
      "\"offset silicon revisions\"", bitsift::query::QueryMode::kLanguage);
  REQUIRE(parsed.ok());
  const std::string text = "return offset;\n}\n\n/* Silicon revisions */\n";
  bitsift::query::QueryMatcher matcher(parsed.root);
  const auto groups = bitsift::answers::MatchingLines(text, matcher, {});
  std::vector<std::pair<uint64_t, std::string>> marked;
  for (const auto& g : groups) {
    for (const auto& l : g.lines) {
      if (!l.match) continue;
      for (const LineSpan& s : l.spans) {
        marked.emplace_back(l.number, text.substr(l.begin + s.start, s.end - s.start));
      }
    }
  }
  const std::vector<std::pair<uint64_t, std::string>> expected = {{1, "offset"},
                                                                  {4, "Silicon revisions"}};
  CHECK(marked == expected);
}

TEST_CASE("a phrase across a blank line marks its words' lines, whatever the blank line holds",
          "[lines]") {
  bitsift::query::ParsedQuery parsed =
      bitsift::query::ParseQueryString("\"alpha beta\"", bitsift::query::QueryMode::kLanguage);
  REQUIRE(parsed.ok());
  for (const std::string text :
       {"alpha\n\nbeta\n", "alpha\r\n\r\nbeta\r\n", "alpha \n \t\nbeta", "x alpha\n\n\n  beta y"}) {
    INFO(text);
    bitsift::query::QueryMatcher matcher(parsed.root);
    const auto groups = bitsift::answers::MatchingLines(text, matcher, {});
    std::vector<uint64_t> marked;
    for (const auto& g : groups) {
      for (const auto& l : g.lines) {
        if (!l.match) continue;
        marked.push_back(l.number);
        // Each piece starts and ends on the phrase's words, not on the blanks at the break.
        REQUIRE(l.spans.size() == 1);
        const std::string_view piece = std::string_view(text).substr(
            l.begin + l.spans[0].start, l.spans[0].end - l.spans[0].start);
        CHECK((piece == "alpha" || piece == "beta"));
      }
    }
    CHECK(marked.front() == 1);
    CHECK(marked.size() == 2);
  }
}

TEST_CASE("lines carry their source lines and a PDF's pages", "[lines][origins]") {
  bitsift::query::ParsedQuery parsed =
      bitsift::query::ParseQueryString("word", bitsift::query::QueryMode::kLanguage);
  REQUIRE(parsed.ok());
  bitsift::query::QueryMatcher matcher(parsed.root);
  auto marked = [&](const std::string& text, const bitsift::documents::LineOrigins* origins,
                    uint64_t context) {
    LineOptions options;
    options.before = context;
    std::vector<std::string> out;  // number:source_line:page:text:span
    for (const auto& g : bitsift::answers::MatchingLines(text, matcher, options, origins)) {
      for (const auto& l : g.lines) {
        // (Appended piece by piece: GCC 12 warns -Wrestrict on ":" + std::string.)
        std::string s = std::to_string(l.number);
        s.append(":").append(std::to_string(l.source_line)).append(":");
        s.append(std::to_string(l.page)).append(":").append(text, l.begin, l.end - l.begin);
        for (const LineSpan& sp : l.spans)
          s.append(":").append(text, l.begin + sp.start, sp.end - sp.start);
        out.push_back(s);
      }
    }
    return out;
  };
  // Plain text: no origins, no source lines.
  CHECK(marked("a\nword\n", nullptr, 0) == std::vector<std::string>{"2:0:0:word:word"});
  // HTML or a man page: each text line's source line.
  bitsift::documents::LineOrigins html;
  html.source_lines = {3, 7, 7, 12};
  CHECK(marked("title\nfirst\nword here\nlast word\n", &html, 1) ==
        std::vector<std::string>{"2:7:0:first", "3:7:0:word here:word", "4:12:0:last word:word"});
  // A PDF: pages start at lines beginning with '\f'; the '\f' is not part of the line.
  bitsift::documents::LineOrigins pdf;
  pdf.paged = true;
  CHECK(marked("one\nword\n\fpage two\nx word\n\f\n\fword\n", &pdf, 0) ==
        std::vector<std::string>{"2:2:1:word:word", "4:2:2:x word:word", "6:1:4:word:word"});
}
