// Ranked answers against an independent reading of BM25: the documents' texts tokenized here
// (tf of every token, length = words that are not parts), collection statistics counted here,
// and the same scores whatever the split of the documents into segments and indexes.
#include <bitsift/bitsift.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <initializer_list>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using bitsift::Index;
using bitsift::testing::TempDir;

struct Counted {
  std::map<std::string, uint32_t> tf;
  uint32_t length = 0;
};

Counted Count(const std::string& text) {
  Counted c;
  std::vector<bitsift::TextToken> tokens;
  REQUIRE(bitsift::TokenizeInOrder(text, &tokens).ok());
  for (const bitsift::TextToken& t : tokens) {
    ++c.tf[t.token];
    if (t.role != bitsift::TokenRole::kPart) ++c.length;
  }
  return c;
}

// BM25 of every document holding a term of `terms` (all of them unless `any`), by name: idf
// ln((N - df + 0.5) / (df + 0.5)) floored at 1e-6, k1 1.2, b 0.75.
std::map<std::string, double> Oracle(const std::vector<bitsift::Document>& docs,
                                     const std::vector<std::string>& terms, bool any) {
  std::vector<Counted> counted;
  double total = 0;
  for (const bitsift::Document& d : docs) {
    counted.push_back(Count(d.text));
    total += counted.back().length;
  }
  const double n = static_cast<double>(docs.size());
  const double avg = std::max(1.0, total / n);
  std::map<std::string, double> idf;
  std::map<std::string, int> repeats;  // a term named twice counts twice
  for (const std::string& t : terms) ++repeats[t];
  for (const std::string& t : terms) {
    double df = 0;
    for (const Counted& c : counted) df += c.tf.count(t) > 0;
    idf[t] = std::max(1e-6, std::log((n - df + 0.5) / (df + 0.5)));
  }
  std::map<std::string, double> out;
  for (size_t i = 0; i < docs.size(); ++i) {
    size_t held = 0;
    double score = 0;
    for (const auto& [t, q] : repeats) {
      auto it = counted[i].tf.find(t);
      if (it == counted[i].tf.end()) continue;
      ++held;
      const double tf = it->second;
      score += q * idf[t] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * counted[i].length / avg));
    }
    if (any ? held > 0 : held == repeats.size()) out[docs[i].name] = score;
  }
  return out;
}

std::vector<bitsift::Document> RandomDocuments(std::mt19937_64& rng, size_t n) {
  const std::vector<std::string> words = {"alpha", "beta",  "gamma", "delta", "stdio.h", "José",
                                          "omega", "kappa", "sigma", "tau",   "rho",     "phi"};
  std::vector<bitsift::Document> docs;
  for (size_t i = 0; i < n; ++i) {
    std::string text;
    const size_t length = 1 + rng() % 40;
    for (size_t w = 0; w < length; ++w) {
      // Skewed: early words are common, some documents repeat one word many times.
      text += words[std::min(rng() % words.size(), rng() % words.size())];
      text += w % 9 == 8 ? "\n" : " ";
    }
    std::string name = "d";
    name += std::to_string(1000 + i);
    name += ".txt";
    docs.push_back({name, text, 0});
  }
  return docs;
}

// Scores by name of `query` on `index` (rank or any).
std::map<std::string, double> Scores(const Index& index, const std::string& query, bool any) {
  bitsift::ParsedQuery q;
  REQUIRE(bitsift::ParsedQuery::Parse(query, bitsift::QuerySyntax::kLanguage, &q).ok());
  bitsift::QueryOptions options;
  options.rank = true;
  options.any = any;
  bitsift::QueryResult r;
  REQUIRE(index.Query(q, options, &r).ok());
  REQUIRE(r.scores.size() == r.documents.size());
  for (size_t i = 1; i < r.scores.size(); ++i) REQUIRE(r.scores[i - 1] >= r.scores[i]);
  std::map<std::string, double> out;
  for (size_t i = 0; i < r.documents.size(); ++i) {
    out[index.document(r.documents[i]).path] = r.scores[i];
  }
  return out;
}

