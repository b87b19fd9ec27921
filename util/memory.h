// Memory of a short-lived process: the heap it will touch, mapped in huge pages.
#ifndef BITSIFT_UTIL_MEMORY_H_
#define BITSIFT_UTIL_MEMORY_H_

#include <cstddef>

namespace bitsift::util {

// Whether this build runs under a sanitizer (ASan, TSan or MSan): its allocator replaces
// malloc's, and every access also touches shadow memory, whose pages fault and count in the
// resident set. Code that tunes the heap, and tests that count faults or bytes, ask this.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

// Makes the next `bytes` (rounded up to 2 MiB) that the malloc heap hands out lie in memory
// advised for transparent huge pages (MADV_HUGEPAGE), so that touching them costs a fault
// for each 2 MiB instead of one for each 4 KiB page. Meant for a process that answers one
// query and exits (the CLI's `query`): where a first touch of a page is a trip to the
// hypervisor (a paravirtualized guest: 15-35 us a page), the 40-80 fresh pages of a one-shot
// query's buffers cost it 1-2 ms, and one 2 MiB page ~90 us (docs/design.md, "One-shot
// queries").
//
// How: with glibc's allocator, a block larger than the heap's top is asked for and freed, so
// that the top reaches past a 2 MiB boundary and `bytes` beyond it; the aligned part is
// advised, and the part of the top below the boundary taken by a block that is never used
// nor freed (untouched: it costs address space, not memory). Blocks that earlier work freed
// are still handed out first (their pages are mapped already). Needs M_TRIM_THRESHOLD above
// `bytes` + 2 MiB (else a free trims the top back) and M_MMAP_THRESHOLD above the blocks
// meant to land there; the caller sets both. Where the kernel has no transparent huge pages
// for the process (THP "never"), the heap works as before. Does nothing under a sanitizer's
// allocator. Returns the bytes advised (0 if none, or if called before).
// Call it once, before the work whose memory it is for; not thread-safe against other
// threads allocating at the same time.
size_t PrepareHugePageHeap(size_t bytes);

}  // namespace bitsift::util

#endif  // BITSIFT_UTIL_MEMORY_H_
