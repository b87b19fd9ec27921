// A lock for critical sections of a few hundred nanoseconds taken by two or three threads (a
// query's results shared with the helper thread): a waiter spins instead of sleeping in the
// kernel, as std::mutex does once it is contended (a futex wait and a context switch, each
// several microseconds on a virtual machine, for a wait of a memcpy of a chunk). After
// kSpinsBeforeYield spins it yields, so that a holder preempted on the same CPU runs.
#ifndef BITSIFT_UTIL_SPIN_LOCK_H_
#define BITSIFT_UTIL_SPIN_LOCK_H_

#include <sched.h>

#include <atomic>

namespace bitsift::util {

class SpinLock {
 public:
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpinsBeforeYield) {
          __builtin_ia32_pause();
        } else {
          spins = 0;
          ::sched_yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 1000;
  std::atomic<bool> locked_{false};
};

}  // namespace bitsift::util

#endif  // BITSIFT_UTIL_SPIN_LOCK_H_
