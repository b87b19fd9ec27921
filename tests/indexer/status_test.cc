// CompareWithTree (`bitsift status`): after random changes to a tree, it predicts exactly what
// the next update does (added, changed, removed), including files an update would skip.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <random>

#include "bitsift/bitsift.h"
#include "test_util.h"

using bitsift::IndexOptions;
using bitsift::IndexSummary;
using bitsift::TreeStatus;
using bitsift::testing::TempDir;
using bitsift::testing::WriteFile;
namespace fs = std::filesystem;

TEST_CASE("status predicts the next update's added, changed and removed", "[status]") {
  TempDir dir;
  const std::string tree = dir / "tree";
  std::mt19937 rng(11);
  std::vector<std::string> files;
  for (int i = 0; i < 300; ++i) {
    files.push_back(std::string("d") + std::to_string(i % 7) + "/f" + std::to_string(i));
    WriteFile(tree + "/" + files.back(), std::string("text ") + std::to_string(i));
  }
  IndexOptions options;
  options.max_file_size = 1000;
  REQUIRE(bitsift::BuildIndex(tree, tree + "/.bitsift", options).ok());
  TreeStatus st;
  REQUIRE(bitsift::CompareWithTree(tree + "/.bitsift", &st).ok());
  CHECK(st.documents == 300);
  CHECK(st.unchanged == 300);
  CHECK(st.added.empty());
  CHECK(st.changed.empty());
  CHECK(st.removed.empty());
  for (int round = 0; round < 4; ++round) {
    INFO("round " << round);
    std::vector<std::string> added, changed, removed;
    for (int k = 0; k < 30; ++k) {
      const std::string& f = files[std::uniform_int_distribution<size_t>(0, files.size() - 1)(rng)];
      const std::string path = tree + "/" + f;
      switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
        case 0:
          fs::remove(path);
          break;
        case 1:
          WriteFile(path, std::string("rewritten ") + std::to_string(k));
          break;
        case 2:  // a new file
          WriteFile(path + "-new" + std::to_string(round), "new text");
          break;
        case 3:  // a new binary file: an update skips it, so it is not "added"
          WriteFile(path + "-bin" + std::to_string(round), std::string("a\0b", 3));
          break;
        case 4:  // grown past the size limit: an update removes it
          WriteFile(path, std::string(2000, 'x'));
          break;
        case 5:  // only the ctime moves: changed for both
          ::chmod(path.c_str(), 0600);
          break;
      }
    }
    REQUIRE(bitsift::CompareWithTree(tree + "/.bitsift", &st).ok());
    CHECK(std::is_sorted(st.added.begin(), st.added.end()));
    CHECK(std::is_sorted(st.removed.begin(), st.removed.end()));
    IndexSummary summary;
    REQUIRE(bitsift::BuildIndex(tree, tree + "/.bitsift", options, &summary).ok());
    CHECK(st.added.size() == summary.added);
    CHECK(st.changed.size() == summary.changed);
    CHECK(st.removed.size() == summary.removed);
    CHECK(st.unchanged == summary.unchanged);
    REQUIRE(bitsift::CompareWithTree(tree + "/.bitsift", &st).ok());
    CHECK(st.added.size() + st.changed.size() + st.removed.size() == 0);
    CHECK(st.documents == summary.documents);
  }
  // An index of in-memory documents has no tree.
  REQUIRE(bitsift::BuildIndexFromDocuments({{"a", "b", 0}}, dir / "mem", {}).ok());
  CHECK(bitsift::CompareWithTree(dir / "mem", &st).code() ==
        bitsift::Status::Code::kInvalidArgument);
  CHECK(bitsift::CompareWithTree(dir / "none", &st).code() == bitsift::Status::Code::kNotFound);
}
