// engine/report/codec_speed.h
//
// How fast a setting's codec compressed, for the codec advice and the "compression ratio against
// codec speed" chart: SettingResult::codec_bytes (input bytes the codec compressed, unique blocks
// only) over codec_seconds (the time it took, summed over threads), i.e. the speed of one core.
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_REPORT_CODEC_SPEED_H_
#define ZSIM_ENGINE_REPORT_CODEC_SPEED_H_

#include "zsim/scan_result.h"

namespace zsim::report {

// Bytes per second per core; 0 when the codec was not timed (codec_seconds 0).
inline double CodecBytesPerSecond(const SettingResult& s) {
  return s.codec_seconds > 0 ? static_cast<double>(s.codec_bytes) / s.codec_seconds : 0.0;
}

// CPU seconds per GB (10^9 bytes) of input on one core; 0 when the codec was not timed.
inline double CodecCpuSecondsPerGb(const SettingResult& s) {
  return s.codec_bytes > 0 ? s.codec_seconds / (static_cast<double>(s.codec_bytes) * 1e-9) : 0.0;
}

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_CODEC_SPEED_H_
