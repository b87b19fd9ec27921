#include "tokenizer/tokenizer.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>
#include <unicode/utf16.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "util/error.h"
#include "util/utf8.h"

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

// The word-break classes of ASCII characters that can be part of a kept segment, under ICU's
// root rules: UAX #29, with ':' taken out of MidLetter (which leaves ASCII no MidLetter) and
// '@' put in ALetter (so that "foo@bar.com" is one word, and "@" alone a kept one). Every other
// ASCII character (space, newline, other punctuation, controls) is a segment of its own that
// the contract drops. kMidNumLet is MidNumLet and Single_Quote (UAX #29's MidNumLetQ).
enum AsciiClass : uint8_t { kApart, kLetter, kDigit, kConnector, kMidNumLet, kMidNum };

constexpr std::array<uint8_t, 256> kAsciiClasses = [] {
  std::array<uint8_t, 256> t{};  // (bytes past ASCII: kApart, never looked up)
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kLetter;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kLetter;
  t['@'] = kLetter;
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  t['_'] = kConnector;  // ExtendNumLet
  t['.'] = kMidNumLet;
  t['\''] = kMidNumLet;
  t[','] = kMidNum;
  t[';'] = kMidNum;
  return t;
}();

// Whether an ASCII character of a kept segment makes parts (clause 5): it is not a letter,
// digit or '_' (the ASCII members of L, N and Pc); in a segment that is '@', '.', '\'', ',' or
// ';'.
bool IsAsciiPartSeparator(char c) {
  return !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (c >= 'A' && c <= 'Z'));
}

// Whether a code point is in the Latin script (its Script property).
bool IsLatin(UChar32 c) {
  UErrorCode status = U_ZERO_ERROR;
  return uscript_getScript(c, &status) == USCRIPT_LATIN;
}

// Whether a code point can stand in a part (clause 5: general categories L, M, N, Pc).
bool IsPartCharacter(UChar32 c) {
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_M_MASK | U_GC_N_MASK | U_GC_PC_MASK)) != 0;
}

// ASCII lines between two non-ASCII bytes shorter than this stay with ICU (one call for both).
constexpr size_t kIcuJoinBytes = 256;

// The Han path (Impl::SegmentHan) takes the lines of ICU's pieces whose every character is
// ASCII, a unified Han ideograph of the BMP, a hiragana or katakana, or a punctuation mark
// common in Chinese and Japanese text, and otherwise leaves the line to ICU. Under ICU 72 each
// of those ideographs and kana is its own NFKC_Casefold and is segmented with a kana or
// ideographic rule status (300..499) alone, doubled and among other characters, so a run of
// them becomes its bigrams whatever ICU's dictionary makes of it; the one word-break rule that
// joins them to anything else joins a katakana and '_' (WB13a-b), and such a line goes to ICU.
// Each mark below is its own NFKC_Casefold or becomes one ASCII character, and is a word-break
// class that joins nothing (Other, or the ASCII character's own class).
// tests/tokenizer/ascii_test.cc asks ICU all of this, character by character.
// SegmentHan's units: ASCII characters, and these two for the characters of kana/ideographic
// runs (every unit from kHanUnit up).
constexpr uint8_t kHanUnit = 0x80;       // a Han ideograph or a hiragana
constexpr uint8_t kKatakanaUnit = 0x81;  // a katakana: joins '_' (WB13a-b), unlike the others

// The characters of kana/ideographic runs that the Han path takes: the unified ideographs of
// the BMP (Extension A and the main block), hiragana, and katakana with the prolonged sound
// mark (U+30FC).
bool IsHanOrHiragana(UChar32 c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x3041 && c <= 0x3096);
}
bool IsKatakana(UChar32 c) { return (c >= 0x30A1 && c <= 0x30FA) || c == 0x30FC; }

// The punctuation marks the Han path takes, sorted, each with the ASCII character it stands
// for: the one NFKC_Casefold makes of a fullwidth form, or ' ' for a mark that is its own
// normalization and a word-break Other (every rule treats it as a space does).
struct HanPathMark {
  UChar32 c;
  char unit;
};
constexpr HanPathMark kHanPathMarks[] = {
    {0x2014, ' '},                 // —
    {0x201C, ' '}, {0x201D, ' '},  // “ ”
    {0x3000, ' '},                 // IDEOGRAPHIC SPACE (NFKC_Casefold: ' ')
    {0x3001, ' '}, {0x3002, ' '},  // 、。
    {0x3008, ' '}, {0x3009, ' '}, {0x300A, ' '}, {0x300B, ' '}, {0x300C, ' '}, {0x300D, ' '},
    {0x300E, ' '}, {0x300F, ' '}, {0x3010, ' '}, {0x3011, ' '},  // 〈〉《》「」『』【】
    {0x3014, ' '}, {0x3015, ' '}, {0x3016, ' '}, {0x3017, ' '},  // 〔〕〖〗
    {0xFF01, '!'}, {0xFF08, '('}, {0xFF09, ')'}, {0xFF0C, ','}, {0xFF0E, '.'}, {0xFF1A, ':'},
    {0xFF1B, ';'}, {0xFF1F, '?'},  // fullwidth ! ( ) , . : ; ?
};

