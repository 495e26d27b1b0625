// engine/state/state_file.h
//
// The state file: a ScanState kept on disk, to report again (other allocation, RAM), merge with
// other hosts' scans, or compare later. Layout:
//
//   "ZSIMSTAT" | u32 format version | u32 length + text header + u64 XXH3-64 of the text
//     | from format 23, u64 XXH3-64 of the text seeded with the version (a damaged version word
//     fails it; an older zsim checks the first and names the version it cannot read)
//   | frames (state/frame_stream.h): the options, the sampling plan, the input summary, the
//     directory shapes, the breakdown, then per recordsize its file shapes, occurrence sample,
//     sketches and dedup table (entries streamed from the table, one frame of memory), then
//     the file records when the state has them (path, root, device, inode, size, mtime, ctime,
//     flags, content hash, and per recordsize zero blocks, holes, 4 bytes per block read and
//     indirect blocks per level), then the files with several names (path, identity, stamps,
//     breakdown rows, sizes, per recordsize zero blocks, holes, 4 bytes per block the table
//     kept, indirect blocks per level, occurrence sums)
//     (a distributed scan's ranks send each other states in this form, EncodeState, whose
//     records and linked files keep their blocks' keys in place of references, flagged: never
//     in a file)
//   | the run section, a frame of its own (format 11): what the run did (the host, the wall
//     time, the thread count, the bytes read in all and of each file with several names, per
//     recordsize and compression the codec's seconds and the bytes it compressed); every byte
//     before it is a function of the data and the options (state/save_order.h)
//   | end frame
//
// The text header describes the file to a person (`head -c 400 FILE`): the zsim version that
// wrote it, and the options that fixed its content (recordsizes, compressions, profile,
// checksum, sampling). A dedup table entry takes 8 + 5 (key) + 4 (refcount) + 2 (lsize) + 1
// (flags) bytes, 2 per inline code and, when a sampled codec ran on it, 2 per sampled code.
//
// The file is written to a temporary name in the target's directory, synced and renamed, so a
// crash leaves the old file or the new one, never half of one. A file that is not a state file,
// of another format version, truncated or corrupt is refused (kCorruption or kInvalidArgument,
// with what is wrong and the file's name), never read as a wrong state.
//
// Thread safety: SaveState reads the state only (no concurrent change); the others are pure.

#ifndef ZSIM_ENGINE_STATE_STATE_FILE_H_
#define ZSIM_ENGINE_STATE_STATE_FILE_H_

#include <cstdint>
#include <string>

#include "engine/base/byte_view.h"
#include "engine/state/scan_state.h"
#include "zsim/status.h"

