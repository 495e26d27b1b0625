// engine/zfs/metadata.h
//
// The metadata ZFS writes for a tree of files, so that `used` (zfs get used: data dsize of every
// reference + the dataset's metadata) and `pool_alloc` (zpool list ALLOC: deduplicated data
// asize + metadata + DDT + MOS and space maps) can be predicted (docs/zfs_model.md §1, §4).
// Modelled per dataset (metadata copies = copies + 1, at most 3; every block compressed,
// lzjb in v23, lz4 later, and rounded to the vdev's allocation):
//   - dnode blocks: 512-byte dnodes, 32 per 16K block; objects = files + directories + 4;
//     fitted: a block compresses to 64 + 101.5 bytes per used dnode + 38 per file with
//     indirect blocks (v23, lzjb), or (lz4 metadata, 0.7 on) to 280 bytes + 66 per dnode
//     holding a block pointer + a share of the payload of embedded blocks (DnodeBlockRawBytes),
//     its rounding to 512 averaged;
//   - the meta-dnode's indirect blocks (7 levels in v23);
//   - per file with more than one block: indirect blocks of 1 << indirect_block_shift bytes
//     (128 block pointers in v23, 1024 later), only over ranges holding data
//     (indirect_ranges.h), each compressed to 38 + 8 bytes per DVA per block pointer (v23,
//     lzjb) or 70 bytes + 34 + 8 per DVA per block pointer (lz4, 0.7 on) plus the compressor's
//     cost of the zero rest (IndirectBlockPsize);
//   - directories: a micro-ZAP (microzap.h: 64-byte entries, block grows 512 B at a time) while
//     its block is at most 128K and names < 50 bytes, compressed by lz4 as the scan measured it
//     (from 0.7), or fitted at 64 + 4 bytes per entry + 0.7 per name byte compressed (v23's
//     lzjb; states that did not measure it); else a fat ZAP of 16K leaves (not measured);
//   - fixed objects: objset, master node, delete queue, user/group used, shares directory.
// Pool overhead (MOS, space maps, the pool's root dataset): before 2.3 a fitted constant per
// sector size plus a term proportional to allocated space (calibration points:
// docs/space_model.md); from 2.3 the MOS's blocks as 2.3.2 writes them (pool_overhead.h).
//
// Thread safety: MetadataTally is a value, one thread at a time; merge per-thread tallies.

#ifndef ZSIM_ENGINE_ZFS_METADATA_H_
#define ZSIM_ENGINE_ZFS_METADATA_H_

#include <cstdint>
#include <span>

#include "engine/zfs/allocation.h"
#include "engine/zfs/pool_overhead.h"
#include "engine/zfs/write_rules.h"
#include "zsim/scan_options.h"

namespace zsim::zfs {

// What the tally needs to know of the dataset.
struct MetadataContext {
  Profile profile = Profile::kZfs24;
  VdevLayout vdev;
  int ashift = 12;
  int copies = 1;  // the dataset's copies property
};

// Space of the dataset's metadata, accumulated file by file and directory by directory for one
// (recordsize, compression) row. Each Add* models that object's metadata blocks immediately.
class MetadataTally {
 public:
  // REQUIRES: context's vdev, ashift, copies valid.
  explicit MetadataTally(const MetadataContext& context);

  // A regular file: `block_slots` = maxblkid + 1 (the file's block count, holes included; 0
  // for an empty file), `data_blocks` = non-hole L0 blocks (embedded ones count as non-hole),
  // `indirects` = its indirect blocks per level from L1 (IndirectRanges::Counts over those
  // blocks; a level not given has as many as its ranges and blocks allow: the data taken as
  // spread over the whole file, an upper bound).
  void AddFile(uint64_t block_slots, uint64_t data_blocks,
               std::span<const uint64_t> indirects = {});

  // A directory with `entries` names (excluding . and ..), `name_bytes` their total length and
  // `longest_name` the longest (>= 50 bytes forces a fat ZAP). `microzap_lz4_bytes`: its
  // micro-ZAP block (microzap.h) compressed by ZFS's lz4, header included, as the scan measured
  // it; 0 when not measured (the fit below serves, as it does for v23's lzjb metadata).
  void AddDirectory(uint64_t entries, uint64_t name_bytes, uint64_t longest_name,
                    uint64_t microzap_lz4_bytes = 0);

  // The data blocks of the setting stored embedded in their block pointer (every reference, so
  // one per file holding one: embedding needs a block of <= 112 compressed bytes, in practice
  // the single block of a small file) and their payload bytes, under `compression`: a dnode
  // holding one costs a share of its payload instead of a block pointer's random bytes
  // (DnodeBlockRawBytes). Before this is called every file with data counts as holding a block
  // pointer.
  void SetEmbedded(uint64_t blocks, uint64_t payload_bytes, Compression compression);

  uint64_t files() const { return files_; }
  uint64_t directories() const { return directories_; }

