// Embedding bitsift: build an index from in-memory documents, open it, query it.
// Uses only the public header. Run: embed_example [INDEX_PATH]
#include <bitsift/bitsift.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "embed-example.bitsift";
  std::vector<bitsift::Document> docs = {
      {"notes/bloom.txt", "A Bloom filter answers 'maybe' or 'no'.", 0},
      {"notes/exact.txt", "Verification turns maybe into an exact answer.", 0},
      {"notes/zh.txt", "布隆过滤器是一种数据结构。", 0},
  };
  bitsift::IndexSummary summary;
  bitsift::Status s = bitsift::BuildIndexFromDocuments(docs, path, {}, &summary);
  if (!s.ok()) {
    std::fprintf(stderr, "build failed: %s\n", s.message().c_str());
    return 2;
  }
  std::unique_ptr<bitsift::Index> index;
  s = bitsift::Index::Open(path, &index);
  if (!s.ok()) {
    std::fprintf(stderr, "open failed: %s\n", s.message().c_str());
    return 2;
  }
  for (const std::vector<std::string>& query : std::vector<std::vector<std::string>>{
           {"maybe"}, {"exact", "answer"}, {"过滤器"}, {"nowhere"}}) {
    bitsift::QueryResult result;
    s = index->Query(query, {}, &result);
    if (!s.ok()) {
      std::fprintf(stderr, "query failed: %s\n", s.message().c_str());
      return 2;
    }
    std::printf("%s:", query[0].c_str());
    for (uint32_t id : result.documents) std::printf(" %s", index->document(id).path.c_str());
    std::printf(" (%llu candidates)\n", static_cast<unsigned long long>(result.stats.candidates));
  }
  return 0;
}
