// Bad queries: empty, punctuation only, 10,000 terms, 1 MB long, control characters, encoded
// surrogates, random bytes, every script. Each gets a clear error (kInvalidArgument: no terms) or
// exactly the brute-force answer; none crashes.
#include <bitsift/bitsift.h>

#include <catch2/catch.hpp>
#include <random>
#include <set>

#include "reliability_util.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"

using bitsift::Index;
using bitsift::Status;
using namespace bitsift::testing;

namespace {

// One word in each of many scripts (and a few special cases: mathematical letters that NFKC
// folds, full-width letters, an emoji that is dropped, supplementary-plane scripts).
const std::vector<std::string> kScriptWords = {
    "hello",  "café",     "θάλασσα",  "привет",  "բարեւ",   "שלום",  "مرحبا",    "ܫܠܡܐ",
    "ދިވެހި",    "नमस्ते",     "বাংলা",    "ਪੰਜਾਬੀ",   "ગુજરાતી",  "ଓଡ଼ିଆ",   "தமிழ்",     "తెలుగు",
    "ಕನ್ನಡ",   "മലയാളം",   "සිංහල",     "ภาษาไทย", "ພາສາລາວ", "བོད་ཡིག", "မြန်မာ",    "ქართული",
    "한국어", "አማርኛ",     "ᏣᎳᎩ",      "ᐃᓄᒃᑎᑐᑦ",  "᚛ᚑᚌᚐᚋ᚜",  "ᚱᚢᚾᛟ",  "ភាសាខ្មែរ", "ᠮᠣᠩᠭᠣᠯ",
    "漢字",   "ひらがな", "カタカナ", "𠀀𠀁",    "ꆈꌠ",    "ꕙꔤ",    "ꦧꦱꦗꦮ",     "𐌲𐌿𐍄𐌹𐍃",
    "𐐔𐐯𐑅𐐨𐑉",  "𝐀𝐁𝐂",      "😀",        "١٢٣",     "ＡＢＣ",  "ß",     "Σίσυφος",  "ﬁnance",
    "x²",     "Ǆemal",    "İstanbul"};

class Fixture {
 public:
  Fixture() {
    std::vector<bitsift::Document> docs;
    for (size_t i = 0; i < kScriptWords.size(); ++i) {
      Add(docs, Cat("script", i), kScriptWords[i] + " common");
    }
    std::string all;
    for (int i = 0; i < 10000; ++i) all += Cat("t", i, " ");
    Add(docs, "many-terms", all + "common");
    Add(docs, "controls",
        "hello\x01world tab\tbed bell\x07"
        "ring del\x7f"
        "ete");
    Add(docs, "surrogates",
        "ab\xED\xA0\x80"
        "cd ef\xED\xBF\xBF"
        "gh");
    // Every 97th code point (valid scalar values; surrogates are skipped) in small documents.
    std::string text;
    int in_doc = 0;
    for (uint32_t cp = 0x20; cp <= 0x10FFFF; cp += 97) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      text += Utf8(cp) + Utf8(cp) + " ";
      if (++in_doc == 200) {
        Add(docs, Cat("cp", cp), text);
        text.clear();
        in_doc = 0;
      }
    }
    if (!text.empty()) Add(docs, "cp-last", text);
    REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir_ / "index", {}).ok());
    REQUIRE(Index::Open(dir_ / "index", &index_).ok());
    REQUIRE(index_->Check().ok());
  }

  // Runs the query and compares it with the oracle: kInvalidArgument exactly when the
  // arguments hold no term, else the documents whose term sets contain every query term.
  void Expect(const std::vector<std::string>& args) {
    std::set<std::string> terms;
    for (const std::string& a : args) {
      for (auto& t : bitsift::tokenizer::TokenSet(a)) terms.insert(t);
    }
    bitsift::QueryResult r;
    bitsift::QueryOptions options;
    options.syntax = bitsift::QuerySyntax::kWords;  // 0.1's meaning: every token required
    Status s = index_->Query(args, options, &r);
    if (terms.empty()) {
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK(s.message().find("no terms") != std::string::npos);
      return;
    }
    INFO(s.message());
    REQUIRE(s.ok());
    std::vector<std::string> got, want;
    for (uint32_t id : r.documents) got.push_back(index_->document(id).path);
    for (size_t d = 0; d < names_.size(); ++d) {
      bool all = std::includes(sets_[d].begin(), sets_[d].end(), terms.begin(), terms.end());
      if (all) want.push_back(names_[d]);
    }
    std::sort(want.begin(), want.end());
    CHECK(got == want);
  }

  // Runs `text` as a query in the language: ok or a parse error (kInvalidArgument with a
  // position), never a crash; phrases are checked against the documents' texts.
  void ExpectLanguage(const std::string& text) {
    bitsift::QueryOptions options;
    options.document_text = [this](const bitsift::DocumentInfo& d, std::string* out) {
      auto it = std::find(names_.begin(), names_.end(), d.path);
      if (it == names_.end()) return false;
      *out = texts_[static_cast<size_t>(it - names_.begin())];
      return true;
    };
    bitsift::ParsedQuery q;
    bitsift::QueryError error;
    Status s = bitsift::ParsedQuery::Parse(text, bitsift::QuerySyntax::kLanguage, &q, &error);
    if (!s.ok()) {
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK(s.message().find("(at byte ") != std::string::npos);
      CHECK(error.position <= text.size());
      CHECK(q.empty());
      return;
    }
    bitsift::QueryResult r;
    INFO(q.ToString());
    CHECK(index_->Query(q, options, &r).ok());
    CHECK(r.unreadable.empty());
  }
  const Index& index() const { return *index_; }

 private:
  void Add(std::vector<bitsift::Document>& docs, const std::string& name, const std::string& text) {
    docs.push_back({name, text, 0});
    names_.push_back(name);
    texts_.push_back(text);
    auto t = bitsift::tokenizer::TokenSet(text);
    sets_.emplace_back(t.begin(), t.end());
  }

  TempDir dir_;
  std::unique_ptr<Index> index_;
  std::vector<std::string> names_;
  std::vector<std::string> texts_;
  std::vector<std::set<std::string>> sets_;
};

}  // namespace

