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
//   - once the cost probe (cost_probe.h) has read ahead: work, not bytes. The work of the scan
//     is its reading (nominal CPU seconds per byte read) plus its codecs' CPU seconds, which run
//     on unique blocks only and cost per byte what the data makes them cost. Work done: the
//     bytes read and the codec CPU seconds measured so far; work left: the bytes left to read,
//     and the probe's codec CPU seconds for the whole tree less those measured (CodecWorkLeft).
//     The pace is then wall seconds per unit of work since the first chunk (a fortieth of the
//     whole work at least), and applies to the work
//     left: a tree whose first tenth is unique and the rest clones and zeros (a VM store), or
//     whose costly directories come first, is no longer taken to cost as its first tenth did.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_
#define ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_

#include <cstdint>
#include <optional>

#include "engine/estimate/codec_cost.h"
#include "engine/pipeline/cost_forecast.h"

namespace zsim::pipeline {

// The pace takes over once this share of the bytes to read (1/kPaceShare) has been read since
// the first chunk was done.
inline constexpr uint64_t kPaceShare = 20;
// The pace of work (with the probe) takes over once this share of the whole work is done since
// its start: work, unlike bytes, counts the costly blocks, so less of it shows the pace.
inline constexpr double kWorkPaceShare = 40;
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
  // The data bytes of the non-zero blocks seen for the first time (the first row's): the blocks
  // the codecs run on. And the codec CPU seconds when the first chunk was done.
  uint64_t unique_done = 0;
  double first_codec_cpu_seconds = 0;
  // The first chunk done once the probe's figures were known (probed_seconds < 0: none yet):
  // its wall seconds, bytes read and codec CPU seconds. The pace of work is measured from there
  // when it can be: the sizing walk and the probe have stopped sharing the cores by then.
  double probed_seconds = -1;
  uint64_t probed_read_done = 0;
  double probed_codec_cpu_seconds = 0;
  // When the cost probe started (wall seconds), where it shares the scan's cores (the scan has
  // a thread per core); < 0: no probe, or one on a core the scan leaves idle.
  double probe_started_seconds = -1;
};

// What the cost probe found (cost_probe.h).
struct ProbeFigures {
  // Bytes of the tree in distinct non-zero blocks (each block's data bytes).
  double unique_bytes = 0;
  // The codecs' CPU seconds per unique byte, at the shares of blocks the scan codes (0: none).
  double codec_cpu_per_byte = 0;
  // The probe's own CPU seconds (its thread's) and the wall seconds of its run.
  double cpu_seconds = 0;
  double run_seconds = 0;
};

// Work (CPU seconds) per byte read: reading, fingerprinting, the dedup table.
inline constexpr double kReadWorkPerByte = 1.0 / estimate::kReadBytesPerSecond;

// The codecs' CPU seconds left: the probe's whole codec work (its unique bytes times its cost
// per unique byte) less the codec CPU seconds measured so far. Not the probe's cost per byte
// times the unique bytes left: the cost per byte differs along a tree, and where the costly part
// comes first that counted it again in what is left (the database sample's first sixth, 600
// files of 8 KiB, costs 20-40 ns per unique byte against 14-17 after it: the work left came out
// 1.3-1.4 times the true, bench/results/2026-12-03-s30-cost). Held within kCodecLeftBound of
// the unique bytes left times the probe's cost per byte, never on more than the bytes left to
// read (the probe's total has its own error, which a difference magnifies as the scan ends, and
// more unique bytes than it expected may already be coded).
inline constexpr double kCodecLeftBound = 2;
double CodecWorkLeft(const PaceState& s, const ProbeFigures& probe);

// The work left (see above): the reading of the bytes left, and CodecWorkLeft.
double WorkLeft(const PaceState& s, const ProbeFigures& probe);

// The forecast with its codec CPU seconds scaled to this CPU (unchanged until at least
// kCalibrationNominalSeconds of nominal codec work has been measured).
CostForecast CalibratedForecast(const CostForecast& nominal, const PaceState& s);

// The whole scan's expected wall seconds: the pace once it holds (see above), else the elapsed
// seconds plus the calibrated forecast's share of the bytes still to read. Never less than the
// seconds already spent.
double ExpectedSeconds(const CostForecast& nominal, const PaceState& s);

// The codecs' share of the whole work (done and left), for the progress line.
double CodecShare(const PaceState& s, const ProbeFigures& probe);

// The forecast with the codecs' CPU seconds as the cost probe measured them on this CPU: the
// unique bytes it expects times its codec CPU seconds per unique byte (each codec at the share of
// blocks the scan codes with it, over every recordsize). The nominal speeds
// (estimate/codec_cost.h) are fixed for the budget's sake and 1.5-3x slower than the bench
// machine's, and they count every allocated byte as unique: a warning on them alone
// (IsCostly) would name a default scan costly where its codecs take a few seconds. The reading
// stays nominal (it was measured on the bench machine). A probe that timed no codec (an empty or
// all-zero tree): the codecs cost nothing.
CostForecast MeasuredForecast(const CostForecast& nominal, const ProbeFigures& probe);

// The probe's CPU seconds after `since` (wall seconds): its CPU seconds spread evenly over its run,
// from probe_started_seconds for run_seconds (0 without a start).
double ProbeCpuAfter(const PaceState& s, const ProbeFigures& probe, double since);

// With the probe's figures: the pace of work since the first chunk done once the probe was
// known, when a fortieth of the whole work has been done since; else since the first chunk done,
// when a fortieth has been done since; else the elapsed seconds plus the work left on `threads`
// cores. Never less than the seconds already spent. The pace since the first chunk counts the
// probe's CPU seconds in that time (ProbeCpuAfter) as work done on the scan's cores, as far as
// the scan's own work filled the rest of them (a scan held back by --max-rate or its disk lost
// nothing to the probe): on a small tree the probe runs through much of the first tenth, and
// the scan's work alone made the pace slow (source-small, 15 runs: expected 1.01-1.76 of the
// actual, median 1.22, 6 runs outside 25%; counting the probe, 0.97-1.31, median 1.08, 2
// outside; bench/results/2026-12-04-s37-probe).
double ExpectedSeconds(const PaceState& s, const ProbeFigures& probe, int threads);

// What the progress line shows: the expected seconds (0: none) and the codecs' share of the work.
struct ShownExpected {
  double seconds = 0;
  double codec_share = 0;
};
// With the probe's figures, ExpectedSeconds(live, *probe, threads) and CodecShare. While the
// probe is still measuring (`probing`), nothing: the forecast and the pace of bytes it would fall
// back on were off by up to half before the probe's figures came (bench/results/
// 2026-12-03-s30-cost: 0.45 on the file server, whose first sixth is cheap), and they come within
// the first second or so. Without a probe (none, or it failed), the calibrated forecast's
// ExpectedSeconds(nominal, chunks) and share. `chunks`: the chunks done; `live`: the work as the
// workers do it (both PaceState).
ShownExpected ExpectedToShow(const CostForecast& nominal, const PaceState& chunks,
                             const PaceState& live, const std::optional<ProbeFigures>& probe,
                             bool probing, int threads);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_EXPECTED_TIME_H_
