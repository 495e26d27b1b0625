// engine/state/rare_classes.h
//
// The rare-class census of one row of a state (estimate/anchor_class.h): per sampled setting
// whose estimate regresses on an exact anchor, the entries of the anchor classes holding at most
// SamplingState::rare_class_blocks entries, all with that setting's code. The estimate takes them
// exactly (finish/tally.cc) and samples the rest; a --since rescan whose kept entries lack one
// of these codes scans in full (since.h CodesCover).
//
// The classes are read from the stored codes (ddt::OutputUnitsOf), not from codes settled under
// a report's options: a report of a state under another profile or ashift takes the census the
// scan coded.
//
// Thread safety: const after construction.

#ifndef ZSIM_ENGINE_STATE_RARE_CLASSES_H_
#define ZSIM_ENGINE_STATE_RARE_CLASSES_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"

namespace zsim::state {

class RareClasses {
 public:
  // No census: nothing is rare.
  RareClasses() = default;
  // From every entry of `table`, row `row` of a state with `options` and `sampling`. Empty unless
  // the state's scan ran the census (rare_class_blocks > 0) on a table keeping every key
  // (sample_shift 0); only for the settings the whole plan gives a census
  // (estimate::RareClassCensus: not those the cap holds back).
  RareClasses(const ddt::DedupTable& table, const SamplingState& sampling,
              const ScanOptions& options, size_t row);

  // Whether `key` is an entry of a rare class of setting `setting` whose codes are all there.
  bool Census(size_t setting, const ddt::Fingerprint& key) const;
  // Whether every rare class of every setting has all its codes: a scan codes them whole, a
  // --since rescan's kept entries may not (their old scan saw the class larger).
  bool complete() const { return complete_; }
  // Per setting, the entries taken whole.
  size_t census_entries(size_t setting) const {
    return setting < keys_.size() ? keys_[setting].size() : 0;
  }

 private:
  // Per setting, sorted (lo, hi) of its census entries.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> keys_;
  bool complete_ = true;
};

// Whether an estimate may read row `row`'s entry `e`'s code of sampled setting `c`: the entry is
// at or above the setting's level, heavy (ddt::kHeavyRefcount) and not all zero (the census;
// all-zero keys go through none), or of a rare class (`rare`, the row's). A --since rescan must
// have these codes (since.h CodesCover); a save keeps only these (state_write.cc).
bool EstimateReadsCode(const SamplingState& sampling, size_t row, const RareClasses& rare,
                       const ddt::EntryView& e, size_t c);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_RARE_CLASSES_H_
