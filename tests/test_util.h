// Shared helpers for the tests: temporary directories, generated corpora, the brute-force
// oracle every fast path is compared with.
#ifndef BITSIFT_TESTS_TEST_UTIL_H_
#define BITSIFT_TESTS_TEST_UTIL_H_

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace bitsift::testing {

// A fresh directory under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "bitsift-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// The UTF-8 encoding of code point cp (no validation: surrogates are encoded as they are, which
// is how tests build ill-formed input on purpose).
inline std::string Utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// The one segment file of a freshly built index directory (fails the test if there is not
// exactly one).
inline std::string OnlySegment(const std::filesystem::path& index_dir) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(index_dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("seg-", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".bsg")
      found.push_back(e.path().string());
  }
  if (found.size() != 1) throw std::runtime_error("expected one segment in " + index_dir.string());
  return found[0];
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Words from several scripts, so generated documents exercise every tokenizer path.
inline std::vector<std::string> MixedVocabulary(size_t n, std::mt19937_64& rng) {
  static const std::vector<std::string> kSyllables = {
      "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qu", "th", "ch", "ß", "ü", "é"};
  static const std::vector<std::string> kHan = {"布", "隆", "过", "滤", "器", "数", "据", "结",
                                                "构", "搜", "索", "引", "擎", "東", "京", "行"};
  static const std::vector<std::string> kKana = {"タ", "ワ", "ー", "ひ", "ら", "が", "な", "カ"};
  static const std::vector<std::string> kCyrillic = {"при", "вет", "мир", "ёж", "дом", "кот"};
  std::set<std::string> seen;
  std::vector<std::string> words;
  std::uniform_int_distribution<int> kind(0, 9), len(1, 4);
  while (words.size() < n) {
    std::string w;
    int k = kind(rng), l = len(rng);
    for (int i = 0; i < l + (k < 6 ? 1 : 0); ++i) {
      const auto& src = k < 6 ? kSyllables : k < 8 ? kHan : k < 9 ? kKana : kCyrillic;
      w += src[rng() % src.size()];
    }
    if (k < 6 && rng() % 5 == 0) w += std::to_string(rng() % 100);
    if (k < 6 && rng() % 6 == 0) {
      // A compound: one word with parts ('.', '@', '\'') or two words ('-', "::").
      static const char* kJoins[] = {".", ".", "@", "'", "-", "::", "_"};
      w += kJoins[rng() % std::size(kJoins)];
      w += kSyllables[rng() % 9];
      w += kSyllables[rng() % kSyllables.size()];
    }
    if (rng() % 7 == 0 && k < 6)
      w[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(w[0])));
    if (seen.insert(w).second) words.push_back(w);
  }
  return words;
}

struct GeneratedDoc {
  std::string name;
  std::string text;
};

// Documents of Zipf-distributed words and log-uniform lengths (1 to max_words words),
// separated by spaces, punctuation and newlines.
inline std::vector<GeneratedDoc> GenerateCorpus(size_t docs, size_t max_words,
                                                const std::vector<std::string>& vocab,
                                                std::mt19937_64& rng) {
  std::vector<double> weights(vocab.size());
  for (size_t i = 0; i < vocab.size(); ++i) weights[i] = 1.0 / static_cast<double>(i + 1);
  std::discrete_distribution<size_t> zipf(weights.begin(), weights.end());
  std::uniform_real_distribution<double> loglen(0, std::log(static_cast<double>(max_words)));
  static const char* kSeparators[] = {" ", " ", " ", ", ", ". ", "\n", " - ", "; ", "\t"};
  std::vector<GeneratedDoc> out;
  for (size_t d = 0; d < docs; ++d) {
    GeneratedDoc doc;
    char name[64];
    std::snprintf(name, sizeof(name), "d%02zu/doc%06zu.txt", d % 37, d);
    doc.name = name;
    size_t words = static_cast<size_t>(std::exp(loglen(rng)));
    for (size_t w = 0; w < words; ++w) {
      doc.text += vocab[zipf(rng)];
      doc.text += kSeparators[rng() % 9];
    }
    out.push_back(std::move(doc));
  }
  return out;
}

// The brute-force oracle: the same tokenizer, then plain set inclusion over every document.
class Oracle {
 public:
  void Add(const std::string& text) {
    std::vector<std::string> t = tokenizer::TokenSet(text);
    docs_.emplace_back(t.begin(), t.end());
  }
  // Indices (in insertion order) of the documents containing every term.
  std::vector<uint32_t> Match(const std::vector<std::string>& terms) const {
    std::vector<uint32_t> out;
    for (uint32_t d = 0; d < docs_.size(); ++d) {
      bool all = true;
      for (const auto& t : terms) {
        if (!docs_[d].count(t)) {
          all = false;
          break;
        }
      }
      if (all) out.push_back(d);
    }
    return out;
  }
  const std::set<std::string>& doc(size_t d) const { return docs_[d]; }
  size_t size() const { return docs_.size(); }

 private:
  std::vector<std::set<std::string>> docs_;
};

}  // namespace bitsift::testing

#endif  // BITSIFT_TESTS_TEST_UTIL_H_
