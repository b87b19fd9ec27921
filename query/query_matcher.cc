#include "query/query_matcher.h"

#include <algorithm>

#include "tokenizer/stemmer.h"
#include "util/utf8.h"

namespace bitsift::query {

using Kind = QueryNode::Kind;

QueryMatcher::QueryMatcher(const QueryNode& root, tokenizer::TokenRules rules) : tokenizer_(rules) {
  Collect(root, true);
  std::unordered_map<std::string, uint32_t> seen;  // a pattern's elements, spelled out -> p
  for (uint32_t p = 0; p < patterns_.size(); ++p) {
    const Pattern& pattern = patterns_[p];
    std::string key;
    for (const Element& e : pattern.elements) {
      key.append(std::to_string(e.text.size())).append(":").append(e.text);
      key.push_back(e.prefix ? '*' : '.');
      key.push_back(e.joined ? '~' : '.');
    }
    first_alike_.push_back(seen.emplace(std::move(key), p).first->second);
    longest_ = std::max(longest_, pattern.elements.size());
    for (uint32_t e = 0; e < pattern.elements.size(); ++e) {
      const Element& element = pattern.elements[e];
      if (element.prefix) {
        prefixes_.emplace_back(element.text, Hit{p, e});
      } else if (tokenizer::IsStemTerm(element.text)) {
        stems_[element.text].push_back(Hit{p, e});
      } else {
        exact_[element.text].push_back(Hit{p, e});
      }
    }
  }
}

void QueryMatcher::Collect(const QueryNode& node, bool positive) {
  switch (node.kind) {
    case Kind::kTerm:
    case Kind::kPrefix:
      patterns_.push_back(
          Pattern{{Element{node.terms[0], node.kind == Kind::kPrefix, false}}, positive, &node});
      return;
    case Kind::kPhrase: {
      Pattern p;
      p.positive = positive;
      p.node = &node;
      for (size_t i = 0; i < node.terms.size(); ++i) {
        p.elements.push_back(Element{node.terms[i],
                                     node.last_is_prefix && i + 1 == node.terms.size(),
                                     i > 0 && node.joined[i]});
      }
      patterns_.push_back(std::move(p));
      return;
    }
    case Kind::kAnd:
    case Kind::kOr:
      for (const QueryNode& c : node.children) Collect(c, positive);
      for (const QueryNode& e : node.excluded) Collect(e, false);
      return;
  }
}

template <typename F>
void QueryMatcher::ForEachHit(std::string_view token, F&& consider) const {
  if (auto it = exact_.find(token); it != exact_.end()) {
    for (const Hit& h : it->second) consider(h);
  }
  for (const auto& [prefix, hit] : prefixes_) {
    if (token.substr(0, prefix.size()) == prefix) consider(hit);
  }
  if (!stems_.empty() && tokenizer::Stemmable(token)) {
    if (auto it = stems_.find(tokenizer::StemTerm(token)); it != stems_.end()) {
      for (const Hit& h : it->second) consider(h);
    }
  }
}

int QueryMatcher::PatternOf(const QueryNode* node) const {
  for (size_t p = 0; p < patterns_.size(); ++p) {
    if (patterns_[p].node == node) return static_cast<int>(p);
  }
  return -1;
}

// The per-text state of a scan: for every pattern, the bit set of j such that the tokens
// ending at the current one match its elements 0..j (shift-and over tokens).
class QueryMatcher::Sink : public tokenizer::OffsetTokenSink {
 public:
  // text: what the tokenizer is given (read only for spans, to find the line breaks between a
  // phrase's tokens).
  Sink(QueryMatcher& m, std::string_view text, bool spans, const std::vector<bool>& wanted,
       Result* out)
      : m_(m),
        text_(text),
        spans_(spans),
        wanted_(wanted),
        out_(out),
        begins_(m.longest_),
        ends_(m.longest_) {
    const size_t n = m.patterns_.size();
    first_word_.resize(n + 1);
    for (size_t p = 0; p < n; ++p) {
      first_word_[p + 1] = first_word_[p] + (m.patterns_[p].elements.size() + 63) / 64;
    }
    cur_.assign(first_word_[n], 0);
    next_.assign(first_word_[n], 0);
    stamp_.assign(n, UINT64_MAX);
    for (size_t p = 0; p < n; ++p) {
      if (wanted_[p]) ++missing_;
    }
  }

