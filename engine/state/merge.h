// engine/state/merge.h
//
// Merge: one scan's state added into another's, exactly: Finish(Merge(scan(A), scan(B))) gives
// the figures of one scan of A and B (timings aside), whatever the order of the merges. Dedup
// across the parts is found (the tables merge key by key), whole-file duplicates across them
// too (contents merge), and under --sample 1/M the keys of the coarser M are kept (key-bit
// samples nest: 1/2M of the key space is inside 1/M). What a merge cannot undo: a file reached
// from both parts (a hard link, overlapping inputs) counts in each part; Merge says how many
// there were (states of one host only: device and inode numbers mean nothing across hosts).
//
// Thread safety: `into` is modified; no other use of either state meanwhile.

#ifndef ZSIM_ENGINE_STATE_MERGE_H_
#define ZSIM_ENGINE_STATE_MERGE_H_

#include <string>

#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::state {

// Ok when blocks cut, fingerprinted and compressed under `x` and under `y` give the same table:
// the same recordsizes (or volblocksize), compression list, profile, checksum, --exact or not,
// and compression rounding unit. Else kInvalidArgument naming the first difference, ending
// "only scans made with the same ... <use>" (use: "merge", "serve --since").
Status CheckSameContent(const ScanOptions& x, const ScanOptions& y, const std::string& use);

// Ok when `a` and `b` can merge: the same recordsizes (or volblocksize), compression list,
// profile, checksum, sampling plan (--exact or not) and compression rounding unit, and, for
// sampled tables (--sample, --max-memory), the same allocation (their calibration used it).
// Else kInvalidArgument naming the first difference.
Status CheckMergeable(const ScanState& a, const ScanState& b);

// Adds `from` into `into`. Returns how many files both held (same host, same device and inode:
// hard links across the trees or overlapping inputs), which the merge counts once per state
// where one scan of both would count them once: the caller should warn when it is not 0.
// REQUIRES: CheckMergeable(into, from).ok().
uint64_t Merge(ScanState& into, const ScanState& from);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_MERGE_H_
