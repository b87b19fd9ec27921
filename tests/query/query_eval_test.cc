// The query language's answers over a real index against a brute-force positional oracle:
// every document's token sequence (with offsets) and a direct reading of the query tree.
#include "query/query_eval.h"

#include <bitsift/bitsift.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "format/index_format.h"
#include "format/segment_reader.h"
#include "indexer/index_builder.h"
#include "query/index_set.h"
#include "query/query_parser.h"
#include "query/searcher.h"
#include "storage/verified_file.h"
#include "test_util.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

using namespace bitsift;
using bitsift::testing::TempDir;
using query::QueryNode;
using Kind = QueryNode::Kind;

namespace {

enum class Truth { kNo, kYes, kUnknown };

// A document as the oracle sees it: its phrase positions in order, its terms (every token,
// wholes included), and whether its text is readable.
struct OracleDoc {
  std::vector<tokenizer::PositionedToken> tokens;  // positions only (no wholes)
  std::vector<std::string> words;                  // every token's text, in order
  std::set<std::string> terms;
  bool readable = true;

  explicit OracleDoc(std::string_view text = {}) {
    for (tokenizer::PositionedToken& t : tokenizer::TokenSequence(text)) {
      words.push_back(t.text);
      terms.insert(t.text);
      if (tokenizer::IsPosition(t.role)) tokens.push_back(std::move(t));
    }
  }
};

bool Starts(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool ElementMatches(const QueryNode& n, size_t j, const tokenizer::PositionedToken& t) {
  const bool prefix = n.kind == Kind::kPrefix || (n.last_is_prefix && j + 1 == n.terms.size());
  return prefix ? Starts(t.text, n.terms[j]) : t.text == n.terms[j];
}

// The definition, read directly: a phrase occurs where consecutive tokens match its elements
// in order (a joined element's token continuing the previous token's run). A document whose
// text cannot be read is undecided for a phrase unless its term set already rules it out (or
// `texts` is false: the truth of its text). The engine may decide more of these from the
// positions it stores (format::ForwardPositions), and must then decide them rightly:
// AgreesWithOracle.
Truth OracleTruth(const QueryNode& n, const OracleDoc& d, bool texts = true) {
  switch (n.kind) {
    case Kind::kTerm:
      return d.terms.count(n.terms[0]) ? Truth::kYes : Truth::kNo;
    case Kind::kPrefix:
      for (const std::string& t : d.terms) {
        if (Starts(t, n.terms[0])) return Truth::kYes;
      }
      return Truth::kNo;
    case Kind::kPhrase: {
      const size_t m = n.terms.size();
      bool possible = true;
      for (size_t j = 0; j < m; ++j) {
        bool any = false;
        for (const std::string& t : d.terms) {
          tokenizer::PositionedToken pt;
          pt.text = t;
          any |= ElementMatches(n, j, pt);
        }
        possible &= any;
      }
      if (!possible) return Truth::kNo;
      if (!d.readable && texts) return Truth::kUnknown;
      for (size_t i = 0; i + m <= d.tokens.size(); ++i) {
        bool all = true;
        for (size_t j = 0; j < m && all; ++j) {
          all = ElementMatches(n, j, d.tokens[i + j]) &&
                (j == 0 || !n.joined[j] || d.tokens[i + j].continues_run);
        }
        if (all) return Truth::kYes;
      }
      return Truth::kNo;
    }
    case Kind::kAnd: {
      Truth t = Truth::kYes;
      for (const QueryNode& c : n.children) {
        Truth r = OracleTruth(c, d, texts);
        if (r == Truth::kNo) return Truth::kNo;
        if (r == Truth::kUnknown) t = Truth::kUnknown;
      }
      for (const QueryNode& e : n.excluded) {
        Truth r = OracleTruth(e, d, texts);
        if (r == Truth::kYes) return Truth::kNo;
        if (r == Truth::kUnknown) t = Truth::kUnknown;
      }
      return t;
    }
    case Kind::kOr: {
      Truth t = Truth::kNo;
      for (const QueryNode& c : n.children) {
        Truth r = OracleTruth(c, d, texts);
        if (r == Truth::kYes) return Truth::kYes;
        if (r == Truth::kUnknown) t = Truth::kUnknown;
      }
      return t;
    }
  }
  return Truth::kNo;
}

// Whether the engine's answer for a document (yes, unknown or neither) is the oracle's, or,
// where the oracle lacks the text, the text's truth or still unknown.
bool AgreesWithOracle(bool yes, bool unknown, const QueryNode& root, const OracleDoc& d) {
  const Truth engine = yes ? Truth::kYes : unknown ? Truth::kUnknown : Truth::kNo;
  const Truth oracle = OracleTruth(root, d);
  if (oracle != Truth::kUnknown) return engine == oracle;
  return engine == Truth::kUnknown || engine == OracleTruth(root, d, false);
}

// Documents of mixed scripts with code-like tokens, CJK runs and repeated phrases, so that
// phrases hit, miss by order, and miss by distance.
std::vector<testing::GeneratedDoc> MakeCorpus(size_t n, std::mt19937_64& rng) {
  std::vector<std::string> vocab = testing::MixedVocabulary(300, rng);
  const std::vector<std::string> code = {
      "std::vector", "e-mail", "foo.bar", "x_y", "3.14", "a->b", "f(x)", "std::map", "vector",
      "std", "e", "mail", "布隆过滤器", "过滤器", "滤器很好", "東京タワー", "ひらがな", "Привет",
      "мир", "ПРИВЕТ",
      // Token contract v2: words with parts, Latin diacritics.
      "<stdio.h>", "LICENSE.txt", "www.example.com", "obj.method(x)", "today.Then", "José",
      "résumé.pdf", "CAFÉ", "cafe", "isn't", "a.b@c.d", "stdio h", "naïve.txt", "日本語.txt"};
  std::vector<double> weights(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
  std::discrete_distribution<size_t> zipf(weights.begin(), weights.end());
  auto is_ascii = [](const std::string& w) {
    return std::all_of(w.begin(), w.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  };
  // Every third document is ASCII only (phrase checks then start with a byte search).
  const std::vector<std::string> ascii_code = {
      "std::vector", "e-mail", "foo.bar", "x_y",     "_foo",        "foo_",       "3.14",   "a->b",
      "f(x)",        "vector", "std",     "stdio.h", "LICENSE.txt", "don't.stop", "foo bar"};
  const char* separators[] = {" ", " ", " ", ", ", ". ", "\n", " - ", "\t", "", "。"};
  std::vector<testing::GeneratedDoc> out;
  for (size_t d = 0; d < n; ++d) {
    testing::GeneratedDoc doc;
    doc.name = "doc" + std::to_string(1000 + d);
    const bool ascii = d % 3 == 0;
    size_t words = 1 + rng() % (d % 7 == 0 ? 400 : 40);
    for (size_t w = 0; w < words; ++w) {
      std::string word = rng() % 4 == 0 ? (ascii ? ascii_code[rng() % ascii_code.size()]
                                                 : code[rng() % code.size()])
                                        : vocab[zipf(rng)];
      if (ascii && !is_ascii(word)) continue;
      doc.text += word;
      doc.text += separators[rng() % (ascii ? 9 : 10)];
    }
    out.push_back(std::move(doc));
  }
  return out;
}

// A random query string in the language, built from the documents' tokens.
std::string MakeQuery(const std::vector<OracleDoc>& docs, const std::vector<std::string>& texts,
                      std::mt19937_64& rng) {
  auto some_doc = [&]() -> const OracleDoc& { return docs[rng() % docs.size()]; };
  auto some_token = [&]() -> std::string {
    const OracleDoc& d = some_doc();
    if (d.words.empty()) return "absentzq";
    return d.words[rng() % d.words.size()];
  };
  auto window = [&](bool reverse) -> std::string {
    const OracleDoc& d = some_doc();
    if (d.tokens.size() < 2) return "\"" + some_token() + " " + some_token() + "\"";
    size_t len = 2 + rng() % 3;
    size_t start = rng() % d.tokens.size();
    std::vector<std::string> w;
    for (size_t i = start; i < std::min(d.tokens.size(), start + len); ++i) {
      w.push_back(d.tokens[i].text);
    }
    if (reverse) std::reverse(w.begin(), w.end());
    std::string s = "\"";
    for (size_t i = 0; i < w.size(); ++i) s += (i ? " " : "") + w[i];
    return s + "\"";
  };
  auto cjk_substring = [&]() -> std::string {
    // 3-5 code points from a CJK stretch of some document's text.
    const std::string& t = texts[rng() % texts.size()];
    for (int tries = 0; tries < 20; ++tries) {
      size_t at = rng() % (t.size() + 1);
      while (at < t.size() && (static_cast<unsigned char>(t[at]) & 0xC0) == 0x80) ++at;
      std::string s;
      size_t i = at, cps = 0, want = 3 + rng() % 3;
      while (i < t.size() && cps < want && static_cast<unsigned char>(t[i]) >= 0xE3) {
        s.append(t, i, 3);
        i += 3;
        ++cps;
      }
      if (cps >= 3) return s;
    }
    return "过滤器";
  };
  auto prefix = [&]() -> std::string {
    std::string t = some_token();
    size_t n = 1;
    while (n < t.size() && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) ++n;
    if (rng() % 2 && n < t.size()) {
      ++n;
      while (n < t.size() && (static_cast<unsigned char>(t[n]) & 0xC0) == 0x80) ++n;
    }
    return t.substr(0, n) + "*";
  };
  std::function<std::string(int)> primary = [&](int depth) -> std::string {
    switch (rng() % (depth > 1 ? 8 : 9)) {
      case 0:
      case 1:
        return some_token();
      case 2:
        return window(false);
      case 3:
        return window(rng() % 2 == 0);
      case 4:
        return cjk_substring();
      case 5:
        return prefix();
      case 6: {
        static const char* code[] = {"std::vector", "e-mail",      "foo.bar",       "a->b",
                                     "f(x)",        "std::vec*",   "ПРИВЕТ",        "absentzq",
                                     "stdio.h",     "\"stdio h\"", "jose",          "Résumé*",
                                     "licen*",      "foo.b*",      "obj.method(x)", "CAFÉ"};
        return code[rng() % 16];
      }
      case 7:
        return some_token() + " OR " + some_token();
      default:
        return "(" + primary(depth + 1) + " " + primary(depth + 1) + ")";
    }
  };
  std::string q;
  size_t items = 1 + rng() % 3;
  for (size_t i = 0; i < items; ++i) {
    if (!q.empty()) q += " ";
    std::string p = primary(0);
    if (i > 0 && rng() % 3 == 0 && p.find(" OR ") == std::string::npos) {
      q += "-" + p;
    } else if (rng() % 5 == 0) {
      q += p + " OR " + primary(1);
    } else {
      q += p;
    }
  }
  return q;
}

struct Fixture {
  TempDir dir;
  std::vector<testing::GeneratedDoc> corpus;
  std::vector<OracleDoc> oracle;  // by corpus position
  std::vector<size_t> oracle_of;  // local id -> corpus position
  std::unique_ptr<format::SegmentReader> reader;
  std::unique_ptr<query::Searcher> searcher;

  // every_position_bytes: below this much text every term keeps its positions (0: only the
  // frequent terms, as in a large segment, so that phrases with rarer words read texts).
  Fixture(size_t n, uint64_t seed, double fp_rate,
          uint64_t every_position_bytes = format::kEveryPositionBytes) {
    std::mt19937_64 rng(seed);
    corpus = MakeCorpus(n, rng);
    std::vector<indexer::MemoryDocument> docs;
    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < corpus.size(); ++i) {
      by_name[corpus[i].name] = i;
      docs.push_back({corpus[i].name, corpus[i].text, 0});
      OracleDoc d(corpus[i].text);
      d.readable = i % 17 != 5;
      oracle.push_back(std::move(d));
    }
    indexer::BuildConfig config;
    config.fp_rate = fp_rate;
    config.rebuild = true;
    config.every_position_bytes = every_position_bytes;
    indexer::BuildReport report;
    indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
    reader = std::make_unique<format::SegmentReader>(testing::OnlySegment(dir / "index"));
    searcher = std::make_unique<query::Searcher>(*reader);
    for (uint32_t id = 0; id < reader->doc_count(); ++id) {
      oracle_of.push_back(by_name.at(std::string(reader->path(id))));
    }
  }

  query::TextProvider Texts(std::atomic<uint64_t>* calls) const {
    return [this, calls](uint32_t id, std::string* text) {
      ++*calls;
      const size_t i = oracle_of.at(id);
      if (!oracle[i].readable) return false;
      *text = corpus[i].text;
      return true;
    };
  }
};

struct Counts {
  uint64_t queries = 0, with_matches = 0, with_unknown = 0, phrase_queries = 0;
  uint64_t phrase_positions = 0;      // phrase tests the engine decided by stored positions
  uint64_t phrase_pairs = 0;          // of those, refuted by a record's pair filter
  uint64_t decided_without_text = 0;  // documents the oracle could not decide, the engine did
  uint64_t kinds[5] = {0, 0, 0, 0, 0};
};

void CountKinds(const QueryNode& n, Counts& c) {
  c.kinds[static_cast<int>(n.kind)]++;
  for (const QueryNode& x : n.children) CountKinds(x, c);
  for (const QueryNode& x : n.excluded) CountKinds(x, c);
}

void CheckQueries(const Fixture& f, size_t count, uint64_t seed, const uint64_t* deleted,
                  Counts& counts) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> texts;
  for (const auto& d : f.corpus) texts.push_back(d.text);
  size_t made = 0;
  while (made < count) {
    const std::string q = MakeQuery(f.oracle, texts, rng);
    query::ParsedQuery parsed = query::ParseQueryString(q, query::QueryMode::kLanguage);
    if (!parsed.ok()) continue;  // e.g. an exclusion of everything that was positive
    ++made;
    INFO("query: " << q << "  parsed: " << parsed.root.ToString());
    std::atomic<uint64_t> calls{0};
    query::EvalOptions options;
    options.deleted = deleted;
    options.text = f.Texts(&calls);
    options.parallel = rng() % 2 == 0;  // texts checked on several threads, or on this one
    query::EvalStats stats;
    query::EvalResult got = query::Evaluate(*f.reader, *f.searcher, parsed.root, options, &stats);
    std::set<uint32_t> yes(got.documents.begin(), got.documents.end());
    std::set<uint32_t> unknown(got.unreadable.begin(), got.unreadable.end());
    REQUIRE(std::is_sorted(got.documents.begin(), got.documents.end()));
    REQUIRE(yes.size() == got.documents.size());
    bool oracle_unknown = false;
    for (uint32_t id = 0; id < f.reader->doc_count(); ++id) {
      const bool gone = deleted != nullptr && ((deleted[id / 64] >> (id % 64)) & 1);
      const OracleDoc& d = f.oracle[f.oracle_of[id]];
      INFO("document " << id);
      if (gone) {
        REQUIRE((yes.count(id) + unknown.count(id)) == 0);
        continue;
      }
      REQUIRE(AgreesWithOracle(yes.count(id) > 0, unknown.count(id) > 0, parsed.root, d));
      const bool undecided = OracleTruth(parsed.root, d) == Truth::kUnknown;
      oracle_unknown |= undecided;
      counts.decided_without_text += undecided && unknown.count(id) == 0;
    }
    CHECK(stats.matches == got.documents.size());
    CHECK(calls == stats.phrase_candidates + stats.unreadable);
    counts.phrase_positions += stats.phrase_positions;
    counts.phrase_pairs += stats.phrase_pairs;
    // A limit returns the first matches.
    if (got.documents.size() > 1) {
      options.limit = 1 + rng() % (got.documents.size() - 1);
      query::EvalResult limited =
          query::Evaluate(*f.reader, *f.searcher, parsed.root, options, &stats);
      REQUIRE(limited.documents ==
              std::vector<uint32_t>(got.documents.begin(), got.documents.begin() + options.limit));
    }
    counts.queries++;
    counts.with_matches += !got.documents.empty();
    counts.with_unknown += oracle_unknown;
    CountKinds(parsed.root, counts);
  }
}

}  // namespace

TEST_CASE("query language answers equal the positional oracle", "[eval][oracle]") {
  for (uint64_t seed : {21, 22}) {
    // A loose false-positive target on the second corpus: verification has work to do. The
    // first keeps only its frequent terms' positions: phrases with rarer words read texts.
    Fixture f(seed == 21 ? 700 : 400, seed, seed == 21 ? 0.01 : 0.3,
              seed == 21 ? 0 : format::kEveryPositionBytes);
    Counts counts;
    CheckQueries(f, 1500, seed * 7, nullptr, counts);
    INFO("queries " << counts.queries << ", with matches " << counts.with_matches);
    CHECK(counts.with_matches > counts.queries / 3);
    CHECK(counts.with_unknown > 0);
    for (int k = 0; k < 5; ++k) CHECK(counts.kinds[k] > 50);  // every node kind is exercised
    // The frequent terms' positions decide many phrases, unreadable texts' included.
    CHECK(counts.phrase_positions > 1000);
    // Many by the pair filters alone; the rest (pairs that hash alike included) by the lists.
    CHECK(counts.phrase_pairs > 100);
    CHECK(counts.phrase_pairs < counts.phrase_positions);
    CHECK(counts.decided_without_text > 10);
  }
}

TEST_CASE("deleted documents are never returned nor read", "[eval][oracle]") {
  Fixture f(500, 31, 0.05);
  std::vector<uint64_t> deleted((f.reader->doc_count() + 63) / 64, 0);
  std::mt19937_64 rng(5);
  for (uint32_t id = 0; id < f.reader->doc_count(); ++id) {
    if (rng() % 3 == 0) deleted[id / 64] |= uint64_t{1} << (id % 64);
  }
  Counts counts;
  CheckQueries(f, 800, 99, deleted.data(), counts);
  CHECK(counts.with_matches > counts.queries / 4);
}

TEST_CASE("evaluation specifics", "[eval]") {
  TempDir dir;
  std::vector<indexer::MemoryDocument> docs = {
      {"a", "free software foundation", 0},
      {"b", "software free, as in speech", 0},
      {"c", "std::vector<int> v;", 0},
      {"d", "过滤。滤器 不是 过滤器", 0},
      {"e", "过滤。滤器", 0},
      {"f", "licence license licensed", 0},
  };
  indexer::BuildConfig config;
  config.rebuild = true;
  indexer::BuildReport report;
  indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
  format::SegmentReader reader(testing::OnlySegment(dir / "index"));
  query::Searcher searcher(reader);
  auto run = [&](const std::string& q) {
    query::ParsedQuery parsed = query::ParseQueryString(q, query::QueryMode::kLanguage);
    REQUIRE(parsed.ok());
    query::EvalOptions options;
    options.text = [&](uint32_t id, std::string* text) {
      *text = docs[id].text;  // names sort as the documents are listed
      return true;
    };
    query::EvalStats stats;
    std::string names;
    for (uint32_t id : query::Evaluate(reader, searcher, parsed.root, options, &stats).documents)
      names += reader.path(id);
    return names;
  };
  CHECK(run("free software") == "ab");
  CHECK(run("\"free software\"") == "a");
  CHECK(run("\"software free\"") == "b");  // punctuation between words does not matter
  CHECK(run("std::vector") == "c");
  CHECK(run("过滤器") == "d");  // a substring: the run 过滤。滤器 does not hold it
  CHECK(run("\"过滤 滤器\"") == "de");
  CHECK(run("licen*") == "f");
  CHECK(run("licens* -licence") == "");
  CHECK(run("free OR 过滤器") == "abd");
  CHECK(run("(free -foundation) OR std::vector") == "bc");
  // A phrase needs a text provider.
  query::ParsedQuery phrase =
      query::ParseQueryString("\"free software\"", query::QueryMode::kLanguage);
  query::EvalStats stats;
  CHECK_THROWS_AS(query::Evaluate(reader, searcher, phrase.root, {}, &stats), Error);
}

TEST_CASE("a phrase of CJK characters is decided by positions and run starts, no text read",
          "[eval]") {
  // 过滤器 (its bigrams 过滤 滤器 overlap) in the even documents; 过滤。滤器 (the same bigrams
  // at consecutive positions, in two runs) in the odd ones. Every term has positions (a small
  // index: format::PositionsOfEveryTerm).
  TempDir dir;
  std::vector<indexer::MemoryDocument> docs;
  for (int i = 0; i < 40; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "d%02d", i);
    docs.push_back({name, i % 2 == 0 ? "这是过滤器 filter" : "过滤。滤器 filter", 0});
  }
  indexer::BuildConfig config;
  config.rebuild = true;
  indexer::BuildReport report;
  indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
  format::SegmentReader reader(testing::OnlySegment(dir / "index"));
  query::Searcher searcher(reader);
  auto run = [&](const std::string& q, size_t* texts) {
    query::ParsedQuery parsed = query::ParseQueryString(q, query::QueryMode::kLanguage);
    REQUIRE(parsed.ok());
    query::EvalOptions options;
    *texts = 0;
    options.text = [&](uint32_t id, std::string* text) {
      ++*texts;
      *text = docs[id].text;
      return true;
    };
    query::EvalStats stats;
    return query::Evaluate(reader, searcher, parsed.root, options, &stats).documents.size();
  };
  size_t texts = 0;
  CHECK(run("过滤器", &texts) == 20);  // joined: the bigrams overlap in the even ones only
  CHECK(texts == 0);
  CHECK(run("\"过滤 滤器\"", &texts) == 40);  // not joined: consecutive positions suffice
  CHECK(texts == 0);
  CHECK(run("是过滤器", &texts) == 20);  // 是过: in 20 documents, positioned in a small index
  CHECK(texts == 0);
  CHECK(run("过滤器 filter", &texts) == 20);
  CHECK(texts == 0);
}