  // Metadata dsize charged to the dataset (`used` = data dsize of every reference + this).
  uint64_t DatasetMetadataDsize() const;
  // The same in asize.
  uint64_t DatasetMetadataAsize() const;
  // Logical and physical size of the metadata (for compressratio, which counts every block).
  uint64_t MetadataLsize() const;
  uint64_t MetadataPsize() const;
  // The same metadata's dsize on a special vdev of a 2-way mirror at the pool's ashift, where
  // special_class puts it (module/zfs/spa_misc.c spa_preferred_class): a mirror allocates each
  // copy its psize rounded to sectors, without the data vdevs' parity and padding (and with it
  // in the pool, compressed sizes round to its sector: special_policy_).
  uint64_t SpecialVdevMetadataDsize() const;

 private:
  struct Space {
    double lsize = 0, psize = 0, asize = 0, dsize = 0;
    double special_dsize = 0;  // on a special mirror vdev (SpecialVdevMetadataDsize)
  };
  // `embeddable`: a level-0 block that ZFS may store in its block pointer (<= 112 bytes).
  void AddBlock(double lsize, double raw_psize, int copies, Space* into,
                bool embeddable = false) const;
  // AddBlock averaged over raw_psize +- 256 (blocks of one kind whose sizes vary).
  void AddBlockSpread(double lsize, double raw_psize, int copies, Space* into) const;
  Space Fixed() const;  // dnode blocks, meta-dnode indirects, fixed objects

  MetadataContext context_;
  AllocationModel alloc_;
  AllocationModel special_alloc_;  // a 2-way mirror special vdev at the pool's ashift
  WritePolicy write_policy_;       // how compressed metadata sizes round (no dedup on metadata)
  // How compressed sizes round with that vdev in the pool: to its sector (spa_min_alloc is the
  // smallest of the top-level vdevs', module/zfs/vdev.c), not to a dRAID group's width.
  WritePolicy special_policy_;
  bool special_rounds_alike_;  // special_policy_ rounds as write_policy_ (all but dRAID)
  uint64_t files_ = 0;
  uint64_t directories_ = 0;
  uint64_t indirect_files_ = 0;  // files with at least one indirect block
  uint64_t data_files_ = 0;      // files with at least one non-hole block (in the dnode or below)
  uint64_t embedded_files_ = 0;  // of those, the ones whose block is embedded (SetEmbedded)
  uint64_t embedded_payload_bytes_ = 0;
  Compression embedded_compression_;
  Space variable_;  // file indirects, directories
};

// Compressed bytes (before rounding) of one 16K block of `dnodes` 512-byte dnodes as OpenZFS
// 0.7+ writes it with lz4 (the ZPL's SA bonus, dnodesize=legacy): 280 bytes + 66 per dnode
// holding a block pointer (its checksum, DVA offset and birth do not compress) + the
// embedded blocks' payload bytes x 0.35 under lz4, x 0.6 under zstd, x 0.85 under gzip and the
// others (an lz4 payload's literals repeat across similar small files; entropy-coded output
// much less). Empty and all-hole files' dnodes cost nothing measurable. Fitted on OpenZFS 2.3.2
// at ashift 9 (zdb -bbbbb psize of every dnode block, zdb -ddddd per object; 18 pools of the
// samples database, fileserver, source and tiny at 16K..1M, lz4, gzip-6, zstd-3): the total
// per pool within -2.7 % .. +5.3 % except tiny at lz4 (3 blocks, -16 % and -14 %), where one
// flat 75 B per dnode was -0.4 % .. +51 % (database: half its files empty, all-zero or embedded).
// dnode_t layout: include/sys/dnode.h (dnode_phys_t); embedding: zio.c zio_write_compress.
double DnodeBlockRawBytes(double dnodes, double with_blkptr, double embedded_payload_bytes,
                          Compression compression);

// psize of one file indirect block holding `block_pointers` block pointers of `child_dvas` DVAs
// each (data copies for an L1, metadata copies above): v23 (lzjb) 46 B per one-DVA pointer plus
// 8 per more DVA; from 0.7 (lz4) 70 B per block + 42 B per one-DVA pointer plus 8 per more DVA
// (OpenZFS 2.3.2, every L1 of database and source 16K at ashift 9: tests/zfs/
// indirect_psize_lz4_test.cc); plus what the compressor spends on the zero rest of the block
// (lzjb: 530 B per 16K; lz4: 1 B per 255), rounded up to 512 B (v23 measured: 2..6 pointers =
// 1024 B). REQUIRES: block_pointers <= the block's capacity.
uint64_t IndirectBlockPsize(Profile profile, uint64_t block_pointers, int child_dvas);

// Pool-wide space outside datasets: MOS, space maps, the pool's root dataset (fitted on v23:
// 38.5 MOS blocks of 3 copies + 49 KB + 0.086 % (ashift >= 12) or 0.03 % of allocated, that
// term capped at 256 MiB allocated).
// `allocated_bytes` = everything else the pool allocates (asize).
uint64_t PoolOverheadAsize(const MetadataContext& context, uint64_t allocated_bytes);

// `zpool list` ALLOC: deduplicated data asize + dataset metadata asize + DDT asize + overhead:
// PoolOverheadAsize (fitted on v23) for the profiles before 2.3, the MOS as OpenZFS 2.3.2 lays it
// out (pool_overhead.h, which needs the DDT's format and entries) for 2.3 and 2.4.
uint64_t PoolAllocated(const MetadataContext& context, uint64_t data_asize_deduplicated,
                       uint64_t metadata_asize, uint64_t ddt_asize, const PoolDdt& ddt = {});

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_METADATA_H_
