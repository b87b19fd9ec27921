// Documents with more than kMaxSignatureTerms Bloom terms live in a band without Bloom rows
// (candidates for every Bloom term, decided by verification): answers stay exact, `check`
// accepts the index, and such a document costs no rows.
#include <catch2/catch.hpp>
#include <string>

#include "bitsift/bitsift.h"
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
  const uint64_t n = bitsift::format::kMaxSignatureTerms + 5000;
  std::string huge;
  huge.reserve(n * 9);
  for (uint64_t i = 0; i < n; ++i) {
    huge += 'h';
    huge += std::to_string(i);
    huge += ' ';
  }
  huge += "shared common";
  std::vector<bitsift::Document> docs = {{"huge.txt", huge, 0},
                                         {"a.txt", "shared alpha h17 common", 0},
                                         {"b.txt", "beta common", 0},
                                         {"c.txt", "gamma h99999 shared", 0}};
  TempDir dir;
  REQUIRE(bitsift::BuildIndexFromDocuments(docs, dir / "index", {}).ok());
  std::unique_ptr<bitsift::Index> index;
  REQUIRE(bitsift::Index::Open(dir / "index", &index).ok());
  REQUIRE(index->Check().ok());
  bitsift::IndexStats st = index->Stats();
  bool verify_only_band = false;
  for (const auto& b : st.bands)
    verify_only_band = verify_only_band || (b.width == 0 && b.documents == 1);
  CHECK(verify_only_band);
  using V = std::vector<std::string>;
  CHECK(Paths(*index, {"h5"}) == V{"huge.txt"});
  CHECK(Paths(*index, {"h17"}) == V{"a.txt", "huge.txt"});
  CHECK(Paths(*index, {"h17", "alpha"}) == V{"a.txt"});
  CHECK(Paths(*index, {"shared"}) == V{"a.txt", "c.txt", "huge.txt"});
  CHECK(Paths(*index, {"h99999", "gamma"}) == V{"c.txt"});
  CHECK(Paths(*index, {"h99999"}) == V{"c.txt", "huge.txt"});
  CHECK(Paths(*index, {"beta"}) == V{"b.txt"});
  std::string last = "h";
  last += std::to_string(n - 1);
  CHECK(Paths(*index, {last, "common"}) == V{"huge.txt"});
  CHECK(Paths(*index, {"nowhere"}).empty());
  // Far fewer index bytes than the document's terms would cost as 64 signature columns.
  CHECK(st.file_bytes < n * 40);
}
