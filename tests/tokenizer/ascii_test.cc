// Lines of ASCII (Tokenizer's SegmentAscii) and lines of ASCII, Han ideographs, kana and
// common Chinese/Japanese punctuation (SegmentHan) are tokenized without ICU. These tests hold
// those paths to ICU's own answer: a Tokenizer with SetFastPathsForTesting(false) runs every
// byte through ICU's normalizer and break iterator, as the contract says.
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>

#include <catch2/catch.hpp>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

using bitsift::tokenizer::PositionedToken;
using bitsift::tokenizer::Tokenizer;

namespace {

using bitsift::tokenizer::TokenRole;

// A role's mark in the collected strings: "" for a word, "=" for a whole, "/" for a part.
const char* Mark(TokenRole role) {
  return role == TokenRole::kWhole ? "=" : role == TokenRole::kPart ? "/" : "";
}

struct Collect : bitsift::tokenizer::TokenSink {
  std::vector<std::string> tokens;  // every token
  std::vector<std::string> words;   // the tokens that are not parts (words and wholes)
  std::vector<std::string> marked;  // every token with its role's mark
  void OnToken(std::string_view t, TokenRole role) override {
    tokens.emplace_back(t);
    if (role != TokenRole::kPart) words.emplace_back(t);
    marked.push_back(std::string(t) + Mark(role));
  }
};

struct CollectOffsets : bitsift::tokenizer::OffsetTokenSink {
  std::vector<std::string> tokens;  // "text@begin-end" (+ when it continues a run; its role's mark)
  bool OnToken(std::string_view t, uint64_t begin, uint64_t end, bool continues,
               TokenRole role) override {
    tokens.push_back(std::string(t) + "@" + std::to_string(begin) + "-" + std::to_string(end) +
                     (continues ? "+" : "") + Mark(role));
    return true;
  }
};

// The tokens of text, streamed (Feed in pieces of `piece` bytes, Finish) and with offsets, by a
// tokenizer with or without the ASCII path and with the given chunk sizes. `streamed` has every
// token's role mark, `words` the tokens that are not parts.
struct Result {
  std::vector<std::string> streamed, words, offsets;
};
Result TokenizeAll(std::string_view text, bool ascii_path, size_t piece = 1 << 20,
                   size_t chunk = Tokenizer::kChunkBytes,
                   size_t max_chunk = Tokenizer::kMaxChunkBytes) {
  Tokenizer tok;
  tok.SetFastPathsForTesting(ascii_path);
  tok.SetChunkBytesForTesting(chunk, max_chunk);
  Result r;
  Collect c;
  for (size_t i = 0; i < text.size(); i += piece) tok.Feed(text.substr(i, piece), c);
  tok.Finish(c);
  r.streamed = std::move(c.marked);
  r.words = std::move(c.words);
  CollectOffsets o;
  tok.TokenizeWithOffsets(text, o);
  r.offsets = std::move(o.tokens);
  return r;
}

void CheckSameAsIcu(std::string_view text, size_t piece = 1 << 20,
                    size_t chunk = Tokenizer::kChunkBytes,
                    size_t max_chunk = Tokenizer::kMaxChunkBytes) {
  const Result fast = TokenizeAll(text, true, piece, chunk, max_chunk);
  const Result icu = TokenizeAll(text, false, piece, chunk, max_chunk);
  REQUIRE(fast.streamed == icu.streamed);
  REQUIRE(fast.offsets == icu.offsets);
}

// The tokens of text, in order, with the fast paths (the default).
std::vector<std::string> Tokens(std::string_view text) {
  Collect c;
  Tokenizer tok;
  tok.Tokenize(text, c);
  return c.tokens;
}

// CheckSameAsIcu with text fed in random pieces, and again with small chunks (cuts inside the
// text; with forced_cuts, a maximum chunk small enough to force some).
void CheckSameAsIcuInPieces(std::string_view text, std::mt19937_64& rng, bool forced_cuts) {
  CheckSameAsIcu(text, 1 + rng() % 50);
  CheckSameAsIcu(text, 1 + rng() % 50, 16 + rng() % 32, forced_cuts ? 64 : 1 << 20);
}

// One character of each word-break class that matters for ASCII, and of the ones that do not.
const std::string kClasses = "aZ@7_.',;- \n";

// Holds to ICU every string of 1 to max_length characters drawn from the first
// count(length) of `classes`; returns how many. Each string is on a line of its own: a newline
// breaks on both sides (WB3a, WB3b), so the tokens of the whole are the tokens of the strings
// in order; strings are cut in batches so that each batch is one text.
size_t CheckEveryString(const std::vector<std::string>& classes, size_t max_length,
                        const std::function<size_t(size_t)>& count) {
  size_t strings = 0;
  std::string batch;
  for (size_t length = 1; length <= max_length; ++length) {
    const size_t k = count(length);
    std::vector<size_t> digits(length, 0);
    for (;;) {
      for (size_t d : digits) batch += classes[d];
      batch += '\n';
      ++strings;
      if (batch.size() > (64 << 10)) {
        CheckSameAsIcu(batch);
        batch.clear();
      }
      size_t i = 0;
      while (i < length && ++digits[i] == k) digits[i++] = 0;
      if (i == length) break;
    }
  }
  CheckSameAsIcu(batch);
  return strings;
}

}  // namespace

