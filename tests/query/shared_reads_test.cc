// A one-shot query that reads by copy (format::IndexFile::copy_reads) shares its many small
// reads with the process's helper thread (util::RunShared): the verification of hundreds of
// candidates (Searcher::Search) and the records of the hits that the merge of overlapping
// segments reads (IndexSet::MergeByPath). The answers must equal those of a long-running open
// (reads through the mapping, no sharing) and the brute-force oracle. Run under TSan by CI.
#include <bitsift/bitsift.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "format/index_format.h"
#include "storage/verified_file.h"
#include "test_util.h"
#include "util/helper_thread.h"

using bitsift::Index;
using bitsift::testing::Oracle;
using bitsift::testing::TempDir;

namespace {

// Long paths: many DOC_FACTS chunks, so that a few hundred hits are read by copy, record by
// record, and not switched to the mapping as a dense read (format::SegmentReader::WillNeedDocs).
std::string Name(uint32_t i) {
  std::string digits = std::to_string(1000000 + i);
  return "d/" + digits.substr(1, 3) + "/" + std::string(140, 'p') + digits;
}

// The answer's paths, in order.
std::vector<std::string> Answer(const Index& index, const std::vector<std::string>& query) {
  bitsift::QueryResult result;
  bitsift::QueryOptions options;
  options.syntax = bitsift::QuerySyntax::kWords;
  const bitsift::Status s = index.Query(query, options, &result);
  REQUIRE((s.ok() || s.code() == bitsift::Status::Code::kNotFound));
  std::vector<std::string> paths;
  for (uint32_t id : result.documents) paths.push_back(index.document(id).path);
  return paths;
}

}  // namespace

TEST_CASE("one-shot reads by copy share verification and merge reads with the helper thread",
          "[race]") {
  // 24,000 documents in two segments whose paths interleave (even ones, then odd ones), so the
  // segments' hits are merged by path. In a segment of 12,000, `xa` (300) and `yb` (267) have
  // Bloom rows (between the sparse and the exact thresholds, 94 and 375), so a query of them
  // verifies hundreds of candidates against their forward records; `mid` has an exact row.
  // `zc` (150 a segment) has few enough hits that the merge reads their records by copy.
  std::vector<bitsift::Document> even, odd;
  Oracle oracle;
  std::vector<std::string> names;
  for (uint32_t i = 0; i < 24000; ++i) {
    std::string text = "w" + std::to_string(i);
    if (i % 3 == 0) text += " mid";
    if (i % 40 == 0) text += " xa";
    if (i % 45 == 0) text += " yb";
    if (i % 80 == 0) text += " zc";
    for (uint32_t f = 0; f < i % 41; ++f) text += " f" + std::to_string(f);
    (i % 2 == 0 ? even : odd).push_back({Name(i), text, 0});
    oracle.Add(text);
    names.push_back(Name(i));
  }
  TempDir dir;
  const std::string path = dir / "index";
  bitsift::IndexOptions options;
  options.merge = false;  // keep the two segments
  REQUIRE(bitsift::UpdateDocuments(even, {}, path, options).ok());
  bitsift::IndexSummary summary;
  REQUIRE(bitsift::UpdateDocuments(odd, {}, path, options, &summary).ok());
  REQUIRE(summary.segments == 2);

  // Below the sizes that start the helper thread, these reads are shared only with a helper
  // that is polling already: have it polling.
  bitsift::util::WakeHelper();
  const std::vector<std::vector<std::string>> queries = {
      {"xa"}, {"yb"}, {"zc"}, {"xa", "yb"}, {"xa", "mid"}, {"yb", "f7"}, {"w17", "mid"}};
  std::unique_ptr<Index> mapped;
  REQUIRE(Index::Open(path, &mapped).ok());
  for (const auto& query : queries) {
    INFO("query " << query[0] << (query.size() > 1 ? " ..." : ""));
    // The oracle's answer: the names of the matching documents, in path order.
    std::vector<std::string> truth;
    for (uint32_t i : oracle.Match(query)) truth.push_back(names[i]);
    std::sort(truth.begin(), truth.end());
    REQUIRE(Answer(*mapped, query) == truth);
    // A fresh one-shot open per query (the merge reads records only before the path ranks
    // exist), reading by copy.
    bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kCopy);
    bitsift::OpenOptions one_shot;
    one_shot.one_shot = true;
    std::unique_ptr<Index> copied;
    const bitsift::Status s = Index::Open(std::vector<std::string>{path}, one_shot, &copied);
    bitsift::storage::VerifiedFile::SetOneShotReads(bitsift::storage::OneShotReads::kAuto);
    REQUIRE(s.ok());
    CHECK(Answer(*copied, query) == truth);
  }
}
