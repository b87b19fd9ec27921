// Decoding: every supported legacy encoding round trips, BOMs, streaming in any pieces, the
// binary probe after BOM handling, detection on short and mixed texts with the fallback.
#include "documents/decode.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "documents/sample_texts.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::documents::ChooseEncoding;
using bitsift::documents::Decoder;
using bitsift::documents::DecodeToUtf8;
using bitsift::documents::SkipDocument;
using bitsift::documents::SkipReason;
using bitsift::documents::StringSink;
using namespace bitsift::testing;

namespace {

// Decodes bytes written in pieces of `piece` bytes.
std::string DecodeInPieces(const std::string& bytes, size_t piece, std::string* encoding,
                           const std::string& forced = "", bool html = false) {
  StringSink sink;
  Decoder d(forced, html, sink);
  for (size_t i = 0; i < bytes.size(); i += piece)
    d.Write(std::string_view(bytes).substr(i, piece));
  d.Close();
  CHECK(sink.closed);
  *encoding = d.encoding();
  return sink.text;
}

bool IsBinary(const std::string& bytes) {
  try {
    DecodeToUtf8(bytes, "", false);
  } catch (const SkipDocument& s) {
    return s.reason() == SkipReason::kBinary;
  }
  return false;
}

}  // namespace

TEST_CASE("every sample text round trips through every legacy encoding it is kept in",
          "[documents][decode]") {
  for (const SampleText& t : SampleTexts()) {
    const std::string utf8 = Repeat(t.text, 1024);
    for (const char* encoding : t.encodings) {
      INFO(t.language << " in " << encoding);
      const std::string bytes = Encode(utf8, encoding);
      REQUIRE(bytes != utf8);
      std::string chosen;
      CHECK(DecodeToUtf8(bytes, "", false, &chosen) == utf8);
      CHECK(ChooseEncoding(bytes, true, false, "").how == "detected");
      INFO("detected as " << chosen);
      // Forcing the encoding gives the same text, whatever the detection said.
      CHECK(DecodeToUtf8(bytes, encoding, false) == utf8);
      // Longer than the probe: the converter's state carries across writes.
      if (encoding == t.encodings[0]) {
        const std::string long_utf8 = Repeat(t.text, 3 * bitsift::documents::kProbeBytes);
        std::string e;
        CHECK(DecodeInPieces(Encode(long_utf8, encoding), 4093, &e) == long_utf8);
      }
      // Streaming: multi-byte sequences and ISO-2022 escapes split across pieces.
      for (size_t piece : {1, 3, 7, 4096}) {
        std::string e;
        CHECK(DecodeInPieces(bytes, piece, &e) == utf8);
        CHECK(e == chosen);
      }
    }
  }
}

TEST_CASE("a byte-order mark decides UTF-8, UTF-16 and UTF-32", "[documents][decode]") {
  struct Case {
    const char* converter;
    std::string bom;
    const char* name;
  };
  const std::vector<Case> cases = {{"UTF-8", "\xEF\xBB\xBF", "UTF-8"},
                                   {"UTF-16LE", "\xFF\xFE", "UTF-16LE"},
                                   {"UTF-16BE", "\xFE\xFF", "UTF-16BE"},
                                   {"UTF-32LE", std::string("\xFF\xFE\0\0", 4), "UTF-32LE"},
                                   {"UTF-32BE", std::string("\0\0\xFE\xFF", 4), "UTF-32BE"}};
  for (const SampleText& t : SampleTexts()) {
    const std::string utf8 = Repeat(t.text, 300) + "𠀀 CJK Extension B";  // a surrogate pair
    for (const Case& c : cases) {
      INFO(t.language << " in " << c.converter);
      const std::string bytes = c.bom + Encode(utf8, c.converter);
      std::string chosen;
      CHECK(DecodeToUtf8(bytes, "", false, &chosen) == utf8);  // the mark itself is dropped
      CHECK(chosen == c.name);
      CHECK(ChooseEncoding(bytes, true, false, "").how == "bom");
      std::string e;
      CHECK(DecodeInPieces(bytes, 3, &e) == utf8);
    }
  }
}

