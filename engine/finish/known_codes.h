// engine/finish/known_codes.h
//
// Which codes of a sampled codec the figures may use. A sampled codec (estimate/sample_level.h)
// runs on the unique blocks at or above its level in force, which rises while the scan runs by
// counts of the blocks met so far (estimate/adaptive_level.h). So besides the blocks at or above
// its final level, it also coded some blocks of lower levels: those met before the level rose.
// Which ones depends on timing (threads, and the ranks of a distributed scan, engine/mpi, each
// rising on its own share), so a figure that used every code it finds (the block-size histogram,
// the breakdowns' psize) differed run to run. The figures use instead only the codes at or above
// a level every run of the same data reaches, and the census's (ddt::kHeavyRefcount).
//
// That level: the level the scan recorded (SamplingState::LevelOf, the highest it reached), and
// with levels risen by counts at least the whole tree's BaseLevel, which no run's counts exceed.
// A table that keeps every key (no dedup sampling) counts the whole tree exactly. A table that
// keeps 1/M of the keys (--max-memory) counts about 1/M of them: the tree's count at a level is
// taken as M x (kept + 4 sqrt(kept) + 4), a bound the true count exceeds with a probability
// below 10^-4 (the kept keys are a key-bit sample, independent of the level bits).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_FINISH_KNOWN_CODES_H_
#define ZSIM_ENGINE_FINISH_KNOWN_CODES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/adaptive_level.h"
#include "engine/state/scan_state.h"

namespace zsim::finish {

// The level at and above which a sampled codec's codes are used. `kept`: the table's entries by
// level whose code under the setting is not a hole; `table_shift`: its sample shift;
// `recorded`: SamplingState::LevelOf; `adaptive`: SamplingState::adaptive (else the recorded
// level came from the plan alone and is the same in every run).
int KnownCodeLevel(const estimate::LevelCounts& kept, uint32_t table_shift, int recorded,
                   bool adaptive);

// Per setting of row `row`: -1 when every code is used (an exact setting, or a sampled one
// whose level never rose: every unique block went through it), else KnownCodeLevel.
// REQUIRES: nothing inserts into `table` meanwhile.
std::vector<int> KnownCodeLevels(const ddt::DedupTable& table, const state::SamplingState& sampling,
                                 size_t row);

// The code of entry `e` under setting `c` if the figures may use it (`level` from
// KnownCodeLevels), else ddt::kPendingCode. The census's codes are used at any level when the
// table keeps every key (as finish/tally.cc takes them).
ddt::PsizeCode KnownCode(const ddt::EntryView& e, size_t c, int level, uint32_t table_shift);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_KNOWN_CODES_H_
