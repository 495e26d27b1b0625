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
  Clock::time_point begin;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Generic cell rate algorithm: a read may begin once the bytes granted before it are paid
    // for, less the burst; an idle spell earns no credit beyond the burst.
    begin = std::max(Clock::now(), next_ - burst_);
    next_ =
        std::max(next_, begin) +
        std::chrono::nanoseconds(static_cast<int64_t>(static_cast<double>(bytes) * ns_per_byte_));
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