// What the Han path makes of the non-ASCII character c: kHanUnit or kKatakanaUnit for an
// ideograph or kana, the ASCII character that stands for a mark, or 0 if the path does not
// take it.
uint8_t HanPathUnit(UChar32 c) {
  if (IsHanOrHiragana(c)) return kHanUnit;
  if (IsKatakana(c)) return kKatakanaUnit;
  const auto* end = std::end(kHanPathMarks);
  const auto* m = std::lower_bound(std::begin(kHanPathMarks), end, c,
                                   [](const HanPathMark& x, UChar32 y) { return x.c < y; });
  return m != end && m->c == c ? static_cast<uint8_t>(m->unit) : 0;
}

}  // namespace

struct Tokenizer::Impl {
  // ICU's normalizer and word break iterator, made when a text first needs them (NeedIcu):
  // ASCII lines need neither, so a query, a phrase check or --lines over ASCII text never
  // loads ICU's data (an absent split word, `zzq-xxv`, 2.27 -> 2.12 ms a process).
  mutable const icu::Normalizer2* normalizer = nullptr;
  mutable const icu::Normalizer2* nfd = nullptr;  // for folding diacritics
  mutable const icu::Normalizer2* nfc = nullptr;
  mutable std::unique_ptr<icu::BreakIterator> words;
  TokenRules rules;
  std::string pending;                              // bytes fed but not yet tokenized
  icu::UnicodeString decoded;                       // the chunk in UTF-16
  icu::UnicodeString normalized;                    // the chunk after NFKC_Casefold
  std::string token;                                // scratch for one UTF-8 token
  icu::UnicodeString fold_in, fold_out, fold_kept;  // scratch for folding diacritics
  std::string han_units;             // HanUnits: a line's characters as SegmentHan's units
  std::vector<uint32_t> han_source;  // and where each starts in it (then the line's end)
  std::vector<int32_t> run;          // start (in normalized) of each code point of the current
                                     // kana/ideographic run
  int32_t run_end = 0;               // end of the current run in normalized
  size_t chunk_bytes = kChunkBytes;
  size_t max_chunk_bytes = kMaxChunkBytes;

  // The offsets path: normalized[u] was produced by source characters
  // [piece_begin[unit_piece[u]], piece_begin[unit_piece[u] + 1]) of the chunk, a "piece" being a
  // normalization segment (from a character with a normalization boundary before it to the next).
  std::vector<uint32_t> unit_piece;
  std::vector<uint32_t> piece_begin;
  icu::UnicodeString piece, piece_out;  // scratch for one piece
  uint64_t chunk_base = 0;              // the chunk's offset in the whole text
  TokenSink* sink = nullptr;
  OffsetTokenSink* offset_sink = nullptr;
  bool stopped = false;    // the offset sink asked to stop
  bool fast_paths = true;  // SegmentAscii and SegmentHan (off: ICU for everything)