void RequireSame(const std::map<std::string, double>& want,
                 const std::map<std::string, double>& got) {
  REQUIRE(want.size() == got.size());
  for (const auto& [name, score] : want) {
    INFO(name);
    REQUIRE(got.count(name) == 1);
    REQUIRE(got.at(name) == Approx(score).epsilon(1e-9));
  }
}

// With `any`, the best k of `query` for each k of `ks` are the first k of its whole ranking,
// scores included.
void RequireTopKOfWholeRanking(const Index& index, const std::string& query,
                               std::initializer_list<uint64_t> ks) {
  bitsift::ParsedQuery q;
  REQUIRE(bitsift::ParsedQuery::Parse(query, bitsift::QuerySyntax::kLanguage, &q).ok());
  bitsift::QueryOptions options;
  options.any = true;
  bitsift::QueryResult all;
  REQUIRE(index.Query(q, options, &all).ok());
  for (uint64_t k : ks) {
    options.limit = k;
    bitsift::QueryResult top;
    REQUIRE(index.Query(q, options, &top).ok());
    INFO(query << " k=" << k);
    const size_t n = std::min<size_t>(k, all.documents.size());
    REQUIRE(top.documents.size() == n);
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(top.documents[i] == all.documents[i]);
      REQUIRE(top.scores[i] == Approx(all.scores[i]).epsilon(1e-12));
    }
  }
}

}  // namespace

TEST_CASE("ranked scores equal BM25 computed from the texts", "[rank]") {
  std::mt19937_64 rng(17);
  const std::vector<bitsift::Document> docs = RandomDocuments(rng, 300);
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "one", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "one", &index).ok());
  const std::vector<std::vector<std::string>> queries = {
      {"alpha"},           {"rho"},
      {"alpha", "phi"},    {"stdio"},
      {"stdio.h", "jose"}, {"tau", "sigma", "rho"}};
  for (const auto& terms : queries) {
    std::string text;
    for (const std::string& t : terms) {
      text += t;
      text += ' ';
    }
    INFO(text);
    RequireSame(Oracle(docs, terms, false), Scores(*index, text, false));
    RequireSame(Oracle(docs, terms, true), Scores(*index, text, true));
  }
}

TEST_CASE("a score does not depend on how the documents are split", "[rank]") {
  std::mt19937_64 rng(23);
  std::vector<bitsift::Document> docs = RandomDocuments(rng, 240);
  TempDir dir;
  // One segment.
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "one", {}).ok());
  // Many segments: built in four updates, one of them rewriting and deleting documents
  // (deleted documents must not count), without merges.
  bitsift::IndexOptions no_merge;
  no_merge.merge = false;
  const std::vector<bitsift::Document> first(docs.begin(), docs.begin() + 60);
  REQUIRE(bitsift::BuildIndexFromDocuments(first, dir / "many", no_merge).ok());
  for (size_t at = 60; at < docs.size(); at += 60) {
    std::vector<bitsift::Document> part(docs.begin() + static_cast<std::ptrdiff_t>(at),
                                        docs.begin() + static_cast<std::ptrdiff_t>(at + 60));
    REQUIRE(bitsift::UpdateDocuments(part, {}, dir / "many", no_merge).ok());
  }
  std::vector<bitsift::Document> gone = {{"d1001.txt", "phi phi phi alpha", 0},
                                         {"d1002.txt", "rho rho rho rho", 0}};
  REQUIRE(bitsift::UpdateDocuments(gone, {"d1003.txt"}, dir / "many", no_merge).ok());
  docs[1] = gone[0];
  docs[2] = gone[1];
  docs.erase(docs.begin() + 3);
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "one", {}).ok());
  // Two indexes answered as one.
  const std::vector<bitsift::Document> left(docs.begin(), docs.begin() + 100);
  const std::vector<bitsift::Document> right(docs.begin() + 100, docs.end());
  REQUIRE(bitsift::BuildIndexFromDocuments(left, dir / "left", {}).ok());
  REQUIRE(bitsift::BuildIndexFromDocuments(right, dir / "right", {}).ok());

  std::unique_ptr<Index> one, many, two;
  REQUIRE(Index::Open(dir / "one", &one).ok());
  REQUIRE(Index::Open(dir / "many", &many).ok());
  REQUIRE(Index::Open(std::vector<std::string>{dir / "left", dir / "right"}, &two).ok());
  REQUIRE(many->Stats().segments.size() >= 4);
  for (const std::string q : {"alpha", "phi rho", "tau OR sigma", "\"alpha beta\" gamma",
                              "gam* delta", "alpha -beta", "stdio jose kappa"}) {
    INFO(q);
    for (bool any : {false, true}) {
      const auto want = Scores(*one, q, any);
      RequireSame(want, Scores(*many, q, any));
      RequireSame(want, Scores(*two, q, any));
    }
  }
  // And after compaction into one segment.
  REQUIRE(bitsift::CompactIndex(dir / "many", {}).ok());
  std::unique_ptr<Index> compacted;
  REQUIRE(Index::Open(dir / "many", &compacted).ok());
  RequireSame(Scores(*one, "phi rho alpha", true), Scores(*compacted, "phi rho alpha", true));
}

