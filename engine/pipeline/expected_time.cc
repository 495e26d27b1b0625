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

CostForecast MeasuredForecast(const CostForecast& nominal, const ProbeFigures& probe) {
  CostForecast f = nominal;
  f.codec_cpu_seconds = probe.unique_bytes * probe.codec_cpu_per_byte;
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

namespace {

// The unique bytes the probe expects beyond those coded, at most the bytes left to read. Once
// the scan has coded more unique bytes than the probe expected in the whole tree, the probe's
// unique share is proven low (/usr/include under --compression all: 35.6 MB expected, 48 MB
// coded by 54% of the reading, the work left then taken as none and the ETA shown as 0.01 s for
// half the scan): the bytes left are then taken to be unique at the share read so far.
bool ProbeUniqueProvenLow(const PaceState& s, const ProbeFigures& probe) {
  return double(s.unique_done) > probe.unique_bytes && s.read_done > 0;
}

double UniqueLeft(const PaceState& s, const ProbeFigures& probe) {
  const uint64_t total = std::max(s.read_total, s.read_done);
  const double bytes_left = double(total - s.read_done);
  if (ProbeUniqueProvenLow(s, probe)) {
    return bytes_left * std::min(1.0, double(s.unique_done) / double(s.read_done));
  }
  return std::clamp(probe.unique_bytes - double(s.unique_done), 0.0, bytes_left);
}

}  // namespace

double CodecWorkLeft(const PaceState& s, const ProbeFigures& probe) {
  const double per_byte = UniqueLeft(s, probe) * probe.codec_cpu_per_byte;
  if (ProbeUniqueProvenLow(s, probe)) return per_byte;  // the probe's whole is spent: no base
  const double whole =
      std::max(0.0, probe.unique_bytes * probe.codec_cpu_per_byte - s.codec_cpu_seconds);
  return std::clamp(whole, per_byte / kCodecLeftBound, per_byte * kCodecLeftBound);
}

double WorkLeft(const PaceState& s, const ProbeFigures& probe) {
  const uint64_t total = std::max(s.read_total, s.read_done);
  return double(total - s.read_done) * kReadWorkPerByte + CodecWorkLeft(s, probe);
}

double CodecShare(const PaceState& s, const ProbeFigures& probe) {
  const double codecs = s.codec_cpu_seconds + CodecWorkLeft(s, probe);
  const double whole = double(std::max(s.read_total, s.read_done)) * kReadWorkPerByte + codecs;
  return whole > 0 ? codecs / whole : 0;
}

double ProbeCpuAfter(const PaceState& s, const ProbeFigures& probe, double since) {
  if (s.probe_started_seconds < 0 || probe.run_seconds <= 0) return 0;
  const double after =
      s.probe_started_seconds + probe.run_seconds - std::max(since, s.probe_started_seconds);
  return probe.cpu_seconds * std::clamp(after / probe.run_seconds, 0.0, 1.0);
}

double ExpectedSeconds(const PaceState& s, const ProbeFigures& probe, int threads) {
  const double left = WorkLeft(s, probe);
  const double done = double(s.read_done) * kReadWorkPerByte + s.codec_cpu_seconds;
  struct Start {
    double seconds;
    uint64_t read_done;
    double codec_cpu_seconds;
  };
  for (const Start& start :
       {Start{s.probed_seconds, s.probed_read_done, s.probed_codec_cpu_seconds},
        Start{s.first_seconds, s.first_read_done, s.first_codec_cpu_seconds}}) {
    if (start.seconds < 0 || s.seconds <= start.seconds) continue;
    const double since =
        double(s.read_done - std::min(s.read_done, start.read_done)) * kReadWorkPerByte +
        std::max(0.0, s.codec_cpu_seconds - start.codec_cpu_seconds);
    if (since > 0 && since * kWorkPaceShare >= done + left) {
      // The probe's CPU seconds, as far as the scan's work filled the rest of its cores.
      const double wall = s.seconds - start.seconds;
      const double probe_cpu = ProbeCpuAfter(s, probe, start.seconds);
      const double room = double(std::max(1, threads)) * wall - probe_cpu;
      const double busy = room > 0 ? std::clamp(since / room, 0.0, 1.0) : 1.0;
      return s.seconds + wall / (since + probe_cpu * busy) * left;
    }
  }
  return s.seconds + left / std::max(1, threads);
}

ShownExpected ExpectedToShow(const CostForecast& nominal, const PaceState& chunks,
                             const PaceState& live, const std::optional<ProbeFigures>& probe,
                             bool probing, int threads) {
  ShownExpected shown;
  if (probe) {
    shown.seconds = ExpectedSeconds(live, *probe, threads);
    shown.codec_share = CodecShare(live, *probe);
  } else if (!probing) {
    const CostForecast f = CalibratedForecast(nominal, chunks);
    const double cpu = f.read_cpu_seconds + f.codec_cpu_seconds;
    shown.codec_share = cpu > 0 ? f.codec_cpu_seconds / cpu : 0;
    shown.seconds = ExpectedSeconds(nominal, chunks);
  }
  return shown;
}

}  // namespace zsim::pipeline