  // Makes ICU's objects if they are not made yet. Throws std::runtime_error if ICU's data
  // cannot be loaded.
  void NeedIcu() const {
    if (words) return;
    UErrorCode status = U_ZERO_ERROR;
    normalizer = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) {
      throw std::runtime_error(std::string("ICU NFKC_Casefold unavailable: ") +
                               u_errorName(status));
    }
    nfd = icu::Normalizer2::getNFDInstance(status);
    nfc = icu::Normalizer2::getNFCInstance(status);
    if (U_FAILURE(status)) {
      throw std::runtime_error(std::string("ICU NFD/NFC unavailable: ") + u_errorName(status));
    }
    words.reset(icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status) || !words) {
      words.reset();
      throw std::runtime_error(std::string("ICU word break iterator unavailable: ") +
                               u_errorName(status));
    }
  }

  // Whether a chunk may start with the code point at bytes[i] (it must be complete and valid).
  // Every ASCII character does: none is a word-break extender and each has a normalization
  // boundary before it (tests/tokenizer/ascii_test.cc asks ICU).
  bool StartsCleanly(std::string_view bytes, size_t i) const {
    if (static_cast<uint8_t>(bytes[i]) < 0x80) return true;
    int32_t pos = static_cast<int32_t>(i);
    UChar32 c;
    U8_NEXT(reinterpret_cast<const uint8_t*>(bytes.data()), pos, static_cast<int32_t>(bytes.size()),
            c);
    if (c < 0) return false;
    if (HanPathUnit(c) != 0) return true;  // asked of ICU by tests/tokenizer/ascii_test.cc
    NeedIcu();
    int32_t wb = u_getIntPropertyValue(c, UCHAR_WORD_BREAK);
    if (wb == U_WB_EXTEND || wb == U_WB_FORMAT || wb == U_WB_ZWJ) return false;
    return normalizer->hasBoundaryBefore(c);
  }

  // Whether a chunk of bytes may end at offset i (0 < i <= bytes.size() - 4: the code point
  // that would start the next chunk must be visible).
  bool IsSafeCut(const uint8_t* b, std::string_view bytes, size_t i) const {
    UChar32 prev = -1;
    uint8_t last = b[i - 1];
    if (last == '\n' || last == ' ' || last == '\t') {
      prev = last;
    } else if (i >= 3 && b[i - 3] == 0xE3 && b[i - 2] == 0x80 && last >= 0x80 && last <= 0x82) {
      prev = 0x3000 + (last - 0x80);
    }
    return prev >= 0 && IsCutAfter(prev) && StartsCleanly(bytes, i);
  }

  // The last offset in (lowest, from] where a chunk can end, or 0 if none.
  size_t FindSafeCut(std::string_view bytes, size_t from, size_t lowest) const {
    const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
    size_t i = std::min(from, bytes.size() > 4 ? bytes.size() - 4 : 0);
    for (; i > lowest && i >= 1; --i) {
      if (IsSafeCut(b, bytes, i)) return i;
    }
    return 0;
  }

  // The first offset in (from, highest] where a chunk can end, among those whose next code
  // point is visible (at most bytes.size() - 4), or 0 if none.
  size_t FindSafeCutForward(std::string_view bytes, size_t from, size_t highest) const {
    const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
    const size_t last = std::min(highest, bytes.size() > 4 ? bytes.size() - 4 : 0);
    for (size_t i = std::max<size_t>(from + 1, 1); i <= last; ++i) {
      if (IsSafeCut(b, bytes, i)) return i;
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

  // Calls process(chunk, offset) for every complete chunk at the front of `view` and returns
  // the bytes they cover; the rest waits for more bytes (or for the end of the text). A chunk
  // ends at the last safe place in (chunk_bytes / 2, chunk_bytes], else at the first one in
  // (chunk_bytes, max_chunk_bytes], else (none there) it is cut by force near max_chunk_bytes.
  // Each decision waits until the bytes it depends on are all present, so the cuts depend on
  // the text only, never on the pieces it is fed in.
  template <typename Process>
  size_t CutChunks(std::string_view view, Process&& process) {
    size_t consumed = 0;
    while (view.size() >= chunk_bytes + 4) {
      size_t cut = FindSafeCut(view, chunk_bytes, chunk_bytes / 2);
      if (cut == 0) cut = FindSafeCutForward(view, chunk_bytes, max_chunk_bytes);
      if (cut == 0) {
        if (view.size() < max_chunk_bytes + 4) break;  // a safe place may still come
        cut = FindForcedCut(view, max_chunk_bytes - 4);
      }
      process(view.substr(0, cut), consumed);
      view.remove_prefix(cut);
      consumed += cut;
    }
    return consumed;
  }

  // Sends `t` (normalized[a, b) or what clause 5 made of it) with its role and, with offsets,
  // its source range and `continues_run` as OffsetTokenSink describes.
  template <bool kOffsets>
  void Send(std::string_view t, int32_t a, int32_t b, bool continues_run, TokenRole role) {
    if constexpr (kOffsets) {
      if (stopped) return;
      stopped = !offset_sink->OnToken(t, chunk_base + piece_begin[unit_piece[a]],
                                      chunk_base + piece_begin[unit_piece[b - 1] + 1],
                                      continues_run, role);
    } else {
      sink->OnToken(t, role);
    }
  }

  // Sets `token` to normalized[a, b) in UTF-8, its Latin diacritics folded if the rules say so
  // (clause 5).
  void TermOf(int32_t a, int32_t b) {
    const UChar* u = normalized.getBuffer();
    token.clear();
    bool fold = false;
    for (int32_t i = a; i < b;) {
      UChar32 c;
      U16_NEXT(u, i, b, c);
      AppendUtf8(c, token);
      // Below U+00C0 nothing decomposes and nothing is a mark; a Latin letter may decompose,
      // and a nonspacing mark may sit on one.
      fold |=
          c >= 0xC0 && rules.fold_diacritics && (u_charType(c) == U_NON_SPACING_MARK || IsLatin(c));
    }
    if (fold) FoldDiacritics(a, b);
  }

  // Clause 5's folding of normalized[a, b) into `token`: NFD, every nonspacing mark whose base
  // (the last character before it that is not a mark) is in the Latin script dropped, NFC.
  void FoldDiacritics(int32_t a, int32_t b) {
    UErrorCode status = U_ZERO_ERROR;
    fold_in.setTo(normalized, a, b - a);
    nfd->normalize(fold_in, fold_out, status);
    if (U_FAILURE(status)) throw std::runtime_error("NFD normalization failed");
    fold_kept.remove();
    bool latin_base = false, dropped = false;
    for (int32_t i = 0; i < fold_out.length();) {
      const UChar32 c = fold_out.char32At(i);
      i += U16_LENGTH(c);
      const int8_t type = u_charType(c);
      if (type == U_NON_SPACING_MARK && latin_base) {
        dropped = true;
        continue;
      }
      if (type != U_NON_SPACING_MARK && type != U_COMBINING_SPACING_MARK &&
          type != U_ENCLOSING_MARK) {
        latin_base = IsLatin(c);
      }
      fold_kept.append(c);
    }
    if (!dropped) return;  // NFC(NFD(x)) is x: the normalized text is NFC already
    nfc->normalize(fold_kept, fold_out, status);
    if (U_FAILURE(status)) throw std::runtime_error("NFC normalization failed");
    token.clear();
    fold_out.toUTF8String(token);
  }

  // The token normalized[a, b) of a bigram run: a word without parts.
  template <bool kOffsets>
  void Emit(int32_t a, int32_t b, bool continues_run) {
    if constexpr (!kOffsets) {
      if (!continues_run) sink->OnRunStart();
    }
    const UChar* u = normalized.getBuffer();
    token.clear();
    for (int32_t i = a; i < b;) {
      UChar32 c;
      U16_NEXT(u, i, b, c);
      AppendUtf8(c, token);
    }
    Send<kOffsets>(token, a, b, continues_run, TokenRole::kWord);
  }

  // The word normalized[a, b) (a kept segment that is not kana/ideographic): clause 5.
  template <bool kOffsets>
  void EmitWord(int32_t a, int32_t b) {
    const UChar* u = normalized.getBuffer();
    bool parts = false;
    for (int32_t i = a; i < b && !parts;) {
      UChar32 c;
      U16_NEXT(u, i, b, c);
      parts = !IsPartCharacter(c);
    }
    TermOf(a, b);
    if (!parts) return Send<kOffsets>(token, a, b, false, TokenRole::kWord);
    // A word of separators alone ("@") has no parts: it is one position.
    int32_t first = a;
    for (; first < b; first = NextCodePoint(u, first, b)) {
      if (IsPartCharacter(CodePointAt(u, first, b))) break;
    }
    if (first == b) return Send<kOffsets>(token, a, b, false, TokenRole::kWord);
    Send<kOffsets>(token, a, b, false, TokenRole::kWhole);
    for (int32_t i = a; i < b;) {
      if (!IsPartCharacter(CodePointAt(u, i, b))) {
        i = NextCodePoint(u, i, b);
        continue;
      }
      int32_t end = i;
      while (end < b && IsPartCharacter(CodePointAt(u, end, b))) end = NextCodePoint(u, end, b);
      TermOf(i, end);
      Send<kOffsets>(token, i, end, false, TokenRole::kPart);
      i = end;
    }
  }

  static UChar32 CodePointAt(const UChar* u, int32_t i, int32_t end) {
    UChar32 c;
    U16_NEXT(u, i, end, c);
    return c;
  }
  static int32_t NextCodePoint(const UChar* u, int32_t i, int32_t end) {
    U16_FWD_1(u, i, end);
    return i;
  }

  template <bool kOffsets>
  void EmitRun() {
    if (run.empty()) return;
    if (run.size() == 1) {
      Emit<kOffsets>(run[0], run_end, false);
    } else {
      for (size_t i = 0; i + 1 < run.size(); ++i) {
        Emit<kOffsets>(run[i], i + 2 < run.size() ? run[i + 2] : run_end, i > 0);
      }
    }
    run.clear();
  }

  // Steps 3 and 4 over `normalized`: word segmentation; kana/ideographic runs become bigrams.
  template <bool kOffsets>
  void Segment() {
    const UChar* u = normalized.getBuffer();
    words->setText(normalized);
    int32_t start = words->first();
    run.clear();
    for (int32_t end = words->next(); end != icu::BreakIterator::DONE;
         start = end, end = words->next()) {
      if constexpr (kOffsets) {
        if (stopped) return;
      }
      int32_t rule = words->getRuleStatus();
      if (rule >= kFirstCjkStatus && rule < kCjkStatusLimit) {
        // Consecutive segments are directly adjacent, so the run simply continues.
        for (int32_t i = start; i < end;) {
          run.push_back(i);
          U16_FWD_1(u, i, end);
        }
        run_end = end;
        continue;
      }
      EmitRun<kOffsets>();
      if (rule < kFirstKeptStatus) continue;
      EmitWord<kOffsets>(start, end);
    }
    EmitRun<kOffsets>();
  }

  // Tokenizes one chunk (at offset `base` of the whole text; used with offsets): its ASCII
  // lines with SegmentAscii, the lines around each non-ASCII byte with ICU. The pieces are cut
  // after a newline, before a character that starts cleanly, as chunks are (CutChunks), so
  // their tokens are the chunk's.
  template <bool kOffsets>
  void TokenizeChunk(std::string_view bytes, uint64_t base) {
    if (!fast_paths) return TokenizeWithIcu<kOffsets>(bytes, base);
    size_t at = 0;
    while (at < bytes.size()) {
      if constexpr (kOffsets) {
        if (stopped) return;
      }
      const size_t other = FindNonAscii(bytes, at);
      if (other == bytes.size()) return SegmentAscii<kOffsets>(bytes.substr(at), base + at);
      const size_t begin = IcuPieceBegin(bytes, at, other);
      if (begin > at) SegmentAscii<kOffsets>(bytes.substr(at, begin - at), base + at);
      const size_t end = IcuPieceEnd(bytes, other);
      TokenizeMixed<kOffsets>(bytes.substr(begin, end - begin), base + begin);
      at = end;
    }
  }

  // Where ICU's piece around the non-ASCII byte at `other` starts: the start of its line if
  // that is after `at` and starts cleanly, else `at` (itself a clean start).
  size_t IcuPieceBegin(std::string_view bytes, size_t at, size_t other) const {
    const size_t newline = bytes.substr(at, other - at).rfind('\n');
    if (newline == std::string_view::npos) return at;
    const size_t begin = at + newline + 1;
    if (begin == other && !StartsCleanly(bytes, begin)) return at;
    return begin;
  }

  // Where ICU's piece around the non-ASCII byte at `other` ends: after the newline of its
  // line, or of a later line when another non-ASCII byte comes within kIcuJoinBytes; the
  // text's end if no such newline comes. The line after starts with ASCII: cleanly.
  size_t IcuPieceEnd(std::string_view bytes, size_t other) const {
    size_t end = other;
    for (;;) {
      const size_t newline = bytes.find('\n', end);
      if (newline == std::string_view::npos) return bytes.size();
      end = newline + 1;
      const size_t next = FindNonAscii(bytes, end);
      if (next - end >= kIcuJoinBytes) return end;
      if (next == bytes.size()) return bytes.size();
      end = next;
    }
  }

  template <bool kOffsets>
  void TokenizeWithIcu(std::string_view bytes, uint64_t base) {
    if constexpr (kOffsets) {
      chunk_base = base;
      ProcessChunkWithOffsets(bytes);
    } else {
      ProcessChunk(bytes);
    }
  }

  // The contract's steps 1-4 for ASCII text (at offset `base` of the whole text), as ICU gives
  // them: NFKC_Casefold only lowers A-Z; a segment joins letters (with '@'), digits and '_' (WB5,
  // WB8-10, WB13a-b), '.' or '\'' between two letters (WB6-7) and '.', '\'', ',' or ';' between two
  // digits (WB11-12); it is kept when it holds a letter or a digit or is longer than one
  // character ("__" is, "_" is not: WB13a). Every other character stands apart and is dropped.
  // Tested against ICU on every short string of the classes that matter (tokenizer_test.cc).
  template <bool kOffsets>
  void SegmentAscii(std::string_view text, uint64_t base) {
    SegmentAscii<kOffsets>(text, [base](size_t i) { return base + i; });
  }

  // The same for ASCII characters that stand for source characters elsewhere: character i of
  // text starts at source offset source(i), and source(text.size()) is where the last ends.
  template <bool kOffsets, typename Source>
  void SegmentAscii(std::string_view text, const Source& source) {
    const auto* b = reinterpret_cast<const uint8_t*>(text.data());
    const size_t n = text.size();
    auto joins = [](uint8_t c) { return c == kLetter || c == kDigit || c == kConnector; };
    for (size_t i = 0; i < n;) {
      const uint8_t first = kAsciiClasses[b[i]];
      if (!joins(first)) {
        ++i;
        continue;
      }
      // [i, j) is one segment so far; b[j - 1] is always a letter, a digit or '_'.
      size_t j = i + 1;
      bool upper = b[i] <= 'Z' && b[i] >= 'A';
      while (j < n) {
        const uint8_t c = kAsciiClasses[b[j]];
        if (joins(c)) {
          upper |= b[j] <= 'Z' && b[j] >= 'A';
          ++j;
          continue;
        }
        if ((c == kMidNumLet || c == kMidNum) && j + 1 < n) {
          const uint8_t before = kAsciiClasses[b[j - 1]], after = kAsciiClasses[b[j + 1]];
          if ((before == kDigit && after == kDigit) ||
              (c == kMidNumLet && before == kLetter && after == kLetter)) {
            upper |= b[j + 1] <= 'Z' && b[j + 1] >= 'A';
            j += 2;
            continue;
          }
        }
        break;
      }
      if (j - i > 1 || first != kConnector) {
        std::string_view t = text.substr(i, j - i);
        if (upper) {
          token.assign(t);
          for (char& ch : token) {
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + ('a' - 'A'));
          }
          t = token;
        }
        if (!EmitAsciiWord<kOffsets>(t, i, source)) return;
      }
      i = j;
    }
  }

  // Sends the ASCII word t (lowered), text[i, i + t.size()) of SegmentAscii, and its parts
  // (clause 5: the runs of letters, digits and '_' of a word with another character). Returns
  // false if the offsets sink asked to stop.
  template <bool kOffsets, typename Source>
  bool EmitAsciiWord(std::string_view t, size_t i, const Source& source) {
    auto send = [&](std::string_view x, size_t from, TokenRole role) {
      if constexpr (kOffsets) {
        if (!offset_sink->OnToken(x, source(i + from), source(i + from + x.size()), false, role)) {
          stopped = true;
          return false;
        }
      } else {
        sink->OnToken(x, role);
      }
      return true;
    };
    size_t first = 0;  // the first part's start, or t.size() if there is no part
    while (first < t.size() && IsAsciiPartSeparator(t[first])) ++first;
    const bool parts = first > 0 || std::any_of(t.begin() + first, t.end(), IsAsciiPartSeparator);
    // A word of separators alone ("@") has no parts: it is one position.
    if (!parts || first == t.size()) return send(t, 0, TokenRole::kWord);
    // The word is `token` or a view of `text`: each part is a view of it.
    if (!send(t, 0, TokenRole::kWhole)) return false;
    for (size_t k = first; k < t.size();) {
      size_t end = k;
      while (end < t.size() && !IsAsciiPartSeparator(t[end])) ++end;
      if (!send(t.substr(k, end - k), k, TokenRole::kPart)) return false;
      k = end;
      while (k < t.size() && IsAsciiPartSeparator(t[k])) ++k;
    }
    return true;
  }

  // A piece that goes past ASCII, line by line (each line ends after its newline, the last
  // perhaps without one): a line that HanUnits takes goes to SegmentHan, the others, consecutive
  // ones together, to ICU. A line is cut from the next only where the next starts cleanly, as
  // chunks are (CutChunks), so the tokens are the piece's. `piece` starts cleanly, at offset `base`
  // of the whole text.
  template <bool kOffsets>
  void TokenizeMixed(std::string_view piece, uint64_t base) {
    constexpr size_t kNone = SIZE_MAX;
    size_t icu_from = kNone;  // the first line of the lines waiting for ICU
    auto flush_icu = [&](size_t to) {
      if (icu_from == kNone) return;
      TokenizeWithIcu<kOffsets>(piece.substr(icu_from, to - icu_from), base + icu_from);
      icu_from = kNone;
    };
    for (size_t at = 0; at < piece.size();) {
      const size_t newline = piece.find('\n', at);
      const size_t end = newline == std::string_view::npos ? piece.size() : newline + 1;
      if ((end == piece.size() || StartsCleanly(piece, end)) &&
          HanUnits(piece.substr(at, end - at))) {
        flush_icu(at);
        SegmentHan<kOffsets>(piece.substr(at, end - at), base + at);
      } else if (icu_from == kNone) {
        icu_from = at;
      }
      if constexpr (kOffsets) {
        if (stopped) return;
      }
      at = end;
    }
    flush_icu(piece.size());
  }

  // Whether every character of `line` is ASCII or one HanPathUnit takes, with no katakana
  // beside '_'; if so, han_units and han_source hold its units for SegmentHan.
  bool HanUnits(std::string_view line) {
    const auto* b = reinterpret_cast<const uint8_t*>(line.data());
    const int32_t n = static_cast<int32_t>(line.size());
    han_units.clear();
    han_source.clear();
    for (int32_t i = 0; i < n;) {
      han_source.push_back(static_cast<uint32_t>(i));
      if (b[i] < 0x80) {
        han_units.push_back(static_cast<char>(b[i++]));
        continue;
      }
      UChar32 c;
      U8_NEXT(b, i, n, c);
      const uint8_t unit = c < 0 ? 0 : HanPathUnit(c);
      if (unit == 0) return false;
      han_units.push_back(static_cast<char>(unit));
    }
    han_source.push_back(static_cast<uint32_t>(n));
    // A katakana beside '_' makes one word with it (and what '_' joins): ICU's.
    for (size_t k = 1; k < han_units.size(); ++k) {
      const auto a = static_cast<uint8_t>(han_units[k - 1]), b = static_cast<uint8_t>(han_units[k]);
      if ((a == kKatakanaUnit && b == '_') || (a == '_' && b == kKatakanaUnit)) return false;
    }
    return true;
  }

  // The contract for a line that HanUnits took (at offset `base` of the whole text), as ICU
  // gives it. Ideographs and kana join nothing else under ICU's rules (HanUnits left out
  // katakana beside '_'), so the line falls into ASCII stretches, segmented by SegmentAscii with
  // each mark as its ASCII character, and runs of ideographs and kana, each replaced by its
  // bigrams (steps 3 and 4). Every character is its own
  // normalization but A-Z and the marks.
  template <bool kOffsets>
  void SegmentHan(std::string_view line, uint64_t base) {
    const std::string_view units = han_units;
    auto source = [&](size_t k) { return base + han_source[k]; };
    for (size_t k = 0; k < units.size();) {
      size_t end = k;
      if (static_cast<uint8_t>(units[k]) < kHanUnit) {
        while (end < units.size() && static_cast<uint8_t>(units[end]) < kHanUnit) ++end;
        SegmentAscii<kOffsets>(units.substr(k, end - k), [&](size_t i) { return source(k + i); });
      } else {
        while (end < units.size() && static_cast<uint8_t>(units[end]) >= kHanUnit) ++end;
        // One character is its own token; more, their overlapping bigrams.
        const size_t last = end - k == 1 ? k : end - 2;
        for (size_t i = k; i <= last; ++i) {
          const size_t to = std::min(i + 2, end);
          const std::string_view t = line.substr(han_source[i], han_source[to] - han_source[i]);
          if constexpr (kOffsets) {
            if (!offset_sink->OnToken(t, source(i), source(to), i > k, TokenRole::kWord)) {
              stopped = true;
              return;
            }
          } else {
            if (i == k) sink->OnRunStart();
            sink->OnToken(t, TokenRole::kWord);
          }
        }
      }
      if constexpr (kOffsets) {
        if (stopped) return;
      }
      k = end;
    }
  }

  void ProcessChunk(std::string_view bytes) {
    if (bytes.empty()) return;
    NeedIcu();
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
    Segment<false>();
  }

  // Appends the normalization of `piece` (source bytes from `begin`) to `normalized`.
  void FlushPiece(uint32_t begin) {
    const uint32_t index = static_cast<uint32_t>(piece_begin.size());
    piece_begin.push_back(begin);
    if (piece.length() == 1 && piece[0] < 0x80) {
      // ASCII alone: NFKC_Casefold only lowers A-Z.
      UChar c = piece[0];
      normalized.append(static_cast<UChar>(c >= 'A' && c <= 'Z' ? c + 32 : c));
      unit_piece.push_back(index);
    } else {
      UErrorCode status = U_ZERO_ERROR;
      normalizer->normalize(piece, piece_out, status);
      if (U_FAILURE(status)) throw std::runtime_error("NFKC_Casefold normalization failed");
      normalized.append(piece_out);
      unit_piece.insert(unit_piece.end(), piece_out.length(), index);
    }
    piece.remove();
  }

  // Steps 1 and 2 with the source of every normalized unit. A piece starts at each character
  // with a normalization boundary before it, so normalizing piece by piece gives exactly the
  // normalization of the whole chunk (Normalizer2::hasBoundaryBefore). The UTF-8 decoding
  // replaces each maximal ill-formed subpart by U+FFFD, as u_strFromUTF8WithSub does.
  void ProcessChunkWithOffsets(std::string_view bytes) {
    if (bytes.empty()) return;
    NeedIcu();
    normalized.remove();
    unit_piece.clear();
    piece_begin.clear();
    piece.remove();
    const auto* b = reinterpret_cast<const uint8_t*>(bytes.data());
    const int32_t n = static_cast<int32_t>(bytes.size());
    uint32_t begin = 0;
    for (int32_t i = 0; i < n;) {
      const int32_t at = i;
      if (b[i] < 0x80 && (i + 1 == n || b[i + 1] < 0x80)) {
        // An ASCII character followed by ASCII (or the end) is a piece of its own, and
        // NFKC_Casefold only lowers A-Z: no piece buffer, no normalizer call.
        if (!piece.isEmpty()) FlushPiece(begin);
        const UChar c = b[i];
        piece_begin.push_back(static_cast<uint32_t>(i));
        unit_piece.push_back(static_cast<uint32_t>(piece_begin.size() - 1));
        normalized.append(static_cast<UChar>(c >= 'A' && c <= 'Z' ? c + 32 : c));
        begin = static_cast<uint32_t>(++i);
        continue;
      }
      UChar32 c;
      U8_NEXT_OR_FFFD(b, i, n, c);
      if (!piece.isEmpty() && (c < 0x80 || normalizer->hasBoundaryBefore(c))) {
        FlushPiece(begin);
        begin = static_cast<uint32_t>(at);
      }
      piece.append(c);
    }
    if (!piece.isEmpty()) FlushPiece(begin);
    piece_begin.push_back(static_cast<uint32_t>(n));
    Segment<true>();
  }
};

