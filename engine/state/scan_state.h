// engine/state/scan_state.h
//
// The state module, overview. ScanState is everything a scan knows once it has read its inputs,
// as one value kept apart from how it was filled (engine/pipeline fills it) and from how it is
// reported (engine/finish: Finish(state, report options) -> ScanResult):
//
//   - the options that fixed its content (ContentOptions: recordsizes or volblocksize,
//     compression list, profile, checksum, sampling) and the plan of compression sampling;
//   - per recordsize (RowState): the dedup table (key -> refcount, lsize, one code per codec),
//     the distinct-block sketches, the occurrence sample, the shapes of the files as that row
//     lays them out (FileShape histogram, per setting), records wholly in holes, codec time;
//   - the shapes of the directories (DirectoryShape histogram) for the metadata model;
//   - the breakdown accumulators, keyed by name (BreakdownState);
//   - what the walk met (files, bytes, skipped and failed paths).
//
// Nothing in it depends on the pool's allocation (vdev, ashift, copies), the RAM budget or the DDT
// format: Finish applies those. The tables keep what each codec produced
// (CodeKind::kEarlyAbort: the output under the largest budget and the smallest budget it fits,
// and for zstd-3 and up the smallest budget its early abort lets a block through, in a column of
// its own: ProbeColumns), from which Finish derives psize and embedding under the report's
// profile and pool geometry (finish/settled_codes.h); it refuses what they cannot answer (zero
// blocks with compression=off; in states of format 9, zstd early abort under another budget or
// profile: finish/finish.h CheckReportOptions). States of format 7 keep every codec's output under
// the scan's budget (CodeKind::kRaw); states of format 6 and older hold psize rounded under the
// scan's profile and geometry (CodeKind::kRounded), which those reports must keep. With --sample
// 1/M or --max-memory, the occurrence sample's and sketches' auxiliary sizes were taken under the
// scan's allocation, which the report must then keep.
//
// Merge (state/merge.h) adds one state into another.
//
// Thread safety: a value; filled by one scan, then read-only.

#ifndef ZSIM_ENGINE_STATE_SCAN_STATE_H_
#define ZSIM_ENGINE_STATE_SCAN_STATE_H_

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/distinct_blocks.h"
#include "engine/estimate/occurrence_sample.h"
#include "engine/estimate/top_up.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"
#include "zsim/scan_result.h"

namespace zsim::state {

// What the scan did about compression sampling (estimate/sample_level.h).
struct SamplingState {
  std::vector<bool> sampled;  // per setting: a costly codec run on a sample only
  // Every unique block at this level or above went through the sampled codecs, so the estimates
  // use it or a higher one. 0: every unique block did (the exact path). The lowest of
  // `setting_levels`.
  int complete_level = 0;
  // Per (row, setting), row-major: the level at and above which every unique block went through
  // that setting's codec (each sampled codec has its own budget, estimate/codec_budget.h), at
  // or above complete_level; 0 for exact settings. Empty: complete_level for every one.
  // Merging two states takes the larger of each pair (the lower level is incomplete in one).
  std::vector<int> setting_levels;
  // The levels follow the codec budget (estimate/codec_budget.h): the estimate's base is
  // BudgetLevel of planned_bytes, never below setting_levels. False under --sample 1/M, whose
  // codecs follow the occurrence sample's plan.
  bool adaptive = false;
  // The bytes the sizing walk found (allocated, holes excluded), which the budget levels follow,
  // and which paths it sized: the XOR of a hash of each input path. A merge adds the bytes up
  // (and XORs the scopes) when the scopes differ: scans of separate trees; it keeps them when
  // they are equal: parts of one scan of the same paths (the ranks of a distributed scan, file
  // pieces), each of which sized the whole. 0 when not adaptive.
  uint64_t planned_bytes = 0;
  uint64_t plan_scope = 0;
  // The files holding those bytes (allocated), each a block at least (estimate::PlannedBlocks);
  // added, kept or taken out with the bytes. 0 in states before format 21: the bytes alone.
  uint64_t planned_files = 0;
  estimate::Plan plan() const { return {planned_bytes, planned_files}; }
  // --sample 1/M: the level of the occurrence sample (estimate/occurrence_sample.h) at and above
  // which every occurrence went through every codec. The table's entries use complete_level,
  // log2(M) lower: the table keeps 1/M of the keys, so the sampled codecs meet as many of them
  // as they would meet keys in a full table at the planned level.
  int occurrence_level = 0;
  // Per setting: the exact setting whose psize is the auxiliary variable of a sampled setting's
  // ratio estimates (estimate/sample_level.h PlanSampling): a costly codec's psize follows a
  // cheaper codec's far more closely than it follows lsize, so the same interval needs a much
  // smaller sample. -1: lsize is the auxiliary.
  std::vector<int> anchors;
  // The rare-class census (estimate/anchor_class.h): a sampled setting with an anchor also went
  // through every block of an anchor class of at most this many unique blocks in its row
  // (estimate::kRareClassBlocks; state/rare_classes.h finds them). 0: no such census (scans
  // before state format 16, --sample, lists without an anchor). A merge takes the smaller: a
  // class of at most that many blocks in the union is whole in both parts.
  uint64_t rare_class_blocks = 0;
  // Per row: 0, or the unique bytes of a row whose sampled codecs the scan topped up
  // (estimate/top_up.h): its budget's levels are RowBudgetLevels of them. Empty: none topped
  // (also states before format 17). A merge keeps a row's only where both parts have it, added.
  std::vector<uint64_t> topped_bytes;

