#include "tokenizer/tokenizer.h"

#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>
#include <unicode/ustring.h>

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

// Minimal JSON reading for the conformance file: one object per line with "input_hex",
// "tokens" and "sequence" (arrays of strings, with \uXXXX escapes and surrogate pairs allowed).
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
  Tokens tokens;    // the sorted term set
  Tokens sequence;  // the phrase positions in order
};

// The array of strings under `key` in `line`.
Tokens ParseJsonArray(const std::string& line, const std::string& key) {
  size_t i = line.find("\"" + key + "\"");
  REQUIRE(i != std::string::npos);
  i = line.find('[', i);
  Tokens out;
  for (++i; line[i] != ']';) {
    if (line[i] == '"') {
      out.push_back(ParseJsonString(line, i));
    } else {
      ++i;
    }
  }
  return out;
}

std::vector<Vector> LoadVectors() {
  std::ifstream in(std::string(BITSIFT_TEST_DATA) + "/token-vectors-v2.jsonl");
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
    v.tokens = ParseJsonArray(line, "tokens");
    v.sequence = ParseJsonArray(line, "sequence");
    out.push_back(std::move(v));
  }
  return out;
}

struct Collect : bitsift::tokenizer::TokenSink {
  Tokens tokens;
  void OnToken(std::string_view t, bitsift::tokenizer::TokenRole) override {
    tokens.emplace_back(t);
  }
};

Tokens Sorted(Tokens t) {
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

}  // namespace

// The phrase positions of a token sequence (every role but kWhole).
Tokens PositionsOf(const std::vector<bitsift::tokenizer::PositionedToken>& seq) {
  Tokens out;
  for (const auto& t : seq) {
    if (bitsift::tokenizer::IsPosition(t.role)) out.push_back(t.text);
  }
  return out;
}