  bool done() const { return !spans_ && missing_ == 0; }

  bool OnToken(std::string_view token, uint64_t begin, uint64_t end, bool continues,
               tokenizer::TokenRole role) override {
    if (!tokenizer::IsPosition(role)) {
      OnWhole(token, begin, end);
      return !done();
    }
    begins_[index_ % begins_.size()] = begin;
    ends_[index_ % ends_.size()] = end;
    touched_.clear();
    auto consider = [&](const Hit& h) {
      const Element& e = m_.patterns_[h.pattern].elements[h.element];
      const uint64_t* cur = &cur_[first_word_[h.pattern]];
      bool ok = h.element == 0 || (((cur[(h.element - 1) / 64] >> ((h.element - 1) % 64)) & 1) &&
                                   (!e.joined || continues));
      if (!ok) return;
      next_[first_word_[h.pattern] + h.element / 64] |= uint64_t{1} << (h.element % 64);
      if (stamp_[h.pattern] != index_) {
        stamp_[h.pattern] = index_;
        touched_.push_back(h.pattern);
      }
    };
    m_.ForEachHit(token, consider);
    // Patterns active before this token and not touched by it lose their partial matches.
    for (uint32_t p : active_) {
      if (stamp_[p] != index_) {
        std::fill(cur_.begin() + first_word_[p], cur_.begin() + first_word_[p + 1], 0);
      }
    }
    active_.clear();
    for (uint32_t p : touched_) {
      bool any = false;
      for (size_t w = first_word_[p]; w < first_word_[p + 1]; ++w) {
        cur_[w] = next_[w];
        next_[w] = 0;
        any |= cur_[w] != 0;
      }
      if (any) active_.push_back(p);
      const size_t last = m_.patterns_[p].elements.size() - 1;
      if ((cur_[first_word_[p] + last / 64] >> (last % 64)) & 1) Occurs(p, last, end);
    }
    ++index_;
    return !done();
  }

 private:
  // A word with parts, [begin, end) of the text: not a position (its parts follow as
  // positions), but a term that patterns of one element find.
  void OnWhole(std::string_view token, uint64_t begin, uint64_t end) {
    auto consider = [&](const Hit& h) {
      if (m_.patterns_[h.pattern].elements.size() != 1) return;
      Found(h.pattern);
      if (spans_ && m_.patterns_[h.pattern].positive) {
        out_->spans.push_back(MatchSpan{begin, end, h.pattern});
      }
    };
    m_.ForEachHit(token, consider);
  }

  void Found(uint32_t p) {
    if (!out_->found[p]) {
      out_->found[p] = true;
      if (wanted_[p]) --missing_;
    }
  }

  void Occurs(uint32_t p, size_t last, uint64_t end) {
    Found(p);
    if (spans_ && m_.patterns_[p].positive) AddSpans(p, index_ - last, end);
  }

  // The spans of an occurrence of pattern p in tokens first..index_ (the last ending at `end`):
  // one for each line it is on, from its first token there to its last (a line break between
  // two of its tokens ends a span; a line between them that holds none of its tokens gets none).
  void AddSpans(uint32_t p, uint64_t first, uint64_t end) {
    const size_t ring = begins_.size();
    uint64_t from = begins_[first % ring];
    for (uint64_t k = first; k < index_; ++k) {
      const uint64_t gap = ends_[k % ring], next = begins_[(k + 1) % ring];
      // (Tokens may overlap: the bigrams of a kana/ideographic run share a character.)
      if (next > gap && text_.substr(gap, next - gap).find('\n') != std::string_view::npos) {
        out_->spans.push_back(MatchSpan{from, gap, p});
        from = next;
      }
    }
    out_->spans.push_back(MatchSpan{from, end, p});
  }

