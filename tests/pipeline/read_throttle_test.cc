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
// least 21 MiB's worth of time (the bucket starts empty), however the threads interleave.
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
  EXPECT_GE(seconds, 1.0);
}

TEST(ReadThrottleTest, CancelEndsTheWait) {
  ReadThrottle throttle(1000, 1000);  // 1 KB/s: this request would wait 100 s
  std::atomic<bool> cancel{true};
  const Clock::time_point start = Clock::now();
  throttle.Acquire(100000, &cancel);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
}

// The bucket starts empty and every read waits for its own bytes: 5 MiB read at 10 MiB/s take
// at least half a second from the start, the first read included (before, the first read and a
// burst were free: 0.3 s, 60% over the cap on a short scan). After an idle spell one read (the
// burst) goes at once.
TEST(ReadThrottleTest, TheBytesReadNeverRunAheadOfTheRateAndIdleBanksOneBurst) {
  constexpr uint64_t kMiB = 1 << 20;
  ReadThrottle throttle(10 * kMiB, kMiB);
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < 5; ++i) throttle.Acquire(kMiB, nullptr);
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - start).count(), 0.49);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // idle: banks the 1 MiB burst
  const Clock::time_point after_idle = Clock::now();
  throttle.Acquire(kMiB, nullptr);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - after_idle).count(), 0.09);
  throttle.Acquire(kMiB, nullptr);  // the burst is spent: this one waits its 0.1 s
  EXPECT_GE(std::chrono::duration<double>(Clock::now() - after_idle).count(), 0.09);
}

// A reader of small reads beside the workers (the cost probe) is not queued behind a worker's
// chunk: with a worker waiting 1 s for its 1 MiB at 1 MiB/s, a 4 KiB AcquireAhead goes at once
// (Acquire would wait behind the worker); its bytes are still paid, the worker's next MiB waits
// for them. And it may run at most kAheadBursts bursts ahead: 3 MiB of AcquireAhead at 1 MiB/s
// with 1 MiB bursts take at least 1 s.
TEST(ReadThrottleTest, AnAheadReaderIsNotQueuedBehindTheWorkersButStaysWithinTwoBursts) {
  constexpr uint64_t kMiB = 1 << 20;
  {
    ReadThrottle throttle(kMiB, kMiB);
    std::atomic<bool> worker_asked{false};
    std::thread worker([&] {
      worker_asked = true;
      throttle.Acquire(kMiB, nullptr);
    });
    while (!worker_asked) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the worker waits its 1 s
    const Clock::time_point start = Clock::now();
    throttle.AcquireAhead(4096, nullptr);
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 0.5);
    worker.join();
    EXPECT_EQ(throttle.requested(), kMiB + 4096);
  }
  {
    ReadThrottle throttle(kMiB, kMiB);
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < 3 * 16; ++i) throttle.AcquireAhead(kMiB / 16, nullptr);
    EXPECT_GE(std::chrono::duration<double>(Clock::now() - start).count(), 0.99);
  }
}

}  // namespace
}  // namespace zsim::pipeline