TEST_CASE("long records by copy: a phrase refuted by the first bytes answers as mapped",
          "[eval][oneshot]") {
  // Documents of 5,000 words of 2,000: records of ~15 KiB whose pair filters (~1.8 KiB) a
  // one-shot reader by copy tests from the record's first chunk alone, the filter whole there
  // or cut short. Few candidates per chunk, so FORWARD_DATA stays read by copy.
  TempDir dir;
  std::mt19937_64 rng(71);
  std::vector<std::vector<int>> words(60);
  std::vector<indexer::MemoryDocument> docs;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string text;
    for (int k = 0; k < 5000; ++k) {
      words[i].push_back(static_cast<int>(rng() % 2000));
      text += 'w';
      text += std::to_string(words[i].back());
      text += k % 12 == 11 ? '\n' : ' ';
    }
    char name[24];
    std::snprintf(name, sizeof name, "d%02zu", i);
    docs.push_back({name, text, 0});
  }
  indexer::BuildConfig config;
  config.rebuild = true;
  indexer::BuildReport report;
  indexer::UpdateIndexFromMemory(docs, {}, dir / "index", config, &report);
  const std::string segment = testing::OnlySegment(dir / "index");
  format::SegmentReader mapped(segment);
  storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kCopy);
  struct Restore {
    ~Restore() { storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto); }
  } restore;
  format::SegmentReader by_copy(segment, format::IndexFile::Access::kOneShot);
  REQUIRE(by_copy.file().copy_reads());
  query::Searcher mapped_searcher(mapped), copy_searcher(by_copy);
  uint64_t pairs_refuted = 0, matched = 0;
  for (int q = 0; q < 200; ++q) {
    // Half the phrases from a document, half of random words (mostly in no document).
    int a = static_cast<int>(rng() % 2000), b = static_cast<int>(rng() % 2000);
    if (q % 2 == 0) {
      const std::vector<int>& w = words[rng() % words.size()];
      const size_t at = rng() % (w.size() - 1);
      a = w[at];
      b = w[at + 1];
    }
    const std::string phrase = "\"w" + std::to_string(a) + " w" + std::to_string(b) + "\"";
    INFO("phrase " << phrase);
    std::vector<uint32_t> want;
    for (uint32_t id = 0; id < mapped.doc_count(); ++id) {
      const std::vector<int>& w = words.at(std::stoul(std::string(mapped.path(id)).substr(1)));
      for (size_t k = 0; k + 1 < w.size(); ++k) {
        if (w[k] == a && w[k + 1] == b) {
          want.push_back(id);
          break;
        }
      }
    }
    matched += want.size();
    query::ParsedQuery parsed = query::ParseQueryString(phrase, query::QueryMode::kLanguage);
    REQUIRE(parsed.ok());
    for (const format::SegmentReader* reader : {&mapped, &by_copy}) {
      query::EvalOptions options;
      options.text = [](uint32_t, std::string*) { return false; };  // positions decide
      query::EvalStats stats;
      const query::EvalResult got =
          query::Evaluate(*reader, reader == &mapped ? mapped_searcher : copy_searcher, parsed.root,
                          options, &stats);
      CHECK(got.documents == want);
      CHECK(got.unreadable.empty());
      if (reader == &by_copy) pairs_refuted += stats.phrase_pairs;
    }
  }
  CHECK(matched > 100);
  CHECK(pairs_refuted > 1000);
  CHECK(by_copy.file().copies(format::SectionId::kForwardData));
}