  QueryMatcher& m_;
  const std::string_view text_;
  const bool spans_;
  const std::vector<bool>& wanted_;
  Result* out_;
  std::vector<uint64_t> begins_;  // begins of the last longest_ tokens (a ring)
  std::vector<uint64_t> ends_;    // and their ends
  std::vector<size_t> first_word_;
  std::vector<uint64_t> cur_, next_;
  std::vector<uint64_t> stamp_;  // the token index that last touched each pattern
  std::vector<uint32_t> touched_, active_;
  uint64_t index_ = 0;
  size_t missing_ = 0;
};

namespace {

bool AsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z');
}

bool HasAsciiAlnum(std::string_view s) { return std::any_of(s.begin(), s.end(), AsciiAlnum); }

// Whether FindInMixed's pieces may start at i: the ends of the text, and every ASCII byte that
// follows a blank.
bool PieceStartsAt(std::string_view text, size_t i) {
  if (i == 0 || i == text.size()) return true;
  const char before = text[i - 1];
  return static_cast<unsigned char>(text[i]) < 0x80 &&
         (before == ' ' || before == '\n' || before == '\t');
}

}  // namespace

size_t QueryMatcher::AsciiEnd(size_t p, size_t e, size_t i, std::string_view lower) const {
  const std::vector<Element>& elements = patterns_[p].elements;
  if (e == elements.size()) return i;
  const std::string& t = elements[e].text;
  size_t best = std::string_view::npos;
  // A token may itself start with a byte that is not a letter or digit ('_' say), so every
  // place in the run of such bytes is tried.
  for (size_t j = i; j <= lower.size(); ++j) {
    if (lower.compare(j, t.size(), t) == 0) {
      size_t end = AsciiEnd(p, e + 1, j + t.size(), lower);
      if (end != std::string_view::npos && (best == std::string_view::npos || end > best)) {
        best = end;
      }
    }
    if (j == lower.size() || AsciiAlnum(lower[j])) break;
  }
  return best;
}

int QueryMatcher::FindInAscii(size_t p, std::string_view text, std::string_view lower) {
  auto is_cut = [&](size_t i) {  // a chunk may begin at i
    return i == 0 || i == text.size() || text[i - 1] == ' ' || text[i - 1] == '\n' ||
           text[i - 1] == '\t';
  };
  const std::string& first = patterns_[p].elements[0].text;
  size_t window_begin = 0, window_end = 0;  // the last window tokenized
  for (size_t at = lower.find(first); at != std::string_view::npos;
       at = lower.find(first, at + 1)) {
    const size_t end = AsciiEnd(p, 1, at + first.size(), lower);
    if (end == std::string_view::npos) continue;
    if (at >= window_begin && end <= window_end) continue;  // settled by the last window
    window_begin = at;
    while (!is_cut(window_begin)) --window_begin;
    window_end = end;
    while (!is_cut(window_end)) ++window_end;
    const int r = FindInWindow(p, text, window_begin, window_end);
    if (r != 0) return r;
  }
  return 0;
}

int QueryMatcher::FindInWindow(size_t p, std::string_view text, size_t begin, size_t end) {
  // Longer windows could hold a cut forced by a long stretch without a safe one.
  if (end - begin > tokenizer::Tokenizer::kChunkBytes) return -1;
  single_.assign(patterns_.size(), false);
  single_[p] = true;
  window_.found.assign(patterns_.size(), false);
  window_.spans.clear();
  const std::string_view window = text.substr(begin, end - begin);
  Sink sink(*this, window, false, single_, &window_);
  tokenizer_.TokenizeWithOffsets(window, sink);
  return window_.found[p] ? 1 : 0;
}

