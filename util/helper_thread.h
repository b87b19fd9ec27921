// One thread that shares a caller's short tasks and stays awake between them.
//
// A query over several segments (or indexes) runs one search per segment, each a few
// microseconds when the query is light. Waking a sleeping thread costs the waker more than that
// on a 2-core guest (a futex wake-up: ~8 us, measured), and TBB's workers sleep
// between such queries. So the helper polls for work for kHelperSpinMicros after its last task
// (yielding its core to any other runnable thread as it polls; LLVM's OpenMP runtime waits
// 200 ms by default too, KMP_BLOCKTIME), and then sleeps. Only a call that took kWakeAfterMicros or
// more wakes it, after its own work (the wake-up is then a small part of it): light calls after an
// idle spell run on the caller alone, as fast as a loop, and a batch of queries keeps the helper
// polling.
//
// The caller never waits for a helper that has not started: it runs tasks itself as the helper
// does and takes back those the helper has not started (docs/design.md, "Segments and indexes
// as one").
#ifndef BITSIFT_UTIL_HELPER_THREAD_H_
#define BITSIFT_UTIL_HELPER_THREAD_H_

#include <cstddef>
#include <cstdint>
#include <functional>

namespace bitsift::util {

// After its last task (or the last call) the helper polls this long, then sleeps.
inline constexpr int64_t kHelperSpinMicros = 200000;
// A call that took this long wakes a sleeping helper (after its own work).
inline constexpr int64_t kWakeAfterMicros = 200;
// A caller whose tasks are done polls this long for the helper's, then sleeps.
inline constexpr int64_t kOwnerSpinMicros = 50;

// Calls task(0), ..., task(n - 1), each once (but see throwing below), on the calling thread and on
// the process's helper thread (started at the first call; if no thread can be started, the caller
// runs them all), and returns when all have returned.
// Tasks are taken in index order: the caller takes task 0 before the helper may take any, so put
// the largest first. If the helper is busy with another caller's tasks, or n < 2, the caller runs
// them all itself. If a task throws, no further task is started and, once the helper is done,
// one thrown exception is rethrown (tasks not started by then never run).
// Safe to call from several threads at once.
// `need` says what to do when the helper is not polling (not started yet, or asleep):
//   - kStart: start it (at the first call) and share with it from then on;
//   - kIfPolling: run every task alone. For a fresh process's short work (a one-shot query's
//     hundreds of records): on a 2-core guest, starting the thread cost the caller 0.2-0.7
//     ms and it ran its first task 0.6-4.5 ms later (the second vCPU woken), longer than the
//     work it was to share.
enum class HelperNeed { kStart, kIfPolling };
void RunShared(size_t n, const std::function<void(size_t)>& task,
               HelperNeed need = HelperNeed::kStart);

// Starts the helper thread if it has not started, or wakes it if it sleeps, so that it is
// polling by the time RunShared calls that the caller sees coming are made (a one-shot query
// about to verify and print thousands of documents). Returns at once.
void WakeHelper();

}  // namespace bitsift::util

#endif  // BITSIFT_UTIL_HELPER_THREAD_H_
