// Small POSIX file helpers: paths for messages, looking at many files, the cost of a page fault.
// How an index's files are read and written is storage/'s (storage/mapped_file.h,
// storage/file_writers.h).
#ifndef BITSIFT_UTIL_FILES_H_
#define BITSIFT_UTIL_FILES_H_

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace bitsift {

// Whether a first touch of a page costs this process a trap to the hypervisor, measured once per
// process (the fastest of 4 first writes to fresh anonymous pages, against kDearFaultMicros; the
// first cheap one ends the measure, so a machine where faults are cheap pays one page): about 11 us
// in a paravirtualized guest (PVM), 0.1-1 us on bare metal or hardware-assisted virtualization
// (~1.3 us with hardware-assisted virtualization, fault included). Where it does, a one-shot
// query's heap pays to be in a huge page (Index::Open with OpenOptions::one_shot:
// util::PrepareHugePageHeap); where it does not, the huge page's zeroing costs more than the
// faults it saves (with ~1.3 us faults: `bench/oneshot-ab` p50 2.63 against 2.36 ms without).
bool PageFaultsAreDear();
inline constexpr double kDearFaultMicros = 3.0;

// Looks at files 0..n-1 below the directory `root` (absolute), file i at the relative path
// path(i) (an absolute path is looked at as it is): look(i, st) receives its lstat, or
// nullptr if it cannot be looked at (vanished, or a directory on its path cannot be opened).
// Files of one directory that come one after another (sorted paths do), three or more, share
// one open of the directory (O_PATH): their fstatat() looks up the name alone (one or two are
// looked up whole). The files are looked at by:
//   - threads == kLookWithHelper: the caller and the process's helper thread
//     (util::RunShared), in pieces of kLookPiece files taken in order, for callers that wait
//     on the answer (a query's results). The caller never waits for a thread to start, and
//     below kLookStartHelperFiles files it shares only with a helper that is polling already
//     (util::HelperNeed::kIfPolling): starting a thread cost the caller 0.2-0.7 ms on a 2-core
//     guest and the thread ran 0.6-4.5 ms later (a sleeping vCPU woken), as long as looking at
//     a query's 469 files alone.
//   - otherwise, with at least kParallelLookFiles files and threads > 1, that many threads (the
//     caller's and std::threads; for long runs, an update's walk of a whole tree), each an
//     equal share of consecutive files. On 2 cores a file costs 1.4 us instead of 2.6 (kjv),
//     because threads in different directories do not contend for the same dentries.
// `path` and `look` are called from any of the threads, once per file each (path(i) before
// look(i), and up to two files ahead of it); the
// first exception either throws is rethrown once every thread has stopped (with the helper, no
// piece is started after it).
inline constexpr size_t kParallelLookFiles = 256;
inline constexpr size_t kLookPiece = 64;
inline constexpr unsigned kLookWithHelper = 0;
inline constexpr size_t kLookStartHelperFiles = 4096;
void LookAtFiles(const std::string& root, size_t n,
                 const std::function<std::string_view(size_t)>& path,
                 const std::function<void(size_t, const struct stat*)>& look, unsigned threads);

// The directory part of a path ("." if none).
std::string DirectoryOf(const std::string& path);

// `path` as an absolute path for messages: unchanged if absolute, else joined to the working
// directory (not resolved: the path may not exist).
std::string AbsoluteForMessage(const std::string& path);

}  // namespace bitsift

#endif  // BITSIFT_UTIL_FILES_H_