TEST_CASE("any makes the top-level parts optional and keeps exclusions", "[rank]") {
  std::vector<bitsift::Document> docs = {{"a.txt", "gpl license text", 0},
                                         {"b.txt", "bsd license text", 0},
                                         {"c.txt", "proprietary license", 0},
                                         {"d.txt", "nothing relevant", 0}};
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "i", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "i", &index).ok());
  const auto all = Scores(*index, "gpl bsd", false);
  CHECK(all.empty());
  const auto any = Scores(*index, "gpl bsd license -proprietary", true);
  CHECK(any.size() == 2);
  CHECK(any.count("a.txt") == 1);
  CHECK(any.count("b.txt") == 1);
}

TEST_CASE("the best k with pruning are the first k of the whole ranking", "[rank]") {
  std::mt19937_64 rng(31);
  const std::vector<bitsift::Document> docs = RandomDocuments(rng, 400);
  TempDir dir;
  bitsift::IndexOptions no_merge;
  no_merge.merge = false;
  const std::vector<bitsift::Document> half(docs.begin(), docs.begin() + 200);
  const std::vector<bitsift::Document> rest(docs.begin() + 200, docs.end());
  REQUIRE(bitsift::BuildIndexFromDocuments(half, dir / "i", no_merge).ok());
  REQUIRE(bitsift::UpdateDocuments(rest, {}, dir / "i", no_merge).ok());
  // Two segments, and one: the set's ids in path order, where `any` takes the union of the
  // parts' answers.
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "one", {}).ok());
  std::unique_ptr<Index> two, one;
  REQUIRE(Index::Open(dir / "i", &two).ok());
  REQUIRE(Index::Open(dir / "one", &one).ok());
  const std::vector<std::string> words = {
      "alpha", "beta", "rho", "phi", "tau", "stdio", "omega", "\"alpha beta\"", "gam*", "-kappa"};
  for (int round = 0; round < 200; ++round) {
    std::string query;
    for (size_t w = 0, n = 1 + rng() % 4; w < n; ++w) {
      query += words[rng() % words.size()];
      query += ' ';
    }
    bitsift::ParsedQuery q;
    if (!bitsift::ParsedQuery::Parse(query, bitsift::QuerySyntax::kLanguage, &q).ok()) continue;
    for (const Index* index : {two.get(), one.get()}) {
      for (bool any : {false, true}) {
        bitsift::QueryOptions options;
        options.rank = true;
        options.any = any;
        bitsift::QueryResult all;
        REQUIRE(index->Query(q, options, &all).ok());
        for (uint64_t k : {1, 2, 3, 10, 50}) {
          options.limit = k;
          bitsift::QueryResult top;
          REQUIRE(index->Query(q, options, &top).ok());
          INFO(query << " any=" << any << " k=" << k);
          const size_t n = std::min<size_t>(k, all.documents.size());
          REQUIRE(top.documents.size() == n);
          for (size_t i = 0; i < n; ++i) {
            REQUIRE(top.documents[i] == all.documents[i]);
            REQUIRE(top.scores[i] == all.scores[i]);
          }
        }
      }
    }
  }
}

