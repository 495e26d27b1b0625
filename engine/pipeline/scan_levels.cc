// engine/pipeline/scan_levels.cc: the sampled codecs' levels (scan_internal.h): the sizing walk's
// budget, the pilot's raise, and the tables' --max-memory budget.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "engine/estimate/codec_budget.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/state/table_budget.h"

namespace zsim::pipeline::internal {

void Scan::RaiseSettingLevel(size_t r, size_t c, int level) {
  std::atomic<int>& current = SettingLevel(r, c);
  if (level <= current.load(std::memory_order_relaxed)) return;
  if (level > skip_bound_[r].load(std::memory_order_relaxed)) {
    skip_bound_[r].store(level, std::memory_order_release);
  }
  current.store(level, std::memory_order_release);
}

// Per chunk until the sizing walk has finished: the sampled codecs follow the budget of the bytes
// it has found so far (a lower bound of the whole tree's, so every level used is complete at the
// final one), and once it has, the --sample occurrence sample its plan.
void Scan::MaybeApplyPlan() {
  if (!plan_wanted_ || !sizer_ || plan_applied_.load(std::memory_order_relaxed)) return;
  const bool finished = sizer_->finished();
  if (adaptive_) RaiseToBudget(SizedPlan());
  if (!finished || plan_applied_.exchange(true)) return;
  level_.store(PlannedLevel());
}

void Scan::RaiseToBudget(const estimate::Plan& sized) {
  const auto grown = [&] {
    return sized.bytes > budget_bytes_.load(std::memory_order_relaxed) ||
           sized.files > budget_files_.load(std::memory_order_relaxed);
  };
  if (!grown()) return;
  std::lock_guard<std::mutex> lock(level_mu_);
  if (!grown()) return;
  // Each part the larger: both are lower bounds of the whole tree's, and the levels only rise.
  const estimate::Plan plan{std::max(sized.bytes, budget_bytes_.load(std::memory_order_relaxed)),
                            std::max(sized.files, budget_files_.load(std::memory_order_relaxed))};
  budget_bytes_.store(plan.bytes, std::memory_order_relaxed);
  budget_files_.store(plan.files, std::memory_order_relaxed);
  const size_t settings = options_.compressions.size();
  const std::vector<int> levels = estimate::BudgetLevels(options_, sampling_.sampled, plan);
  const std::vector<bool> census = estimate::RareClassCensus(options_, sampling_.sampled, plan);
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      if (sampling_.sampled[c]) RaiseSettingLevel(r, c, levels[r * settings + c]);
      if (!census[r * settings + c]) census_on_[r * settings + c].store(false);
    }
  }
}

// --max-memory: when the tables outgrow the budget, keep half as much of the key space (every
// row alike). Whether a given M is ever exceeded depends on the data only, so the final M does.
// And whatever the budget, a table nearing its shards' limit samples too (FitTablesToShards).
void Scan::EnforceTableBudget() {
  std::shared_lock<TableGate> gate = ShareTables();
  state::FitTablesToBudget(rows_, table_budget_bytes_);
  state::FitTablesToShards(rows_);
}

void Scan::MaybeApplyPilot() {
  if (pilot_applied_ || !probe_ || pilot_plan_.budget_levels.empty()) return;
  const std::optional<std::vector<int>> levels = probe_->pilot_levels();
  if (!levels) return;
  pilot_applied_ = true;
  // Per (row, setting), row-major; empty when the pilot could not read its records again.
  const size_t settings = options_.compressions.size();
  std::lock_guard<std::mutex> lock(level_mu_);
  for (size_t i = 0; i < levels->size() && i < rows_.size() * settings; ++i) {
    const int level = (*levels)[i];
    if (level > 0) RaiseSettingLevel(i / settings, i % settings, level);
    // 0: the interval top-up foreseen (cost_probe.h). The codec runs on every block from here
    // on, which the top-up would otherwise read again; the levels recorded at the end are the
    // budget's all the same (every block below it is coded only from here), and the estimate
    // takes the rule's decision then.
    if (level == 0 && i < pilot_plan_.budget_levels.size() && pilot_plan_.budget_levels[i] > 0) {
      SettingLevel(i / settings, i % settings).store(0, std::memory_order_release);
    }
  }
}

void Scan::FinishPilot() {
  if (!adaptive_ || !sizer_ || cancelled_) return;
  sizer_->Wait();
  if (!sizer_->finished()) return;
  MaybeForecast(/*pilot_only=*/true);  // where the reading ended before the sizing walk
  if (!probe_ || pilot_plan_.budget_levels.empty()) return;
  // Waits for the pilot's answer, not the probe's timing after it; Ctrl-C makes the scan partial.
  while (!probe_->pilot_levels() && !probe_->finished()) {
    if (Cancelled()) {
      cancelled_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  probe_->Stop();
  if (!cancelled_) MaybeApplyPilot();
}

}  // namespace zsim::pipeline::internal
