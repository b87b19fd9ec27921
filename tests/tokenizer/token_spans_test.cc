#include "tokenizer/token_spans.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::tokenizer::TokenSpan;
using bitsift::tokenizer::TokenSpans;
using Spans = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;

namespace {

Spans Flat(const std::vector<TokenSpan>& spans) {
  Spans out;
  for (const TokenSpan& s : spans) out.emplace_back(s.token, s.begin, s.end);
  return out;
}

std::string NfkcCasefold(std::string_view utf8) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCCasefoldInstance(status);
  REQUIRE(U_SUCCESS(status));
  icu::UnicodeString out = nfkc->normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(
                                               utf8.data(), static_cast<int32_t>(utf8.size()))),
                                           status);
  REQUIRE(U_SUCCESS(status));
  std::string s;
  return out.toUTF8String(s);
}

struct Collect : bitsift::tokenizer::TokenSink {
  std::vector<std::string> tokens;
  void OnToken(std::string_view t) override { tokens.emplace_back(t); }
};

}  // namespace

TEST_CASE("token spans: words, repeats, punctuation between", "[tokenizer][spans]") {
  CHECK(Flat(TokenSpans("Hello, world hello")) ==
        Spans{{"hello", 0, 5}, {"world", 7, 12}, {"hello", 13, 18}});
  CHECK(Flat(TokenSpans("abc bc")) == Spans{{"abc", 0, 3}, {"bc", 4, 6}});
  CHECK(TokenSpans("!!! ...").empty());
  CHECK(TokenSpans("").empty());
}

TEST_CASE("token spans: source bytes of normalized characters", "[tokenizer][spans]") {
  // ß is 2 bytes and becomes "ss"; ﬁ (3 bytes) becomes "fi"; e + combining acute is one é.
  CHECK(Flat(TokenSpans("Straße")) == Spans{{"strasse", 0, 7}});
  CHECK(Flat(TokenSpans("x ﬁle")) == Spans{{"x", 0, 1}, {"file", 2, 7}});
  CHECK(Flat(TokenSpans("e\xcc\x81t\xc3\xa9 ok")) ==
        Spans{{"\xc3\xa9t\xc3\xa9", 0, 6}, {"ok", 7, 9}});
  // Full-width letters (3 bytes each) become ASCII.
  CHECK(Flat(TokenSpans("ＡＢＣ")) == Spans{{"abc", 0, 9}});
}

TEST_CASE("token spans: the bigrams of a run overlap by one character", "[tokenizer][spans]") {
  CHECK(Flat(TokenSpans("布隆过滤器")) ==
        Spans{{"布隆", 0, 6}, {"隆过", 3, 9}, {"过滤", 6, 12}, {"滤器", 9, 15}});
  // Two runs with the same bigram: each is placed in its own run.
  CHECK(Flat(TokenSpans("中文 中文")) == Spans{{"中文", 0, 6}, {"中文", 7, 13}});
  CHECK(Flat(TokenSpans("中中中")) == Spans{{"中中", 0, 6}, {"中中", 3, 9}});
  CHECK(Flat(TokenSpans("a 中")) == Spans{{"a", 0, 1}, {"中", 2, 5}});
}

TEST_CASE("token spans: invalid UTF-8 counts as the U+FFFD it becomes", "[tokenizer][spans]") {
  CHECK(Flat(TokenSpans("ab\xff\xfe cd")) == Spans{{"ab", 0, 2}, {"cd", 5, 7}});
  CHECK(Flat(TokenSpans("\xe4\xb8 x")) == Spans{{"x", 3, 4}});
}

TEST_CASE("token spans equal the tokenizer's tokens and hold them on random text",
          "[tokenizer][spans]") {
  std::mt19937_64 rng(7);
  std::vector<std::string> vocab = bitsift::testing::MixedVocabulary(300, rng);
  vocab.insert(vocab.end(), {"。", "、", "\r\n", " \xcc\x81", "\n\xcc\x81x", "　", "\xff", "3.14",
                             "ﬁ", "Straße", "㍻", "x\xe2\x80\x8d", "東京タワー", "ひらがな",
                             "a\xc2\xad"
                             "b"});
  for (int round = 0; round < 30; ++round) {
    std::string text;
    const size_t words = 20 + rng() % 200;
    for (size_t w = 0; w < words; ++w) {
      text += vocab[rng() % vocab.size()];
      if (rng() % 3) text += (rng() % 4 == 0) ? "\n" : " ";
    }
    INFO("round " << round << " text: " << text);
    Collect collect;
    bitsift::tokenizer::Tokenizer tok;
    tok.Tokenize(text, collect);
    const std::vector<TokenSpan> spans = TokenSpans(text);
    REQUIRE(spans.size() == collect.tokens.size());
    uint64_t last_begin = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      const TokenSpan& s = spans[i];
      INFO("token " << i << ": " << s.token << " [" << s.begin << ", " << s.end << ")");
      CHECK(s.token == collect.tokens[i]);
      REQUIRE(s.begin < s.end);
      REQUIRE(s.end <= text.size());
      CHECK(s.begin >= last_begin);
      last_begin = s.begin;
      CHECK(NfkcCasefold(std::string_view(text).substr(s.begin, s.end - s.begin)).find(s.token) !=
            std::string::npos);
    }
  }
}

TEST_CASE("token spans of a text cut in pieces equal those of the whole text",
          "[tokenizer][spans]") {
  std::mt19937_64 rng(11);
  std::vector<std::string> vocab = bitsift::testing::MixedVocabulary(200, rng);
  vocab.insert(vocab.end(), {"\n\xcc\x81x", "\n中文", "\n\n", "ﬁ", "\xff"});
  for (int round = 0; round < 20; ++round) {
    std::string text;
    for (size_t w = 0, words = 50 + rng() % 300; w < words; ++w) {
      text += vocab[rng() % vocab.size()];
      text += rng() % 5 == 0 ? "\n" : " ";
    }
    std::vector<TokenSpan> pieces;
    bitsift::tokenizer::ForEachTokenSpan(
        text, [&](const TokenSpan& s) { pieces.push_back(s); }, 1 + rng() % 64);
    INFO("round " << round << " text: " << text);
    CHECK(Flat(pieces) == Flat(TokenSpans(text)));
  }
}