TEST_CASE("ASCII without ICU: every string of up to five characters of each class",
          "[tokenizer][ascii]") {
  std::vector<std::string> classes;
  for (char c : kClasses) classes.emplace_back(1, c);
  const size_t strings = CheckEveryString(classes, 5, [&](size_t) { return classes.size(); });
  CHECK(strings == 12 + 144 + 1728 + 20736 + 248832);
}

TEST_CASE("ASCII without ICU: the classes' quirks, one by one", "[tokenizer][ascii]") {
  using T = std::vector<std::string>;
  CHECK(Tokens("Foo@Bar.com e-mail") == T{"foo@bar.com", "foo", "bar", "com", "e", "mail"});
  CHECK(Tokens("@ _ __ a_ _1 @_") == T{"@", "__", "a_", "_1", "@_", "_"});
  CHECK(Tokens("a:b 3.14 1,000 x,y don't a.1 1.a") == T{"a", "b", "3.14", "3", "14", "1,000", "1",
                                                        "000", "x", "y", "don't", "don", "t", "a",
                                                        "1", "1", "a"});
  CHECK(Tokens("std::vector<int> v1.2.3") == T{"std", "vector", "int", "v1.2.3", "v1", "2", "3"});
  for (const char* text : {"Foo@Bar.com e-mail", "@ _ __ a_ _1 @_", "a:b 3.14 1,000 x,y don't",
                           "std::vector<int> v1.2.3"}) {
    CheckSameAsIcu(text);
  }
}

TEST_CASE("ASCII without ICU: random ASCII, and ASCII lines among other text",
          "[tokenizer][ascii]") {
  std::mt19937_64 rng(20261127);
  // Pieces that are not ASCII, among them ones that must not start a piece of their own: a
  // combining mark (it joins what is before it), a ZWJ, an ideographic space.
  const std::vector<std::string> others = {"é",
                                           "Straße",
                                           "中文",
                                           "布隆过滤器",
                                           "カタカナ",
                                           "\xcc\x81",      // U+0301
                                           "\xe2\x80\x8d",  // ZWJ
                                           "\xe3\x80\x80",  // U+3000
                                           "ＦＵＬＬ",
                                           "привет",
                                           "\xff\xfe",  // ill-formed
                                           "①"};
  auto ascii = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      // Half from the classes that join, the rest any ASCII byte (controls and NUL too).
      s += rng() % 2 ? kClasses[rng() % kClasses.size()] : static_cast<char>(rng() % 128);
    }
    return s;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int lines = 1 + static_cast<int>(rng() % 12);
    for (int l = 0; l < lines; ++l) {
      std::string line = ascii(rng() % 40);
      if (rng() % 3 == 0) line.insert(rng() % (line.size() + 1), others[rng() % others.size()]);
      if (rng() % 5 == 0) line = others[rng() % others.size()] + line;  // at a line's start
      text += line;
      if (rng() % 8 != 0) text += rng() % 4 == 0 ? "\r\n" : "\n";
    }
    INFO("round " << round << ": " << text);
    CheckSameAsIcuInPieces(text, rng, round % 2 == 1);
  }
}

TEST_CASE("ASCII word lines: AsciiWordTokens gives ICU's tokens in order or declines",
          "[tokenizer][ascii]") {
  // Lines of words (from the classes that join, and a few that do not) between every kind of
  // ASCII whitespace: where AsciiWordTokens takes a line, its tokens are ICU's, in order; where
  // it declines, the vector is as it was.
  std::mt19937_64 rng(20261128);
  const std::vector<std::string> words = {
      "mutex", "Lock", "nr_cpu_ids", "irq.h", "3.14", "1,000", "don't", "a",    "Z9", "x_",    "_y",
      "__",    "a.",   ".b",         "a:b",   "a-b",  "c++",   "é",     "中文", "@",  "a\x01b"};
  const std::string spaces = " \t\n\v\f\r";
  size_t taken = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string line;
    for (size_t n = rng() % 6; n > 0; --n) {
      // At least one space between words; perhaps some before the first.
      const size_t k = line.empty() ? rng() % 2 : 1 + rng() % 3;
      for (size_t i = 0; i < k; ++i) line += spaces[rng() % spaces.size()];
      line += words[rng() % words.size()];
    }
    if (rng() % 2) line += spaces[rng() % spaces.size()];
    INFO("round " << round << ": [" << line << "]");
    std::vector<std::string> tokens = {"kept"};
    if (bitsift::tokenizer::AsciiWordTokens(line, &tokens)) {
      ++taken;
      tokens.erase(tokens.begin());
      CHECK(tokens == TokenizeAll(line, false).words);
    } else {
      CHECK(tokens == std::vector<std::string>{"kept"});
    }
  }
  CHECK(taken > 500);
  std::vector<std::string> tokens;
  CHECK(bitsift::tokenizer::AsciiWordTokens(" \t\r\n", &tokens));
  CHECK(tokens.empty());
}

