// engine/finish/known_codes.h
//
// Which codes of a sampled codec the figures may use. A sampled codec (estimate/sample_level.h)
// runs on the unique blocks at or above its level in force, which follows the codec budget of
// the bytes the sizing walk has found so far (estimate/codec_budget.h). It may also have coded
// blocks of lower levels: the first chunks, read before a slow sizing walk had found the whole
// tree, and in one part of a merge whose own tree (plan) was smaller. Which ones depends on
// timing (threads, and the ranks of a distributed scan, engine/mpi) and on how the tree was cut
// into parts, so a figure that used every code it finds (the block-size histogram, the
// breakdowns' psize, the estimates) would differ run to run. The figures use instead only the
// codes at or above a level every scan of the same data reaches, and the census's
// (ddt::kHeavyRefcount).
//
// That level: the level the scan recorded (SamplingState::LevelOf, the highest it used), and with
// budget levels at least the budget's level of the whole plan (SamplingState::planned_bytes,
// which a merge adds up), which no scan of the same data exceeded; for a row the scan topped up,
// the budget of its unique bytes (estimate/top_up.h), to which it coded every listed block, and
// none for a setting it coded down to level 0 (estimate/interval_top_up.h: every unique block of
// the row). It does not depend on the table: a table that keeps 1/M of the keys (--max-memory)
// has the same level as a full one.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_FINISH_KNOWN_CODES_H_
#define ZSIM_ENGINE_FINISH_KNOWN_CODES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"

namespace zsim::finish {

// Per setting of row `row` (options.compressions order) of a scan with `options`: -1 when every
// code is used (an exact setting, or a sampled one at level 0: every unique block went through
// it), else the level at and above which its codes are used.
std::vector<int> KnownCodeLevels(const ScanOptions& options, const state::SamplingState& sampling,
                                 size_t row);

// The code of entry `e` under setting `c` if the figures may use it (`level` from
// KnownCodeLevels), else ddt::kPendingCode. The census's codes are used at any level when the
// table keeps every key (as finish/tally.cc takes them).
ddt::PsizeCode KnownCode(const ddt::EntryView& e, size_t c, int level, uint32_t table_shift);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_KNOWN_CODES_H_
