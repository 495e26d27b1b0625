// engine/state/since.h
//
// The state side of `zsim scan --since OLD` (pipeline/scan.h ScanSince): what a state saved with
// file records (state/scan_state.h FileRecord) must be to serve as the base of a rescan, and the
// operations that take files back out of it.
//
// How the figures stay those of a full scan:
//   - the dedup tables are exact (no --sample, no --max-memory sampling): a file's blocks come
//     out by one reference per record it read (Release), and entries no file references any
//     more are dropped (DropUnreferenced), so each refcount is what a scan of the tree counts;
//   - the distinct-block sketches cannot forget a key: they are rebuilt from the exact tables
//     (RebuildDistinct), which hold every key the sketches would have met;
//   - the sampled codecs' levels are the full scan's: the codec budget's level of the sizing
//     walk's plan of the new tree (estimate/codec_budget.h); the rescan runs its codecs on every
//     new block at or above it, on every key that becomes heavy and on the blocks of rare anchor
//     classes (estimate/anchor_class.h), and CodesCover checks that
//     every entry an estimate uses has its codes (when the tree shrank below the base's sample
//     it does not: the caller scans in full);
//   - everything a file adds besides its blocks (shapes, breakdown rows and references,
//     whole-file contents, zero blocks, holes) is recomputed from the records of the files kept
//     and added by the scan for the files read.
//
// Thread safety: pure functions of their arguments; the ones taking a state modify it and need
// it to themselves.

#ifndef ZSIM_ENGINE_STATE_SINCE_H_
#define ZSIM_ENGINE_STATE_SINCE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::state {

// Ok when `base` can serve a --since scan with `options` (resolved): it holds file records
// (a scan saved with them: not merged, not sampled, not interrupted), was made of the same
// input paths, and with the same content options (state/merge.h CheckSameContent), and
// `options` do not sample the dedup table (--sample). Else kInvalidArgument saying what differs.
Status CheckSince(const ScanState& base, const ScanOptions& options);

// The walk's view of a file matches its record: same input, device, inode, size, mtime and
// ctime, and it was read in full. Its blocks are then taken as they are.
bool Unchanged(const FileRecord& record, uint32_t root, uint64_t dev, uint64_t ino, uint64_t size,
               int64_t mtime_ns, int64_t ctime_ns);

// A file's stamps vouch for the content read only if they are older than the scan that read
// it: a file rewritten after its stat within the same clock tick keeps its stamps (Linux stamps
// files from the coarse real-time clock; git calls such index entries "racily clean"). A record
// whose mtime or ctime is not below `scan_start_ns` (CLOCK_REALTIME_COARSE when the scan began)
// is stored with ctime kUntrustedStamp, which no file has, so the next --since reads it again.
inline constexpr int64_t kUntrustedStamp = INT64_MIN;
bool StampsVouch(int64_t mtime_ns, int64_t ctime_ns, int64_t scan_start_ns);

// Takes one reference per record the file read back out of `rows`' tables.
void ReleaseBlocks(const FileRecord& record, std::vector<RowState>& rows);

// Drops every entry left without references and renumbers the records' and links' references.
void DropUnreferenced(std::vector<RowState>& rows, std::vector<FileRecord>& records,
                      std::vector<LinkedFile>& links);

// The row's distinct-block sketches, from its exact table: `aux_units(lsize)` is the auxiliary
// size in 512-byte units the scan gives a block of that lsize.
void RebuildDistinct(RowState& row, const std::function<uint64_t(uint64_t)>& aux_units);

// True when every entry an estimate of `state` may use has the codes of every sampled codec:
// the entries at or above that codec's level, the heavy non-zero ones (ddt::kHeavyRefcount) and
// those of the rare anchor classes (rare_classes.h).
bool CodesCover(const ScanState& state);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_SINCE_H_
