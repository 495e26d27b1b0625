// engine/pipeline/scan_progress.cc: the progress line (scan_internal.h): the pace of work as the
// workers do it, the cost forecast and its probe, and the expected time.

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/interval_top_up.h"
#include "engine/estimate/pilot_level.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/walk/file_sample.h"

namespace zsim::pipeline::internal {

void Scan::MaybeReportProgress(bool force) {
  if (!control_.progress) return;
  const Clock::time_point now = Clock::now();
  if (!force && std::chrono::duration<double>(now - last_progress_).count() <
                    control_.progress_interval_seconds) {
    return;
  }
  last_progress_ = now;
  Progress p;
  p.files_done = files_done_;
  p.bytes_done = bytes_done_ + skipped_bytes_.load(std::memory_order_relaxed);
  p.bytes_discovered = bytes_found_.load(std::memory_order_relaxed);
  p.files_discovered = files_found_.load(std::memory_order_relaxed);
  p.walk_finished = walk_finished_;
  if (sizer_ && !walk_finished_) {
    p.walk_finished = sizer_->finished();
    p.bytes_discovered = std::max(p.bytes_discovered, sizer_->bytes());
    p.files_discovered = std::max(p.files_discovered, sizer_->files());
  }
  p.seconds = std::chrono::duration<double>(now - start_).count();
  if (forecast_) {
    // The codecs run on the same share of the blocks from the first chunk on
    // (estimate/codec_budget.h), so the work per byte read is steady enough for the pace, which
    // holds this machine's speeds, its load and its disk (expected_time.h).
    PaceState s = pace_;
    s.seconds = p.seconds;
    s.read_total = sizer_ ? sizer_->data_bytes() : 0;
    const std::optional<ProbeFigures> probed = probe_ ? probe_->figures() : std::nullopt;
    const ShownExpected shown =
        ExpectedToShow(*forecast_, s, LivePace(s), probed, probe_ != nullptr && !probe_->failed(),
                       ThreadsAtOnce());
    p.expected_seconds = shown.seconds;
    p.codec_share = shown.codec_share;
  }
  // The top-up, once it read a block again (a scan whose rows need none says nothing of it).
  if (top_up_done_ && top_up_done_->load(std::memory_order_relaxed) != 0) {
    p.topping_up = true;
    p.top_up_blocks = top_up_done_->load(std::memory_order_relaxed);
    p.top_up_total = top_up_total_.load(std::memory_order_relaxed);
    p.top_up_seconds = std::chrono::duration<double>(now - top_up_start_).count();
  }
  control_.progress(p);
}

Scan::CodecWork Scan::CodecWorkOf(const Worker& w) const {
  CodecWork work;
  work.ns = w.aside_ns;
  const size_t settings = options_.compressions.size();
  for (size_t i = 0; i < w.codec_ns.size(); ++i) {
    work.ns += w.codec_ns[i];
    const double speed = estimate::NominalCodecBytesPerSecond(options_.compressions[i % settings]);
    if (speed > 0) work.nominal_seconds += double(w.codec_bytes[i]) / speed;
  }
  return work;
}

void Scan::CountForPace(const Chunk& chunk) {
  pace_.read_done += chunk.read;
  pace_.codec_cpu_seconds += double(chunk.codec_ns) * 1e-9;
  pace_.codec_nominal_seconds += chunk.codec_nominal_seconds;
  if (pace_.first_seconds < 0) {
    pace_.first_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    pace_.first_read_done = pace_.read_done;
    live_first_read_ = live_.read.load(std::memory_order_relaxed);
    live_first_codec_ = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  }
  if (probed_seconds_ < 0 && probe_ && probe_->figures()) {
    probed_seconds_ = std::chrono::duration<double>(Clock::now() - start_).count();
    live_probed_read_ = live_.read.load(std::memory_order_relaxed);
    live_probed_codec_ = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  }
}

PaceState Scan::LivePace(const PaceState& s) const {
  PaceState live = s;
  live.read_done = live_.read.load(std::memory_order_relaxed);
  live.codec_cpu_seconds = double(live_.codec_ns.load(std::memory_order_relaxed)) * 1e-9;
  live.unique_done = live_.unique.load(std::memory_order_relaxed);
  live.first_read_done = live_first_read_;
  live.first_codec_cpu_seconds = live_first_codec_;
  live.probed_seconds = probed_seconds_;
  live.probed_read_done = live_probed_read_;
  live.probed_codec_cpu_seconds = live_probed_codec_;
  return live;
}

void Scan::MaybeForecast(bool pilot_only) {
  if (forecast_ || !sizer_ || !sizer_->finished()) return;
  forecast_ = ForecastCost(options_, SizedPlan(), MachineCores());
  // The probe measures the codecs for the progress line, and for the warning of a costly scan
  // where the nominal speeds (slower than this CPU's) find one.
  const std::vector<int> pilot =
      estimate::PilotBudgetLevels(options_, sampling_.sampled, adaptive_, SizedPlan());
  if (std::any_of(pilot.begin(), pilot.end(), [](int level) { return level >= 0; })) {
    std::vector<uint64_t> planned;
    for (uint64_t block : estimate::RowBlockSizes(options_)) {
      planned.push_back(estimate::PlannedBlocks(SizedPlan(), block));
    }
    // Where the interval top-up could take a setting at the end (estimate/interval_top_up.h):
    // it runs (not under --since, whose rows keep a base's codes, nor for a table --sample
    // samples), no plan anchor, the plain budget's level. --max-memory is always set (half the
    // RAM by default: ResolveOptions), and a row the top-up can take (at most kTopUpMaxBlocks
    // planned blocks, a table of a few MiB) is sampled only under a budget below that; if it is,
    // the top-up does not run and the early codes go unused, no figure changes. (The test here
    // was `max_memory_bytes == 0`, never true of a resolved scan: the foresight never ran.)
    const size_t settings = options_.compressions.size();
    std::vector<bool> foreseeable(pilot.size(), false);
    const bool runs =
        control_.top_up && control_.interval_top_up && !since_ && options_.sample_modulus <= 1;
    const std::vector<int> budget =
        estimate::BudgetLevels(options_, sampling_.sampled, SizedPlan());
    for (size_t r = 0; r < planned.size() && runs && settings != 0; ++r) {
      const std::vector<int> row(budget.begin() + ptrdiff_t(r * settings),
                                 budget.begin() + ptrdiff_t((r + 1) * settings));
      const std::vector<bool> candidate = estimate::IntervalTopUpCandidates(
          options_, sampling_.sampled, sampling_.anchors, SizedPlan(), r, row);
      for (size_t c = 0; c < settings; ++c) {
        foreseeable[r * settings + c] = pilot[r * settings + c] > 0 && candidate[c];
      }
    }
    pilot_plan_ = PilotPlan{pilot, sampling_.anchors, std::move(planned), std::move(foreseeable)};
  }
  const bool measured = control_.progress || (control_.forecast && IsCostly(*forecast_));
  if (!pilot_plan_.budget_levels.empty() || (measured && !pilot_only)) {
    walk::FileSample& sample = sizer_->file_sample();
    const int level = sample.level();
    // The probe's CPU seconds count in the pace where it shares the scan's cores
    // (expected_time.h ExpectedSeconds); with fewer threads than cores it runs on an idle one.
    if (options_.threads >= MachineCores()) {
      pace_.probe_started_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    probe_ = std::make_unique<CostProbe>(fs_, sample.Take(), level, sizer_->data_bytes(), options_,
                                         policy_, forecast_->coded_shares,
                                         forecast_->codec_cpu_seconds, pilot_plan_, throttle_);
  }
}

void Scan::MaybeTellForecast() {
  if (forecast_told_ || !forecast_ || !control_.forecast) return;
  if (probe_ && !probe_->failed()) {
    const std::optional<ProbeFigures> probed = probe_->figures();
    if (!probed) return;  // still measuring
    forecast_told_ = true;
    control_.forecast(MeasuredForecast(*forecast_, *probed));
    return;
  }
  // Not measured (the nominal forecast found the codecs cheap, or the probe failed): nominal.
  forecast_told_ = true;
  control_.forecast(*forecast_);
}

}  // namespace zsim::pipeline::internal