TEST_CASE("ASCII without ICU: long ASCII stretches between other text join one ICU piece",
          "[tokenizer][ascii]") {
  // Lines far apart and close together, so that both ways of ending ICU's piece are taken.
  std::string text;
  for (int i = 0; i < 200; ++i) {
    text += "plain ASCII line " + std::to_string(i) + " with Words_and 3.14\n";
    if (i % 7 == 0) text += "naïve café line\n";
    if (i % 31 == 0) text += std::string(300, 'x') + "\n";
  }
  CheckSameAsIcu(text);
  CheckSameAsIcu(text, 97, 64, 1 << 20);
}

TEST_CASE("ASCII without ICU: every ASCII character may start a chunk", "[tokenizer][ascii]") {
  // What StartsCleanly answers for ASCII without asking ICU: no ASCII character is a word-break
  // extender, and each has a normalization boundary before it.
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(status);
  REQUIRE(U_SUCCESS(status));
  for (UChar32 c = 0; c < 0x80; ++c) {
    const int32_t wb = u_getIntPropertyValue(c, UCHAR_WORD_BREAK);
    CHECK(wb != U_WB_EXTEND);
    CHECK(wb != U_WB_FORMAT);
    CHECK(wb != U_WB_ZWJ);
    CHECK(nfkc_cf->hasBoundaryBefore(c));
  }
}

// ---------------------------------------------------------------------------------------------
// Lines of ASCII, Han ideographs and common Chinese punctuation (Tokenizer's SegmentHan), held
// to ICU the same way.

namespace {

std::string Utf8(UChar32 c) {
  std::string s;
  icu::UnicodeString(c).toUTF8String(s);
  return s;
}

// The punctuation marks the Han path takes (tokenizer.cc, HanPathUnit).
const std::vector<UChar32> kHanPathMarks = {0x3000, 0x3001, 0x3002, 0x3008, 0x3009, 0x300A, 0x300B,
                                            0x300C, 0x300D, 0x300E, 0x300F, 0x3010, 0x3011, 0x3014,
                                            0x3015, 0x3016, 0x3017, 0x201C, 0x201D, 0x2014, 0xFF01,
                                            0xFF08, 0xFF09, 0xFF0C, 0xFF0E, 0xFF1A, 0xFF1B, 0xFF1F};

// The characters of kana/ideographic runs the Han path takes: ideographs (Extension A, the
// main block), hiragana, katakana, the prolonged sound mark.
const std::vector<std::pair<UChar32, UChar32>> kRunRanges = {
    {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0x30FC, 0x30FC}};

}  // namespace

TEST_CASE(
    "Han without ICU: every ideograph of the unified blocks and every kana, alone and "
    "among others",
    "[tokenizer][han]") {
  // Each character alone, doubled, between letters and digits, beside '_' and before a mark,
  // one line each (a newline breaks on both sides), in batches of one text.
  size_t count = 0;
  std::string batch;
  for (const auto& [first, last] : kRunRanges) {
    for (UChar32 c = first; c <= last; ++c) {
      const std::string h = Utf8(c);
      batch += h + "\n" + h + h + "\na" + h + "1\n_" + h + "_" + h + "，\n";
      ++count;
      if (batch.size() > (64 << 10)) {
        CheckSameAsIcu(batch);
        batch.clear();
      }
    }
  }
  CheckSameAsIcu(batch);
  CHECK(count == 6592 + 20992 + 86 + 90 + 1);
}