TEST_CASE("the best k of optional words equal the first k of the whole ranking", "[rank]") {
  // A Zipf-like vocabulary: a few words in most documents, many in a few, and lengths from 1 to
  // 400 words, so that the rare words' documents decide the k-th score early and the common
  // words' documents are skipped (or not) by their bounds.
  std::mt19937_64 rng(77);
  std::vector<std::string> vocabulary;
  for (int w = 0; w < 300; ++w) vocabulary.push_back(std::string("w").append(std::to_string(w)));
  auto word = [&] {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return vocabulary[static_cast<size_t>(std::pow(u, 3) * vocabulary.size())];
  };
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 700; ++i) {
    std::string text;
    const size_t length = 1 + (rng() % 4 == 0 ? rng() % 400 : rng() % 30);
    for (size_t w = 0; w < length; ++w) {
      text += word();
      text += w % 11 == 10 ? '\n' : ' ';
    }
    std::string name = "d";
    name.append(std::to_string(10000 + i)).append(".txt");
    docs.push_back({name, text, 0});
  }
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "i", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "i", &index).ok());
  for (int round = 0; round < 300; ++round) {
    std::string query;
    for (size_t w = 0, n = 1 + rng() % 5; w < n; ++w) {
      // Uniform over the vocabulary: rare words as often as common ones.
      query += rng() % 3 == 0 ? word() : vocabulary[rng() % vocabulary.size()];
      query += ' ';
    }
    RequireTopKOfWholeRanking(*index, query, {1, 2, 5, 10, 40});
  }
}

TEST_CASE("the best k scored on several threads equal the first k of the whole ranking",
          "[rank][concurrent]") {
  // 12,000 short documents over 6 words that most of them hold (their idf floored or small),
  // so that thousands of bounds tie near the top and rounds of 5,120 candidates and more are
  // scored in parallel waves: the top k must still be exactly the whole ranking's.
  std::mt19937_64 rng(91);
  const std::vector<std::string> words = {"a", "b", "c", "d", "e", "f"};
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 12000; ++i) {
    std::string text;
    for (size_t w = 0, length = 2 + rng() % 12; w < length; ++w) {
      text += words[rng() % words.size()];
      text += ' ';
    }
    std::string name = "d";
    name.append(std::to_string(100000 + i)).append(".txt");
    docs.push_back({name, text, 0});
  }
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "i", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "i", &index).ok());
  for (const char* query : {"a b c", "a", "b d f", "a a b", "f e", "a b c d e f"}) {
    RequireTopKOfWholeRanking(*index, query, {10, 600, 1000});
  }
}

TEST_CASE("a bound leaves out exactly the later words a document lacks", "[rank]") {
  // Two words with document lists (rarer than 1/32 of the documents): `xq` in 150 documents,
  // `yq` in 170, both in 60 of them, among 6,000 of common words. `xq` is taken first; once
  // documents holding both have raised the k-th score above what `xq` alone can give, a
  // document's bound must still count `yq` where it holds it, and only there.
  std::mt19937_64 rng(5);
  const std::vector<std::string> filler = {"f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8"};
  std::vector<bitsift::Document> docs;
  for (int i = 0; i < 6000; ++i) {
    std::string text;
    for (size_t w = 0, length = 3 + rng() % 20; w < length; ++w) {
      text += filler[rng() % filler.size()];
      text += ' ';
    }
    const bool x = i % 40 == 0, y = i % 40 == 0 ? i % 100 < 40 : i % 37 == 1 && i < 4070;
    for (uint64_t t = x ? 1 + rng() % 4 : 0; t > 0; --t) text += "xq ";
    for (uint64_t t = y ? 1 + rng() % 6 : 0; t > 0; --t) text += "yq ";
    std::string name = "d";
    name.append(std::to_string(100000 + i)).append(".txt");
    docs.push_back({name, text, 0});
  }
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "i", {}).ok());
  std::unique_ptr<Index> index;
  REQUIRE(Index::Open(dir / "i", &index).ok());
  for (const char* query : {"xq yq", "yq xq f3", "xq yq yq"}) {
    RequireTopKOfWholeRanking(*index, query, {1, 5, 10, 30});
  }
}