namespace {

// Two indexes answered as one through the public API, each of several segments (one update per
// batch, merges off) with deleted and replaced documents, in folders for scopes; the oracle
// holds every live document's current text. Texts come from document_text; a few are
// unreadable.
struct SetFixture {
  TempDir dir;
  std::map<std::string, OracleDoc> live[2];  // per index: name -> oracle (path order)
  std::map<std::string, std::string> texts;  // index-qualified name -> text
  std::vector<std::string> all_texts;
  std::unique_ptr<bitsift::Index> index;
  uint64_t segments = 0;

  static std::string Key(size_t x, const std::string& name) { return std::to_string(x) + name; }

  void Put(size_t x, const std::string& name, const std::string& text) {
    OracleDoc d(text);
    d.readable = std::hash<std::string>{}(name + text) % 19 != 3;
    live[x][name] = std::move(d);
    texts[Key(x, name)] = text;
    all_texts.push_back(text);
  }

  explicit SetFixture(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<testing::GeneratedDoc> corpus = MakeCorpus(520, rng);
    bitsift::IndexOptions options;
    options.merge = false;
    for (size_t x = 0; x < 2; ++x) {
      const std::string path = dir / ("index" + std::to_string(x));
      const size_t first = x * 260;
      // Three batches, then an update that deletes some documents and replaces others.
      for (size_t b = 0; b < 3; ++b) {
        std::vector<bitsift::Document> batch;
        for (size_t i = first + b * 80; i < first + (b + 1) * 80; ++i) {
          const std::string name = std::string("f")
                                       .append(1, static_cast<char>('0' + i % 3))
                                       .append("/")
                                       .append(corpus[i].name);
          batch.push_back({name, corpus[i].text, 0});
          Put(x, name, corpus[i].text);
        }
        REQUIRE(bitsift::UpdateDocuments(batch, {}, path, options).ok());
      }
      std::vector<bitsift::Document> upserts;
      std::vector<std::string> deletes;
      size_t k = 0;
      for (auto it = live[x].begin(); it != live[x].end(); ++k) {
        if (k % 7 == 0) {
          deletes.push_back(it->first);
          texts.erase(Key(x, it->first));
          it = live[x].erase(it);
          continue;
        }
        if (k % 11 == 0) {
          const std::string text = corpus[first + 240 + k % 20].text;
          upserts.push_back({it->first, text, 0});
          const std::string name = it->first;
          ++it;
          Put(x, name, text);
          continue;
        }
        ++it;
      }
      REQUIRE(bitsift::UpdateDocuments(upserts, deletes, path, options).ok());
    }
    REQUIRE(bitsift::Index::Open(std::vector<std::string>{dir / "index0", dir / "index1"}, &index)
                .ok());
    bitsift::IndexStats st = index->Stats();
    segments = st.segments.size();
    REQUIRE(segments >= 6);
  }

