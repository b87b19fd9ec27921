// ScratchFile: what is appended is what is mapped, and nothing is left in the directory.
// MappedFile::Populate: the pages it maps are read without a fault; it reads nothing wrong.
// MappedFile::PopulateResident: it maps what the page cache holds and reads nothing else.
#include "storage/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "storage/file_writers.h"
#include "test_util.h"
#include "util/error.h"
#include "util/memory.h"

namespace bitsift::storage {
using testing::TempDir;
using testing::WriteFile;
namespace {

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
}  // namespace bitsift::storage
