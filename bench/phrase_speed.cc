// Phrase verification cost:
//   build/phrase_speed INDEX_DIR QUERIES_FILE
// answers every query of FILE (the query language, one per line) over every segment of the
// index, reading candidate texts from the indexed directory, and prints per query and in total:
// matches, the candidates of the terms alone, texts read, bytes tokenized, and the time spent
// re-reading and tokenizing (per candidate and per byte), and the phrase tests decided by the
// records' positions instead.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/bench_util.h"
#include "query/index_set.h"
#include "query/query_eval.h"
#include "query/query_parser.h"

using namespace bitsift;

int main(int argc, char** argv) {
  if (!bitsift::bench::Arguments(argc, 2, "build/phrase_speed INDEX_DIR QUERIES_FILE")) return 2;
  const char* index_dir = argv[1];
  const char* queries = argv[2];
  query::IndexSet set({index_dir});
  const std::string root = set.indexes()[0].root;
  std::ifstream in(queries);
  uint64_t total_matches = 0, total_candidates = 0, total_texts = 0, total_bytes = 0;
  uint64_t total_positions = 0;
  double total_phrase_us = 0, total_us = 0;
  std::printf("%-40s %8s %10s %9s %8s %12s %10s %10s\n", "query", "matches", "and-only",
              "positions", "texts", "bytes", "phrase ms", "total ms");
  for (std::string line; std::getline(in, line);) {
    query::ParsedQuery q = query::ParseQueryString(line, query::QueryMode::kLanguage);
    if (!q.ok()) continue;
    uint64_t matches = 0, texts = 0, bytes = 0, and_only = 0, positions = 0;
    double phrase_us = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const query::IndexSet::Segment& s : set.segments()) {
      query::EvalOptions options;
      options.deleted = s.deleted.bits();
      options.text = [&](uint32_t id, std::string* text) {
        *text = bitsift::bench::ReadWholeFile(root + "/" + std::string(s.reader->path(id)));
        return true;
      };
      query::EvalStats stats;
      query::EvalResult r = query::Evaluate(*s.reader, *s.searcher, q.root, options, &stats);
      matches += r.documents.size();
      texts += stats.phrase_candidates;
      positions += stats.phrase_positions;
      bytes += stats.text_bytes;
      phrase_us += stats.phrase_us;
      and_only += stats.candidates - stats.false_positives;
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-40.40s %8llu %10llu %9llu %8llu %12llu %10.1f %10.1f\n", line.c_str(),
                static_cast<unsigned long long>(matches), static_cast<unsigned long long>(and_only),
                static_cast<unsigned long long>(positions), static_cast<unsigned long long>(texts),
                static_cast<unsigned long long>(bytes), phrase_us / 1000, us / 1000);
    total_matches += matches;
    total_candidates += and_only;
    total_texts += texts;
    total_positions += positions;
    total_bytes += bytes;
    total_phrase_us += phrase_us;
    total_us += us;
  }
  std::printf(
      "total: matches %llu, term-AND answers %llu, decided by positions %llu, texts read %llu "
      "(%.1f MB), phrase time %.0f ms of %.0f ms\nper text %.1f us, %.1f MB/s\n",
      static_cast<unsigned long long>(total_matches),
      static_cast<unsigned long long>(total_candidates),
      static_cast<unsigned long long>(total_positions),
      static_cast<unsigned long long>(total_texts), total_bytes / 1e6, total_phrase_us / 1000,
      total_us / 1000, total_texts ? total_phrase_us / total_texts : 0.0,
      total_phrase_us > 0 ? total_bytes / total_phrase_us : 0.0);
  return 0;
}