TEST_CASE("conformance vectors from the independent implementation", "[tokenizer]") {
  std::vector<Vector> vectors = LoadVectors();
  REQUIRE(vectors.size() == 68);
  for (const Vector& v : vectors) {
    INFO("input: " << v.input);
    CHECK(TokenSet(v.input) == v.tokens);
    CHECK(PositionsOf(bitsift::tokenizer::TokenSequence(v.input)) == v.sequence);
    // ICU for everything, no fast path: the same sets and sequences.
    Tokenizer icu_only;
    icu_only.SetFastPathsForTesting(false);
    Collect all;
    icu_only.Tokenize(v.input, all);
    CHECK(Sorted(all.tokens) == v.tokens);
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
  CHECK(TokenSet("Ǆ") == Tokens{"dz"});  // NFKC_Casefold: "dž"; then clause 5 folds it
}

TEST_CASE("clause 3: word segments with status >= 100 are kept", "[tokenizer]") {
  CHECK(TokenSet("Hello, World!") == Tokens{"hello", "world"});
  CHECK(TokenSet("3.14 1,000 v1.2") ==
        Tokens{"000", "1", "1,000", "14", "2", "3", "3.14", "v1", "v1.2"});
  CHECK(TokenSet("don't") == Tokens{"don", "don't", "t"});
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

TEST_CASE("clause 5: Latin diacritics fold unless the rules keep them", "[tokenizer]") {
  CHECK(TokenSet("José CAFÉ résumé Ångström") == Tokens{"angstrom", "cafe", "jose", "resume"});
  CHECK(TokenSet("cafe\xcc\x81") == Tokens{"cafe"});         // a combining acute on a Latin e
  CHECK(TokenSet("x\xcc\x83") == Tokens{"x"});               // one that composes with nothing
  CHECK(TokenSet("Йод ёлка") == Tokens{"йод", "ёлка"});      // Cyrillic keeps its marks
  CHECK(TokenSet("άλφα") == Tokens{"άλφα"});                 // so does Greek
  CHECK(TokenSet("ø ł đ æ") == Tokens{"æ", "ø", "đ", "ł"});  // no decomposition: kept
  CHECK(TokenSet("1\xcc\x81") == Tokens{"1\xcc\x81"});       // a mark on a digit (Common) stays
  bitsift::tokenizer::TokenRules keep;
  keep.fold_diacritics = false;
  CHECK(TokenSet("José CAFÉ résumé.pdf", keep) ==
        Tokens{"café", "josé", "pdf", "résumé", "résumé.pdf"});
  CHECK(TokenSet("Ǆ", keep) == Tokens{"dž"});
  // The rules change nothing else.
  CHECK(TokenSet("stdio.h 布隆过 Straße", keep) == TokenSet("stdio.h 布隆过 Straße"));
}

TEST_CASE("clause 5: a word with other characters has parts, which are its positions",
          "[tokenizer]") {
  using bitsift::tokenizer::TokenRole;
  auto roles = [](std::string_view text) {
    Tokens out;
    for (const auto& t : bitsift::tokenizer::TokenSequence(text)) {
      out.push_back(t.text + (t.role == TokenRole::kWhole  ? "=whole"
                              : t.role == TokenRole::kPart ? "=part"
                                                           : ""));
    }
    return out;
  };
  CHECK(roles("<stdio.h> size_t") ==
        Tokens{"stdio.h=whole", "stdio=part", "h=part", "size_t"});  // '_' is Pc: no parts
  CHECK(roles("user@Example.org") ==
        Tokens{"user@example.org=whole", "user=part", "example=part", "org=part"});
  CHECK(roles("résumé.pdf") == Tokens{"resume.pdf=whole", "resume=part", "pdf=part"});
  CHECK(roles("@") == Tokens{"@"});  // separators alone: no parts, one position
  CHECK(roles("١٢٣.٤٥") == Tokens{"١٢٣.٤٥=whole", "١٢٣=part", "٤٥=part"});
  // A part's range is its own characters.
  const auto seq = bitsift::tokenizer::TokenSequence("x Résumé.pdf");
  REQUIRE(seq.size() == 4);
  CHECK(seq[1].begin == 2);
  CHECK(seq[1].end == 14);  // the whole
  CHECK(seq[2].begin == 2);
  CHECK(seq[2].end == 10);  // "Résumé"
  CHECK(seq[3].begin == 11);
  CHECK(seq[3].end == 14);  // "pdf"
}

TEST_CASE("ASCII words: the fast path gives ICU's token or declines", "[tokenizer]") {
  using bitsift::tokenizer::AsciiWordToken;
  std::string token;
  CHECK(AsciiWordToken("Mutex", &token));
  CHECK(token == "mutex");
  CHECK(AsciiWordToken("nr_cpu_ids", &token));
  CHECK(token == "nr_cpu_ids");
  // The words of a text: its tokens that are not parts (a word's whole, or a word).
  auto words = [](std::string_view text) {
    Tokens out;
    for (const auto& t : bitsift::tokenizer::TokenSequence(text)) {
      if (t.role != bitsift::tokenizer::TokenRole::kPart) out.push_back(t.text);
    }
    return out;
  };
  for (const char* word : {"irq.h", "dev_id.devno", "Don't", "3.14", "1,000", "v1.2.3"}) {
    CHECK(AsciiWordToken(word, &token));
    CHECK(words(word) == Tokens{token});
  }
  for (const char* declined :
       {"", "_", "__", "a b", "a.", ".a", "a..b", "a.1", "a:b", "a,b", "a-b", "caf\xC3\xA9", "x@y"})
    CHECK_FALSE(AsciiWordToken(declined, &token));
  // Every string of these characters up to length 4, and random longer ones, against ICU.
  const std::string alphabet = "aZ9_.:',;";
  std::vector<std::string> texts = {""};
  for (size_t from = 0, n = 1; n <= 4; ++n) {
    const size_t to = texts.size();
    for (size_t i = from; i < to; ++i) {
      for (char c : alphabet) texts.push_back(texts[i] + c);
    }
    from = to;
  }
  texts.erase(texts.begin());
  std::mt19937 rng(42);
  const std::string chars = "abcxyzABCXYZ0189_.:',;-@/";
  for (int i = 0; i < 4000; ++i) {
    std::string t;
    for (size_t n = 1 + rng() % 12; n > 0; --n) t += chars[rng() % chars.size()];
    texts.push_back(t);
  }
  for (const std::string& t : texts) {
    INFO(t);
    if (AsciiWordToken(t, &token)) {
      CHECK(words(t) == Tokens{token});
    } else if (t.find_first_not_of("abcxyzABCXYZ0189_") == std::string::npos) {
      CHECK(t.find_first_not_of('_') == std::string::npos);  // of these, declines only '_' runs
    }
  }
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

// ---- Source offsets ----------------------------------------------------------------------

namespace {

using bitsift::tokenizer::PositionedToken;
using bitsift::tokenizer::TokenSequence;

Tokens TextsOf(const std::vector<PositionedToken>& seq) {
  Tokens out;
  for (const auto& t : seq) out.push_back(t.text);
  return out;
}

// Pieces of multilingual text for random documents: every tokenizer path and the awkward
// cases of offset mapping (expansions, compositions, ignorables, invalid bytes).
const std::vector<std::string>& OffsetPieces() {
  static const std::vector<std::string> pieces = {
      "hello",
      "World",
      "Straße",
      "stdio.h",
      "LICENSE.txt",
      "www.example.com",
      "a.b@c.d",
      "__init__.py",
      "don't.stop",
      "1,000,000",
      "@",
      "José",
      "résumé.pdf",
      "ÅNGSTRÖM",
      "Tiếng",
      "x\xcc\x83",  // x with a combining tilde
      "\xc7\x85"
      "emal",  // U+01C5
      "naïve.txt",
      "Ελληνικά",
      "עברית.txt",
      "١٢٣.٤٥",
      "日本語.txt",
      "STRASSE",
      "kennedy's",
      "3.14",
      "1,000",
      "e-mail",
      "std::vector",
      "foo@bar.com",
      "spin_lock",
      "v1.2.3",
      "café",
      "cafe\xcc\x81",    // combining acute
      "\xef\xac\x81ne",  // U+FB01 ligature
      "ＦＵＬＬ",
      "①②",
      "\xe2\x91\xb4",  // U+2474 parenthesized 1
      "\xc2\xbd",
      "\xe3\x8d\xbb",
      "\xe3\x8d\xbb\xe5\x85\x83\xe5\xb9\xb4",  // ½, ㍻, ㍻元年
      "soft\xc2\xadhyphen",
      "zero\xe2\x80\x8dwidth",
      "\xe2\x80\x8b",  // SHY, ZWJ, ZWSP
      "布隆过滤器",
      "数据结构",
      "東京タワー",
      "ひらがな",
      "ｶﾀｶﾅ",
      "中",
      "\xf0\xa0\x80\x80",
      "\xe1\x84\x80\xe1\x85\xa1",  // Hangul jamo that compose to 가
      "한국어",
      "Привет",
      "ёж",
      "Ἀθῆναι",
      "ภาษาไทย",
      "नमस्ते",
      "مرحبا",
      "😀",
      "👍🏽",
      "\xff",
      "\xc3",
      "\xed\xa0\x80",
      "\xc0\xaf",
      "\xf8\x88\x80\x80\x80",
      "\xe2\x82",
      " ",
      " ",
      " ",
      "\n",
      "\t",
      ", ",
      ". ",
      "\r\n",
      "　",
      "。",
      "、",
      "-",
      "(",
      ")",
      "\"",
      "'"};
  return pieces;
}

std::string RandomText(std::mt19937_64& rng, size_t pieces) {
  const auto& p = OffsetPieces();
  std::string text;
  for (size_t i = 0; i < pieces; ++i) {
    if (rng() % 23 == 0) {
      text += static_cast<char>(rng() % 256);  // a raw byte now and then
    } else {
      text += p[rng() % p.size()];
    }
  }
  return text;
}

icu::UnicodeString DecodeUtf8(std::string_view bytes) {
  std::vector<UChar> buf(bytes.size() + 1);
  int32_t length = 0;
  UErrorCode status = U_ZERO_ERROR;
  u_strFromUTF8WithSub(buf.data(), static_cast<int32_t>(buf.size()), &length, bytes.data(),
                       static_cast<int32_t>(bytes.size()), 0xFFFD, nullptr, &status);
  REQUIRE(U_SUCCESS(status));
  return icu::UnicodeString(buf.data(), length);
}

// Clause 5's folding, read directly from the contract: NFD, every nonspacing mark whose base
// (the last character before it that is not a mark) is in the Latin script dropped, NFC.
icu::UnicodeString FoldLatinDiacritics(const icu::UnicodeString& word) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
  REQUIRE(U_SUCCESS(status));
  const icu::UnicodeString d = nfd->normalize(word, status);
  icu::UnicodeString kept;
  UScriptCode base = USCRIPT_INVALID_CODE;
  for (int32_t i = 0; i < d.length(); i = d.moveIndex32(i, 1)) {
    const UChar32 c = d.char32At(i);
    const bool mark = (U_GET_GC_MASK(c) & U_GC_M_MASK) != 0;
    if (u_charType(c) == U_NON_SPACING_MARK && base == USCRIPT_LATIN) continue;
    if (!mark) base = uscript_getScript(c, &status);
    kept.append(c);
  }
  icu::UnicodeString out = nfc->normalize(kept, status);
  REQUIRE(U_SUCCESS(status));
  return out;
}

bool InPart(UChar32 c) {
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_M_MASK | U_GC_N_MASK | U_GC_PC_MASK)) != 0;
}

// The maximal runs of clause 5's part characters in s[begin, end), as [start, limit) pairs.
std::vector<std::pair<int32_t, int32_t>> PartRuns(const icu::UnicodeString& s, int32_t begin,
                                                  int32_t end) {
  std::vector<std::pair<int32_t, int32_t>> runs;
  for (int32_t i = begin; i < end; i = s.moveIndex32(i, 1)) {
    if (!InPart(s.char32At(i))) continue;
    if (!runs.empty() && runs.back().second == i) {
      runs.back().second = s.moveIndex32(i, 1);
    } else {
      runs.emplace_back(i, s.moveIndex32(i, 1));
    }
  }
  return runs;
}

// The slow reference for offsets, written from the contract and not from the tokenizer: the
// whole text is decoded, normalized and segmented at once; a byte offset b is a usable range
// end when decoding splits there (decode(text[0,b)) + decode(text[b,)) = decode(text)) and the
// character after it has a normalization boundary before it; then normalize(decode(text[0,b)))
// is a prefix of the normalized text, whose length places b. A token spanning normalized
// [s, e) gets the last usable b at or before s and the first at or after e.
std::vector<PositionedToken> ReferenceSequence(std::string_view text) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfkc = icu::Normalizer2::getNFKCCasefoldInstance(status);
  REQUIRE(U_SUCCESS(status));
  const icu::UnicodeString whole = DecodeUtf8(text);
  const icu::UnicodeString norm = nfkc->normalize(whole, status);
  std::vector<std::pair<size_t, int32_t>> ends;  // usable b -> normalized prefix length
  for (size_t b = 0; b <= text.size(); ++b) {
    icu::UnicodeString head = DecodeUtf8(text.substr(0, b)), tail = DecodeUtf8(text.substr(b));
    if (icu::UnicodeString(head).append(tail) != whole) continue;
    if (!tail.isEmpty() && !nfkc->hasBoundaryBefore(tail.char32At(0))) continue;
    icu::UnicodeString prefix = nfkc->normalize(head, status);
    REQUIRE(norm.startsWith(prefix));
    ends.emplace_back(b, prefix.length());
  }
  auto source = [&](int32_t s, int32_t e) {
    size_t begin = 0, end = text.size();
    for (const auto& [b, len] : ends) {
      if (len <= s) begin = b;
    }
    for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
      if (it->second >= e) end = it->first;
    }
    return std::make_pair(begin, end);
  };
  std::vector<PositionedToken> out;
  using bitsift::tokenizer::TokenRole;
  auto emit_text = [&](const icu::UnicodeString& text, int32_t s, int32_t e, bool continues,
                       TokenRole role) {
    std::string utf8;
    text.toUTF8String(utf8);
    auto [begin, end] = source(s, e);
    out.push_back(PositionedToken{utf8, begin, end, continues, role});
  };
  auto emit = [&](int32_t s, int32_t e, bool continues) {
    emit_text(norm.tempSubStringBetween(s, e), s, e, continues, TokenRole::kWord);
  };
  // Clause 5: the folded word; its parts are the runs of the folded word, placed by the runs
  // of the word before folding (folding drops marks only, so the runs are the same ones).
  auto word = [&](int32_t s, int32_t e) {
    const icu::UnicodeString folded = FoldLatinDiacritics(norm.tempSubStringBetween(s, e));
    const auto runs = PartRuns(folded, 0, folded.length());
    const bool separated =
        runs.size() != 1 || runs[0].first != 0 || runs[0].second != folded.length();
    if (!separated || runs.empty()) return emit_text(folded, s, e, false, TokenRole::kWord);
    emit_text(folded, s, e, false, TokenRole::kWhole);
    const auto places = PartRuns(norm, s, e);
    REQUIRE(places.size() == runs.size());
    for (size_t k = 0; k < runs.size(); ++k) {
      emit_text(folded.tempSubStringBetween(runs[k].first, runs[k].second), places[k].first,
                places[k].second, false, TokenRole::kPart);
    }
  };
  std::unique_ptr<icu::BreakIterator> words(
      icu::BreakIterator::createWordInstance(icu::Locale::getRoot(), status));
  words->setText(norm);
  std::vector<int32_t> run;  // code point starts of the current kana/ideographic run
  int32_t run_end = 0;
  auto flush = [&] {
    if (run.size() == 1) emit(run[0], run_end, false);
    for (size_t i = 0; i + 1 < run.size(); ++i) {
      emit(run[i], i + 2 < run.size() ? run[i + 2] : run_end, i > 0);
    }
    run.clear();
  };
  for (int32_t s = words->first(), e = words->next(); e != icu::BreakIterator::DONE;
       s = e, e = words->next()) {
    int32_t status_value = words->getRuleStatus();
    if (status_value >= 300 && status_value < 500) {
      for (int32_t i = s; i < e; i = norm.moveIndex32(i, 1)) run.push_back(i);
      run_end = e;
      continue;
    }
    flush();
    if (status_value >= 100) word(s, e);
  }
  flush();
  return out;
}

