// RunShared: every task once, on the caller and the helper thread, from one caller or several,
// with the helper polling or asleep, and tasks that throw.
#include "util/helper_thread.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bitsift::util {
namespace {

using std::chrono::microseconds;

// Runs RunShared(n) with tasks that count their calls; returns whether a task ran on a thread
// other than the caller's. REQUIREs every task ran exactly once.
bool RunCounted(size_t n, microseconds task_time) {
  std::vector<std::atomic<int>> calls(n);
  std::atomic<bool> elsewhere{false};
  const std::thread::id caller = std::this_thread::get_id();
  RunShared(n, [&](size_t i) {
    if (task_time.count() > 0) std::this_thread::sleep_for(task_time);
    calls[i].fetch_add(1);
    if (std::this_thread::get_id() != caller) elsewhere = true;
  });
  for (size_t i = 0; i < n; ++i) REQUIRE(calls[i].load() == 1);
  return elsewhere;
}

TEST_CASE("RunShared runs every task exactly once", "[concurrent][helper]") {
  for (int round = 0; round < 50; ++round) {
    for (size_t n : {0, 1, 2, 3, 7, 64}) RunCounted(n, microseconds(0));
  }
}

TEST_CASE("RunShared's helper takes tasks while polling, sleeps when idle",
          "[concurrent][helper]") {
  // Tasks long enough that a polling helper starts one before the caller is done; the first
  // calls also wake the helper if it sleeps (each takes more than kWakeAfterMicros).
  static_assert(kWakeAfterMicros < 2000);
  int helped = 0;
  for (int round = 0; round < 20; ++round) helped += RunCounted(2, microseconds(2000));
  CHECK(helped > 0);
  // Idle past the polling window: the helper sleeps, and a light call runs on the caller alone.
  std::this_thread::sleep_for(microseconds(kHelperSpinMicros + 300000));
  CHECK_FALSE(RunCounted(8, microseconds(0)));
  // A call long enough wakes it for the calls that follow.
  RunCounted(2, microseconds(2000));
  helped = 0;
  for (int round = 0; round < 20; ++round) helped += RunCounted(2, microseconds(2000));
  CHECK(helped > 0);
}

TEST_CASE("RunShared from several threads at once", "[concurrent][helper]") {
  // The helper serves one caller at a time; the others run their tasks themselves.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&wrong] {
      for (int round = 0; round < 200; ++round) {
        std::vector<int> out(5, 0);
        RunShared(out.size(), [&](size_t i) { out[i] += static_cast<int>(i) + 1; });
        for (size_t i = 0; i < out.size(); ++i) {
          if (out[i] != static_cast<int>(i) + 1) wrong++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong.load() == 0);
}

TEST_CASE("RunShared rethrows a task's exception, on either thread", "[concurrent][helper]") {
  // Task 0 (the caller's) throws.
  CHECK_THROWS_WITH(RunShared(3,
                              [](size_t i) {
                                if (i == 0) throw std::runtime_error("task 0");
                              }),
                    "task 0");
  // Every task but the caller's first throws: the helper's exception, or the caller's own
  // after it took the rest, comes back, and no call is left running.
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> running{0};
    CHECK_THROWS_AS(RunShared(4,
                              [&](size_t i) {
                                running++;
                                if (i == 0) std::this_thread::sleep_for(microseconds(500));
                                running--;
                                if (i != 0) throw std::runtime_error("task " + std::to_string(i));
                              }),
                    std::runtime_error);
    CHECK(running.load() == 0);
  }
  // The helper still serves the calls that follow.
  int helped = 0;
  for (int round = 0; round < 20; ++round) helped += RunCounted(2, microseconds(2000));
  CHECK(helped > 0);
}

}  // namespace
}  // namespace bitsift::util