int QueryMatcher::FindInMixed(size_t p, std::string_view text, std::string_view lower) {
  // The text is cut into pieces before every ASCII byte that follows a blank (PieceStartsAt);
  // a piece holds at most one run of blanks, at its end. Only the pieces with a byte >= 0x80
  // are found (the rest of the text is ASCII): a scan 8 bytes at a time, not a piece list of
  // the whole text (a 1 MB source file with one accented name in a comment is mostly ASCII).
  const size_t n = text.size();
  struct Piece {
    size_t begin, end;
  };
  std::vector<Piece> wide;  // the pieces holding a byte >= 0x80, in order
  for (size_t q = FindNonAscii(text, 0); q < n; q = FindNonAscii(text, wide.back().end)) {
    size_t b = q, e = q + 1;
    while (!PieceStartsAt(text, b)) --b;
    while (!PieceStartsAt(text, e)) ++e;
    wide.push_back({b, e});
  }
  // Occurrences within the runs of ASCII pieces between them: a byte search, as for an ASCII
  // text.
  size_t cursor = 0;
  for (size_t k = 0; k <= wide.size(); ++k) {
    const size_t until = k < wide.size() ? wide[k].begin : n;
    if (until > cursor) {
      const int r =
          FindInAscii(p, text.substr(cursor, until - cursor), lower.substr(cursor, until - cursor));
      if (r != 0) return r;
    }
    if (k < wide.size()) cursor = wide[k].end;
  }
  // Occurrences that touch a piece with non-ASCII bytes or span one: windows around them,
  // reaching as many pieces with an ASCII letter or digit (at least one token each) as the
  // pattern has tokens after its first, on each side.
  const size_t reach = patterns_[p].elements.size() - 1;
  size_t covered = 0;  // the text before this is in a window already tried
  for (const Piece& w : wide) {
    if (w.begin < covered) continue;
    size_t begin = w.begin, end = w.end;
    for (size_t tokens = 0; begin > 0 && tokens < reach;) {
      size_t b = begin - 1;
      while (!PieceStartsAt(text, b)) --b;
      tokens += HasAsciiAlnum(text.substr(b, begin - b));
      begin = b;
    }
    // Neighbouring non-ASCII pieces within reach share the window.
    for (size_t tokens = 0; end < n && tokens < reach;) {
      size_t e = end + 1;
      while (!PieceStartsAt(text, e)) ++e;
      const std::string_view piece = text.substr(end, e - end);
      tokens = FindNonAscii(piece, 0) == piece.size() ? tokens + HasAsciiAlnum(piece) : 0;
      end = e;
    }
    // (Windows may overlap: the next one needs its own tokens to the left.)
    const int r = FindInWindow(p, text, begin, end);
    if (r != 0) return r;
    covered = end;
  }
  return 0;
}

void QueryMatcher::Scan(std::string_view text, bool spans, const std::vector<bool>& wanted,
                        Result* out) {
  out->found.assign(patterns_.size(), false);
  out->spans.clear();
  if (!spans && stems_.empty()) {
    // The phrase's bytes are searched first (a stem term has no bytes to search for); an ASCII-only
    // text needs no tokenizing where they are absent, a text with some non-ASCII bytes is tokenized
    // only near those bytes.
    const bool ascii = FindNonAscii(text, 0) == text.size();
    lower_.resize(text.size());
    std::transform(text.begin(), text.end(), lower_.begin(),
                   [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
    bool undecided = false;
    for (size_t p = 0; p < patterns_.size(); ++p) {
      if (!wanted[p]) continue;
      const int r = ascii ? FindInAscii(p, text, lower_) : FindInMixed(p, text, lower_);
      out->found[p] = r == 1;
      undecided |= r < 0;
    }
    if (!undecided) return;
    out->found.assign(patterns_.size(), false);
  }
  Sink sink(*this, text, spans, wanted, out);
  if (sink.done()) return;
  tokenizer_.TokenizeWithOffsets(text, sink);
}

}  // namespace bitsift::query
