// engine/finish/finish.h
//
// The finish module, overview. Finish turns a ScanState (engine/state) into the ScanResult the
// reports print, without reading any data: the dedup tables' codes give psize per block, and the
// report's options give the rest:
//
//   ScanState ──Finish(state, ReportOptions)──▶ ScanResult
//
// What the report may choose (ReportOptions): the vdev layout, ashift and copies (allocation,
// metadata, DDT size), the RAM budget and the DDT format. What it may not: anything the codes
// depend on (the profile, the compression rounding unit) or anything not scanned (a recordsize
// or codec outside the state: report every one the state holds). CheckReportOptions says which.
//
// Entry points: ReportOptionsOf, CheckReportOptions, Finish. Inner parts: tally.h (per setting
// totals, histograms, estimates), breakdown_report.h (breakdowns, whole-file duplicates).
//
// Thread safety: pure functions of their arguments.

#ifndef ZSIM_ENGINE_FINISH_FINISH_H_
#define ZSIM_ENGINE_FINISH_FINISH_H_

#include <cstdint>
#include <optional>

#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"
#include "zsim/scan_result.h"
#include "zsim/status.h"

namespace zsim::finish {

// The options that apply at report time.
struct ReportOptions {
  VdevLayout vdev;
  int ashift = 12;
  int copies = 1;
  Profile profile = Profile::kZfs24;
  std::optional<DdtFormat> ddt_format;  // unset: the profile's default
  uint64_t ram_bytes = 0;               // 0: the scan's
};

// The report options a scan was run with.
ReportOptions ReportOptionsOf(const ScanOptions& options);

// Ok when `state` can answer `options`; else kInvalidArgument saying what the state cannot
// answer and what it can: a profile other than the scan's, an ashift or dRAID layout whose
// compression rounding unit differs from the scan's (the profiles from 2.1 round psize to it),
// allocation changes on a state whose dedup table was sampled (--sample, --max-memory: its
// estimates carry the scan's allocation), or invalid values (ValidateScanOptions' rules).
Status CheckReportOptions(const state::ScanState& state, const ReportOptions& options);

// The report. REQUIRES: CheckReportOptions(state, options).ok(). result.options is the scan's
// options with the report's applied.
ScanResult Finish(const state::ScanState& state, const ReportOptions& options);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_FINISH_H_