TEST_CASE("bad queries get a clear error or the exact answer", "[badquery]") {
  Fixture f;
  SECTION("empty and term-less queries") {
    f.Expect({});
    f.Expect({""});
    f.Expect({"", "", ""});
    f.Expect({"!!!", "...", "---", "¿¡", "«»", "—"});
    f.Expect({" \t\n\r\v\f"});
    f.Expect({"\x01\x02\x1b[31m\x7f"});
    f.Expect({"😀🎉", "★☆"});
    f.Expect({std::string(5, '\0')});
  }
  SECTION("control characters inside and around words") {
    f.Expect({"hello\x01world"});
    f.Expect(
        {"\x07"
         "bell\x07"});
    f.Expect(
        {"del\x7f"
         "ete"});
    f.Expect({std::string("hello\0world", 11)});
    f.Expect({"tab\tbed"});
  }
  SECTION("surrogates encoded in UTF-8 and other invalid sequences") {
    f.Expect({"\xED\xA0\x80"});
    f.Expect({"\xED\xBF\xBF\xED\xA0\x80"});
    f.Expect(
        {"ab\xED\xA0\x80"
         "cd"});
    f.Expect(
        {"ef\xED\xBF\xBF"
         "gh"});
    f.Expect({"\xC0\x80", "\xF8\x88\x80\x80\x80", "\xFF"});
    f.Expect({"caf\xC3"});
  }
  SECTION("10,000 terms") {
    std::vector<std::string> args;
    for (int i = 0; i < 10000; ++i) args.push_back(Cat("t", i));
    f.Expect(args);  // exactly the one document holding them all
    args.push_back("absentterm");
    f.Expect(args);  // none
    f.Expect(std::vector<std::string>(10000, "common"));
    std::string one;
    for (int i = 0; i < 10000; ++i) one += Cat("t", 9999 - i, " ");
    f.Expect({one});
  }
  SECTION("1 MB long queries") {
    f.Expect({std::string(1 << 20, 'a')});
    std::string words;
    while (words.size() < (1 << 20)) words += "common ";
    f.Expect({words});
    std::string cjk;
    while (cjk.size() < (1 << 20)) cjk += "漢字ひらがな";
    f.Expect({cjk});
    std::mt19937_64 rng(1);
    std::string noise(1 << 20, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    f.Expect({noise});
  }
  SECTION("every script") {
    for (const std::string& w : kScriptWords) {
      f.Expect({w});
      f.Expect({w, "common"});
    }
    f.Expect(kScriptWords);
    // Sampled code points across the whole range, alone and doubled.
    for (uint32_t cp = 0x20; cp <= 0x10FFFF; cp += 97 * 7) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      f.Expect({Utf8(cp)});
      f.Expect({Utf8(cp) + Utf8(cp)});
    }
  }
  SECTION("random bytes") {
    std::mt19937_64 rng(2);
    for (int i = 0; i < 2000; ++i) {
      std::string q(rng() % 24, '\0');
      for (char& c : q) c = static_cast<char>(rng() % 3 == 0 ? 'a' + rng() % 26 : rng());
      f.Expect({q});
    }
  }
  SECTION("random bytes and operators in the query language") {
    std::mt19937_64 rng(3);
    const std::vector<std::string> pieces = {"\"",   "(",  ")",      "-",     "*",
                                             " OR ", " ",  "common", "hello", "漢字",
                                             "café", "t1", "t",      "\xff",  "\xe2\x80\x9c"};
    for (int i = 0; i < 2000; ++i) {
      std::string q;
      for (size_t n = rng() % 8; n > 0; --n) {
        if (rng() % 4 == 0) {
          q += static_cast<char>(rng());
        } else {
          q += pieces[rng() % pieces.size()];
        }
      }
      f.ExpectLanguage(q);
    }
  }
}
