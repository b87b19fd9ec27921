#include "tokenizer/tokenizer.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <stdexcept>

namespace bitsift::tokenizer {
namespace {

// ICU word-break rule status ranges (ubrk.h: UBRK_WORD_NUMBER = 100 ... UBRK_WORD_IDEO_LIMIT).
constexpr int32_t kFirstKeptStatus = 100;
constexpr int32_t kFirstCjkStatus = 300;  // UBRK_WORD_KANA
constexpr int32_t kCjkStatusLimit = 500;  // UBRK_WORD_IDEO_LIMIT

void AppendUtf8(UChar32 c, std::string& out) {
  char buf[4];
  int32_t n = 0;
  UBool error = false;
  U8_APPEND(reinterpret_cast<uint8_t*>(buf), n, 4, c, error);
  if (!error) out.append(buf, n);
}

// A character after which a chunk may be cut: it always forms a segment of its own that the
// contract drops, and no word-break or normalization rule joins it to what follows.
bool IsCutAfter(UChar32 c) {
  return c == '\n' || c == ' ' || c == '\t' || c == 0x3000 || c == 0x3001 || c == 0x3002;
}

}  // namespace

struct Tokenizer::Impl {
  const icu::Normalizer2* normalizer = nullptr;
  std::unique_ptr<icu::BreakIterator> words;
  std::string pending;            // bytes fed but not yet tokenized
  icu::UnicodeString decoded;     // the chunk in UTF-16
  icu::UnicodeString normalized;  // the chunk after NFKC_Casefold
  std::string token;              // scratch for one UTF-8 token
  std::vector<UChar32> run;       // code points of the current kana/ideographic run
  size_t chunk_bytes = kChunkBytes;
  size_t max_chunk_bytes = kMaxChunkBytes;

  // Whether a chunk may start with the code point at bytes[i] (it must be complete and valid).
  bool StartsCleanly(std::string_view bytes, size_t i) const {
    int32_t pos = static_cast<int32_t>(i);
    UChar32 c;
    U8_NEXT(reinterpret_cast<const uint8_t*>(bytes.data()), pos, static_cast<int32_t>(bytes.size()),
            c);
    if (c < 0) return false;
    int32_t wb = u_getIntPropertyValue(c, UCHAR_WORD_BREAK);
    if (wb == U_WB_EXTEND || wb == U_WB_FORMAT || wb == U_WB_ZWJ) return false;
    return normalizer->hasBoundaryBefore(c);
  }

  // Returns a byte offset in (0, bytes.size()) where a chunk can end without changing the
  // tokens, searching backward from `from`; 0 if none at or after `lowest`.
  size_t FindSafeCut(std::string_view bytes, size_t from, size_t lowest) const {
    const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
    // Leave room to decode the code point that would start the next chunk.
    size_t i = std::min(from, bytes.size() > 4 ? bytes.size() - 4 : 0);
    for (; i > lowest && i >= 1; --i) {
      UChar32 prev = -1;
      uint8_t last = b[i - 1];
      if (last == '\n' || last == ' ' || last == '\t') {
        prev = last;
      } else if (i >= 3 && b[i - 3] == 0xE3 && b[i - 2] == 0x80 && last >= 0x80 && last <= 0x82) {
        prev = 0x3000 + (last - 0x80);
      }
      if (prev >= 0 && IsCutAfter(prev) && StartsCleanly(bytes, i)) return i;
    }
    return 0;
  }

  // A cut for a text without any safe place: the start of a code point, preferably one with a
  // normalization boundary before it.
  size_t FindForcedCut(std::string_view bytes, size_t at) const {
    const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
    for (size_t i = at; i > at / 2; --i) {
      if ((b[i] & 0xC0) != 0x80 && StartsCleanly(bytes, i)) return i;
    }
    size_t i = at;
    while (i > 1 && (b[i] & 0xC0) == 0x80) --i;
    return i;
  }

  void EmitRun(TokenSink& sink) {
    if (run.empty()) return;
    if (run.size() == 1) {
      token.clear();
      AppendUtf8(run[0], token);
      sink.OnToken(token);
    } else {
      for (size_t i = 0; i + 1 < run.size(); ++i) {
        token.clear();
        AppendUtf8(run[i], token);
        AppendUtf8(run[i + 1], token);
        sink.OnToken(token);
      }
    }
    run.clear();
  }