void CheckSameSequence(const std::vector<PositionedToken>& got,
                       const std::vector<PositionedToken>& want) {
  size_t first_difference = 0;
  while (first_difference < std::min(got.size(), want.size()) &&
         got[first_difference].text == want[first_difference].text) {
    ++first_difference;
  }
  INFO("first difference at token "
       << first_difference << ": "
       << (first_difference < got.size() ? got[first_difference].text : "-") << " vs "
       << (first_difference < want.size() ? want[first_difference].text : "-"));
  REQUIRE(TextsOf(got) == TextsOf(want));
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("token " << i << " '" << got[i].text << "'");
    CHECK(got[i].begin == want[i].begin);
    CHECK(got[i].end == want[i].end);
    CHECK(got[i].continues_run == want[i].continues_run);
    CHECK(got[i].role == want[i].role);
  }
}

}  // namespace

TEST_CASE("offsets: the sequence yields the conformance vectors' sets", "[tokenizer][offsets]") {
  for (const Vector& v : LoadVectors()) {
    INFO("input: " << v.input);
    std::vector<PositionedToken> seq = TokenSequence(v.input);
    CHECK(Sorted(TextsOf(seq)) == v.tokens);
    for (const auto& t : seq) {
      CHECK(t.begin < t.end);
      CHECK(t.end <= v.input.size());
    }
  }
}

