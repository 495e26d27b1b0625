// engine/pipeline/expected_time.h
//
// The whole scan's expected wall seconds, as the progress line shows them. Two sources:
//   - the forecast (cost_forecast.h) from nominal speeds, calibrated once codecs have run on
//     this CPU: the codecs' nominal CPU seconds are scaled by the CPU seconds the blocks coded so
//     far took against their nominal ones (bench/results/2026-12-02-eta: the nominal speeds were
//     about 2.5x slower than the bench machine). Timing only moves this estimate, never a figure.
//   - once a twentieth of the data is read, the pace: the wall seconds per byte read since the
//     first chunk was done, applied to the bytes still to read. Bytes read, not logical bytes:
//     a sparse file's holes are not read and cost nothing. Measured from the first chunk done, so
//     the wait for the sizing walk and the pipeline's filling are not taken as a cost per byte.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_
#define ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_

#include <cstdint>

#include "engine/pipeline/cost_forecast.h"

namespace zsim::pipeline {

// The pace takes over once this share of the bytes to read (1/kPaceShare) has been read since
// the first chunk was done.
inline constexpr uint64_t kPaceShare = 20;
// The codecs' calibration needs this many nominal CPU seconds of coded blocks.
inline constexpr double kCalibrationNominalSeconds = 0.05;

struct PaceState {
  double seconds = 0;       // wall seconds since the scan started
  uint64_t read_total = 0;  // data bytes the scan will read (the sizing walk's allocated bytes)
  uint64_t read_done = 0;   // data bytes read by the chunks done so far
  // The first chunk done: its wall seconds and the bytes read then. first_seconds < 0: none yet.
  double first_seconds = -1;
  uint64_t first_read_done = 0;
  // Codec work so far: the CPU seconds it took and the nominal CPU seconds of the same blocks
  // (estimate/codec_cost.h).
  double codec_cpu_seconds = 0;
  double codec_nominal_seconds = 0;
};

// The forecast with its codec CPU seconds scaled to this CPU (unchanged until at least
// kCalibrationNominalSeconds of nominal codec work has been measured).
CostForecast CalibratedForecast(const CostForecast& nominal, const PaceState& s);

// The whole scan's expected wall seconds: the pace once it holds (see above), else the elapsed
// seconds plus the calibrated forecast's share of the bytes still to read. Never less than the
// seconds already spent.
double ExpectedSeconds(const CostForecast& nominal, const PaceState& s);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_
