#include "engine/pipeline/read_throttle.h"

#include <algorithm>
#include <thread>

namespace zsim::pipeline {

ReadThrottle::ReadThrottle(uint64_t bytes_per_second, uint64_t burst_bytes)
    : ns_per_byte_(1e9 / static_cast<double>(bytes_per_second)),
      burst_(std::chrono::nanoseconds(
          static_cast<int64_t>(static_cast<double>(burst_bytes) * ns_per_byte_))),
      next_(Clock::now()) {}

void ReadThrottle::Acquire(uint64_t bytes, const std::atomic<bool>* cancel) {
  Wait(bytes, Clock::duration::zero(), cancel);
}

void ReadThrottle::AcquireAhead(uint64_t bytes, const std::atomic<bool>* cancel) {
  Wait(bytes, kAheadBursts * burst_, cancel);
}

void ReadThrottle::Wait(uint64_t bytes, Clock::duration ahead, const std::atomic<bool>* cancel) {
  requested_.fetch_add(bytes, std::memory_order_relaxed);
  Clock::time_point begin;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A token bucket in virtual time: `next_` is when the bytes granted so far are paid for. A
    // read begins once its own bytes are paid too (less `ahead`), so the bytes read from the
    // start never run ahead of the rate by more; an idle spell banks at most the burst (then one
    // read goes at once).
    next_ = std::max(next_, Clock::now() - burst_);
    next_ +=
        std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(bytes) * ns_per_byte_));
    begin = next_ - ahead;
  }
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (now >= begin) return;
    if (cancel && cancel->load(std::memory_order_relaxed)) return;
    std::this_thread::sleep_for(
        std::min<Clock::duration>(begin - now, std::chrono::milliseconds(50)));
  }
}

}  // namespace zsim::pipeline
