// libFuzzer target: query parsing and answering through the public API, against a small index
// built once. The input is split on '\n' into arguments. In words mode (0.1's meaning) every
// query must either be refused as having no terms or return exactly the documents whose term
// sets contain every query term; in the query language it must parse or be refused with
// kInvalidArgument, and never fail otherwise (phrases are checked against the texts).
#include <bitsift/bitsift.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

struct Fixture {
  std::vector<bitsift::Document> docs;
  std::unique_ptr<bitsift::Index> index;
  std::vector<std::set<std::string>> doc_terms;  // by document id
  Fixture() {
    docs = {
        {"a", "Bloom filters answer maybe; exact answers need verification.", 0},
        {"b", "布隆过滤器 数据结构 東京タワー ひらがな", 0},
        {"c", "Straße STRASSE strasse ﬁnance ＡＢＣ 3.14 1,000,000 node.js foo@bar.com", 0},
        {"d", "привет мир θάλασσα שלום مرحبا नमस्ते ภาษาไทย 한국어", 0},
        {"e", "", 0},
        {"f", "common words common words bloom", 0},
    };
    const std::string path = "/tmp/bitsift-fuzz-query-" + std::to_string(::getpid());
    if (!bitsift::BuildIndexFromDocuments(docs, path, {}).ok()) std::abort();
    if (!bitsift::Index::Open(path, &index).ok()) std::abort();
    ::unlink(path.c_str());  // stays mapped
    for (uint32_t id = 0; id < index->document_count(); ++id) {
      const std::string name = index->document(id).path;
      for (const auto& d : docs) {
        if (d.name != name) continue;
        std::vector<std::string> t;
        if (!bitsift::Tokenize(d.text, &t).ok()) std::abort();
        doc_terms.emplace_back(t.begin(), t.end());
      }
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f;
  std::vector<std::string> args(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.emplace_back();
    } else {
      args.back() += static_cast<char>(data[i]);
    }
  }
  std::set<std::string> terms;
  for (const std::string& a : args) {
    std::vector<std::string> t;
    if (!bitsift::Tokenize(a, &t).ok()) std::abort();
    terms.insert(t.begin(), t.end());
  }
  bitsift::QueryOptions language;
  language.document_text = [](const bitsift::DocumentInfo& d, std::string* text) {
    for (const bitsift::Document& doc : f.docs) {
      if (doc.name != d.path) continue;
      *text = doc.text;
      return true;
    }
    return false;
  };
  bitsift::QueryResult r;
  bitsift::Status ls = f.index->Query(args, language, &r);
  if (!ls.ok() && ls.code() != bitsift::Status::Code::kInvalidArgument) std::abort();
  if (ls.ok() && !r.unreadable.empty()) std::abort();
  bitsift::QueryOptions words;
  words.syntax = bitsift::QuerySyntax::kWords;
  bitsift::Status s = f.index->Query(args, words, &r);
  if (terms.empty()) {
    if (s.code() != bitsift::Status::Code::kInvalidArgument) std::abort();
    return 0;
  }
  if (!s.ok()) std::abort();
  std::vector<uint32_t> want;
  for (uint32_t id = 0; id < f.doc_terms.size(); ++id) {
    if (std::includes(f.doc_terms[id].begin(), f.doc_terms[id].end(), terms.begin(), terms.end())) {
      want.push_back(id);
    }
  }
  if (r.documents != want) std::abort();
  return 0;
}
