// engine/pipeline/scan_top_up.cc: the top-up after the reading (scan_internal.h, top_up.h): the
// rows brought down to their budget by reading the blocks they skipped again, and its forecast.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "engine/pipeline/scan_internal.h"

namespace zsim::pipeline::internal {

// While the top-up runs, a thread that reports progress every progress interval (at least 10 ms),
// outside its lock; Stop (or the end of the scope: an exception from the top-up) ends it, then
// reports the blocks read again in all.
class Scan::TopUpTicker {
 public:
  TopUpTicker(Scan* scan, const std::atomic<uint64_t>* done) : scan_(scan) {
    if (!scan_->control_.progress) return;
    scan_->top_up_done_ = done;
    thread_ = std::thread([this] {
      const auto interval =
          std::chrono::duration<double>(std::max(scan_->control_.progress_interval_seconds, 0.01));
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stop_; })) {
        lock.unlock();
        scan_->MaybeReportProgress(true);
        lock.lock();
      }
    });
  }
  ~TopUpTicker() { Stop(); }
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    scan_->MaybeReportProgress(true);
    scan_->top_up_done_ = nullptr;
  }

 private:
  Scan* scan_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

void Scan::TopUp(const std::vector<int>& budget) {
  const size_t settings = options_.compressions.size();
  std::vector<uint64_t> codec_ns(rows_.size() * settings, 0), codec_bytes(codec_ns.size(), 0);
  // The progress line goes on during the reads again (they may take a while at large recordsizes),
  // from a thread of its own: the workers only count.
  std::atomic<uint64_t> done{0};
  // The ticker starts once the rows are planned and their cost told (a line of its own on
  // stderr, which a progress line drawn meanwhile would run into), the top-up's pace with it.
  std::optional<TopUpTicker> ticker;
  const TopUpStats stats =
      TopUpRows(options_, fs_, &rows_, *skipped_, budget,
                RecodeSpec{state_.code_kind, probe_columns_, key_columns_, 0},
                RecodeControl{throttle_.get(), control_.cancel, &done}, &sampling_, &codec_ns,
                &codec_bytes, control_.interval_top_up, [&](const TopUpPlanned& planned) {
                  top_up_total_.store(planned.blocks, std::memory_order_relaxed);
                  if (control_.top_up_forecast) control_.top_up_forecast(ForecastTopUp(planned));
                  top_up_start_ = Clock::now();
                  ticker.emplace(this, &done);
                });
  if (ticker) ticker->Stop();
  // Its codecs' work, with the workers' (added to the rows at the scan's end).
  for (size_t i = 0; i < codec_ns.size(); ++i) {
    rows_[i / settings].codec_seconds[i % settings] += static_cast<double>(codec_ns[i]) * 1e-9;
    rows_[i / settings].codec_bytes[i % settings] += codec_bytes[i];
  }
  // An interrupt during the top-up: the rows not yet done keep their levels, the scan says it
  // is partial.
  if (control_.cancel && control_.cancel->load()) cancelled_ = true;
  // A row a full scan would top up, whose kept files' blocks lack the codes: not what a full scan
  // gives (a base scanned without the top-up, or for a larger tree).
  if (since_ && stats.unplaced_rows != 0) since_complete_ = false;
  skipped_ = nullptr;
  own_skipped_.reset();
}

TopUpForecast Scan::ForecastTopUp(const TopUpPlanned& planned) const {
  const size_t settings = options_.compressions.size();
  // Each codec's CPU seconds per byte as the workers measured it, over every row.
  std::vector<double> seconds(settings, 0);
  std::vector<uint64_t> bytes(settings, 0);
  for (const Worker& w : *workers_) {
    for (size_t i = 0; i < w.codec_ns.size() && i < w.codec_bytes.size(); ++i) {
      seconds[i % settings] += double(w.codec_ns[i]) * 1e-9;
      bytes[i % settings] += w.codec_bytes[i];
    }
  }
  std::vector<uint64_t> block_sizes;
  for (const state::RowState& row : rows_) block_sizes.push_back(row.block_bytes);
  return ForecastTopUpOf(options_, planned, seconds, bytes, block_sizes, ThreadsAtOnce());
}

}  // namespace zsim::pipeline::internal