TEST_CASE("Han without ICU: every string of up to four characters of each class",
          "[tokenizer][han]") {
  // ASCII classes, two ideographs, and each mark (the rarer ones only up to three).
  std::vector<std::string> classes;
  for (char c : kClasses) classes.emplace_back(1, c);
  classes.push_back(Utf8(0x4E2D));  // 中
  classes.push_back(Utf8(0x3400));
  classes.push_back(Utf8(0x3072));  // ひ
  classes.push_back(Utf8(0x30AB));  // カ
  for (UChar32 m : {0xFF0C, 0xFF0E, 0xFF1B, 0x3001}) classes.push_back(Utf8(m));
  const size_t four = classes.size();
  for (UChar32 m : kHanPathMarks) {
    if (m != 0xFF0C && m != 0xFF0E && m != 0xFF1B && m != 0x3001) classes.push_back(Utf8(m));
  }
  const size_t strings = CheckEveryString(
      classes, 4, [&](size_t length) { return length <= 3 ? classes.size() : four; });
  CHECK(strings == 44 + 44 * 44 + 44 * 44 * 44 + 20 * 20 * 20 * 20);
}

TEST_CASE("Han without ICU: the characters' normalization and classes, and clean chunk starts",
          "[tokenizer][han]") {
  // What HanPathUnit assumes, asked of ICU: an ideograph or a mark starts a chunk cleanly (no
  // word-break extender, a normalization boundary before it); each ideograph is its own
  // NFKC_Casefold; each mark is its own or one ASCII character.
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc_cf = icu::Normalizer2::getNFKCCasefoldInstance(status);
  REQUIRE(U_SUCCESS(status));
  std::vector<UChar32> all = kHanPathMarks;
  for (const auto& [first, last] : kRunRanges) {
    for (UChar32 c = first; c <= last; ++c) all.push_back(c);
  }
  for (UChar32 c : all) {
    INFO("U+" << std::hex << c);
    const int32_t wb = u_getIntPropertyValue(c, UCHAR_WORD_BREAK);
    CHECK(wb != U_WB_EXTEND);
    CHECK(wb != U_WB_FORMAT);
    CHECK(wb != U_WB_ZWJ);
    CHECK(nfkc_cf->hasBoundaryBefore(c));
    icu::UnicodeString out;
    nfkc_cf->normalize(icu::UnicodeString(c), out, status);
    REQUIRE(U_SUCCESS(status));
    CHECK(out.length() == 1);
    CHECK((out.char32At(0) == c || out.char32At(0) < 0x80));
  }
  // A line with a mark or a character the path does not take goes to ICU whole.
  using T = std::vector<std::string>;
  CHECK(Tokens("北斗七星，1，2章") == T{"北斗", "斗七", "七星", "1,2", "1", "2", "章"});
  CHECK(Tokens("《红楼梦》x.中") == T{"红楼", "楼梦", "x", "中"});
  CHECK(Tokens("中文ＡＢ") == T{"中文", "ab"});  // fullwidth letters: ICU's path
}

TEST_CASE("Han without ICU: random Chinese, ASCII and other text, streamed and in chunks",
          "[tokenizer][han]") {
  std::mt19937_64 rng(20261128);
  std::vector<std::string> pieces;
  for (UChar32 m : kHanPathMarks) pieces.push_back(Utf8(m));
  for (const char* p : {"中",
                        "カタカナ",
                        "ひらがな",
                        "ー",
                        "ン",
                        "の",
                        "文",
                        "搜索",
                        "引擎",
                        "北斗七星",
                        "\xe4\xb8\x80",
                        "\xe9\xbf\xbf",
                        "\xe3\x90\x80",
                        "\xe4\xb6\xbf",
                        "a",
                        "Z",
                        "7",
                        "_",
                        ".",
                        ",",
                        ";",
                        "'",
                        "@",
                        " ",
                        "\n",
                        "-",
                        "カ",
                        "ひ",
                        "々",
                        "〇",
                        "é",
                        "\xcc\x81",
                        "\xe2\x80\x8d",
                        "\xef\xb8\x80",
                        "ＡＢ",
                        "１",
                        "\xff",
                        "①",
                        "…",
                        "·"}) {
    pieces.emplace_back(p);
  }
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 60);
    // Mostly the path's own characters; a rarer one now and then sends the piece to ICU.
    for (int i = 0; i < n; ++i) {
      const size_t own = kHanPathMarks.size() + 24;
      text += pieces[rng() % 8 == 0 ? rng() % pieces.size() : rng() % own];
    }
    INFO("round " << round << ": " << text);
    CheckSameAsIcuInPieces(text, rng, round % 2 == 1);
  }
}

TEST_CASE("Han without ICU: every other character of the BMP beside ideographs and ASCII",
          "[tokenizer][han]") {
  // The path must take no character it should not: each code point of the BMP (surrogates
  // aside) alone, doubled and between ideographs, letters and digits, as ICU gives them.
  std::string batch;
  for (UChar32 c = 0x80; c <= 0xFFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::string x = Utf8(c);
    batch += x + "\n" + x + x + "\n中" + x + "文\na" + x + "b 1" + x + "2\n";
    if (batch.size() > (64 << 10)) {
      CheckSameAsIcu(batch);
      batch.clear();
    }
  }
  CheckSameAsIcu(batch);
}
