// engine/pipeline/read_throttle.h
//
// ReadThrottle: --max-rate, a cap on the bytes a scan reads per second, shared by every reader
// thread, for scans of production systems that must leave the disks to their users. A token
// bucket by virtual time: each read is given the moment at which the bytes before it have used
// up the rate, and waits for it; the bucket holds at most `burst_bytes` (one read may start at
// once after an idle spell, never more). A read is throttled before it is issued, whole, so the
// cap holds over any span longer than a read's share (8 MiB chunks at 200 MB/s: 40 ms).
//
// Thread safety: Acquire from any thread; one short lock per call (per read, not per block).

#ifndef ZSIM_ENGINE_PIPELINE_READ_THROTTLE_H_
#define ZSIM_ENGINE_PIPELINE_READ_THROTTLE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace zsim::pipeline {

class ReadThrottle {
 public:
  // REQUIRES: bytes_per_second > 0.
  ReadThrottle(uint64_t bytes_per_second, uint64_t burst_bytes);

  // Waits until `bytes` more may be read, or until `*cancel` turns true (checked every 50 ms;
  // null: never).
  void Acquire(uint64_t bytes, const std::atomic<bool>* cancel);

 private:
  using Clock = std::chrono::steady_clock;
  const double ns_per_byte_;
  const Clock::duration burst_;
  std::mutex mu_;
  Clock::time_point next_;  // Guarded by mu_. When the bytes granted so far are paid for.
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_READ_THROTTLE_H_