  bitsift::DocumentText Texts() const {
    return [this](const bitsift::DocumentInfo& d, std::string* text) {
      auto it = texts.find(Key(d.index, d.path));
      if (it == texts.end() || !live[d.index].at(d.path).readable) return false;
      *text = it->second;
      return true;
    };
  }

  // The oracle's answer as "index:name" strings in the set's order, and the undecided ones.
  void Expect(const QueryNode& root, const std::string& folder, std::vector<std::string>* yes,
              std::set<std::string>* unknown) const {
    for (size_t x = 0; x < 2; ++x) {
      for (const auto& [name, d] : live[x]) {
        if (!folder.empty() && name.compare(0, folder.size() + 1, folder + "/") != 0) continue;
        Truth t = OracleTruth(root, d);
        if (t == Truth::kYes) yes->push_back(std::to_string(x) + ":" + name);
        if (t == Truth::kUnknown) unknown->insert(std::to_string(x) + ":" + name);
      }
    }
  }

  // Whether the engine's answer `got` (in the set's order) and `got_unknown` agree with the
  // oracle document by document (AgreesWithOracle), none out of the folder.
  bool Agrees(const QueryNode& root, const std::string& folder, const std::vector<std::string>& got,
              const std::set<std::string>& got_unknown) const {
    const std::set<std::string> yes(got.begin(), got.end());
    std::vector<std::string> in_order;
    size_t seen = 0;
    for (size_t x = 0; x < 2; ++x) {
      for (const auto& [name, d] : live[x]) {
        if (!folder.empty() && name.compare(0, folder.size() + 1, folder + "/") != 0) continue;
        const std::string key = std::to_string(x) + ":" + name;
        const bool y = yes.count(key) > 0, u = got_unknown.count(key) > 0;
        seen += y + u;
        if (y) in_order.push_back(key);
        if (!AgreesWithOracle(y, u, root, d)) {
          UNSCOPED_INFO("disagrees on " << key);
          return false;
        }
      }
    }
    return in_order == got && seen == got.size() + got_unknown.size();
  }