TEST_CASE("valid UTF-8 passes through untouched, whatever its size", "[documents][decode]") {
  std::string text;
  while (text.size() < 3 * bitsift::documents::kProbeBytes) {
    text += "Straße 布隆过滤器 привет ";
  }
  // Bytes after the probe are not looked at: invalid UTF-8 there is the tokenizer's business.
  text += "\xFF\xFE tail";
  std::string e;
  for (size_t piece : {size_t{1000}, size_t{1} << 20}) {
    CHECK(DecodeInPieces(text, piece, &e) == text);
    CHECK(e == "UTF-8");
  }
  CHECK(ChooseEncoding("plain ascii", true, false, "").how == "utf-8");
  CHECK(ChooseEncoding("", true, false, "").encoding == "UTF-8");
  // A probe that ends inside a sequence is still valid UTF-8 when more follows.
  CHECK(ChooseEncoding("ab\xE5\xB8", false, false, "").encoding == "UTF-8");
}

TEST_CASE("a damaged UTF-8 file stays UTF-8", "[documents][decode]") {
  const std::string good = Repeat(SampleTexts()[0].text, 2000);
  // One bad byte among hundreds of valid sequences (at a character boundary).
  const std::string text = good.substr(0, 99) + "\xFF" + good.substr(99);
  std::string chosen;
  std::string decoded = DecodeToUtf8(text, "", false, &chosen);
  CHECK(chosen == "UTF-8");
  CHECK(decoded == text);
  CHECK(bitsift::tokenizer::TokenSet(decoded).size() > 50);
}

TEST_CASE("the binary probe runs on decoded text", "[documents][decode]") {
  CHECK(IsBinary(std::string("bloom\0binary", 12)));
  CHECK(IsBinary(std::string(100, 'x') + std::string(1, '\0') + std::string(100, 'y')));
  // A NUL after the first 8 KiB does not count.
  CHECK_FALSE(IsBinary(std::string(9000, 'x') + std::string(1, '\0')));
  // UTF-16 and UTF-32 have NUL bytes but no NUL characters.
  const std::string english = Repeat("Notes saved by a Windows editor.", 200);
  CHECK_FALSE(IsBinary("\xFF\xFE" + Encode(english, "UTF-16LE")));
  CHECK_FALSE(IsBinary(std::string("\0\0\xFE\xFF", 4) + Encode(english, "UTF-32BE")));
  // Without a BOM, mostly-Latin UTF-16 is recognized.
  std::string chosen;
  CHECK(DecodeToUtf8(Encode(english, "UTF-16LE"), "", false, &chosen) == english);
  CHECK(chosen == "UTF-16LE");
  CHECK(DecodeToUtf8(Encode(english, "UTF-16BE"), "", false, &chosen) == english);
  CHECK(chosen == "UTF-16BE");
  // A NUL character in decoded UTF-16 text is binary.
  CHECK(IsBinary("\xFF\xFE" + Encode(english + std::string(1, '\0') + "x", "UTF-16LE")));
  // So is binary data that starts like text, whatever the encoding forced.
  try {
    DecodeToUtf8(std::string("abc\0def", 7), "windows-1252", false);
    FAIL("not reported as binary");
  } catch (const SkipDocument& s) {
    CHECK(s.reason() == SkipReason::kBinary);
  }
}

TEST_CASE("detection on short and mixed texts, and the documented fallback",
          "[documents][decode]") {
  struct Case {
    const char* text;
    const char* encoding;
    bool same;  // decodes to the original
  };
  const std::vector<Case> cases = {
      // Mixed: a few words of another script among ASCII are enough.
      {"Release notes: исправлена ошибка в модуле поиска, version 2.1", "windows-1251", true},
      {"The meeting notes from last week are attached. Please review the agenda before Monday, "
       "the café downstairs opens at eight.",
       "ISO-8859-1", true},
      {"Привет", "KOI8-R", true},
      {"Привет", "windows-1251", true},
      // Too short to tell: windows-1252, which never fails, decodes them differently.
      {"東京", "Shift_JIS", false},
      {"价格", "GB18030", false},
      {"서울", "EUC-KR", false},
      {"Grüße", "ISO-8859-1", true},
      {"€100", "windows-1252", true},
  };
  for (const Case& c : cases) {
    INFO(c.text << " in " << c.encoding);
    const std::string bytes = Encode(c.text, c.encoding);
    auto choice = ChooseEncoding(bytes, true, false, "");
    INFO(choice.encoding << " " << choice.how << " " << choice.confidence);
    std::string decoded = DecodeToUtf8(bytes, "", false);
    CHECK((decoded == c.text) == c.same);
    if (choice.how == "fallback") {
      CHECK(choice.encoding == bitsift::documents::kFallbackEncoding);
      CHECK(choice.confidence < bitsift::documents::kMinConfidence);
    } else {
      CHECK(choice.how == "detected");
      CHECK(choice.confidence >= bitsift::documents::kMinConfidence);
    }
  }
  // The fallback for the too-short ones.
  CHECK(ChooseEncoding(Encode("東京", "Shift_JIS"), true, false, "").how == "fallback");
  // Random high bytes score below the threshold too.
  std::string noise;
  for (int i = 0; i < 200; ++i) noise += static_cast<char>(0x80 + (i * 37) % 128);
  CHECK(ChooseEncoding(noise, true, false, "").how == "fallback");
  // Forcing the encoding decodes what detection cannot.
  CHECK(DecodeToUtf8(Encode("東京", "Shift_JIS"), "Shift_JIS", false) == "東京");
  CHECK(DecodeToUtf8(Encode("价格", "GB18030"), "gb18030", false) == "价格");
}

