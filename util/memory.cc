#include "util/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace bitsift::util {

namespace {

// Whether PrepareHugePageHeap has run; the block below the first huge page, kept for the
// process's life (reachable, never used).
bool prepared = false;
void* volatile spacer = nullptr;  // (volatile: an allocation no code reads is not elided)

}  // namespace

size_t PrepareHugePageHeap(size_t bytes) {
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  if (kSanitizerBuild || bytes == 0 || prepared) return 0;
  prepared = true;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  bytes = (bytes + kHuge - 1) & ~(kHuge - 1);
  // A block larger than the top chunk grows the heap by what the top lacks: asked and freed,
  // it leaves a top that reaches past the next 2 MiB boundary and `bytes` beyond. (A free
  // block as large, left by earlier work, serves the request instead: then ask for more.)
  for (size_t ask = mallinfo2().keepcost + bytes + kHuge, tries = 0;
       mallinfo2().keepcost < bytes + kHuge && tries < 3; ask *= 2, ++tries) {
    void* probe = std::malloc(ask);
    if (probe == nullptr) return 0;
    static_cast<volatile char*>(probe)[0] = 0;  // (a block really allocated)
    std::free(probe);
  }
  // The top chunk is now [top - keepcost, top).
  const auto top = reinterpret_cast<uintptr_t>(::sbrk(0));
  const size_t keep = mallinfo2().keepcost;
  if (keep < bytes || keep > top) return 0;
  const uintptr_t free_from = top - keep;
  const uintptr_t begin = (free_from + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = top & ~(kHuge - 1);
  if (end <= begin) return 0;
  if (::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE) != 0) return 0;
  // The top's part below `begin`: one block (its header lies at free_from; the next block's
  // just below `begin`), so that the next blocks are carved from the advised pages.
  constexpr uintptr_t kHeader = 2 * sizeof(size_t);
  if (begin - free_from > 4 * kHeader) spacer = std::malloc(begin - free_from - 2 * kHeader);
  return end - begin;
#else
  (void)bytes;
  return 0;
#endif
}

}  // namespace bitsift::util