  // The complete level of (row, setting).
  int LevelOf(size_t row, size_t setting) const {
    return setting_levels.empty() ? complete_level : setting_levels[row * sampled.size() + setting];
  }
};

// A file as one row lays it out, for the metadata model and the exact referenced totals.
struct FileShape {
  uint64_t block_bytes = 0;  // lsize of its blocks
  uint64_t blocks = 0;       // maxblkid + 1 (holes included)
  uint64_t non_hole = 0;     // L0 blocks that are not holes under the setting (embedded count)
  // All-zero L0 blocks read, where the setting's no-dedup write path writes them and the dedup
  // one makes them holes (zfs/write_rules.h ZeroBlockWrittenOnlyWithoutDedup); else 0.
  uint64_t zero_blocks = 0;
  // Indirect blocks per level from L1 over the non-hole blocks (zfs/indirect_ranges.h), as
  // the read stage counted them. Empty: not known (states of format < 6), modelled as if the
  // data were spread over the whole file (zfs/metadata.h AddFile).
  std::vector<uint64_t> indirects;
  // Where zero_blocks is not 0: indirect blocks per level over the blocks the no-dedup write path
  // writes (the non-hole ones and the zero blocks: FileIndirects::read), which `used` takes. Else
  // empty, as in states of format < 23 (the model then takes that path's data as spread over the
  // file: a 50 GiB sparse file with 2 MiB of zeros written deep inside it was given 120K of
  // indirect blocks more than the same file holding 2 MiB of random bytes).
  std::vector<uint64_t> written_indirects;
  auto operator<=>(const FileShape&) const = default;
};

// Per row, a file's indirect blocks per level (FileShape::indirects) over the blocks it read
// (`read`: where zero blocks are written) and over those not all zero (`nonzero`: where zero
// blocks are holes). What a file record or a linked file keeps to rebuild its shapes.
struct FileIndirects {
  std::vector<std::vector<uint64_t>> read, nonzero;
};

// FileShape::indirects of row `row` for a setting where zero blocks are holes or not.
inline std::vector<uint64_t> IndirectsFor(const FileIndirects& f, size_t row, bool zero_is_hole) {
  const auto& rows = zero_is_hole ? f.nonzero : f.read;
  return row < rows.size() ? rows[row] : std::vector<uint64_t>{};
}

// A file's FileShape under one setting of row `row`: `blocks` blocks of `block_bytes`, `non_hole`
// of them not holes in the setting's table, `zero_blocks` all-zero ones its no-dedup write path
// writes (0 where it does not); its indirects as IndirectsFor says, and where zero_blocks is not
// 0 those over every block read (FileShape::written_indirects).
inline FileShape ShapeOf(uint64_t block_bytes, uint64_t blocks, uint64_t non_hole,
                         uint64_t zero_blocks, const FileIndirects& f, size_t row,
                         bool zero_is_hole) {
  return FileShape{block_bytes,
                   blocks,
                   non_hole,
                   zero_blocks,
                   IndirectsFor(f, row, zero_is_hole),
                   zero_blocks != 0 ? IndirectsFor(f, row, false) : std::vector<uint64_t>{}};
}

// A directory, for the metadata model (its ZAP).
struct DirectoryShape {
  uint64_t entries = 0;
  uint64_t name_bytes = 0;
  uint64_t longest_name = 0;
  // Its micro-ZAP block compressed by ZFS's lz4 (pipeline/directory_zap.h); 0: a fat ZAP, or
  // not measured (states of format < 13).
  uint64_t microzap_lz4_bytes = 0;
  auto operator<=>(const DirectoryShape&) const = default;
};

// What the top-up (estimate/top_up.h) did with a row, in this run: the blocks it read again and
// coded, and when it could not code them all, why. Whether the row ended topped up is
// SamplingState::topped_bytes; a row the top-up did not take up has an empty record. A merge adds
// the parts' work and keeps the first reason.
struct TopUpRecord {
  uint64_t blocks = 0;  // blocks read again and coded
  uint64_t bytes = 0;   // their lsize
  double seconds = 0;   // wall time of the reads and codecs
  // Why the row kept its sampled levels: the first block that could not be read again or had
  // changed since it was read ("path: what happened"), or the interrupt. Empty: none.
  std::string left;
};

// Whether a top-up (estimate/top_up.h) takes a row of this table: it keeps every key (not sampled,
// not overflowed) and at most estimate::kTopUpMaxBlocks of them, so that a scan listed every
// block its sampled codecs skipped.
inline bool TopUpTakes(const ddt::DedupTable& table) {
  return table.sample_shift() == 0 && !table.overflowed() &&
         table.entries() <= estimate::kTopUpMaxBlocks;
}

struct RowState {
  uint64_t block_bytes = 0;  // recordsize or volblocksize
  std::unique_ptr<ddt::DedupTable> table;
  // Every block's key, counted whether the table keeps it or not (a sampled table's calibration).
  std::unique_ptr<estimate::DistinctBlocks> distinct;
  uint64_t sparse_holes = 0;  // records lying wholly in holes of the files
  // --sample 1/M only (else empty): the sampled occurrences' sums.
  estimate::OccurrenceSample occurrences;
  // Per setting: how many files have each shape.
  std::vector<std::map<FileShape, uint64_t>> files;
  // Per setting: CPU time of its codec over every thread, and the bytes it compressed.
  std::vector<double> codec_seconds;
  std::vector<uint64_t> codec_bytes;
  TopUpRecord top_up;
};

// Where the space goes by directory and by extension, for the featured setting, and the dedup
// that needs no DDT. Rows are keyed by name; sampled references name their rows by index into
// `directory_names` / `extension_names`.
// Adds `add` to `into` element by element, growing `into` to its length (the sums of a breakdown
// row per (row, setting); an empty side adds nothing).
inline void AddSums(std::vector<uint64_t>* into, const std::vector<uint64_t>& add) {
  if (into->size() < add.size()) into->resize(add.size(), 0);
  for (size_t i = 0; i < add.size(); ++i) (*into)[i] += add[i];
}

struct BreakdownRowSums {
  uint64_t files = 0, bytes = 0, lsize = 0;  // lsize: the featured setting's
  // lsize per (row, setting), row major: every setting's breakdown (issue 17) sums these.
  std::vector<uint64_t> setting_lsize;
  // Per (row, setting) too: the all-zero records that are holes in the setting's table, times
  // the row's block size, as SettingResult::zero_lsize counts them for the whole tree. With
  // setting_lsize, the data the files hold: the base of the breakdown's saved figures. Empty in
  // a state of format 18 or older (not kept then: its breakdowns count from lsize alone).
  std::vector<uint64_t> setting_zero_lsize;
};
struct BreakdownState {
  std::vector<std::string> directory_names, extension_names;
  std::vector<BreakdownRowSums> directories, extensions;  // by the index of the name
  // A reference to a block of any row is kept when the low `shift` bits of its key's `hi` are
  // zero (1/2^shift of the key space).
  uint32_t shift = 0;
  struct Reference {
    ddt::Fingerprint key;
    uint32_t directory = 0, extension = 0;
    uint32_t row = 0;  // the block size (index in rows) the block was cut with
  };
  std::vector<Reference> references;
  // Whole-file contents (order-independent hash of its first row's keys, and per row the
  // featured setting's lsize: non-hole records x the row's block size) -> copies. Per row,
  // because a copy's lsize is the row's: a 130K file is 256K of records at 128K, 132K at 4K.
  // States of format < 14 hold the first row's lsize only (ContentLsize falls back to it).
  struct Content {
    uint64_t lo = 0, hi = 0;
    std::vector<uint64_t> lsize;
    auto operator<=>(const Content&) const = default;
  };
  std::map<Content, uint64_t> contents;
  // The contents kept (ContentKept): every content of kWholeContentBytes or more, which stands
  // for itself, and of the others those whose `lo` has at least `content_shift` low zero bits,
  // 1 in 2^content_shift of them, each standing for 2^content_shift
  // (state/breakdown_sample.h SettleContentSample: the smallest shift that keeps at most
  // kBreakdownMaxContents of the input's). 0 below that many distinct contents, which is every
  // tree of fewer files; states of format < 15 hold 0.
  uint32_t content_shift = 0;
  // Per row: all-zero records read, and their bytes.
  std::vector<uint64_t> zero_blocks, zero_bytes;
  // The contents and zero blocks are the first row's only, standing for every row: a state of
  // format < 14 of several rows, or a merge with one (KeepFirstRowOnly).
  bool first_row_only = false;
};

// True when every breakdown row keeps its setting_zero_lsize (a state of format 19 and up, not
// merged with an older one): the breakdown's saved figures then count the all-zero records.
bool ZeroLsizeKept(const BreakdownState& b);

// Reduces `b` to what a state of format < 14 holds (the first row's contents and zero blocks),
// so that it merges with one: their contents then meet under the same key.
void KeepFirstRowOnly(BreakdownState* b);
// A per-row vector cut to its first row (what KeepFirstRowOnly does to each).
inline void KeepFirst(std::vector<uint64_t>* v) {
  if (v->size() > 1) v->erase(v->begin() + 1, v->end());
}

// A content's lsize in row `row` (the first row's where the state has no other).
inline uint64_t ContentLsize(const BreakdownState::Content& c, size_t row) {
  return row < c.lsize.size() ? c.lsize[row] : c.lsize.empty() ? 0 : c.lsize[0];
}

// A content this large (its first row's lsize) is kept whatever the content shift and counts for
// itself: a copy of a disk image is too large a share of the duplicates to be left to a draw, and
// such files are few (4,096 per TiB at most), so keeping them all costs little memory.
inline constexpr uint64_t kWholeContentBytes = uint64_t{256} << 20;
inline bool ContentIsWhole(const BreakdownState::Content& c) {
  return ContentLsize(c, 0) >= kWholeContentBytes;
}
// True when the contents of a breakdown at `content_shift` keep `c` (BreakdownState::contents).
inline bool ContentKept(const BreakdownState::Content& c, uint32_t content_shift) {
  return ContentIsWhole(c) ||
         (content_shift < 64 && (c.lo & ((uint64_t{1} << content_shift) - 1)) == 0);
}

// A per-row count of the breakdown at `row`: the first row's where the state has no other.
inline uint64_t RowCount(const std::vector<uint64_t>& v, size_t row) {
  return row < v.size() ? v[row] : v.empty() ? 0 : v[0];
}

// A file as the scan read it: what `zsim scan --since` needs to tell whether it changed, and to
// take what it added back out of the state (state/since.h). Kept when the scan was asked to
// (a state to save) and its tables are exact; per file about 80 bytes plus its path, and 4 bytes
// per block per recordsize.
struct FileRecord {
  std::string path;  // as the walk gave it (under options.paths[root])
  uint32_t root = 0;
  uint64_t dev = 0, ino = 0, size = 0;
  uint64_t data_bytes = 0;  // its bytes outside holes in the figures (InputSummary::bytes_data)
  int64_t mtime_ns = 0, ctime_ns = 0;
  bool is_zvol = false;   // laid out as a zvol (its block size, not the recordsize)
  bool failed = false;    // read in part, then failed: not counted as a file, read again
  bool has_data = false;  // a featured-row record holds a non-zero byte
  uint64_t content_lo = 0, content_hi = 0;  // whole-content hash (BreakdownState::contents)
  // Per row: all-zero records read, records wholly in holes, and one table entry reference
  // (ddt::DedupTable::Insert) per record read, in no particular order.
  std::vector<uint64_t> zero_blocks, holes;
  std::vector<std::vector<uint32_t>> refs;
  // A distributed scan's (pipeline::ScanControl::record_keys): per row, the key of each record
  // read, in place of `refs` (empty then), its rank's table entries moving to other ranks; the
  // state file writes them as references to the entries of the whole table (state_file.h).
  // Empty otherwise.
  std::vector<std::vector<ddt::Fingerprint>> keys;
  FileIndirects indirects;  // per row (empty from states of format < 6)
};

// A file with several names (st_nlink > 1) as the scan counted it, with what it added to the
// state, so that a merge with another part that counted it too counts it once
// (state/linked_files.h). Kept for such files only: per file about 120 bytes plus its path, and
// 4 bytes per block per recordsize the table kept.
struct LinkedFile {
  std::string path;  // the name the walk counted (the smallest of those it met)
  // The file: its file system (LinkedFileSystem: st_dev and statfs's f_fsid on this machine
  // and boot) and inode, and the stamps that say it is the same version in both parts.
  uint64_t fs = 0, ino = 0;
  uint64_t dev = 0;                  // st_dev as the scan saw it (its FileIdentity in file_ids)
  uint64_t size = 0, allocated = 0;  // st_size; st_blocks x 512 (the sizing walk's bytes)
  int64_t mtime_ns = 0, ctime_ns = 0;
  uint32_t directory = 0, extension = 0;  // its breakdown rows (indexes of their names)
  uint64_t bytes_read = 0;
  uint64_t data_bytes = 0;  // as FileRecord's
  bool has_data = false;    // as FileRecord
  uint64_t content_lo = 0, content_hi = 0;
  // Per row: all-zero records read, records wholly in holes, and the table entry of every record
  // the table kept (all of them unless sampled).
  std::vector<uint64_t> zero_blocks, holes;
  std::vector<std::vector<uint32_t>> refs;
  // A distributed scan's saving one (pipeline::ScanControl::record_keys): per row, the key of
  // each record the table kept, in place of `refs` (empty then), as FileRecord::keys. Empty
  // otherwise.
  std::vector<std::vector<ddt::Fingerprint>> keys;
  FileIndirects indirects;  // as FileRecord
  // --sample 1/M, per row: what its sampled occurrences added, by index into
  // estimate::OccurrenceSample::sums (the cells it touched only).
  std::vector<std::vector<std::pair<uint32_t, estimate::OccurrenceSums>>> occurrences;
};

// What the dedup tables' codes hold (ddt/dedup_table.h).
enum class CodeKind : uint8_t {
  kRounded = 0,  // psize as the scan's profile and geometry store it (state format <= 6)
  kRaw = 1,      // the compressor's raw output length under the scan's budget (format 7)
  // lzjb, zle, lz4 and gzip: the output under the largest budget and the smallest budget it
  // fits (zfs::LeastBudgetKnown); zstd: as kRaw (state format 8)
  kLeastBudget = 2,
  // As kLeastBudget, and zstd's blocks too where early abort does not apply under the scan's
  // policy (zfs::LeastBudgetKept); zstd's others as kRaw (state format 9)
  kLeastBudgetZstd = 3,
  // Every codec but off keeps least-budget codes at every lsize whatever the scan's profile, and
  // every zstd setting of level 3 and up one more column, its early-abort code (ddt::EncodeProbe,
  // ProbeColumns), so a report answers early abort under any profile and budget (every scan;
  // state format >= 10)
  kEarlyAbort = 4,
};

// True when a table of `kind` made under the scan policy `scan` holds a least-budget code for a
// block of `lsize` under `c` (else a raw or rounded one).
bool KeepsLeastBudget(CodeKind kind, const zfs::WritePolicy& scan, Compression c, uint64_t lsize);

// True when a table of `kind` gives setting `c` an early-abort column (kEarlyAbort, zstd of
// level 3 and up).
bool HasProbe(CodeKind kind, Compression c);

// The columns of a dedup table of `kind`: one per setting (options order), then one early-abort
// column per setting HasProbe says (in the settings' order). Per setting, the column of its
// early-abort code, or kNoProbe.
inline constexpr size_t kNoProbe = SIZE_MAX;

// The code a sampled setting stores for a block it did not run on, and its early-abort column
// too: a hole for an all-zero block the setting makes one (known without compressing it), else
// kPendingCode. The scan stores it (pipeline/scan_blocks.cc), and a saved state writes it in place
// of a code no estimate reads (state_write.cc).
inline ddt::PsizeCode UnsampledCode(bool is_zero, bool zero_is_hole) {
  return is_zero && zero_is_hole ? ddt::kHoleCode : ddt::kPendingCode;
}
std::vector<size_t> ProbeColumns(CodeKind kind, const std::vector<Compression>& compressions);

// True when a scan with `options` (resolved) keeps the DDT key words of setting `c`'s compressed
// blocks (ddt/written_key.h) in a table that keeps them (ScanState::written_keys): under
// --checksum sha256 (the key ZFS's dedup uses), for a codec whose bytes are OpenZFS's (lzjb,
// zle, lz4, gzip; zsim's zstd is a newer release than OpenZFS carries, whose output differs).
// A sampled codec keeps them for the blocks it runs on (the report uses them where it ran on
// every one).
bool KeepsWrittenKey(const ScanOptions& options, size_t c);

// The columns of a dedup table that keeps written keys: after the settings' and early-abort
// columns (ProbeColumns), ddt::kWrittenKeyColumns per setting KeepsWrittenKey says (in the
// settings' order), stored as their setting. Per setting, its first one, or kNoKey (every one
// when `written_keys` is false or `kind` is not kEarlyAbort).
inline constexpr size_t kNoKey = SIZE_MAX;
std::vector<size_t> KeyColumns(const ScanOptions& options, CodeKind kind, bool written_keys);

// The dedup table layout a scan with `options` (resolved) builds for codes of `kind`, `sampled`
// per setting (SamplingState::sampled): compression=off derived from lsize, a sampled codec kept
// aside, the others inline, zero blocks holes where the scan's write rules say so; an early-abort
// column stored as its setting; written-key columns (KeyColumns) inline.
std::vector<ddt::SettingStorage> TableLayout(const ScanOptions& options,
                                             const std::vector<bool>& sampled, CodeKind kind,
                                             bool written_keys);

struct ScanState {
  // The scan's options with every default resolved (pipeline/scan.h ResolveOptions). The fields
  // that fixed the content are listed by ContentOptions; the others are the report's defaults.
  ScanOptions options;
  SamplingState sampling;
  CodeKind code_kind = CodeKind::kEarlyAbort;
  // The tables keep the DDT key words of compressed blocks (KeyColumns, state format 12; a
  // --since scan keeps its base's choice).
  bool written_keys = true;
  size_t featured = 0;  // the breakdowns' setting: the first that compresses
  std::vector<RowState> rows;
  std::map<DirectoryShape, uint64_t> directories;
  BreakdownState breakdown;
  InputSummary input;
  // The host that scanned (gethostname), and a 64-bit hash of (device, inode) of every file
  // scanned, sorted: a merge of two states of one host finds the files both hold (hard links
  // across their trees, overlapping inputs), which it cannot count once (state/merge.h).
  // 8 bytes per file.
  std::string host;
  std::vector<uint64_t> file_ids;
  // Every file read, when `has_records` (a scan asked to keep them, with exact tables): the
  // base of a later `zsim scan --since`. A merge keeps them when both parts have them (their
  // references looked up in the merged table, their inputs numbered after the first part's).
  bool has_records = false;
  std::vector<FileRecord> records;
  // Every file with several names the scan counted (read in full, not in pieces), with what it
  // added: a merge counts a file both parts hold once. Their references name entries of `rows`'
  // tables.
  std::vector<LinkedFile> links;
  bool partial = false;
  double seconds = 0;  // wall time of the scan(s)
};

// The first setting that compresses (0 when none does): the breakdowns' setting.
size_t FeaturedSetting(const std::vector<Compression>& compressions);

// The file_ids hash of a file's (device, inode).
uint64_t FileIdentity(uint64_t dev, uint64_t ino);

// Bytes the tables and sketches hold, and the state that grows with the files (ScanResult::memory).
ScanMemory StateMemory(const ScanState& state);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_SCAN_STATE_H_
