// LookAtFiles: every file looked at once, with its own lstat, on one thread or several.
#include "util/files.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"
#include "util/error.h"
#include "util/helper_thread.h"

namespace bitsift {
using testing::TempDir;
using testing::WriteFile;
namespace {

// A tree of `dirs` directories of `per_dir` files each (file j of directory d holds d + j + 1
// bytes), plus a directory of one file; returns the sorted relative paths and their sizes.
void MakeTree(const TempDir& root, int dirs, int per_dir, std::vector<std::string>* paths,
              std::vector<off_t>* sizes) {
  for (int d = 0; d < dirs; ++d) {
    std::string dir = "d";
    dir += std::to_string(100 + d);
    dir += "/sub";
    std::filesystem::create_directories(root / dir);
    for (int j = 0; j < per_dir; ++j) {
      const std::string rel = dir + "/f" + std::to_string(100 + j);
      WriteFile(root / rel, std::string(d + j + 1, 'x'));
      paths->push_back(rel);
      sizes->push_back(d + j + 1);
    }
  }
  std::filesystem::create_directories(root / "z");
  WriteFile(root / "z/only", "abc");
  paths->push_back("z/only");
  sizes->push_back(3);
}

void Check(const std::string& root, const std::vector<std::string>& paths,
           const std::vector<off_t>& sizes, unsigned threads) {
  const size_t n = paths.size();
  std::unique_ptr<std::atomic<int>[]> calls(new std::atomic<int>[n]);
  std::unique_ptr<std::atomic<int>[]> path_calls(new std::atomic<int>[n]);
  for (size_t i = 0; i < n; ++i) calls[i] = path_calls[i] = 0;
  std::vector<off_t> seen(n, -1);  // each slot written by the one call for its file
  LookAtFiles(
      root, n,
      [&](size_t i) -> std::string_view {
        path_calls[i]++;
        return paths[i];
      },
      [&](size_t i, const struct stat* st) {
        calls[i]++;
        if (st != nullptr) seen[i] = st->st_size;
      },
      threads);
  for (size_t i = 0; i < n; ++i) {
    INFO(paths[i]);
    CHECK(calls[i] == 1);
    CHECK(path_calls[i] == 1);   // a path is read once (a record a result, in a query)
    CHECK(seen[i] == sizes[i]);  // -1: looked at as missing
  }
}

TEST_CASE("LookAtFiles looks at every file once, serially and in parallel", "[files][race]") {
  TempDir root;
  std::vector<std::string> paths;
  std::vector<off_t> sizes;
  MakeTree(root, 30, 20, &paths, &sizes);  // 601 files: above kParallelLookFiles
  REQUIRE(paths.size() >= kParallelLookFiles);
  // A file that is not there, one in a directory that is not there, and an absolute path.
  paths.insert(paths.begin() + 5, "d100/sub/f1000");
  sizes.insert(sizes.begin() + 5, -1);
  paths.push_back("nodir/x");
  sizes.push_back(-1);
  paths.push_back(root / "z/only");
  sizes.push_back(3);
  // A file of the root itself, a directory of two files (looked up whole), one of three
  // (opened), a directory that is not there for two files and for three (its open fails), and
  // an absolute path after them.
  WriteFile(root / "top", "1234");
  WriteFile(root / "two/a", "12");
  WriteFile(root / "two/b", "12345");
  WriteFile(root / "three/a", "1");
  WriteFile(root / "three/b", "12");
  WriteFile(root / "three/c", "123");
  const std::vector<std::pair<std::string, off_t>> more = {
      {"top", 4},      {"two/a", 2},    {"two/b", 5},    {"three/a", 1},
      {"three/b", 2},  {"three/c", 3},  {"gone/a", -1},  {"gone/b", -1},
      {"gone3/a", -1}, {"gone3/b", -1}, {"gone3/c", -1}, {root / "two/b", 5}};
  for (const auto& [path, size] : more) {
    paths.push_back(path);
    sizes.push_back(size);
  }
  SECTION("one thread") { Check(root.path(), paths, sizes, 1); }
  SECTION("two threads") { Check(root.path(), paths, sizes, 2); }
  SECTION("the caller and the helper thread") {
    util::WakeHelper();  // below kLookStartHelperFiles, only a polling helper shares
    Check(root.path(), paths, sizes, kLookWithHelper);
  }
  SECTION("more threads than directories") { Check(root.path(), paths, sizes, 64); }
  SECTION("few files stay on the calling thread") {
    std::vector<std::string> few(paths.begin(), paths.begin() + 10);
    std::vector<off_t> few_sizes(sizes.begin(), sizes.begin() + 10);
    Check(root.path(), few, few_sizes, 2);
  }
  SECTION("a root that cannot be opened: absolute paths") {
    // Every file is missing then, but those named by their absolute paths.
    std::vector<off_t> missing(sizes.size(), -1);
    for (size_t i = 0; i < paths.size(); ++i) {
      if (paths[i][0] == '/') missing[i] = sizes[i];
    }
    Check(root / "gone", paths, missing, 2);
  }
}

TEST_CASE("LookAtFiles rethrows what a callback throws on any thread, once all have stopped",
          "[files][race]") {
  TempDir root;
  std::vector<std::string> paths;
  std::vector<off_t> sizes;
  MakeTree(root, 30, 20, &paths, &sizes);
  const size_t n = paths.size();
  // A damaged record (an index's path() throws Error(kCorrupt)) in the first share, in the
  // last (a helper thread's), or in every one.
  for (size_t bad : {size_t{3}, n - 2, n}) {
    for (unsigned threads : {1u, 2u, 8u, kLookWithHelper}) {
      INFO("bad " << bad << ", threads " << threads);
      std::atomic<size_t> looked{0};
      if (threads == kLookWithHelper) util::WakeHelper();
      auto path = [&](size_t i) -> std::string_view {
        if (bad == n || i == bad)
          throw Error(ErrorKind::kCorrupt, "damaged path " + std::to_string(i));
        return paths[i];
      };
      try {
        LookAtFiles(
            root.path(), n, path, [&](size_t, const struct stat*) { looked++; }, threads);
        FAIL("no exception");
      } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::kCorrupt);
        CHECK(std::string(e.what()).find("damaged path") != std::string::npos);
      }
      CHECK(looked.load() < n);
    }
  }
}
}  // namespace
}  // namespace bitsift