TEST_CASE("offsets: ranges point at the original bytes", "[tokenizer][offsets]") {
  auto spans = [](std::string_view text) {
    std::vector<std::string> out;
    for (const auto& t : TokenSequence(text)) {
      out.push_back(t.text + "=" + std::string(text.substr(t.begin, t.end - t.begin)));
    }
    return out;
  };
  CHECK(spans("Hello, Straße!") == Tokens{"hello=Hello", "strasse=Straße"});
  CHECK(spans("ab\xff"
              "cd") == Tokens{"ab=ab", "cd=cd"});
  CHECK(spans("x cafe\xcc\x81 y") == Tokens{"x=x", "cafe=cafe\xcc\x81", "y=y"});
  CHECK(spans("\xef\xac\x81ne ＦＵＬＬ") == Tokens{"fine=\xef\xac\x81ne", "full=ＦＵＬＬ"});
  CHECK(spans("布隆过滤器") == Tokens{"布隆=布隆", "隆过=隆过", "过滤=过滤", "滤器=滤器"});
  CHECK(spans("Bloom过滤器.") == Tokens{"bloom=Bloom", "过滤=过滤", "滤器=滤器"});
  CHECK(spans("ｶﾀｶﾅ") == Tokens{"カタ=ｶﾀ", "タカ=ﾀｶ", "カナ=ｶﾅ"});
  // One character that expands to two ideographs belongs whole to both bigrams it starts.
  CHECK(spans("\xe3\x8d\xbb元年") ==
        Tokens{"平成=\xe3\x8d\xbb", "成元=\xe3\x8d\xbb元", "元年=元年"});
  CHECK(spans("soft\xc2\xadhyphen") == Tokens{"softhyphen=soft\xc2\xadhyphen"});
  std::vector<PositionedToken> seq = TokenSequence("东京 布隆过");
  REQUIRE(seq.size() == 3);
  CHECK(!seq[0].continues_run);
  CHECK(!seq[1].continues_run);
  CHECK(seq[2].continues_run);
}