  std::string Name(uint32_t id) const {
    bitsift::DocumentInfo d = index->document(id);
    return std::to_string(d.index) + ":" + d.path;
  }
};

}  // namespace

TEST_CASE("several indexes of several segments answer as the positional oracle",
          "[eval][oracle][set]") {
  SetFixture f(41);
  std::mt19937_64 rng(43);
  std::vector<OracleDoc> sample;
  for (const auto& x : f.live) {
    for (const auto& [name, d] : x) sample.push_back(d);
  }
  size_t made = 0, with_matches = 0, skipped_some = 0;
  while (made < 400) {
    // The second half shares the segments with the helper thread from the start of each query
    // (the first half: the first kSequentialMicros on this thread). TSan runs this test.
    if (made == 200) query::ShareSegmentsFromNowOn();
    const std::string q = MakeQuery(sample, f.all_texts, rng);
    query::ParsedQuery tree = query::ParseQueryString(q, query::QueryMode::kLanguage);
    bitsift::ParsedQuery parsed;
    bitsift::QueryError error;
    const bitsift::Status ps =
        bitsift::ParsedQuery::Parse(q, bitsift::QuerySyntax::kLanguage, &parsed, &error);
    REQUIRE(ps.ok() == tree.ok());
    if (!tree.ok()) continue;
    ++made;
    INFO("query: " << q << "  parsed: " << tree.root.ToString());
    CHECK(parsed.ToString() == tree.root.ToString());
    bitsift::QueryOptions options;
    options.document_text = f.Texts();
    const std::string folder =
        rng() % 4 == 0 ? std::string("f").append(1, static_cast<char>('0' + rng() % 3)) : "";
    if (!folder.empty()) options.scope = {folder};
    std::vector<std::string> want;
    std::set<std::string> want_unknown;
    f.Expect(tree.root, folder, &want, &want_unknown);
    bitsift::QueryResult r;
    REQUIRE(f.index->Query(parsed, options, &r).ok());
    std::vector<std::string> got;
    for (uint32_t id : r.documents) got.push_back(f.Name(id));
    std::set<std::string> got_unknown;
    for (uint32_t id : r.unreadable) got_unknown.insert(f.Name(id));
    REQUIRE(f.Agrees(tree.root, folder, got, got_unknown));
    CHECK(r.stats.segments_searched + r.stats.segments_skipped + r.stats.segments_out_of_scope ==
          f.segments);
    skipped_some += r.stats.segments_skipped > 0;
    with_matches += !want.empty();
    // A limit keeps the first matches in the set's order.
    if (got.size() > 1) {
      options.limit = 1 + rng() % (got.size() - 1);
      REQUIRE(f.index->Query(parsed, options, &r).ok());
      std::vector<std::string> limited;
      for (uint32_t id : r.documents) limited.push_back(f.Name(id));
      REQUIRE(limited == std::vector<std::string>(got.begin(), got.begin() + options.limit));
    }
  }
  CHECK(with_matches > made / 3);
  CHECK(skipped_some > 0);
}

