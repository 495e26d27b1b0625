// engine/zfs/ddt_footprint.h
//
// What the dedup table itself costs, in RAM and on disk, as ZFS would build it (docs/zfs_model.md
// §6): each DDT class (unique, duplicate) is a fat ZAP in the MOS with uint64 keys. Modelled here:
//   - chunks per entry: 1 entry chunk + 2 key chunks (40-byte key) + ceil(value / 21) where the
//     value is the ZLE-compressed phys (256-byte trad phys legacy, 72-byte flat phys fast dedup,
//     the latter always stored raw: see DdtEntryChunks) plus a 1-byte header (ddt_zap.c:
//     ddt_zap_compress);
//   - leaves: 24-byte chunks, 158 per 4K leaf (v23..2.1), 1278 per 32K leaf (2.2+); the ZAP
//     splits a full leaf by the next hash bit (extendible hashing). The leaf count is simulated
//     with that rule on uniform hashes (the DDT's hash is the checksum's first word), the median
//     of 33 seeded runs (9 above 2^15 entries; or once on the table's own hashes, where the scan
//     knows them), block ids (and the holes of outgrown pointer tables) tracked; above a few
//     hundred leaves the result is scaled by powers of two, which keeps the fill oscillation ZFS
//     shows between about 53 % and 75
//     %;
//   - in core (zdb mspace) = fill count x leaf size: v23's zdb counted the fill of the dnode's
//     first block pointer only (measured), i.e. the header alone for a ZAP of <= 3 blocks, the
//     first 32 (two levels) or 1024 (three) block ids less freed pointer tables; later versions
//     count every non-hole L0 block (header, leaves, pointer-table blocks);
//   - on disk (zdb dspace) = every block (L0 and indirects) x 3 MOS copies, each block
//     compressed (lzjb in v23, lz4 later) and rounded to the vdev's allocation size; the
//     dnode holds 3 block pointers, so a ZAP of <= 3 blocks has no indirect block.
// The compressed leaf size was fitted on zfs-fuse 0.7.0 (pool v23, lzjb, 4K leaves):
// 640 + 53 bytes per entry, 58 below ashift 12 (docs/space_model.md); with lz4 (0.6.5+) on
// OpenZFS 2.3.2's 32K leaves, fitted on the leaves themselves, each leaf at its own simulated
// entry count (DdtLeafLz4Bytes): legacy 6,815 B + (43.5 + 3.14 D) B per 4-chunk entry, fast
// dedup 6,750 B + (51.5 + 4.75 D) B per entry, D the chance that two entries' key sizes differ;
// fast dedup's tables keep some blocks raw, written late in the log drain's txgs
// (ddt_log_drain.h).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_DDT_FOOTPRINT_H_
#define ZSIM_ENGINE_ZFS_DDT_FOOTPRINT_H_

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_log_drain.h"
#include "zsim/scan_options.h"
#include "zsim/scan_result.h"