TEST_CASE("offsets: random multilingual text against the slow reference", "[tokenizer][offsets]") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 150; ++round) {
    std::string text = RandomText(rng, 1 + rng() % 60);
    if (round % 5 == 0) {
      // Raw bytes, mostly non-ASCII: every kind of ill-formed sequence.
      text.clear();
      for (size_t i = 0, n = rng() % 80; i < n; ++i) {
        text += static_cast<char>(rng() % 3 ? 0x80 + rng() % 128 : rng() % 128);
      }
    }
    INFO("round " << round << " text: " << text);
    std::vector<PositionedToken> got = TokenSequence(text);
    CheckSameSequence(got, ReferenceSequence(text));
    // The same tokens in the same order as the fast path.
    Collect fast;
    Tokenizer tok;
    tok.Tokenize(text, fast);
    CHECK(TextsOf(got) == fast.tokens);
  }
}

TEST_CASE("offsets: chunked text gives the fast path's tokens and whole-text ranges",
          "[tokenizer][offsets]") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    std::string text = RandomText(rng, 200 + rng() % 800);
    // Sometimes long stretches without a safe cut, so that cuts are forced.
    if (round % 3 == 0) text.insert(rng() % text.size(), std::string(300 + rng() % 400, 'x'));
    // Rounds with the long stretch have small maximum chunks (forced cuts); the others cannot
    // force a cut.
    const size_t chunk = 16 + rng() % 64;
    const size_t max_chunk = round % 3 == 0 ? 128 + rng() % 256 : size_t{1} << 20;
    Tokenizer chunked;
    chunked.SetChunkBytesForTesting(chunk, max_chunk);
    struct Seq : bitsift::tokenizer::OffsetTokenSink {
      std::vector<PositionedToken> tokens;
      bool OnToken(std::string_view t, uint64_t b, uint64_t e, bool c,
                   bitsift::tokenizer::TokenRole role) override {
        tokens.push_back(PositionedToken{std::string(t), b, e, c, role});
        return true;
      }
    } seq;
    chunked.TokenizeWithOffsets(text, seq);
    // Streaming in random pieces cuts the same chunks.
    Collect streamed;
    Tokenizer stream;
    stream.SetChunkBytesForTesting(chunk, max_chunk);
    for (size_t i = 0; i < text.size();) {
      size_t n = 1 + rng() % 300;
      stream.Feed(std::string_view(text).substr(i, n), streamed);
      i += n;
    }
    stream.Finish(streamed);
    INFO("round " << round);
    Collect whole_fast;
    Tokenizer fast;
    fast.SetChunkBytesForTesting(chunk, max_chunk);
    fast.Tokenize(text, whole_fast);
    CHECK(whole_fast.tokens == streamed.tokens);
    REQUIRE(TextsOf(seq.tokens) == whole_fast.tokens);
    REQUIRE(TextsOf(seq.tokens) == streamed.tokens);
    for (const auto& t : seq.tokens) {
      CHECK(t.begin < t.end);
      CHECK(t.end <= text.size());
    }
    if (round % 3 != 0) {
      // Without forced cuts, chunking changes nothing at all.
      CheckSameSequence(seq.tokens, TokenSequence(text));
    }
  }
}
