// include/zsim/scan_result.h
//
// What a scan found: what was read (and what could not be), and one SettingResult per
// (recordsize, compression) evaluated, each with the figures ZFS itself would print for the data
// written with those settings. Produced by the engine, printed by engine/report.
//
// Field names mirror the JSON contract of DESIGN.md; sizes are bytes.
// Thread safety: a plain value.

#ifndef ZSIM_INCLUDE_ZSIM_SCAN_RESULT_H_
#define ZSIM_INCLUDE_ZSIM_SCAN_RESULT_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zsim/scan_options.h"

namespace zsim {

// One side (allocated or referenced) of a DDT histogram row, as zdb prints it
// (docs/zfs_model.md §5.4, ddt_stat_t).
struct DdtStat {
  uint64_t blocks = 0;
  uint64_t lsize = 0;
  uint64_t psize = 0;
  uint64_t dsize = 0;
  DdtStat& operator+=(const DdtStat& o) {
    blocks += o.blocks;
    lsize += o.lsize;
    psize += o.psize;
    dsize += o.dsize;
    return *this;
  }
  friend bool operator==(const DdtStat&, const DdtStat&) = default;
};

// Bucket b holds entries whose refcount r has floor(log2(r)) == b; zdb labels it 2^b.
struct DdtHistogramRow {
  uint64_t refcnt = 1;  // the label: 1 << bucket
  DdtStat allocated;
  DdtStat referenced;
  friend bool operator==(const DdtHistogramRow&, const DdtHistogramRow&) = default;
};

// One DDT class object (DDT-<checksum>-zap-unique / -duplicate) as zdb describes it.
struct DdtClassFootprint {
  uint64_t entries = 0;
  uint64_t in_core_bytes = 0;      // mspace
  uint64_t on_disk_bytes = 0;      // dspace
  uint64_t in_core_per_entry = 0;  // what zdb <= 2.2 prints: "size X on disk, Y in core"
  uint64_t on_disk_per_entry = 0;
  // A ZAP never shrinks, so the unique object's size depends on how many entries it once held:
  // the figures above assume duplicates never sat in it (their copies written in the same txg);
  // these assume every duplicate did (copies written in later txgs). Real pools fall between.
  uint64_t in_core_per_entry_max = 0;
  uint64_t on_disk_per_entry_max = 0;
};

// DDT size for one table format (docs/zfs_model.md §6).
struct DdtFootprint {
  DdtFormat format = DdtFormat::kLegacy;
  uint64_t leaf_bytes = 0;         // ZAP leaf block size
  uint64_t in_core_bytes = 0;      // zdb "in core" total (mspace): cached ZAP leaf bytes
  uint64_t on_disk_bytes = 0;      // zdb "on disk" total (dspace): all copies, indirects
  uint64_t in_core_per_entry = 0;  // as zdb <= 2.2 prints per object: totals / entries
  uint64_t on_disk_per_entry = 0;
  uint64_t log_bytes = 0;           // fast dedup: the in-memory DDT log bound (0 for legacy)
  uint64_t l2arc_header_bytes = 0;  // RAM for L2ARC headers if the whole DDT lives in L2ARC
  uint64_t rule_of_thumb_320 = 0;   // 320 B x entries (Oracle rule of thumb), for comparison
  uint64_t asize_bytes = 0;         // what the DDT adds to `zpool list` ALLOC
  // RAM the table takes when fully cached in ARC: every non-hole ZAP block x the block size.
  // Usually what zdb prints as "in core"; in v23 zdb counts only the first block pointer's fill
  // (docs/space_model.md), so there the two differ and this is the one to size RAM by.
  uint64_t cached_bytes = 0;
  // The ZAP leaves were laid out on the table's own keys (SHA-256 checksums of blocks stored
  // as read: --checksum sha256, compression off, a whole table), not on the expectation over
  // uniform ones: the figures above are then this table's, not a typical one's.
  bool leaves_from_keys = false;
  DdtClassFootprint unique;
  DdtClassFootprint duplicate;
};

struct DedupResult {
  double ratio = 1.0;  // zpool list DEDUP: floor(ref_dsize * 100 / dsize) / 100
  // When the table was sampled (--sample, --max-memory): 1/sample_modulus of the key space was
  // kept, counts and sizes are scaled up by it, and ratio carries a 95% interval.
  uint64_t sample_modulus = 1;
  std::optional<std::array<double, 2>> ratio_ci95;
  uint64_t unique_entries = 0;             // DDT entries with refcount 1
  uint64_t duplicate_entries = 0;          // DDT entries with refcount > 1
  std::vector<DdtHistogramRow> histogram;  // ascending refcnt, empty buckets omitted
  DdtHistogramRow total;                   // the "Total" row (refcnt 0)
  // The zdb ratio line: dedup = ref_dsize / dsize, compress = ref_lsize / ref_psize,
  // copies = ref_dsize / ref_psize, total = dedup * compress / copies.
  double zdb_dedup = 1.0, zdb_compress = 1.0, zdb_copies = 1.0, zdb_total = 1.0;
  std::vector<DdtFootprint> footprints;  // one per DDT format the profile supports
};

struct BlockCounts {
  uint64_t data = 0;      // allocated blocks (each reference counted)
  uint64_t holes = 0;     // never written, or all-zero turned into holes
  uint64_t embedded = 0;  // data inside the block pointer
};

// One row of the block-size histogram of a setting's data blocks, as `zdb -bb` groups it: the
// blocks whose psize falls in [size, 2 x size). Holes and embedded blocks are not in it.
struct BlockSizeBucket {
  uint64_t size = 0;
  uint64_t blocks = 0;  // every reference counted (no dedup), as zdb counts block pointers
  uint64_t psize = 0;
  uint64_t asize = 0;          // allocated on the pool's vdevs (all copies, parity included)
  uint64_t unique_blocks = 0;  // each block once (what dedup=on allocates)
  uint64_t unique_asize = 0;
};

// Data blocks a special vdev would take with special_small_blocks = threshold (psize at most
// the threshold), sized for a mirrored special vdev of the pool's ashift (each copy rounded up
// to a sector).
struct SmallBlocks {
  uint64_t threshold = 0;
  uint64_t blocks = 0;         // every reference
  uint64_t unique_blocks = 0;  // each block once
  uint64_t asize = 0;          // without dedup
  uint64_t unique_asize = 0;   // with dedup (each block once)
};

struct SettingResult {
  uint64_t recordsize = 0;  // or volblocksize for zvols
  Compression compression;
  BlockCounts blocks;
  uint64_t lsize = 0;  // every reference counted, as the dataset accounts it
  uint64_t psize = 0;  // embedded blocks count 0
  uint64_t asize = 0;  // allocated bytes (all DVAs, raw) summed per reference
  uint64_t embedded_bytes = 0;
  double compressratio = 1.0;  // zfs get compressratio: lsize / psize, 2 decimals (floored)
  // The same ratio before the floor: (lsize + metadata psize) / (psize + metadata psize), the
  // value ci95 brackets (a metadata block counts its psize on both sides).
  double compressratio_unrounded = 1.0;
  // The compressratio of the same dataset with dedup=on: `compressratio` but under 2.1 and 2.2,
  // which embed small blocks only without dedup (embedding_lost_with_dedup).
  double compressratio_with_dedup = 1.0;
  bool exact = true;
  std::optional<std::array<double, 2>> ci95;  // when sampled
  DedupResult dedup;
  uint64_t used = 0;  // zfs get used: data + metadata, every reference charged
  // All-zero records (not sparse holes) as the files reference them: holes in this setting's
  // tables, so not in lsize. lsize + zero_lsize is the data the files hold, the base of every
  // "saved" figure (report/decision.h SpaceOf).
  uint64_t zero_lsize = 0;
  // The part of `used` the dedup=on write path does not write: all-zero records (and their
  // metadata) that compression=off writes as data without dedup but as holes with it
  // (zfs/write_rules.h ZeroBlockWrittenOnlyWithoutDedup); 0 for every other setting.
  uint64_t zero_used_without_dedup = 0;
  // What the dedup=on write path takes beyond `used` for blocks it does not embed: under
  // profiles 2.1 and 2.2 a block whose compressed output is 112 bytes or less sits in its block
  // pointer without dedup but is allocated with it (zfs/write_rules.h EmbedsOnlyWithoutDedup),
  // and so is the metadata over it; 0 for every other setting.
  uint64_t embedding_lost_with_dedup = 0;
  uint64_t pool_alloc = 0;      // zpool list ALLOC: deduplicated, with metadata and the DDT
  uint64_t metadata_bytes = 0;  // the metadata part of `used` (dnodes, indirects, ZAPs)
  // The same metadata on a special vdev (a 2-way mirror at the pool's ashift): without the data
  // vdevs' parity and padding (zfs/metadata.h SpecialVdevMetadataDsize).
  uint64_t special_metadata_bytes = 0;
  // Time spent in this setting's codec over every thread, and the bytes it compressed (unique
  // blocks only): codec_bytes / codec_seconds is the codec's speed on this data, per core.
  double codec_seconds = 0;
  uint64_t codec_bytes = 0;
  // Data blocks by psize (ascending buckets, empty ones left out), and the small blocks under
  // each special_small_blocks threshold from 4K to half the block size. Scaled up like the DDT
  // histogram when the table was sampled; a sampled codec's missing sizes are made up in
  // proportion to the blocks it has.
  std::vector<BlockSizeBucket> block_sizes;
  std::vector<SmallBlocks> small_blocks;
};

struct PathError {
  std::string path;
  std::string error;
  // Of a file whose size (st_size) the scan knew: the bytes no figure holds, and those the
  // figures hold (its chunks that reached the tables before it failed, or before an interrupt:
  // docs/inputs.md). Both 0 for a path of unknown size (a directory that could not be listed).
  uint64_t bytes = 0;
  uint64_t bytes_in_figures = 0;
};

// What the paths named hold that the scan could not read: the bytes its errors know of (a file
// that failed to open or to read, or was read in part; a directory that could not be listed
// counts 0).
inline uint64_t UnreadBytes(const std::vector<PathError>& errors) {
  uint64_t n = 0;
  for (const PathError& e : errors) n += e.bytes;
  return n;
}

// The files listed among the errors whose size the scan knew (not read, or read in part).
inline uint64_t FilesOfKnownSize(const std::vector<PathError>& errors) {
  uint64_t n = 0;
  for (const PathError& e : errors) n += e.bytes + e.bytes_in_figures > 0;
  return n;
}

// The files read in part: listed among the errors, with bytes in the figures.
inline uint64_t FilesInPart(const std::vector<PathError>& errors) {
  uint64_t n = 0;
  for (const PathError& e : errors) n += e.bytes_in_figures > 0;
  return n;
}

// What the top-up did with one block size's row: a row of few unique blocks, of which the sampled
// codecs had run on few, was read again after the reading and coded whole (docs/estimation.md,
// "The top-up").
struct TopUpSummary {
  uint64_t block_size = 0;  // the row's recordsize or volblocksize
  bool topped = false;      // its sampled codecs' figures are exact
  uint64_t blocks = 0;      // blocks read again and coded
  uint64_t bytes = 0;       // their lsize
  double seconds = 0;       // wall time
  std::string left;         // why it kept its sampled figures (empty where topped)
  // Topped only because a codec's sample was wider than +-0.5% (the interval top-up), not for
  // few unique blocks: text only, the JSON does not say it.
  bool for_interval = false;
};

struct InputSummary {
  std::vector<std::string> paths;
  uint64_t files = 0;  // regular files (and zvol inputs) modelled whole
  uint64_t directories = 0;
  // The bytes of files the figures hold: the sizes of the files counted, and the chunks that
  // reached the tables of each file read in part (PathError::bytes_in_figures).
  uint64_t bytes_logical = 0;
  // The data those files hold: their bytes outside holes (what a scan reads of them), a function
  // of the data, whatever this run read (a --since rescan reads only what changed). The base of
  // every saved figure. Not known for a state of format 21 or older, or a merge with one
  // (bytes_data_known false): the saved figures then rest on each row's logical size.
  uint64_t bytes_data = 0;
  bool bytes_data_known = false;  // a scan sets it (pipeline/scan.cc)
  uint64_t bytes_read = 0;        // the data bytes this run read for those (holes are not read)
  std::map<std::string, uint64_t> skipped;  // reason -> count
  std::vector<PathError> errors;
  // A merge's files that more than one part held and that each counts (overlapping inputs, hard
  // links of scans made in another boot, or a linked file changed between the scans): the counts
  // beyond each such file's first (a file in three parts: 2), whose blocks read as duplicates
  // of themselves. The same whatever the grouping of the merges; 0 for one scan.
  uint64_t files_counted_twice = 0;
  // A partial scan (ScanResult::partial): the files and bytes (st_size) its paths hold, as the
  // sizing walk counted them before the interrupt (`named_complete`: it had finished; else at
  // least these), so that the report says how much of the whole it covers. 0 where no sizing
  // walk ran, and for a complete scan (which covers them all).
  uint64_t files_named = 0;
  uint64_t bytes_named = 0;
  bool named_complete = false;
  // What zsim said of the paths named before reading them, one sentence each (a block device
  // named beside files, or on another one also named; a path on a kernel pseudo file system):
  // on stderr at the start, and here so that a report of the saved state says it too. A merge
  // keeps each part's (each sentence once); states of format 22 and older hold none.
  std::vector<std::string> notes;
  // The rows the top-up took up or that are topped, in the order of the block sizes; empty
  // where none was (a scan's state keeps them: ScanResult is built from it, not saved).
  std::vector<TopUpSummary> top_up;
};

// Where the space goes, by top-level directory and by file type, for one setting (recordsize or
// volblocksize, compression).
struct BreakdownRow {
  std::string name;  // directory path as given + up to 2 levels below, or ".ext" / "(none)"
  uint64_t files = 0;
  uint64_t bytes = 0;            // the files' bytes in the figures (st_size where whole)
  uint64_t lsize = 0;            // as the setting lays them out
  uint64_t psize = 0;            // after compression
  uint64_t duplicate_bytes = 0;  // lsize of references dedup would remove (estimated, see below)
  // The all-zero records that are holes in the setting's table, not in lsize, as
  // SettingResult::zero_lsize counts them for the whole tree: lsize + zero_lsize is the data the
  // files hold, the base of the row's saved figure (report/decision.h BreakdownSaved). 0 where
  // a saved state of format 18 or older (or a merge with one) did not keep them:
  // Breakdowns::zero_lsize_known is then false.
  uint64_t zero_lsize = 0;
  // False where the row holds data but none of its sampled references was coded by the
  // setting's codec (a sampled codec's sample missed the row's few blocks): psize is then 0 and
  // not known, and so are the row's compression and saving.
  bool psize_known = true;
};

struct Breakdowns {
  uint64_t recordsize = 0;
  Compression compression;
  // Sorted by duplicate_bytes, then lsize, descending; at most 50 rows each.
  std::vector<BreakdownRow> directories;
  std::vector<BreakdownRow> extensions;
  // duplicate_bytes is estimated from the fingerprints whose hash falls in 1/sample_modulus of
  // the key space: a block with refcount r lends (r - 1) / r of its lsize to each referencing row.
  uint64_t sample_modulus = 1;
  // Whether the rows' zero_lsize was kept (a scan, or a state of format 19 and up).
  bool zero_lsize_known = true;
  // The rows' all-zero records are written as data without dedup (compression=off on 2.3.3 and
  // 2.4, zfs/write_rules.h ZeroBlockWrittenOnlyWithoutDedup): they save nothing, as
  // SettingResult::zero_used_without_dedup charges them to `used`.
  bool zero_written_without_dedup = false;
};

// Dedup that needs no DDT, at one block size: whole-file duplicates (block cloning / hard links
// would get them) and all-zero blocks (holes with compression on).
struct DedupSources {
  uint64_t recordsize = 0;  // the block size (recordsize or volblocksize) they are of
  // Files whose whole content another file also has (not copies of an embedded one-block file).
  uint64_t duplicate_files = 0;
  uint64_t duplicate_file_bytes = 0;  // their lsize at this block size beyond the first copy
  uint64_t zero_blocks = 0;           // all-zero data blocks of this block size
  uint64_t zero_block_bytes = 0;
  // The whole-file duplicates of files under 256 MiB are counted on the contents whose hash falls
  // in 1/sample_modulus of the hash space, and scaled up (a tree of more than a million distinct
  // file contents: state/breakdown_sample.h); larger files all count. 1: exact.
  uint64_t sample_modulus = 1;
};

// zsim's own memory at the end of the scan, summed over the recordsizes: the tables and the
// distinct-block sketches (what --max-memory bounds), and the state that grows with the files.
struct ScanMemory {
  uint64_t table_bytes = 0;    // every table's entries, index and side codes
  uint64_t table_entries = 0;  // the entries they hold (all kept keys)
  uint64_t sketch_bytes = 0;   // the distinct-block sketches (fixed: 208 KiB per recordsize)
  // What grows with the files and directories rather than with the blocks: a hash of each
  // file's identity (merges), one entry per distinct whole-file content, the breakdown's rows
  // and sampled references, the histograms of file and directory shapes, and under --save or
  // --since the per-file records. Their payloads and container headers, without the
  // allocator's own overhead: a lower bound of what the heap holds for them.
  uint64_t file_state_bytes = 0;
};

struct ScanResult {
  bool partial = false;
  InputSummary input;
  ScanOptions options;  // as resolved (defaults filled in)
  std::vector<SettingResult> results;
  std::vector<Breakdowns> breakdowns;  // one per setting, in `results` order
  // One per block size, in the order of the options' recordsizes: a setting's advice takes its
  // own block size's (DedupSourcesOf).
  std::vector<DedupSources> dedup_sources;
  ScanMemory memory;
  double seconds = 0;  // wall time of the scan
};

// The dedup sources of `setting`'s block size; all zeros when the result has none for it.
inline const DedupSources& DedupSourcesOf(const ScanResult& result, const SettingResult& setting) {
  static const DedupSources kNone;
  for (const DedupSources& d : result.dedup_sources) {
    if (d.recordsize == setting.recordsize) return d;
  }
  return kNone;
}

}  // namespace zsim

#endif  // ZSIM_INCLUDE_ZSIM_SCAN_RESULT_H_