TEST_CASE("an index given twice, by another spelling or through a link, is answered once",
          "[eval][oracle][set]") {
  SetFixture f(47);
  REQUIRE(::symlink((f.dir / "index1").c_str(), (f.dir / "link1").c_str()) == 0);
  const std::vector<std::string> given = {f.dir / "index0", f.dir / "index1", f.dir / "./index0",
                                          f.dir / "link1", f.dir / "index1"};
  std::unique_ptr<bitsift::Index> twice;
  REQUIRE(bitsift::Index::Open(given, &twice).ok());
  CHECK(twice->paths() == std::vector<std::string>{f.dir / "index0", f.dir / "index1"});
  CHECK(twice->document_count() == f.index->document_count());
  std::mt19937_64 rng(49);
  std::vector<OracleDoc> sample;
  for (const auto& x : f.live) {
    for (const auto& [name, d] : x) sample.push_back(d);
  }
  size_t made = 0, with_matches = 0;
  while (made < 60) {
    const std::string q = MakeQuery(sample, f.all_texts, rng);
    query::ParsedQuery tree = query::ParseQueryString(q, query::QueryMode::kLanguage);
    if (!tree.ok()) continue;
    ++made;
    INFO("query: " << q);
    std::vector<std::string> want;
    std::set<std::string> want_unknown;
    f.Expect(tree.root, "", &want, &want_unknown);
    bitsift::ParsedQuery parsed;
    REQUIRE(bitsift::ParsedQuery::Parse(q, bitsift::QuerySyntax::kLanguage, &parsed).ok());
    bitsift::QueryOptions options;
    options.document_text = f.Texts();
    bitsift::QueryResult r;
    REQUIRE(twice->Query(parsed, options, &r).ok());
    std::vector<std::string> got;
    for (uint32_t id : r.documents) {
      const bitsift::DocumentInfo d = twice->document(id);
      got.push_back(std::to_string(d.index) + ":" + d.path);
    }
    std::set<std::string> got_unknown;
    for (uint32_t id : r.unreadable) {
      const bitsift::DocumentInfo d = twice->document(id);
      got_unknown.insert(std::to_string(d.index) + ":" + d.path);
    }
    REQUIRE(f.Agrees(tree.root, "", got, got_unknown));
    with_matches += !want.empty();
  }
  CHECK(with_matches > made / 3);
}

