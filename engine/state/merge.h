// engine/state/merge.h
//
// Merge: one scan's state added into another's, exactly: Finish(Merge(scan(A), scan(B))) gives
// the figures of one scan of A and B (timings aside), whatever the order of the merges. Dedup
// across the parts is found (the tables merge key by key), whole-file duplicates across them
// too (contents merge), and under --sample 1/M the keys of the coarser M are kept (key-bit
// samples nest: 1/2M of the key space is inside 1/M). A file with several names that both parts
// counted (a hard link across them) counts once, as one scan counts it (state/linked_files.h),
// when both were scanned on this machine in one boot. What a merge cannot undo: a file of one
// name reached from both parts (overlapping inputs), or a linked file of other hosts or boots,
// counts in each part; Merge says how many there were (states of one host only: device and
// inode numbers mean nothing across hosts).
//
// Thread safety: `into` is modified; no other use of either state meanwhile.

#ifndef ZSIM_ENGINE_STATE_MERGE_H_
#define ZSIM_ENGINE_STATE_MERGE_H_

#include <string>
#include <vector>

#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::state {

// Ok when blocks cut, fingerprinted and compressed under `x` and under `y` give the same table:
// the same recordsizes (or volblocksize), compression list, profile, checksum, --exact or not,
// and compression rounding unit. Else kInvalidArgument naming the first difference, ending
// "only scans made with the same ... <use>" (use: "merge", "serve --since").
Status CheckSameContent(const ScanOptions& x, const ScanOptions& y, const std::string& use);

// A compression list as --compression takes it: "all" where it is `profile`'s whole list, else
// the names joined by commas. Merge's and --since's refusals name lists this way.
std::string CompressionListText(const std::vector<Compression>& list, Profile profile);

// Ok when `a` and `b` can merge: the same recordsizes (or volblocksize), compression list,
// profile, checksum, sampling plan (--exact or not) and compression rounding unit, and, for
// sampled tables (--sample, --max-memory), the same allocation (their calibration used it).
// Else kInvalidArgument naming the first difference.
Status CheckMergeable(const ScanState& a, const ScanState& b);

// What a merge found of the files both states held.
struct MergeCounts {
  uint64_t linked = 0;  // files with several names in both: counted once
  // Files both held (same host, device and inode: overlapping inputs, or links the states
  // cannot match: scanned in other boots) and counted in each, where one scan of both would
  // count them once: the caller should warn when it is not 0.
  uint64_t shared = 0;
  // Linked files of one file system and inode whose size, mtime or ctime differ between the
  // states (changed between the scans): counted in each; the caller should warn.
  uint64_t changed = 0;
};

// Adds `from` into `into`. REQUIRES: CheckMergeable(into, from).ok().
MergeCounts Merge(ScanState& into, const ScanState& from);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_MERGE_H_
