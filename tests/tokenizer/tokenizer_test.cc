#include "tokenizer/tokenizer.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

using bitsift::tokenizer::Tokenizer;
using bitsift::tokenizer::TokenSet;
using Tokens = std::vector<std::string>;

namespace {

// Minimal JSON reading for the conformance file: one object per line with "input_hex" and
// "tokens" (an array of strings, with \uXXXX escapes and surrogate pairs allowed).
std::string ParseJsonString(const std::string& s, size_t& i) {
  REQUIRE(s[i] == '"');
  std::string out;
  for (++i; s[i] != '"'; ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        uint32_t cp = std::stoul(s.substr(i + 1, 4), nullptr, 16);
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00 && s.compare(i + 1, 2, "\\u") == 0) {
          uint32_t lo = std::stoul(s.substr(i + 3, 4), nullptr, 16);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          i += 6;
        }
        out += bitsift::testing::Utf8(cp);
        break;
      }
      default:
        out += e;
    }
  }
  ++i;
  return out;
}

struct Vector {
  std::string input;
  Tokens tokens;
};

std::vector<Vector> LoadVectors() {
  std::ifstream in(std::string(BITSIFT_TEST_DATA) + "/token-vectors.jsonl");
  REQUIRE(in);
  std::vector<Vector> out;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    Vector v;
    size_t i = line.find("\"input_hex\"");
    REQUIRE(i != std::string::npos);
    i = line.find('"', i + 11);
    std::string hex = ParseJsonString(line, i);
    for (size_t j = 0; j + 1 < hex.size(); j += 2) {
      v.input += static_cast<char>(std::stoi(hex.substr(j, 2), nullptr, 16));
    }
    i = line.find("\"tokens\"");
    REQUIRE(i != std::string::npos);
    i = line.find('[', i);
    for (++i; line[i] != ']';) {
      if (line[i] == '"') {
        v.tokens.push_back(ParseJsonString(line, i));
      } else {
        ++i;
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

struct Collect : bitsift::tokenizer::TokenSink {
  Tokens tokens;
  void OnToken(std::string_view t) override { tokens.emplace_back(t); }
};

Tokens Sorted(Tokens t) {
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

}  // namespace

TEST_CASE("conformance vectors from the independent implementation", "[tokenizer]") {
  std::vector<Vector> vectors = LoadVectors();
  REQUIRE(vectors.size() >= 40);
  for (const Vector& v : vectors) {
    INFO("input: " << v.input);
    CHECK(TokenSet(v.input) == v.tokens);
  }
}

TEST_CASE("clause 1: invalid UTF-8 becomes U+FFFD, never an error", "[tokenizer]") {
  CHECK(TokenSet("ab\xff"
                 "cd") == Tokens{"ab", "cd"});
  CHECK(TokenSet("\xc3") == Tokens{});                            // truncated sequence at the end
  CHECK(TokenSet("x\xed\xa0\x80y") == Tokens{"x", "y"});          // an encoded surrogate
  CHECK(TokenSet("\xf8\x88\x80\x80\x80 ok") == Tokens{"ok"});     // 5-byte form
  CHECK(TokenSet("over\xc0\xaflong") == Tokens{"long", "over"});  // overlong '/'
  CHECK(TokenSet("布\xff隆") == Tokens{"布", "隆"});              // U+FFFD separates a run
}

TEST_CASE("clause 2: NFKC_Casefold", "[tokenizer]") {
  CHECK(TokenSet("Straße") == TokenSet("STRASSE"));
  CHECK(TokenSet("Straße") == Tokens{"strasse"});
  CHECK(TokenSet("\xef\xac\x81nd") == Tokens{"find"});  // U+FB01 ligature fi
  CHECK(TokenSet("ＦＵＬＬ") == Tokens{"full"});        // full-width letters
  CHECK(TokenSet("cafe\xcc\x81") == TokenSet("CAFÉ"));  // combining acute = precomposed
  CHECK(TokenSet("Ǆ") == Tokens{"dž"});
}

TEST_CASE("clause 3: word segments with status >= 100 are kept", "[tokenizer]") {
  CHECK(TokenSet("Hello, World!") == Tokens{"hello", "world"});
  CHECK(TokenSet("3.14 1,000 v1.2") == Tokens{"1,000", "3.14", "v1.2"});
  CHECK(TokenSet("don't") == Tokens{"don't"});
  CHECK(TokenSet("!!! ??? ...") == Tokens{});
  CHECK(TokenSet("emoji 😀") == Tokens{"emoji"});
  CHECK(TokenSet("") == Tokens{});
  CHECK(TokenSet(std::string("a\0b", 3)) == Tokens{"a", "b"});
  CHECK(TokenSet("Привет мир") == Tokens{"мир", "привет"});
}

TEST_CASE("clause 4: kana and ideographic runs become code-point bigrams", "[tokenizer]") {
  CHECK(TokenSet("布隆过滤器") == Tokens{"布隆", "滤器", "过滤", "隆过"});
  CHECK(TokenSet("一") == Tokens{"一"});
  CHECK(TokenSet("中 文") == Tokens{"中", "文"});  // a space ends a run
  // A Japanese run mixes kanji, katakana and hiragana.
  CHECK(TokenSet("東京タワー") == Tokens{"タワ", "ワー", "京タ", "東京"});
  // Letters next to a run are their own token.
  CHECK(TokenSet("Bloom过滤器filter") == Tokens{"bloom", "filter", "滤器", "过滤"});
  // Supplementary-plane ideographs count as one code point each (CJK Extension B).
  CHECK(TokenSet("\xf0\xa0\x80\x80\xf0\xa0\x80\x81") == Tokens{"\xf0\xa0\x80\x80\xf0\xa0\x80\x81"});
  CHECK(TokenSet("\xf0\xa0\x80\x80") == Tokens{"\xf0\xa0\x80\x80"});
  // Half-width katakana normalizes to full-width before bigrams.
  CHECK(TokenSet("ｶﾀｶﾅ") == TokenSet("カタカナ"));
  // A query term inside a longer run: its bigrams are a subset of the document's.
  Tokens doc = TokenSet("布隆过滤器是一种数据结构。"), query = TokenSet("过滤器");
  CHECK(std::includes(doc.begin(), doc.end(), query.begin(), query.end()));
}

TEST_CASE("clause 5: a document's terms are a set", "[tokenizer]") {
  CHECK(TokenSet("the The THE the") == Tokens{"the"});
  CHECK(TokenSet("中中中") == Tokens{"中中"});
}

TEST_CASE("streaming in small chunks equals tokenizing the whole text", "[tokenizer]") {
  std::mt19937_64 rng(42);
  std::vector<std::string> vocab = bitsift::testing::MixedVocabulary(300, rng);
  // Extra material around cut points: ideographic punctuation, CRLF, combining marks after
  // spaces and newlines, invalid bytes.
  vocab.insert(vocab.end(), {"。", "、", "\r\n", " \xcc\x81", "\n\xcc\x81x", "　", "\xff", "3.14",
                             "a.b", "1,000", "x\xe2\x80\x8d", "東京タワー", "ひらがな"});
  for (int round = 0; round < 40; ++round) {
    std::string text;
    size_t words = 50 + rng() % 400;
    for (size_t w = 0; w < words; ++w) {
      text += vocab[rng() % vocab.size()];
      if (rng() % 3) text += (rng() % 4 == 0) ? "\n" : " ";
    }
    Tokens whole = TokenSet(text);
    Tokenizer tok;
    tok.SetChunkBytesForTesting(16 + rng() % 64, 256 + rng() % 512);
    Collect collect;
    // Feed in random pieces, splitting UTF-8 sequences too.
    for (size_t i = 0; i < text.size();) {
      size_t n = 1 + rng() % 37;
      tok.Feed(std::string_view(text).substr(i, n), collect);
      i += n;
    }
    tok.Finish(collect);
    INFO("round " << round << " text: " << text);
    CHECK(Sorted(collect.tokens) == whole);
  }
}

TEST_CASE("a text with no safe cut is still tokenized in bounded chunks", "[tokenizer]") {
  Tokenizer tok;
  tok.SetChunkBytesForTesting(64, 256);
  Collect collect;
  std::string text(5000, 'x');
  tok.Tokenize(text, collect);
  // The word is cut into pieces of at most 256 bytes; nothing is lost.
  size_t total = 0;
  for (const auto& t : collect.tokens) {
    CHECK(t.size() <= 256);
    total += t.size();
  }
  CHECK(total == text.size());
}

TEST_CASE("Reset drops a partial text", "[tokenizer]") {
  Tokenizer tok;
  Collect collect;
  tok.Feed("abandoned words", collect);
  tok.Reset();
  tok.Tokenize("fresh", collect);
  CHECK(Sorted(collect.tokens) == Tokens{"fresh"});
}
