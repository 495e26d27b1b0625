// engine/finish/finish.h
//
// The finish module, overview. Finish turns a ScanState (engine/state) into the ScanResult the
// reports print, without reading any data: the dedup tables' codes (what each codec produced,
// settled_codes.h) give psize per block under the report's profile and pool, and the report's
// options give the rest:
//
//   ScanState ──Finish(state, ReportOptions)──▶ ScanResult
//
// What the report may choose (ReportOptions): the vdev layout, ashift and copies (allocation,
// metadata, DDT size), the profile, the RAM budget and the DDT format. What it may not: what the
// kept outcomes cannot tell (a block compressed under another budget whose fate under the
// report's is not known, zstd early abort, zero blocks with compression=off where the tree
// holds any; for states of
// format 6 and older, any change of profile or rounding unit) or anything not scanned (a
// recordsize or codec outside the state: report every one the state holds). CheckReportOptions
// says which.
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
// answer and what it can: for a state of least-budget codes (format 8) or raw codes (format 7),
// a profile or pool under which some block's outcome is not known (zfs::ZeroBlockMismatch and
// zfs::ZstdEarlyAbortMismatch at the lsizes the tables hold, then
// each block of a raw code, zstd's in format 8: it reads the tables when a budget differs from
// the scan's); for rounded codes (format 6 and older), a
// profile other than the scan's or another rounding unit; allocation or profile changes on a
// state whose dedup table was sampled (--sample, --max-memory: its estimates carry the scan's
// allocation), or invalid values (ValidateScanOptions' rules).
Status CheckReportOptions(const state::ScanState& state, const ReportOptions& options);

// The report. REQUIRES: CheckReportOptions(state, options).ok(). result.options is the scan's
// options with the report's applied.
ScanResult Finish(const state::ScanState& state, const ReportOptions& options);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_FINISH_H_