Tokenizer::Tokenizer(TokenRules rules) : impl_(std::make_unique<Impl>()) { impl_->rules = rules; }

const TokenRules& Tokenizer::rules() const { return impl_->rules; }

void Tokenizer::SetRules(const TokenRules& rules) { impl_->rules = rules; }

Tokenizer::~Tokenizer() = default;

void Tokenizer::SetFastPathsForTesting(bool on) { impl_->fast_paths = on; }

void Tokenizer::SetChunkBytesForTesting(size_t chunk, size_t max_chunk) {
  impl_->chunk_bytes = std::max<size_t>(chunk, 8);
  impl_->max_chunk_bytes = std::max(max_chunk, impl_->chunk_bytes * 2);
}

void Tokenizer::Feed(std::string_view bytes, TokenSink& sink) {
  Impl& s = *impl_;
  s.pending.append(bytes);
  s.sink = &sink;
  size_t done = s.CutChunks(
      s.pending, [&](std::string_view chunk, size_t) { s.TokenizeChunk<false>(chunk, 0); });
  s.pending.erase(0, done);
}

void Tokenizer::Finish(TokenSink& sink) {
  std::string rest;
  rest.swap(impl_->pending);
  impl_->sink = &sink;
  impl_->TokenizeChunk<false>(rest, 0);
}

