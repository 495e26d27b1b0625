// engine/base/thread_cpu.h
//
// CPU time of the calling thread (not wall time: other processes and threads do not count), for
// the codecs' timing figures and the expected time's calibration; never for a figure's value.
//
// Thread safety: reads the calling thread's clock.

#ifndef ZSIM_ENGINE_BASE_THREAD_CPU_H_
#define ZSIM_ENGINE_BASE_THREAD_CPU_H_

#include <cstdint>
#include <ctime>

namespace zsim {

inline uint64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_THREAD_CPU_H_
