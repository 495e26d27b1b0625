// engine/finish/breakdown_report.h
//
// The breakdowns (where the space goes by directory and by extension), one per setting, and the
// dedup that needs no DDT, from a scan's BreakdownState and its rows' dedup tables. Each kept
// reference (state/scan_state.h BreakdownState) is looked up in the table and lends M x psize, and
// M x lsize x (refcount - 1) / refcount as duplicate bytes, to its rows (M = 2^shift, at least
// the table's own sampling).
//
// Thread safety: a pure function of its arguments.

#ifndef ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_
#define ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_

#include <cstddef>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/finish/settled_codes.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_result.h"

namespace zsim::finish {

// Fills result->breakdowns (one per (row, setting), in ScanResult::results order: row major)
// and result->dedup_sources. `tables[r]` and `block_bytes[r]` are row r's; `featured` is the
// setting whose lsize a state without per-setting sizes carries. A sampled codec has no code for
// some blocks: a breakdown row's psize for it is the psize of the references it has codes for
// (those `known_levels[r]` lets it use, known_codes.h), scaled by their share of the row's lsize.
// `settlers[r]` reads row r's codes as the report's pool stores them (settled_codes.h). Then the
// rows' psize is scaled to add up to the setting's in result->results (filled before), so that
// the breakdown and the table agree on the total.
void FinishBreakdowns(const state::BreakdownState& breakdown,
                      const std::vector<const ddt::DedupTable*>& tables,
                      const std::vector<CodeSettler>& settlers,
                      const std::vector<std::vector<int>>& known_levels,
                      const std::vector<uint64_t>& block_bytes,
                      const std::vector<Compression>& compressions, size_t featured,
                      ScanResult* result);

// The rows' psize made to add up to the setting's (`total`, the table's: exact, or its own
// estimate where the codec was sampled). Both estimate one total from different samples (the
// references kept 1 in m, the codes of a sampled codec), and a report whose directories add up
// to another psize than its table contradicts itself (50.9 MiB against the table's 51.4 on a
// tree sampled both ways). Each row keeps its share; cumulative rounding keeps the sum exact.
// A row holding data without a psize (none of its references has a code: a tiny file's block
// below a sampled codec's level; psize_known false) keeps its lsize's share at the other rows'
// ratio, and the others add up to the rest. (They were left uncalibrated then: on the VM-store
// sample at volblocksize 16K, lz4 sampled, one 617-byte file left the images' extension row at
// 1.89x where the table and the directory holding them said 1.62x.) Rows holding no data take
// nothing; with every reference and every code (m = 1, an exact codec) the rows already add up.
// No row is scaled above its lsize (ZFS stores a block that does not compress as is), what it
// cannot take going to the others; only when every row is at its lsize does the last take the
// rest, so that the rows still add up.
void CalibratePsize(uint64_t total, std::vector<BreakdownRow>* rows);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_BREAKDOWN_REPORT_H_