namespace zsim::state {

// 2: file shapes keep their all-zero blocks (FileShape::zero_blocks), which `used` counts.
// 3: file records (FileRecord) follow the tables, for --since.
// 4: the sampling plan's bytes (SamplingState::planned_bytes, plan_scope), which the codec
// budget follows.
// 5: the files with several names (LinkedFile), so a merge counts a file both parts hold once.
// 6: file shapes, records and linked files keep their indirect blocks per level
// (FileShape::indirects, FileIndirects).
// 7: the tables' codes are the compressors' raw outcomes (CodeKind::kRaw, a byte after the
// sampling levels), so a report may change the ashift, vdev and profile (finish/settled_codes.h).
// 8: lzjb, zle, lz4 and gzip codes hold the output under the largest budget and the smallest
// budget that output fits (CodeKind::kLeastBudget), so a report may change the ashift, vdev and
// profile for them whatever the blocks; zstd's stay raw.
// 9: zstd's codes too where early abort does not apply under the scan's profile (blocks under
// 128K, levels 1 and 2, 2.1: CodeKind::kLeastBudgetZstd); its other blocks' stay raw.
// 10: zstd's codes are least-budget ones at every lsize whatever the scan's profile, and each
// zstd setting of level 3 and up has a second column, the least budget early abort lets its
// blocks of 128K and more through (CodeKind::kEarlyAbort, ddt::EncodeProbe): a report may change
// the profile, ashift and vdev for every codec.
// 11: the bytes are a function of the data and the options (state/save_order.h): the table's
// entries by key (the file records' and links' references renumbered to match and sorted),
// breakdown names, file records and links by name, breakdown references by row and key, path
// errors by path; and what depends on the run (the host, the wall time, the thread count, the
// codecs' seconds and bytes, the bytes read in all and of each linked file) moved out of the
// payload into the run section, the last frame before the end frame. Version 10 is read as before
// (its tables' codes are those of version 11). Version 9 is still read as
// CodeKind::kLeastBudgetZstd (zstd's raw where early abort applied under the scan's profile, with
// their refusals). Version 8 is still read as CodeKind::kLeastBudget (zstd's raw, with their
// refusals). Version 7 is still read as raw codes (CodeKind::kRaw, with its refusals of blocks
// compressed under another budget). Versions 2 to 6 are still read: their codes as
// CodeKind::kRounded (psize under the scan's profile and geometry, which their reports keep);
// versions 2 to 5 as states without records, without a plan (their levels taken as recorded),
// without links (a merge counts a file linked across them in each), or without indirect counts (the
// metadata model takes their data as spread over each file).
// 12: a flag after the code kind, ScanState::written_keys: under --checksum sha256 the tables
// keep, per exact lzjb, zle, lz4 or gzip setting, the first word of the DDT key ZFS gives each
// compressed block, in two more columns after the early-abort ones (state::KeyColumns,
// ddt/written_key.h), from which a report lays out the DDT's leaves on ZFS's own keys. Version
// 11 and older are read without them (the leaves of compressed tables are then the model's).
// 13: each directory shape holds its micro-ZAP's lz4 size (DirectoryShape::microzap_lz4_bytes);
// version 12 and older are read without it (the metadata model then fits the directory's size).
// 14: the breakdown's whole-file contents hold their lsize per row, and the all-zero blocks are
// counted per row (BreakdownState), and each unreadable path its size (PathError::bytes);
// version 13 and older are read with the first row's, which then stands for every row, and
// errors without sizes.
// 15: the breakdown's whole-file contents are a sample past kBreakdownMaxContents distinct ones
// (BreakdownState::content_shift, after the contents); version 14 and older are read with
// every content kept (shift 0), as they were written.
// 16: the rare-class census's class size after the sampling levels
// (SamplingState::rare_class_blocks, estimate/anchor_class.h); version 15 and older are read
// with 0: no census ran, their sampled codecs' estimates are as they were.
// 17: per row, the unique bytes of a row the scan topped up (SamplingState::topped_bytes,
// estimate/top_up.h), after the class size; version 16 and older are read with none topped.
// 18: per row, what the run's top-up did (RowState::top_up: blocks and bytes read again, seconds,
// why a row was left), at the end of the run section; version 17 and older are read with none.
// 19: each breakdown row's all-zero records per (row, setting) that are holes in the setting's
// table (BreakdownRowSums::setting_zero_lsize), after its lsize per (row, setting); version 18 and
// older are read without them (state::ZeroLsizeKept false: the breakdown counts from lsize).
// 20: each error's bytes in the figures (PathError::bytes_in_figures: a file read in part), after
// its bytes, and after the errors a merge's files counted in more than one part
// (InputSummary::files_counted_twice); version 19 and older are read with 0 for both (their
// errors' text says what of a part-read file the figures hold; a merge of them warned of its
// shared files on stderr only).
// 21: the files holding the planned bytes (SamplingState::planned_files), after the plan's
// scope: the budget counts a file smaller than the block size as a block (estimate/codec_budget.h
// PlannedBlocks); version 20 and older are read with 0, their budget the bytes' alone, as scanned.
// 22: the data the files hold (InputSummary::bytes_data: their bytes outside holes, the base of
// every saved figure, with a flag saying it is known) after the input's partial-scan counts,
// and each file record's and linked file's (FileRecord::data_bytes) after its size; version 21
// and older are read with it unknown: the reports' saved figures rest on each row's logical
// size, as they did, and a --since rescan from one keeps it unknown (its kept files' data).
// 23: a file shape whose all-zero blocks the no-dedup write path writes keeps the indirect blocks
// per level over them and its non-hole blocks (FileShape::written_indirects), after its
// indirects; version 22 and older are read without them (`used` then takes such a file's data as
// spread over it, as it did). And a second checksum of the text header, seeded with the format
// version, follows the first, so that a damaged version word reads as corrupt, not as a format
// another zsim wrote. And after the input's data bytes, what was said of the paths named before
// reading them (InputSummary::notes); version 22 and older are read with none.
inline constexpr uint32_t kStateFormatVersion = 23;
inline constexpr uint32_t kOldestReadableVersion = 2;

// Ok when `path` can take a state file: not a directory, in an existing directory. Touches
// nothing; that a file can be created there is cli/output_file.h CheckCreatable's to prove
// before a scan (access() tells root yes where /proc or /sys refuse new files).
Status CheckSavePath(const std::string& path);

// Writes `state` to `path` atomically. The bytes written in *bytes when given.
Status SaveState(const ScanState& state, const std::string& path, uint64_t* bytes = nullptr);

// The bytes SaveState would write, in memory (a state sent to another process: engine/mpi
// sends them, ParseState reads them back). `keep_keys`: file records and linked files that keep
// keys (FileRecord::keys, LinkedFile::keys: a distributed scan's rank, whose tables are
// partitioned away) are written as keys, for ParseState with `keep_keys`; SaveState writes them
// as the references of their entries in the state's table, as any record or link.
std::string EncodeState(const ScanState& state, bool keep_keys = false);

// Reads a state file. kNotFound/kPermissionDenied when it cannot be opened; kCorruption or
// kInvalidArgument (another format version, not a state file) with the reason.
Result<ScanState> LoadState(const std::string& path);

// The same from bytes in memory; `verify_checksums` false only for the fuzz target (so it reaches
// the parser): whatever the bytes, an error or a valid state, never a crash. `keep_keys`: file
// records and linked files that keep keys are read (EncodeState's), else refused as corrupt (as
// LoadState does).
Result<ScanState> ParseState(ByteView bytes, bool verify_checksums = true, bool keep_keys = false);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_STATE_FILE_H_