TEST_CASE("a one-shot index drops its pages as it reads and answers as a long-running one",
          "[eval][oracle][oneshot]") {
  SetFixture f(61);
  // Every fault-around window first touched drops the mapped pages: later reads fault them in
  // again, also while other threads read. Read through the mapping, and by copy (pread, the chunk
  // cache) as where page faults are dear.
  const auto reads = GENERATE(storage::OneShotReads::kMap, storage::OneShotReads::kCopy);
  INFO("reads by copy: " << (reads == storage::OneShotReads::kCopy));
  storage::VerifiedFile::SetOneShotReleaseWindows(1);
  storage::VerifiedFile::SetOneShotReads(reads);
  struct Restore {
    ~Restore() {
      storage::VerifiedFile::SetOneShotReleaseWindows(
          storage::VerifiedFile::kOneShotReleaseWindows);
      storage::VerifiedFile::SetOneShotReads(storage::OneShotReads::kAuto);
    }
  } restore;
  bitsift::OpenOptions open;
  open.one_shot = true;
  std::unique_ptr<bitsift::Index> one_shot;
  REQUIRE(bitsift::Index::Open(std::vector<std::string>{f.dir / "index0", f.dir / "index1"}, open,
                               &one_shot)
              .ok());
  std::mt19937_64 rng(67);
  std::vector<OracleDoc> sample;
  for (const auto& x : f.live) {
    for (const auto& [name, d] : x) sample.push_back(d);
  }
  std::vector<bitsift::ParsedQuery> queries;
  while (queries.size() < 150) {
    bitsift::ParsedQuery parsed;
    bitsift::QueryError error;
    if (bitsift::ParsedQuery::Parse(MakeQuery(sample, f.all_texts, rng),
                                    bitsift::QuerySyntax::kLanguage, &parsed, &error)
            .ok())
      queries.push_back(parsed);
  }
  bitsift::QueryOptions options;
  options.document_text = f.Texts();
  auto answer = [&](const bitsift::Index& index, const bitsift::ParsedQuery& q) {
    bitsift::QueryResult r;
    const bitsift::Status s = index.Query(q, options, &r);
    std::vector<std::string> names;
    for (uint32_t id : r.documents) names.push_back(f.Name(id));
    if (!s.ok()) names.push_back("error: " + s.message());
    return names;
  };
  size_t with_matches = 0;
  std::vector<std::vector<std::string>> want;
  for (const bitsift::ParsedQuery& q : queries) {
    want.push_back(answer(*f.index, q));
    with_matches += !want.back().empty();
    INFO("query: " << q.ToString());
    REQUIRE(answer(*one_shot, q) == want.back());
  }
  CHECK(with_matches > queries.size() / 3);
  // Four threads on a fresh one-shot index: drops while others read.
  REQUIRE(bitsift::Index::Open(std::vector<std::string>{f.dir / "index0", f.dir / "index1"}, open,
                               &one_shot)
              .ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < queries.size(); i += 2) {
        if (answer(*one_shot, queries[i]) != want[i]) wrong++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("queries and matching lines from many threads at once equal one thread's",
          "[eval][race]") {
  SetFixture f(51);
  std::mt19937_64 rng(53);
  std::vector<OracleDoc> sample;
  for (const auto& x : f.live) {
    for (const auto& [name, d] : x) sample.push_back(d);
  }
  struct Case {
    bitsift::ParsedQuery query;
    std::vector<uint32_t> documents;
    std::string lines;  // the first matching document's lines, spans included
  };
  bitsift::QueryOptions options;
  options.document_text = f.Texts();
  bitsift::LineOptions line_options;
  line_options.document_text = options.document_text;
  line_options.before = 1;
  auto lines_of = [&](const Case& c) {
    std::ostringstream out;
    if (c.documents.empty()) return out.str();
    std::vector<bitsift::LineGroup> groups;
    if (!f.index->MatchingLines(c.documents[0], c.query, line_options, &groups).ok())
      return out.str();
    for (const auto& g : groups) {
      for (const auto& l : g.lines) {
        out << l.number << (l.match ? ':' : '-');
        for (const auto& s : l.spans) out << s.start << "-" << s.end << ",";
        out << "\n";
      }
    }
    return out.str();
  };
  std::vector<Case> cases;
  while (cases.size() < 60) {
    Case c;
    if (!bitsift::ParsedQuery::Parse(MakeQuery(sample, f.all_texts, rng),
                                     bitsift::QuerySyntax::kLanguage, &c.query)
             .ok()) {
      continue;
    }
    bitsift::QueryResult r;
    REQUIRE(f.index->Query(c.query, options, &r).ok());
    c.documents = r.documents;
    c.lines = lines_of(c);
    cases.push_back(std::move(c));
  }
  // Catch2's macros are not thread-safe: threads count mismatches, the test checks the count.
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[(i + static_cast<size_t>(t) * 7) % cases.size()];
        bitsift::QueryResult r;
        if (!f.index->Query(c.query, options, &r).ok() || r.documents != c.documents ||
            lines_of(c) != c.lines) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(mismatches == 0);
}