TEST_CASE("forced encodings: any name ICU knows, including undetectable ones",
          "[documents][decode]") {
  CHECK(bitsift::documents::CanonicalEncodingName("latin1") == "ISO-8859-1");
  CHECK(bitsift::documents::CanonicalEncodingName("utf8") == "UTF-8");
  CHECK(bitsift::documents::CanonicalEncodingName("sjis") == "Shift_JIS");
  CHECK(bitsift::documents::CanonicalEncodingName("no-such-encoding").empty());
  // ISO-8859-15 (the euro at 0xA4) is never detected; forced, it decodes.
  const std::string text = "Le prix : 5 € ; œuvre, Ÿ";
  std::string chosen;
  CHECK(DecodeToUtf8(Encode(text, "ISO-8859-15"), "iso-8859-15", false, &chosen) == text);
  CHECK(chosen == "ISO-8859-15");
  CHECK_THROWS_AS(DecodeToUtf8("x", "no-such-encoding", false), std::invalid_argument);
  // Forced UTF-8 keeps invalid bytes for the tokenizer (U+FFFD there).
  CHECK(DecodeToUtf8("caf\xE9", "UTF-8", false) == "caf\xE9");
  // A BOM of the forced encoding is dropped.
  CHECK(DecodeToUtf8("\xEF\xBB\xBFword", "UTF-8", false) == "word");
}

TEST_CASE("HTML: a <meta charset> label is read as browsers read it", "[documents][decode]") {
  std::string chosen;
  // A "gb2312" page holding GBK's 喆 (outside GB2312): decoded as GB18030, nothing lost after it.
  const std::string gbk = "<meta charset=gb2312><body>陶喆在北京开会</body>";
  CHECK(DecodeToUtf8(Encode(gbk, "GB18030"), "", true, &chosen) == gbk);
  CHECK(chosen == "GB18030");
  // An "iso-8859-1" (or "us-ascii") page with windows-1252's œ and curly quotes.
  for (const char* label : {"iso-8859-1", "US-ASCII", "latin1"}) {
    INFO(label);
    const std::string page =
        std::string("<meta charset=") + label + "><body>le c\u0153ur, \u2019t\u00e9</body>";
    CHECK(DecodeToUtf8(Encode(page, "windows-1252"), "", true, &chosen) == page);
    CHECK(chosen == "windows-1252");
  }
}

TEST_CASE("HTML: a <meta charset> decides before detection", "[documents][decode]") {
  const std::string body = "<p>Le prix : 5 € ; œuvre</p>";
  const std::string html =
      "<html><head><meta charset=\"ISO-8859-15\"><title>t</title></head>"
      "<body>" +
      body + "</body></html>";
  const std::string bytes = Encode(html, "ISO-8859-15");
  std::string chosen;
  CHECK(DecodeToUtf8(bytes, "", true, &chosen) == html);
  CHECK(chosen == "ISO-8859-15");
  // The http-equiv form.
  const std::string old =
      "<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=koi8-r\">"
      "<body>Привет, мир</body>";
  CHECK(DecodeToUtf8(Encode(old, "KOI8-R"), "", true, &chosen) == old);
  CHECK(chosen == "KOI8-R");
  // Valid UTF-8 wins over a stale declaration.
  const std::string utf8 = "<meta charset=iso-8859-1><body>Straße</body>";
  CHECK(DecodeToUtf8(utf8, "", true, &chosen) == utf8);
  CHECK(chosen == "UTF-8");
  // Not HTML: the same bytes are left to detection.
  CHECK(ChooseEncoding(bytes, true, false, "").how != "meta");
}