namespace zsim::zfs {

// The most entries of one class whose own hashes a footprint's ZAP is laid out on
// (DdtFootprintInput::unique_hashes): 32 MB of hashes. Past it the seeded model's draw is a
// fraction of a percent of the table (the leaf count's spread shrinks as the table grows).
inline constexpr uint64_t kMaxKnownKeyEntries = uint64_t{1} << 22;

// Geometry of one modelled DDT ZAP object.
struct DdtObjectModel {
  uint64_t entries = 0;
  uint64_t leaves = 0;     // leaf blocks
  uint64_t l0_blocks = 0;  // non-hole L0: header + leaves + pointer-table blocks
  uint64_t indirect_blocks = 0;
  uint64_t mspace_bytes = 0;       // in core as zdb prints it (fill count x block size)
  uint64_t dspace_bytes = 0;       // on disk (zdb): dsize of all blocks, all copies
  uint64_t asize_bytes = 0;        // the same in raw asize (what `zpool list` ALLOC counts)
  uint64_t in_core_per_entry = 0;  // as zdb <= 2.2 prints: mspace / entries
  uint64_t on_disk_per_entry = 0;  // dspace / entries
};

struct DdtFootprintInput {
  uint64_t unique_entries = 0;
  uint64_t duplicate_entries = 0;
  // Entries the unique ZAP held at its largest (a ZAP never shrinks). 0 (the default) means
  // unique_entries: in most of the accuracy suite's copies (one file at a time, several txgs)
  // the unique tables measured no larger than their final entries, i.e. a duplicate's second
  // copy was nearly always synced in the txg of its first. Not so for VM images at 4K: zfs-fuse
  // kept 818 B per unique entry on disk against this model's 497 at the final count (the
  // object peaked near 19,000 entries by the leaf model), so pool ALLOC there is 2 % low. The
  // peak depends on the order the data was written in, which a scan does not know. Pass
  // unique + duplicate when every duplicate was written in a later txg than its first copy
  // (measured: d12_10k .. d12_200k).
  uint64_t unique_peak_entries = 0;
  Profile profile = Profile::kZfs24;
  DdtFormat format = DdtFormat::kLegacy;
  VdevLayout vdev;
  int ashift = 12;
  int copies = 1;                            // data copies: DVAs per DDT entry
  uint64_t typical_block_asize = 128 << 10;  // for the ZLE size of the phys value
  uint64_t ram_bytes = 0;  // for the fast-dedup log bound (1 % of RAM, at least 1 MiB)
  // Of each class, the chance that two of its entries differ in their sizes (lsize, psize:
  // DdtKeySizeMix::Diversity), which lz4 then copies less often in fast dedup's leaves
  // (DdtLeafLz4Bytes). 1 when not known (compressed records' sizes differ from entry to entry).
  double unique_size_diversity = 1.0;
  double duplicate_size_diversity = 1.0;
  // The ZAP hashes of the table's entries per class, in key order, where the scan knows ZFS's own
  // keys (a whole table of SHA-256 checksums of blocks stored as read: compression off): a DDT
  // ZAP's hash is the key's first word (zap_micro.c: zap_hash, ZAP_FLAG_PRE_HASHED_KEY), the
  // checksum's first 8 bytes read big-endian (zio_checksum.c: abd_checksum_sha256, BE_64). The
  // leaves, their entries and the log drain's raw blocks are then simulated on those keys, one
  // table, not the expectation over uniform ones. Used only when both classes hold one hash per
  // entry (at most kMaxKnownKeyEntries each) and unique_peak_entries is unset or unique +
  // duplicate (the unique object then held both classes' keys); else ignored.
  std::span<const uint64_t> unique_hashes;
  std::span<const uint64_t> duplicate_hashes;
};

// The sizes of one DDT class's entries, for the chance that two of them differ: the key's size
// fields (ddt_key_t dk_prop: lsize, psize, compression; a block stored uncompressed is the one
// whose psize is its lsize) and the DVA's asize, which follows psize.
// Called once per DDT entry and setting by a report (10 million entries: 60 million calls), so
// the sizes every table gives (multiples of 512 up to 16 MiB) are counted in arrays, not a map.
class DdtKeySizeMix {
 public:
  // One entry of these sizes; `count` entries.
  void Add(uint64_t lsize, uint64_t psize) { Add(lsize, psize, 1); }
  void Add(uint64_t lsize, uint64_t psize, uint64_t count);
  // 1 - sum n_k (n_k - 1) / (N (N - 1)) over the distinct (lsize, psize) of N entries: the chance
  // that two distinct entries differ (Simpson's index, unbiased on a sample of entries too); 0
  // with fewer than two entries.
  double Diversity() const;

