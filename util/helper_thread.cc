#include "util/helper_thread.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <system_error>
#include <thread>

namespace bitsift::util {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

// One RunShared call's tasks, on the caller's stack.
struct Job {
  size_t n = 0;
  const std::function<void(size_t)>* task = nullptr;
  std::atomic<size_t> next{0};      // the next task to take
  std::atomic<bool> failed{false};  // a task threw: take no more
  std::exception_ptr helper_error;  // written by the helper before it reports `finished`
};

// Takes and runs tasks of *job until none is left or one has thrown; returns what it threw.
std::exception_ptr Work(Job* job) {
  try {
    for (;;) {
      if (job->failed.load(std::memory_order_relaxed)) break;
      const size_t i = job->next.fetch_add(1, std::memory_order_relaxed);
      if (i >= job->n) break;
      (*job->task)(i);
    }
  } catch (...) {
    job->failed.store(true, std::memory_order_relaxed);
    return std::current_exception();
  }
  return nullptr;
}

class Helper {
 public:
  // Created at the first use and never destroyed: the thread runs until the process exits,
  // and no static destructor may pull its state away first.
  static Helper& Get() {
    static Helper* helper = [] {
      Helper* h = new Helper;
      created.store(h, std::memory_order_release);
      return h;
    }();
    return *helper;
  }
  // The helper if Get() has created it, else null (never creates it).
  static Helper* IfCreated() { return created.load(std::memory_order_acquire); }

  std::atomic_flag busy;              // set while one caller owns the helper
  std::atomic<Job*> posted{nullptr};  // the owner's job, until the helper or the owner takes it
  std::atomic<uint32_t> finished{0};  // jobs the helper has finished (it counts, owners wait)
  std::atomic<int64_t> last_post{0};  // NowMicros() of the last job posted
  std::atomic<bool> sleeping{false};  // the helper is (about to be) blocked in wakes.wait
  std::atomic<uint32_t> wakes{0};     // bumped to wake it
  bool started = false;               // the thread runs

 private:
  static inline std::atomic<Helper*> created{nullptr};
  Helper() {
    try {
      std::thread([this] { Loop(); }).detach();
      started = true;
    } catch (const std::system_error&) {
      // No thread to be had (a process limit): every call runs alone.
    }
  }

  void Loop() {
    int64_t last_job = NowMicros();
    for (;;) {
      Job* job = posted.load(std::memory_order_acquire);
      if (job != nullptr) {
        // The owner may have finished every task and taken its job back meanwhile.
        if (!posted.compare_exchange_strong(job, nullptr, std::memory_order_acq_rel)) continue;
        job->helper_error = Work(job);
        finished.fetch_add(1, std::memory_order_release);  // job may be gone after this
        finished.notify_one();
        last_job = NowMicros();
        continue;
      }
      // Idle since the last job it ran or saw posted (one the owner took back counts: queries
      // are coming).
      const int64_t idle =
          NowMicros() - std::max(last_job, last_post.load(std::memory_order_relaxed));
      if (idle < kHelperSpinMicros) {
        sched_yield();  // poll, leaving the core to any thread that has work
      } else {
        // A caller reads `sleeping` and then bumps `wakes`: if it read true, the bump comes
        // after the load of w below, and the wait returns.
        const uint32_t w = wakes.load(std::memory_order_seq_cst);
        sleeping.store(true, std::memory_order_seq_cst);
        wakes.wait(w, std::memory_order_seq_cst);
        sleeping.store(false, std::memory_order_relaxed);
        last_job = NowMicros();  // woken: calls are coming
      }
    }
  }
};

void RunAll(size_t n, const std::function<void(size_t)>& task) {
  for (size_t i = 0; i < n; ++i) task(i);
}

}  // namespace

void WakeHelper() {
  Helper& helper = Helper::Get();
  helper.last_post.store(NowMicros(), std::memory_order_relaxed);  // a call is coming: poll
  if (helper.sleeping.load(std::memory_order_seq_cst)) {
    helper.wakes.fetch_add(1, std::memory_order_seq_cst);
    helper.wakes.notify_one();
  }
}

void RunShared(size_t n, const std::function<void(size_t)>& task, HelperNeed need) {
  if (n < 2) return RunAll(n, task);
  if (need == HelperNeed::kIfPolling) {
    const Helper* h = Helper::IfCreated();
    if (h == nullptr || h->sleeping.load(std::memory_order_relaxed)) return RunAll(n, task);
  }
  Helper& helper = Helper::Get();
  if (!helper.started || helper.busy.test_and_set(std::memory_order_acquire)) {
    return RunAll(n, task);
  }
  Job job;
  job.n = n;
  job.task = &task;
  job.next.store(1, std::memory_order_relaxed);  // task 0 is the caller's
  const uint32_t finished_before = helper.finished.load(std::memory_order_relaxed);
  const int64_t start = NowMicros();
  helper.last_post.store(start, std::memory_order_relaxed);
  helper.posted.store(&job, std::memory_order_seq_cst);

  std::exception_ptr error;
  try {
    task(0);
  } catch (...) {
    job.failed.store(true, std::memory_order_relaxed);
    error = std::current_exception();
  }
  if (error == nullptr) error = Work(&job);

  // Take the job back; if the helper took it first, wait until it has finished.
  Job* expected = &job;
  if (!helper.posted.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) {
    const int64_t waiting = NowMicros();
    while (helper.finished.load(std::memory_order_acquire) == finished_before) {
      if (NowMicros() - waiting < kOwnerSpinMicros) {
        sched_yield();
      } else {
        helper.finished.wait(finished_before, std::memory_order_acquire);
      }
    }
    if (error == nullptr) error = job.helper_error;
  }
  helper.busy.clear(std::memory_order_release);
  // A sleeping helper is woken by a call that took long enough for the wake-up (~8 us of this
  // thread's time in a VM) not to matter; it then polls for the calls that follow. Light calls
  // after an idle spell run alone, as fast as without a helper.
  if (NowMicros() - start >= kWakeAfterMicros && helper.sleeping.load(std::memory_order_seq_cst)) {
    helper.wakes.fetch_add(1, std::memory_order_seq_cst);
    helper.wakes.notify_one();
  }
  if (error != nullptr) std::rethrow_exception(error);
}

}  // namespace bitsift::util
