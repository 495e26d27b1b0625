#include "engine/pipeline/read_throttle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace zsim::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// Four threads asking for 1 MiB at a time against 20 MiB/s with a 1 MiB burst: 21 MiB take at
// least 20 MiB's worth of time, one second (the burst is free), however the threads interleave.
TEST(ReadThrottleTest, ThreadsTogetherStayUnderTheRate) {
  constexpr uint64_t kMiB = 1 << 20;
  ReadThrottle throttle(20 * kMiB, kMiB);
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  std::atomic<int> left{21};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      while (left.fetch_sub(1) > 0) throttle.Acquire(kMiB, nullptr);
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_GE(seconds, 0.95);
}

TEST(ReadThrottleTest, CancelEndsTheWait) {
  ReadThrottle throttle(1000, 1000);  // 1 KB/s: a second request would wait 100 s
  throttle.Acquire(1000, nullptr);
  throttle.Acquire(100000, nullptr);  // granted at once (the burst), pays 100 s ahead
  std::atomic<bool> cancel{true};
  const Clock::time_point start = Clock::now();
  throttle.Acquire(1000, &cancel);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
}

}  // namespace
}  // namespace zsim::pipeline
