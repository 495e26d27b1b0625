// engine/finish/breakdown_report.h
//
// The breakdowns (where the space goes by directory and by extension) and the dedup that needs no
// DDT, from a scan's BreakdownState and its featured row's dedup table. Each kept reference
// (state/scan_state.h BreakdownState) is looked up in the table and lends M x psize, and
// M x lsize x (refcount - 1) / refcount as duplicate bytes, to its rows (M = 2^shift, at least
// the table's own sampling).
//
// Thread safety: a pure function of its arguments.

#ifndef ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_
#define ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_

#include <cstddef>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_result.h"

namespace zsim::finish {

// Fills result->breakdown's rows and sample_modulus, and result->dedup_sources. `setting` is the
// featured setting's index in the table's codes.
void FinishBreakdown(const state::BreakdownState& breakdown, const ddt::DedupTable& table,
                     size_t setting, ScanResult* result);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_