  void ProcessChunk(std::string_view bytes, TokenSink& sink) {
    if (bytes.empty()) return;
    UErrorCode status = U_ZERO_ERROR;
    // 1. UTF-8 -> UTF-16, every ill-formed sequence replaced by U+FFFD.
    int32_t capacity = static_cast<int32_t>(bytes.size()) + 1;
    UChar* dest = decoded.getBuffer(capacity);
    int32_t length = 0;
    u_strFromUTF8WithSub(dest, capacity, &length, bytes.data(), static_cast<int32_t>(bytes.size()),
                         0xFFFD, nullptr, &status);
    decoded.releaseBuffer(U_SUCCESS(status) ? length : 0);
    if (U_FAILURE(status)) throw std::runtime_error("UTF-8 decoding failed");
    // 2. NFKC_Casefold.
    normalizer->normalize(decoded, normalized, status);
    if (U_FAILURE(status)) throw std::runtime_error("NFKC_Casefold normalization failed");
    // 3. Word segmentation; 4. kana/ideographic runs become bigrams.
    words->setText(normalized);
    int32_t start = words->first();
    run.clear();
    for (int32_t end = words->next(); end != icu::BreakIterator::DONE;
         start = end, end = words->next()) {
      int32_t rule = words->getRuleStatus();
      if (rule >= kFirstCjkStatus && rule < kCjkStatusLimit) {
        // Consecutive segments are directly adjacent, so the run simply continues.
        for (int32_t i = start; i < end;) {
          UChar32 c;
          U16_NEXT(normalized.getBuffer(), i, end, c);
          run.push_back(c);
        }
        continue;
      }
      EmitRun(sink);
      if (rule < kFirstKeptStatus) continue;
      token.clear();
      for (int32_t i = start; i < end;) {
        UChar32 c;
        U16_NEXT(normalized.getBuffer(), i, end, c);
        AppendUtf8(c, token);
      }
      sink.OnToken(token);
    }
    EmitRun(sink);
  }
};

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {
  UErrorCode status = U_ZERO_ERROR;
  impl_->normalizer = icu::Normalizer2::getNFKCCasefoldInstance(status);
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("ICU NFKC_Casefold unavailable: ") + u_errorName(status));
  }
  impl_->words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  if (U_FAILURE(status) || !impl_->words) {
    throw std::runtime_error(std::string("ICU word break iterator unavailable: ") +
                             u_errorName(status));
  }
}

Tokenizer::~Tokenizer() = default;

void Tokenizer::SetChunkBytesForTesting(size_t chunk, size_t max_chunk) {
  impl_->chunk_bytes = std::max<size_t>(chunk, 8);
  impl_->max_chunk_bytes = std::max(max_chunk, impl_->chunk_bytes * 2);
}

void Tokenizer::Feed(std::string_view bytes, TokenSink& sink) {
  Impl& s = *impl_;
  s.pending.append(bytes);
  while (s.pending.size() >= s.chunk_bytes + 4) {
    std::string_view view(s.pending);
    size_t cut = s.FindSafeCut(view, s.chunk_bytes, s.chunk_bytes / 2);
    if (cut == 0) {
      // Look further ahead before forcing a cut.
      if (s.pending.size() < s.max_chunk_bytes) {
        cut = s.FindSafeCut(view, view.size(), s.chunk_bytes);
        if (cut == 0) return;  // wait for more bytes
      } else {
        cut = s.FindSafeCut(view, s.max_chunk_bytes, s.chunk_bytes / 2);
        if (cut == 0) cut = s.FindForcedCut(view, s.max_chunk_bytes - 4);
      }
    }
    s.ProcessChunk(view.substr(0, cut), sink);
    s.pending.erase(0, cut);
  }
}

void Tokenizer::Finish(TokenSink& sink) {
  std::string rest;
  rest.swap(impl_->pending);
  impl_->ProcessChunk(rest, sink);
}

void Tokenizer::Reset() { impl_->pending.clear(); }

void Tokenizer::Tokenize(std::string_view text, TokenSink& sink) {
  Feed(text, sink);
  Finish(sink);
}

std::vector<std::string> TokenSet(std::string_view text) {
  struct Collect : TokenSink {
    std::vector<std::string> tokens;
    void OnToken(std::string_view t) override { tokens.emplace_back(t); }
  } collect;
  Tokenizer tokenizer;
  tokenizer.Tokenize(text, collect);
  std::sort(collect.tokens.begin(), collect.tokens.end());
  collect.tokens.erase(std::unique(collect.tokens.begin(), collect.tokens.end()),
                       collect.tokens.end());
  return collect.tokens;
}

}  // namespace bitsift::tokenizer
