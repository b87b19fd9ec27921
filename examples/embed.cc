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
  // Phrases are checked in the documents' text; in-memory documents have no files, so the
  // embedder says where their texts are.
  bitsift::QueryOptions options;
  options.document_text = [&docs](const bitsift::DocumentInfo& d, std::string* text) {
    for (const bitsift::Document& doc : docs) {
      if (doc.name == d.path) {
        *text = doc.text;
        return true;
      }
    }
    return false;
  };
  bitsift::LineOptions lines;
  lines.document_text = options.document_text;
  for (const char* text : {"maybe", "exact answer", "\"exact answer\"", "过滤器", "bloom OR exact",
                           "answer* -bloom", "nowhere"}) {
    bitsift::ParsedQuery query;
    bitsift::QueryError error;
    s = bitsift::ParsedQuery::Parse(text, bitsift::QuerySyntax::kLanguage, &query, &error);
    if (!s.ok()) {
      std::fprintf(stderr, "bad query at byte %zu: %s\n", error.position, error.reason.c_str());
      return 2;
    }
    bitsift::QueryResult result;
    s = index->Query(query, options, &result);
    if (!s.ok()) {
      std::fprintf(stderr, "query failed: %s\n", s.message().c_str());
      return 2;
    }
    std::printf("%s -> %s:", text, query.ToString().c_str());
    for (uint32_t id : result.documents) std::printf(" %s", index->document(id).path.c_str());
    std::printf(" (%llu candidates)\n", static_cast<unsigned long long>(result.stats.candidates));
    // A snippet: the first matching line, its matches in [brackets].
    if (!result.documents.empty()) {
      std::vector<bitsift::LineGroup> groups;
      s = index->MatchingLines(result.documents[0], query, lines, &groups);
      if (s.ok() && !groups.empty()) {
        const bitsift::MatchLine& line = groups[0].lines[0];
        std::string snippet;
        size_t at = 0;
        for (const bitsift::LineSpan& span : line.spans) {
          snippet += line.text.substr(at, span.start - at) + "[" +
                     line.text.substr(span.start, span.end - span.start) + "]";
          at = span.end;
        }
        std::printf("  line %llu: %s%s\n", static_cast<unsigned long long>(line.number),
                    snippet.c_str(), line.text.substr(at).c_str());
      }
    }
  }
  return 0;
}