void Tokenizer::Reset() { impl_->pending.clear(); }

void Tokenizer::Tokenize(std::string_view text, TokenSink& sink) {
  Feed(text, sink);
  Finish(sink);
}

void Tokenizer::TokenizeWithOffsets(std::string_view text, OffsetTokenSink& sink) {
  Impl& s = *impl_;
  s.offset_sink = &sink;
  s.stopped = false;
  // The chunks of Feed(text) + Finish: the same cuts give the same tokens.
  auto process = [&](std::string_view chunk, size_t at) {
    if (s.stopped) return;
    s.TokenizeChunk<true>(chunk, at);
  };
  size_t done = s.CutChunks(text, process);
  process(text.substr(done), done);
}

std::vector<PositionedToken> TokenSequence(std::string_view text, TokenRules rules) {
  struct Collect : OffsetTokenSink {
    std::vector<PositionedToken> tokens;
    bool OnToken(std::string_view t, uint64_t begin, uint64_t end, bool continues,
                 TokenRole role) override {
      tokens.push_back(PositionedToken{std::string(t), begin, end, continues, role});
      return true;
    }
  } collect;
  Tokenizer tokenizer(rules);
  tokenizer.TokenizeWithOffsets(text, collect);
  return std::move(collect.tokens);
}

bool AsciiWordToken(std::string_view text, std::string* token) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool alnum = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (letter(c) || digit(c)) {
      alnum = true;
      continue;
    }
    if (c == '_') continue;  // ExtendNumLet: joins whatever is beside it (WB13a, WB13b)
    // A middle character joins two letters (MidNumLetQ '.' and '\'': WB6, WB7) or two digits
    // (MidNum ',' and ';', MidNumLetQ: WB11, WB12); anything else declines. (ICU's root rules
    // take ':' out of MidLetter: "a:b" is two words.)
    if (i == 0 || i + 1 == text.size()) return false;
    const char before = text[i - 1], after = text[i + 1];
    const bool letters = letter(before) && letter(after);
    const bool digits = digit(before) && digit(after);
    if (c == '.' || c == '\'') {
      if (!letters && !digits) return false;
    } else if (c == ',' || c == ';') {
      if (!digits) return false;
    } else {
      return false;
    }
  }
  if (!alnum) return false;
  token->assign(text);
  for (char& c : *token) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return true;
}