 private:
  static constexpr uint64_t kUnits = (uint64_t{16} << 20) / 512 + 1;  // sizes / 512, 0..16M
  // Per lsize / 512: 0, or 1 + the index in `rows_` of its counts by psize / 512.
  std::vector<uint32_t> row_of_;
  std::vector<std::vector<uint64_t>> rows_;
  std::unordered_map<uint64_t, uint64_t> other_;  // any other sizes, by (lsize << 32) ^ psize
  uint64_t entries_ = 0;
};

// One ZAP object of `entries` entries (`peak_entries` >= entries sized its leaves) with
// `chunks_per_entry` chunks each, leaves of 1 << leaf_shift bytes. `lz4_metadata` false means
// the v23 pool: lzjb metadata and zdb's first-block-pointer fill count. `raw`: the blocks the
// fast-dedup log's drain left uncompressed (ddt_log_drain.h; none for the legacy format);
// `flat_phys`: fast dedup's 72-byte flat phys (its own compressed-leaf fit).
// `size_diversity`: DdtKeySizeMix::Diversity of the `entries`. `hashes`: the ZAP hashes of the
// `peak_entries` the object held, in key order (DdtFootprintInput::unique_hashes), or empty for
// uniform ones.
// REQUIRES: 3 <= chunks_per_entry; leaf_shift 12..17; the model's vdev/ashift valid.
DdtObjectModel ModelDdtObject(uint64_t entries, uint64_t peak_entries, int chunks_per_entry,
                              int leaf_shift, bool lz4_metadata, const AllocationModel& alloc,
                              const DdtRawBlocks& raw = {}, bool flat_phys = false,
                              double size_diversity = 1.0, std::span<const uint64_t> hashes = {});

// Mean lz4-compressed bytes of one DDT leaf of 1 << leaf_shift bytes holding `entries_per_leaf`
// entries of `chunks_per_entry` chunks (2.x: lz4 is the MOS's metadata compression), before
// rounding to sectors. The leaf grows with `size_diversity`, the chance that two of its entries
// differ in their sizes (DdtKeySizeMix::Diversity); `flat_phys` (fast dedup's raw 72-byte value)
// has its own fit, 1 B per entry smaller from ashift 12 on. Both fitted on OpenZFS 2.3.2's
// leaves (see the .cc).
// REQUIRES: 0 <= size_diversity <= 1.
double DdtLeafLz4Bytes(int leaf_shift, double entries_per_leaf, int chunks_per_entry,
                       bool flat_phys, double size_diversity, int ashift);

// lz4-compressed bytes of a fat ZAP's header block (block 0) whose embedded pointer table maps
// `leaves` leaves of 1 << leaf_shift bytes (2.x: lz4 is the MOS's metadata compression), before
// rounding: the zap_phys_t fields and one run of equal leaf ids per leaf (see the .cc). One
// 512-byte sector up to about 40 leaves, where the earlier flat fit charged 2K at ashift 9.
// REQUIRES: leaf_shift 12..17.
double DdtZapHeaderLz4Bytes(uint64_t leaves, int leaf_shift);

// RAM of one fast-dedup log entry: DDT_LOG_ENTRY_FLAT_SIZE (ddt_log.c).
inline constexpr uint64_t kDdtLogEntryBytes = 144;

// Expected number of leaves of a fat ZAP after `entries` inserts of `chunks_per_entry` chunks
// into leaves of `leaf_chunks` chunks (the simulation described above). Deterministic.
uint64_t ExpectedZapLeaves(uint64_t entries, int chunks_per_entry, int leaf_chunks);

// Chunks per leaf: (leaf_bytes - 2 * leaf_bytes / 32) / 24 - 2 (zap_leaf.h).
int ZapLeafChunks(int leaf_shift);

// Chunks one DDT entry takes for `format` with `copies` DVAs of `asize` and `refcount`.
int DdtEntryChunks(DdtFormat format, int copies, uint64_t asize, uint64_t refcount);

// Length of ZLE (n = 64) output for the `s_len` bytes at `src` into at most `d_len` bytes, or
// s_len when it does not fit, as zfs_zle_compress_buf (module/zfs/zle.c) reports it: a literal
// run only starts while 64 bytes of room are left (docs/zfs_model.md §3.2).
size_t ZleCompressedLength(const uint8_t* src, size_t s_len, size_t d_len);

// Both classes and the totals as scan_result.h reports them.
struct DdtFootprintModel {
  DdtObjectModel unique;
  DdtObjectModel duplicate;
  DdtFootprint totals;
};
// REQUIRES: ValidateVdev/ValidateAshift/ValidateCopies OK.
DdtFootprintModel ModelDdtFootprint(const DdtFootprintInput& in);

// Bytes of RAM for L2ARC headers per cached buffer: 96 (0.7+), about 180 before 0.6.5 (v23).
uint64_t L2arcHeaderBytes(Profile profile);

// The man page's "1.25 GiB of RAM per 1 TiB of data" (zfsconcepts.7), for comparison.
uint64_t ManPageDedupRam(uint64_t data_bytes);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_DDT_FOOTPRINT_H_
