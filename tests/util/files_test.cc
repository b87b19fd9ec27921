// LookAtFiles: every file looked at once, with its own lstat, on one thread or several.
// ScratchFile: what is appended is what is mapped, and nothing is left in the directory.
// MappedFile::Populate: the pages it maps are read without a fault; it reads nothing wrong.
#include "util/files.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "test_util.h"
#include "util/error.h"
#include "util/helper_thread.h"
#include "util/memory.h"

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

TEST_CASE("a scratch file maps what was appended and leaves nothing behind", "[files]") {
  TempDir dir;
  std::string expected;
  MappedFile mapped;
  {
    ScratchFile scratch(dir.path());
    // Small pieces (buffered), a piece larger than the buffer (written at once), small again.
    for (int i = 0; i < 5000; ++i) {
      const std::string piece = "record " + std::to_string(i) + ";";
      scratch.Append(piece.data(), piece.size());
      expected += piece;
    }
    const std::string large(3 << 20, 'x');
    scratch.Append(large.data(), large.size());
    expected += large;
    scratch.Append("end", 3);
    expected += "end";
    CHECK(scratch.size() == expected.size());
    mapped = scratch.Map();
    // No name in the directory, even while the file is open.
    CHECK(std::filesystem::is_empty(dir.path()));
  }
  // The mapping outlives the scratch file's object; it reads by copy too, and after a release.
  REQUIRE(mapped.size() == expected.size());
  CHECK(std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size()) == expected);
  std::string copy(16, '\0');
  mapped.Read(expected.size() - 16, 16, copy.data());
  CHECK(copy == expected.substr(expected.size() - 16));
  mapped.ReleasePages();
  CHECK(mapped.data()[0] == 'r');
  CHECK(std::filesystem::is_empty(dir.path()));
  // An empty scratch file maps to nothing.
  ScratchFile empty(dir.path());
  CHECK(empty.Map().size() == 0);
  // A directory that does not exist is an error, not a crash.
  CHECK_THROWS_AS(ScratchFile(dir / "missing"), Error);
}

// The minor page faults of this process so far.
long MinorFaults() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

TEST_CASE("Populate maps the pages of a range: reading them takes no page fault", "[files]") {
  TempDir dir;
  constexpr size_t kPage = 4096, kPages = 64;
  std::string bytes(kPages * kPage + 100, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 4096);
  WriteFile(dir / "f", bytes);
  MappedFile mapped(dir / "f");
  REQUIRE(mapped.size() == bytes.size());
  mapped.AdviseRandom();  // one page a fault: what Populate saves is visible page by page
  // Pages 8..39 (the range starts and ends inside a page): mapped at once.
  mapped.Populate(8 * kPage + 100, 31 * kPage);
  uint64_t sum = 0, expected = 0;
  const long before = MinorFaults();
  for (size_t page = 8; page < 40; ++page) sum += mapped.data()[page * kPage + 5];
  const long faults = MinorFaults() - before;
  for (size_t page = 8; page < 40; ++page)
    expected += static_cast<uint8_t>(bytes[page * kPage + 5]);
  CHECK(sum == expected);
#ifdef MADV_POPULATE_READ
  // A kernel before 5.14 refuses the advice (EINVAL): the pages then fault as before. Under a
  // sanitizer each read also touches its shadow memory, whose pages fault: not counted there.
  if (!util::kSanitizerBuild &&
      ::madvise(const_cast<uint8_t*>(mapped.data()), kPage, MADV_POPULATE_READ) == 0) {
    CHECK(faults == 0);
  }
#endif
  // Ranges past the end, empty or clipped, are ignored or clipped; the bytes read stay right.
  mapped.Populate(mapped.size(), 10);
  mapped.Populate(mapped.size() - 50, 1 << 20);
  mapped.Populate(0, 0);
  CHECK(static_cast<char>(mapped.data()[mapped.size() - 1]) == bytes.back());
  CHECK(std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size()) == bytes);
}

// The pages of `mapped` the page cache holds now (mincore).
size_t ResidentPages(const MappedFile& mapped) {
  size_t n = 0;
  for (size_t at = 0; at < mapped.size(); at += 4096) n += mapped.Resident(at) ? 1 : 0;
  return n;
}

TEST_CASE("PopulateResident maps what the page cache holds and reads nothing else", "[files]") {
  TempDir dir;
  constexpr size_t kPage = 4096, kPages = 64;
  std::string bytes(kPages * kPage + 100, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 13 + i / 4096);
  WriteFile(dir / "f", bytes);
  const size_t pages = kPages + 1;
  {
    MappedFile mapped(dir / "f");
    mapped.AdviseRandom();
    const size_t resident = ResidentPages(mapped);  // the file was just written: all, usually
    const size_t asked = mapped.PopulateResident(0, mapped.size());
#ifdef MADV_POPULATE_READ
    if (::madvise(const_cast<uint8_t*>(mapped.data()), kPage, MADV_POPULATE_READ) == 0) {
      CHECK(asked == resident * kPage);
      if (resident == pages && !util::kSanitizerBuild) {
        uint64_t sum = 0;
        const long before = MinorFaults();
        for (size_t page = 0; page < pages; ++page) sum += mapped.data()[page * kPage + 9];
        CHECK(MinorFaults() - before == 0);
        CHECK(sum > 0);
      }
    }
#endif
    (void)asked;
    CHECK(mapped.PopulateResident(mapped.size(), 10) == 0);
    CHECK(mapped.PopulateResident(0, 0) == 0);
    CHECK(std::string(reinterpret_cast<const char*>(mapped.data()), mapped.size()) == bytes);
  }
  // Drop the file from the page cache (not possible everywhere: tmpfs keeps it), then bring
  // back a few pages only: PopulateResident maps those and reads no other.
  const int fd = ::open((dir / "f").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  (void)::fdatasync(fd);
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  MappedFile mapped(dir / "f");
  if (ResidentPages(mapped) != 0) {
    WARN("the page cache kept the file; the cold part of the test is skipped");
    ::close(fd);
    return;
  }
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);  // no read-ahead around the pread
  char buffer[3 * kPage];
  REQUIRE(::pread(fd, buffer, sizeof buffer, 20 * kPage) == static_cast<ssize_t>(sizeof buffer));
  ::close(fd);
  const size_t resident = ResidentPages(mapped);
  CHECK(resident >= 3);
  CHECK(resident < pages);
  const size_t asked = mapped.PopulateResident(0, mapped.size());
  CHECK(ResidentPages(mapped) == resident);  // nothing read from the disk
#ifdef MADV_POPULATE_READ
  if (::madvise(const_cast<uint8_t*>(mapped.data()) + 20 * kPage, kPage, MADV_POPULATE_READ) == 0)
    CHECK(asked == resident * kPage);
#endif
  (void)asked;
}

}  // namespace
}  // namespace bitsift