bool AsciiWordTokens(std::string_view text, std::vector<std::string>* tokens) {
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  const size_t before = tokens->size();
  std::string token;
  for (size_t i = 0; i < text.size();) {
    if (space(text[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && !space(text[end])) ++end;
    if (!AsciiWordToken(text.substr(i, end - i), &token)) {
      tokens->resize(before);
      return false;
    }
    tokens->push_back(token);
    i = end;
  }
  return true;
}

std::vector<std::string> TokenSet(std::string_view text, TokenRules rules) {
  struct Collect : TokenSink {
    std::vector<std::string> tokens;
    void OnToken(std::string_view t, TokenRole) override { tokens.emplace_back(t); }
  } collect;
  Tokenizer tokenizer(rules);
  tokenizer.Tokenize(text, collect);
  std::sort(collect.tokens.begin(), collect.tokens.end());
  collect.tokens.erase(std::unique(collect.tokens.begin(), collect.tokens.end()),
                       collect.tokens.end());
  return collect.tokens;
}

namespace {
constexpr const char* kKeepDiacritics = "tokens.keep_diacritics";
constexpr const char* kStem = "tokens.stem";
}  // namespace

void AddTokenSettings(const TokenRules& rules, std::map<std::string, std::string>* settings) {
  (*settings)[kKeepDiacritics] = rules.fold_diacritics ? "false" : "true";
  if (rules.stem_english) (*settings)[kStem] = "english";
}

TokenRules TokenRulesFromSettings(const std::map<std::string, std::string>& settings) {
  TokenRules rules;
  for (auto it = settings.lower_bound("tokens."); it != settings.end(); ++it) {
    const auto& [key, value] = *it;
    if (key.compare(0, 7, "tokens.") != 0) break;
    Ensure(key == kKeepDiacritics || key == kStem, ErrorKind::kCorrupt,
           "unknown setting " + key + " (written by a newer bitsift?)");
    if (key == kStem) {
      Ensure(value == "english", ErrorKind::kCorrupt,
             "setting " + key + ": not a stemmer this bitsift has: " + value);
      rules.stem_english = true;
      continue;
    }
    Ensure(value == "true" || value == "false", ErrorKind::kCorrupt,
           "setting " + key + ": not true or false: " + value);
    rules.fold_diacritics = value == "false";
  }
  return rules;
}

}  // namespace bitsift::tokenizer
