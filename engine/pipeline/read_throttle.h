// engine/pipeline/read_throttle.h
//
// ReadThrottle: --max-rate, a cap on the bytes a scan reads per second, shared by every reader
// thread, for scans of production systems that must leave the disks to their users. A token
// bucket by virtual time, empty at the start: each read waits for the moment at which its own
// bytes and those before it are paid for at the rate, so the bytes read since the start never
// exceed rate x time (the first read of a scan waits its own share: 8 MiB at 200 MB/s, 40 ms).
// An idle spell (a CPU-bound stretch) banks at most `burst_bytes`: one read may then start at
// once, never more. A read is throttled before it is issued, whole, so over any span the cap
// holds within one burst. (Before, the first read and a burst were free and the last read was
// never paid for: 100 MiB at 10 MiB/s took 8.8 s, 12% over the cap.) AcquireAhead lets a
// reader of small reads go up to two bursts ahead: the cap then holds within three.
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

  // As Acquire, for a reader of small reads beside the ones that Acquire large ones (the cost
  // probe's records beside the workers' chunks): its bytes are paid as theirs, but it may read
  // while the bytes granted are paid up to kAheadBursts bursts later. Queued behind the
  // workers, each asking a chunk while the others wait for theirs, one record at a time got
  // about 1/(64 x threads) of the rate, and the probe's pilot answered only at the reading's end
  // (a review of session 41). The workers wait the longer for its bytes, so over any span the
  // bytes read stay within 1 + kAheadBursts bursts of the cap.
  static constexpr int kAheadBursts = 2;
  void AcquireAhead(uint64_t bytes, const std::atomic<bool>* cancel);

  // The bytes asked for so far, by every caller (a cancelled wait's too).
  uint64_t requested() const { return requested_.load(std::memory_order_relaxed); }

 private:
  using Clock = std::chrono::steady_clock;
  const double ns_per_byte_;
  const Clock::duration burst_;
  std::mutex mu_;
  Clock::time_point next_;  // Guarded by mu_. When the bytes granted so far are paid for.
  // The time the bytes may be read: the bytes granted so far paid for, less `ahead`.
  void Wait(uint64_t bytes, Clock::duration ahead, const std::atomic<bool>* cancel);

  std::atomic<uint64_t> requested_{0};
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_READ_THROTTLE_H_
