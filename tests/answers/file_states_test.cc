// Stale hits (answers/file_states): a result's file is current only while its size, mtime,
// ctime and inode are the ones recorded; every other regular file at its path is changed, and
// anything else (nothing, a directory, a symlink) vanished. The helper-thread path (many
// files) must agree with looking at each file alone.
#include "answers/file_states.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bitsift/bitsift.h"
#include "format/index_format.h"
#include "test_util.h"
#include "util/files.h"

namespace bitsift {
namespace {

using bitsift::FileState;
using testing::TempDir;
using testing::WriteFile;
namespace fs = std::filesystem;

void Build(const std::string& dir, const std::string& index) {
  IndexSummary summary;
  IndexOptions options;
  options.threads = 2;
  REQUIRE(BuildIndex(dir, index, options, &summary).ok());
}

// Every document of the set by its path within its index.
std::map<std::string, uint32_t> IdsByPath(const query::IndexSet& set) {
  std::map<std::string, uint32_t> ids;
  for (const query::IndexSet::Segment& s : set.segments()) {
    for (uint32_t local = 0; local < s.reader->doc_count(); ++local)
      ids[std::string(s.reader->path(local))] = s.first_id + local;
  }
  return ids;
}

// The file's mtime set back to `st`'s (its ctime moves on: the kernel sets it).
void RestoreMtime(const std::string& path, const struct stat& st) {
  const struct timespec times[2] = {st.st_atim, st.st_mtim};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

TEST_CASE("stale hits: a file is current only while all its recorded facts hold", "[api]") {
  TempDir dir;
  const std::string tree = dir / "tree", index = dir / "index";
  const std::vector<std::string> names = {"same.txt",    "appended.txt", "rewritten.txt",
                                          "removed.txt", "now_dir.txt",  "replaced.txt",
                                          "link.txt",    "sub/gone.txt", "sub2/touched.txt"};
  for (const std::string& n : names) {
    fs::create_directories(fs::path(tree + "/" + n).parent_path());
    WriteFile(tree + "/" + n, "alpha beta " + n + "\n");
  }
  Build(tree, index);
  struct stat before;
  REQUIRE(::stat((tree + "/rewritten.txt").c_str(), &before) == 0);
  // Same size, mtime put back: only ctime tells.
  WriteFile(tree + "/rewritten.txt", "gamma beta rewritten.txt\n");
  RestoreMtime(tree + "/rewritten.txt", before);
  WriteFile(tree + "/appended.txt", "alpha beta appended.txt\nmore\n");
  fs::remove(tree + "/removed.txt");
  fs::remove(tree + "/now_dir.txt");
  fs::create_directory(tree + "/now_dir.txt");
  // Another inode with the same bytes and mtime at the path.
  struct stat replaced;
  REQUIRE(::stat((tree + "/replaced.txt").c_str(), &replaced) == 0);
  WriteFile(tree + "/replaced.new", testing::ReadFile(tree + "/replaced.txt"));
  RestoreMtime(tree + "/replaced.new", replaced);
  fs::rename(tree + "/replaced.new", tree + "/replaced.txt");
  fs::remove(tree + "/link.txt");
  fs::create_symlink("same.txt", tree + "/link.txt");
  fs::remove_all(tree + "/sub");
  REQUIRE(::utimensat(AT_FDCWD, (tree + "/sub2/touched.txt").c_str(), nullptr, 0) == 0);

  const std::map<std::string, FileState> want = {
      {"same.txt", FileState::kCurrent},        {"appended.txt", FileState::kChanged},
      {"rewritten.txt", FileState::kChanged},   {"removed.txt", FileState::kVanished},
      {"now_dir.txt", FileState::kVanished},    {"replaced.txt", FileState::kChanged},
      {"link.txt", FileState::kVanished},       {"sub/gone.txt", FileState::kVanished},
      {"sub2/touched.txt", FileState::kChanged}};
  for (auto access : {format::IndexFile::Access::kRandom, format::IndexFile::Access::kOneShot}) {
    query::IndexSet set({index}, access);
    const std::map<std::string, uint32_t> ids = IdsByPath(set);
    REQUIRE(ids.size() == names.size());
    std::vector<uint32_t> all;
    for (const auto& [path, id] : ids) all.push_back(id);
    const std::vector<FileState> states = answers::LookAtDocumentFiles(set, all);
    REQUIRE(states.size() == all.size());
    size_t i = 0;
    for (const auto& [path, id] : ids) {
      INFO(path);
      CHECK(states[i++] == want.at(path));
      CHECK(answers::LookAtDocumentFile(set, id) == want.at(path));
    }
  }
}

TEST_CASE("stale hits: in-memory documents have no file to look at", "[api]") {
  TempDir dir;
  const std::string index = dir / "index";
  IndexSummary summary;
  REQUIRE(BuildIndexFromDocuments({{"a", "alpha"}, {"b", "beta"}}, index, {}, &summary).ok());
  query::IndexSet set({index}, format::IndexFile::Access::kRandom);
  const std::vector<FileState> states = answers::LookAtDocumentFiles(set, {0, 1});
  CHECK(states == std::vector<FileState>{FileState::kUnknown, FileState::kUnknown});
  CHECK(answers::LookAtDocumentFile(set, 1) == FileState::kUnknown);
}

TEST_CASE("stale hits: thousands of files on two threads agree with one at a time", "[race]") {
  TempDir dir;
  const std::string tree = dir / "tree", index = dir / "index";
  constexpr int kFiles = 5000;
  static_assert(kFiles > kLookStartHelperFiles);  // the helper thread takes pieces of them
  auto name = [](int i) {
    std::string n = "d";
    n += std::to_string(i % 37);
    n += "/f";
    n += std::to_string(i);
    n += ".txt";
    return n;
  };
  for (int i = 0; i < kFiles; ++i) {
    fs::create_directories(fs::path(tree + "/" + name(i)).parent_path());
    WriteFile(tree + "/" + name(i), "word" + std::to_string(i % 11) + "\n");
  }
  Build(tree, index);
  for (int i = 0; i < kFiles; i += 7) WriteFile(tree + "/" + name(i), "changed\n");
  for (int i = 3; i < kFiles; i += 11) fs::remove(tree + "/" + name(i));
  query::IndexSet set({index}, format::IndexFile::Access::kRandom);
  const std::map<std::string, uint32_t> ids = IdsByPath(set);
  REQUIRE(ids.size() == kFiles);
  std::vector<uint32_t> all;
  for (const auto& [path, id] : ids) all.push_back(id);
  const std::vector<FileState> states = answers::LookAtDocumentFiles(set, all);
  std::map<FileState, int> counts;
  for (size_t i = 0; i < all.size(); ++i) {
    ++counts[states[i]];
    REQUIRE(states[i] == answers::LookAtDocumentFile(set, all[i]));
  }
  int changed = 0, vanished = 0;
  for (int i = 0; i < kFiles; ++i) {
    if (i >= 3 && (i - 3) % 11 == 0) {
      ++vanished;
    } else if (i % 7 == 0) {
      ++changed;
    }
  }
  CHECK(counts[FileState::kVanished] == vanished);
  CHECK(counts[FileState::kChanged] == changed);
  CHECK(counts[FileState::kCurrent] == kFiles - vanished - changed);
}

}  // namespace
}  // namespace bitsift
