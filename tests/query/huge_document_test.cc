// Documents with more than kMaxSignatureTerms Bloom terms live in a band without Bloom rows
// (candidates for every Bloom term, decided by verification): answers stay exact, `check`
// accepts the index, and such a document costs no rows.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "bitsift/bitsift.h"
#include "format/forward_store.h"
#include "format/index_format.h"
#include "test_util.h"

using bitsift::testing::TempDir;

namespace {
std::vector<std::string> Paths(const bitsift::Index& index, std::vector<std::string> q) {
  bitsift::QueryResult r;
  REQUIRE(index.Query(q, {}, &r).ok());
  std::vector<std::string> out;
  for (uint32_t id : r.documents) out.push_back(index.document(id).path);
  return out;
}
}  // namespace

TEST_CASE("a document too large for signatures is found exactly", "[oracle][huge]") {
  // sparse_max_df + 1 copies of the huge document, so that its terms have Bloom bits (a term
  // of at most sparse_max_df documents has a sparse row instead), and enough small documents
  // that they are in under 1/32 of all (such terms get exact rows).
  const uint64_t n = bitsift::format::kMaxSignatureTerms + 5000;
  bitsift::IndexOptions options;
  options.sparse_max_df = 16;
  options.positions = false;  // (under 16 MiB of text, every term's positions would be kept)
  const uint32_t copies = options.sparse_max_df + 1;
  std::string huge;
  huge.reserve(n * 9);
  for (uint64_t i = 0; i < n; ++i) {
    huge += 'h';
    huge += std::to_string(i);
    huge += ' ';
  }
  huge += "shared common";
  std::vector<bitsift::Document> docs = {{"a.txt", "shared alpha h17 common", 0},
                                         {"b.txt", "beta common", 0},
                                         {"c.txt", "gamma h99999 shared", 0}};
  for (uint32_t i = 0; i < 40 * copies; ++i)
    docs.push_back({"filler" + std::to_string(i) + ".txt", "filler words", 0});
  using V = std::vector<std::string>;
  V huge_names;
  for (uint32_t i = 0; i < copies; ++i) {
    huge_names.push_back("huge" + std::to_string(100 + i) + ".txt");  // sorted as numbered
    docs.push_back({huge_names.back(), huge, 0});
  }
  auto with_huge = [&](V v) {
    v.insert(v.end(), huge_names.begin(), huge_names.end());
    std::sort(v.begin(), v.end());
    return v;
  };
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "index", options).ok());
  std::unique_ptr<bitsift::Index> index;
  REQUIRE(bitsift::Index::Open(dir / "index", &index).ok());
  REQUIRE(index->Check().ok());
  bitsift::IndexStats st = index->Stats();
  // Every term is counted once: exact rows, Bloom rows (and a list), or a list only; the huge
  // documents' terms are Bloom terms.
  CHECK(st.exact_terms + st.bloom_terms + st.sparse_terms == st.terms);
  CHECK(st.bloom_terms >= n);
  bool verify_only_band = false;
  for (const auto& b : st.bands)
    verify_only_band = verify_only_band || (b.width == 0 && b.documents == copies);
  CHECK(verify_only_band);
  CHECK(Paths(*index, {"h5"}) == with_huge({}));
  CHECK(Paths(*index, {"h17"}) == with_huge({"a.txt"}));
  CHECK(Paths(*index, {"h17", "alpha"}) == V{"a.txt"});
  CHECK(Paths(*index, {"shared"}) == with_huge({"a.txt", "c.txt"}));
  CHECK(Paths(*index, {"h99999", "gamma"}) == V{"c.txt"});
  CHECK(Paths(*index, {"h99999"}) == with_huge({"c.txt"}));
  CHECK(Paths(*index, {"beta"}) == V{"b.txt"});
  std::string last = "h";
  last += std::to_string(n - 1);
  CHECK(Paths(*index, {last, "common"}) == with_huge({}));
  CHECK(Paths(*index, {"nowhere"}).empty());
  // Far fewer index bytes than the documents' terms would cost as 64 signature columns (the
  // huge documents' terms are Bloom terms: since format 10 each has its list of 17 ids too).
  CHECK(st.file_bytes < n * 64);
}
