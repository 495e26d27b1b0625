#include "engine/pipeline/expected_time.h"

#include <algorithm>

namespace zsim::pipeline {

CostForecast CalibratedForecast(const CostForecast& nominal, const PaceState& s) {
  CostForecast f = nominal;
  if (s.codec_nominal_seconds >= kCalibrationNominalSeconds && s.codec_cpu_seconds > 0) {
    f.codec_cpu_seconds *= s.codec_cpu_seconds / s.codec_nominal_seconds;
  }
  return f;
}

double ExpectedSeconds(const CostForecast& nominal, const PaceState& s) {
  const uint64_t total = std::max(s.read_total, s.read_done);
  const uint64_t left = total - s.read_done;
  if (s.first_seconds >= 0 && s.read_done > s.first_read_done && s.seconds > s.first_seconds &&
      s.read_done - s.first_read_done >= total / kPaceShare) {
    const double per_byte = (s.seconds - s.first_seconds) / double(s.read_done - s.first_read_done);
    return s.seconds + per_byte * double(left);
  }
  const double whole = CalibratedForecast(nominal, s).Seconds();
  const double share_left = total > 0 ? double(left) / double(total) : 1.0;
  return s.seconds + whole * share_left;
}

}  // namespace zsim::pipeline
