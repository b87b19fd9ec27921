// libFuzzer target: the living index, stateful. The input is a sequence of operations on a small
// tree (add or rewrite a file, delete, rename), interleaved with updates (`bitsift index`, with
// or without merging) and compactions. After every update and compaction the index answers
// every query over the vocabulary (each word, each pair) exactly as a brute-force reading of the
// tree as it is, holds as many documents as the tree has files, and passes its check.
#include <bitsift/bitsift.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {

constexpr const char* kVocabulary[] = {"alpha", "beta", "gamma", "delta",
                                       "eps",   "zeta", "eta",   "theta"};
constexpr size_t kWords = sizeof(kVocabulary) / sizeof(kVocabulary[0]);
constexpr size_t kFiles = 12;     // names a0.txt .. b11.txt (two folders)
constexpr size_t kMaxSteps = 48;  // operations read from one input

std::string FileName(uint8_t b) {
  const size_t n = b % kFiles;
  return std::string(n % 2 == 0 ? "a/" : "b/") + "f" + std::to_string(n) + ".txt";
}

struct Tree {
  std::string root, index;
  std::map<std::string, std::string> files;  // the tree as it is: name -> text
  int64_t clock = 1000000000;                // mtimes given to written files, one second apart

  void Write(const std::string& name, const std::string& text) {
    const std::string path = root + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) std::abort();
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    // A distinct mtime for every write: a rewrite of the same size in the same clock tick is
    // the racy case mtime-based change detection cannot see, not what this target checks.
    struct timespec times[2] = {{clock, 0}, {clock, 0}};
    ++clock;
    if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0) std::abort();
    files[name] = text;
  }
};

// Fails the run with what differed.
[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_living_index: %s\n", what.c_str());
  std::abort();
}

// Checks the index against `files`, the tree as it was when last indexed.
void CheckAnswers(const std::string& index_path, const std::map<std::string, std::string>& files) {
  std::unique_ptr<bitsift::Index> index;
  bitsift::Status s = bitsift::Index::Open(index_path, &index);
  if (!s.ok()) Fail("open: " + s.message());
  if (!index->Check().ok()) Fail("check: " + index->Check().message());
  if (index->live_document_count() != files.size()) {
    Fail(std::to_string(index->live_document_count()) + " live documents, the tree has " +
         std::to_string(files.size()) + " files");
  }
  std::map<std::string, std::set<std::string>> terms;  // the brute-force reading
  for (const auto& [name, text] : files) {
    std::set<std::string>& t = terms[name];
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find(' ', at);
      if (end == std::string::npos) end = text.size();
      if (end > at) t.insert(text.substr(at, end - at));
      at = end + 1;
    }
  }
  for (size_t i = 0; i < kWords; ++i) {
    for (size_t j = i; j < kWords; ++j) {
      std::vector<std::string> query = {kVocabulary[i]};
      if (j != i) query.push_back(kVocabulary[j]);
      bitsift::QueryResult r;
      s = index->Query(query, {}, &r);
      if (!s.ok()) Fail("query: " + s.message());
      std::set<std::string> got, want;
      for (uint32_t id : r.documents) got.insert(index->document(id).path);
      for (const auto& [name, t] : terms) {
        bool all = true;
        for (const std::string& w : query) all = all && t.count(w) != 0;
        if (all) want.insert(name);
      }
      if (got != want) {
        Fail("query " + query[0] + (query.size() > 1 ? " " + query[1] : "") + ": " +
             std::to_string(got.size()) + " documents, the tree has " +
             std::to_string(want.size()));
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string base = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "bitsift-fuzz-living-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    return tmpl;
  }();
  Tree tree;
  tree.root = base + "/tree";
  tree.index = base + "/index";
  std::filesystem::remove_all(tree.root);
  std::filesystem::remove_all(tree.index);
  std::filesystem::create_directories(tree.root + "/a");
  std::filesystem::create_directories(tree.root + "/b");
  bitsift::IndexOptions options;
  options.threads = 1;
  bool indexed = false;
  std::map<std::string, std::string> indexed_files;  // the tree at the last update

  size_t at = 0, steps = 0;
  auto next = [&]() -> uint8_t { return at < size ? data[at++] : 0; };
  while (at < size && steps++ < kMaxSteps) {
    const uint8_t op = next();
    switch (op % 6) {
      case 0:
      case 1: {  // add or rewrite a file: up to 7 words of the vocabulary
        const std::string name = FileName(next());
        const uint8_t words = next();
        std::string text;
        for (int w = 0; w < words % 8; ++w) {
          if (!text.empty()) text += ' ';
          text += kVocabulary[next() % kWords];
        }
        tree.Write(name, text);
        break;
      }
      case 2: {  // delete
        const std::string name = FileName(next());
        if (tree.files.erase(name) != 0) std::filesystem::remove(tree.root + "/" + name);
        break;
      }
      case 3: {  // rename (over an existing file too)
        const std::string from = FileName(next()), to = FileName(next());
        if (from == to || tree.files.count(from) == 0) break;
        std::filesystem::rename(tree.root + "/" + from, tree.root + "/" + to);
        tree.files[to] = tree.files[from];
        tree.files.erase(from);
        break;
      }
      case 4: {  // update, merging by the policy or not
        options.merge = (op >> 3) & 1;
        bitsift::Status s = bitsift::BuildIndex(tree.root, tree.index, options);
        if (!s.ok()) Fail("update: " + s.message());
        indexed = true;
        indexed_files = tree.files;
        CheckAnswers(tree.index, indexed_files);
        break;
      }
      case 5: {  // compaction
        if (!indexed) break;
        bitsift::Status s = bitsift::CompactIndex(tree.index, options);
        if (!s.ok()) Fail("compaction: " + s.message());
        CheckAnswers(tree.index, indexed_files);  // the tree as at the last update
        break;
      }
    }
  }
  return 0;
}
