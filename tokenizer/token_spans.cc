#include "tokenizer/token_spans.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "tokenizer/tokenizer.h"

namespace bitsift::tokenizer {
namespace {

// The text after NFKC_Casefold, with where each part came from.
struct Normalized {
  std::string text;                 // UTF-8
  std::vector<uint64_t> norm_at;    // segment i's first byte in `text`
  std::vector<uint64_t> source_at;  // segment i's first byte in the source
  uint64_t source_size = 0;

  // The segment holding byte `at` of `text` (at < text.size()). Segments that normalize to
  // nothing share their start with the next one; upper_bound skips them.
  size_t SegmentOf(uint64_t at) const {
    return static_cast<size_t>(std::upper_bound(norm_at.begin(), norm_at.end(), at) -
                               norm_at.begin()) -
           1;
  }
  uint64_t SourceEnd(size_t segment) const {
    return segment + 1 < source_at.size() ? source_at[segment + 1] : source_size;
  }
};

Normalized Normalize(std::string_view source) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCCasefoldInstance(status);
  if (U_FAILURE(status)) throw std::runtime_error("ICU NFKC_Casefold unavailable");
  Normalized n;
  n.source_size = source.size();
  icu::UnicodeString segment, out;
  auto flush = [&] {
    if (segment.isEmpty()) return;
    nfkc->normalize(segment, out, status);
    if (U_FAILURE(status)) throw std::runtime_error("NFKC_Casefold normalization failed");
    n.norm_at.push_back(n.text.size());
    out.toUTF8String(n.text);
    segment.remove();
  };
  const auto* bytes = reinterpret_cast<const uint8_t*>(source.data());
  const int64_t size = static_cast<int64_t>(source.size());
  for (int64_t i = 0; i < size;) {
    const int64_t at = i;
    UChar32 c;
    // Ill-formed sequences become U+FFFD as the tokenizer's u_strFromUTF8WithSub makes them.
    U8_NEXT_OR_FFFD(bytes, i, size, c);
    if (!segment.isEmpty() && nfkc->hasBoundaryBefore(c)) flush();
    if (segment.isEmpty()) n.source_at.push_back(static_cast<uint64_t>(at));
    segment.append(c);
  }
  flush();
  return n;
}

// The bytes of the first code point of `s`.
size_t FirstCodePointBytes(std::string_view s) {
  int32_t i = 0;
  UChar32 c;
  U8_NEXT_OR_FFFD(reinterpret_cast<const uint8_t*>(s.data()), i, static_cast<int32_t>(s.size()), c);
  return static_cast<size_t>(i);
}

// The code points of the valid UTF-8 string `s`.
size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

}  // namespace

namespace {

// Locates the tokens of `piece` (a whole text, or a part of one cut where the contract cannot
// see the cut) and reports them with `base` added to their ranges.
void LocatePiece(std::string_view piece, uint64_t base, Tokenizer& tokenizer,
                 const std::function<void(const TokenSpan&)>& sink) {
  struct Collect : TokenSink {
    std::vector<TokenSpan> spans;
    void OnToken(std::string_view t) override { spans.push_back({std::string(t), 0, 0}); }
  } collect;
  tokenizer.Tokenize(piece, collect);
  if (collect.spans.empty()) return;
  const Normalized n = Normalize(piece);
  size_t previous = std::string::npos;  // where the previous token lies in n.text
  size_t from = 0;                      // where the next token is searched from
  uint64_t last_end = 0;
  const std::string* prev = nullptr;
  for (TokenSpan& span : collect.spans) {
    const std::string& t = span.token;
    size_t at = std::string::npos;
    // The next bigram of a run starts one character after the previous bigram.
    if (prev != nullptr && CodePoints(*prev) == 2 && CodePoints(t) == 2) {
      const size_t next = previous + FirstCodePointBytes(*prev);
      if (n.text.compare(next, t.size(), t) == 0) at = next;
    }
    if (at == std::string::npos) at = n.text.find(t, from);
    if (at == std::string::npos || t.empty()) {
      span.begin = span.end = base + last_end;
      sink(span);
      continue;
    }
    span.begin = base + n.source_at[n.SegmentOf(at)];
    last_end = n.SourceEnd(n.SegmentOf(at + t.size() - 1));
    span.end = base + last_end;
    previous = at;
    from = at + t.size();
    prev = &t;
    sink(span);
  }
}

}  // namespace

void ForEachTokenSpan(std::string_view text, const std::function<void(const TokenSpan&)>& sink,
                      size_t piece_bytes) {
  Tokenizer tokenizer;
  for (size_t start = 0; start < text.size();) {
    // Cut after a newline followed by an ASCII character: a place where the tokenizer's
    // contract cannot see a cut (tokenizer.h), so the pieces' tokens are the text's.
    size_t end = text.size();
    if (text.size() - start > piece_bytes) {
      size_t nl = text.find('\n', start + piece_bytes);
      while (nl != std::string_view::npos && nl + 1 < text.size() &&
             static_cast<unsigned char>(text[nl + 1]) >= 0x80) {
        nl = text.find('\n', nl + 1);
      }
      if (nl != std::string_view::npos) end = nl + 1;
    }
    LocatePiece(text.substr(start, end - start), start, tokenizer, sink);
    start = end;
  }
}

std::vector<TokenSpan> TokenSpans(std::string_view text) {
  std::vector<TokenSpan> spans;
  ForEachTokenSpan(text, [&](const TokenSpan& s) { spans.push_back(s); });
  return spans;
}

}  // namespace bitsift::tokenizer
