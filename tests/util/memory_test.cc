// PrepareHugePageHeap: the memory the heap hands out next comes in huge pages, a fault for
// each 2 MiB instead of one for each 4 KiB page.
#include "util/memory.h"

#include <malloc.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace bitsift {
namespace {

long MinorFaults() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// The kernel's count of huge-page faults that fell back to 4 KiB pages (no 2 MiB of free
// memory at hand): when it moves, small pages say nothing about PrepareHugePageHeap.
long HugePageFallbacks() {
  std::ifstream vmstat("/proc/vmstat");
  std::string name;
  long value = 0;
  while (vmstat >> name >> value) {
    if (name == "thp_fault_fallback") return value;
  }
  return -1;
}

// Exit codes of the child below.
constexpr int kHugePages = 0, kSmallPages = 1, kAskedTwice = 2, kNotPossible = 3;

// Run by the test below in a process of its own (a fresh heap: in this process, blocks that
// earlier tests freed, some with their pages given back by malloc_trim, would be handed out
// first): exits with the code that says what it found.
TEST_CASE("PrepareHugePageHeap in a fresh process (run by the test below)",
          "[.][huge-heap-child]") {
  std::string thp;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), thp);
  if (thp.find("[never]") != std::string::npos || thp.empty()) ::_exit(kNotPossible);
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  if (util::PrepareHugePageHeap(4 << 20) == 0) ::_exit(kNotPossible);  // a sanitizer's
  if (util::PrepareHugePageHeap(4 << 20) != 0) ::_exit(kAskedTwice);   // allocator
  // 32 blocks of 64 KiB, as a query's buffers: in huge pages, a fault or two; in 4 KiB pages,
  // 512.
  std::vector<void*> blocks;
  const long fallbacks = HugePageFallbacks();
  const long before = MinorFaults();
  for (int i = 0; i < 32; ++i) {
    blocks.push_back(std::malloc(64 << 10));
    std::memset(blocks.back(), i + 1, 64 << 10);
  }
  const long faults = MinorFaults() - before;
  if (faults < 64) ::_exit(kHugePages);
  if (HugePageFallbacks() != fallbacks) ::_exit(kNotPossible);
  std::fprintf(stderr, "2 MiB of fresh blocks took %ld page faults\n", faults);
  ::_exit(kSmallPages);
}

TEST_CASE("PrepareHugePageHeap: 2 MiB of fresh blocks cost a few faults, not 512", "[memory]") {
  char name[] = "bitsift_tests";
  char tag[] = "[huge-heap-child]";
  char* argv[] = {name, tag, nullptr};
  pid_t pid = 0;
  REQUIRE(::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, environ) == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == kNotPossible) {
    // ctest reports the case as skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
    std::printf(
        "SKIPPED: no transparent huge pages here (kernel, sanitizer allocator or no free 2 MiB)\n");
    return;
  }
  CHECK(WEXITSTATUS(status) == kHugePages);
}

}  // namespace
}  // namespace bitsift
