// engine/zfs/profile.h
//
// The ZFS model, module overview. engine/zfs holds ZFS's rules as pure functions of numbers and
// bytes: no I/O, no threads, no third-party headers. Each rule names its OpenZFS source in a
// comment and its section of docs/zfs_model.md. Entry points:
//   profile.h         per-version facts (this file): limits, defaults, which features exist
//   write_rules.h     compression budget, acceptance, psize rounding, embedded blocks, holes (§2)
//   allocation.h      psize -> asize for disk/mirror/raidz/draid, dsize, copies (§4)
//   ddt_footprint.h   DDT in-core / on-disk size per format (§6)
//   nicenum.h         zfs_nicenum / zfs_nicebytes number formatting (§5.4)
//
// Thread safety: everything here is a pure function or a constant table.

#ifndef ZSIM_ENGINE_ZFS_PROFILE_H_
#define ZSIM_ENGINE_ZFS_PROFILE_H_

#include <cstdint>

#include "zsim/scan_options.h"

namespace zsim::zfs {

inline constexpr uint64_t kMinBlockBytes = 512;  // SPA_MINBLOCKSIZE
inline constexpr int kMinBlockShift = 9;
inline constexpr uint64_t kMaxBlockBytes = 16ull << 20;   // SPA_MAXBLOCKSIZE (format limit)
inline constexpr uint64_t kOldMaxBlockBytes = 128 << 10;  // SPA_OLD_MAXBLOCKSIZE
inline constexpr uint64_t kEmbeddedPayloadBytes = 112;    // BPE_PAYLOAD_SIZE, include/sys/spa.h
// A dataset's recordsize unless set: SPA_OLD_MAXBLOCKSIZE (module/zcommon/zfs_prop.c), in every
// release.
inline constexpr uint64_t kDefaultRecordsize = kOldMaxBlockBytes;

// Per-version facts (docs/zfs_model.md §1, §2, §6). One row per Profile in profile.cc.
struct ProfileRules {
  Profile profile;
  // Largest recordsize the property accepts: 128K in v23 (SPA_MAXBLOCKSHIFT 17), 1M through 2.1
  // (zfs_max_recordsize), 16M from 2.2 (module/zfs/dsl_dataset.c).
  uint64_t max_recordsize;
  // ZVOL_DEFAULT_BLOCKSIZE (include/sys/fs/zfs.h): 8K through 2.1, 16K from 2.2.
  uint64_t default_volblocksize;
  // compression=on means lzjb in v23, lz4 from 0.6.5 on (zio_compress_select).
  CompressionAlgorithm on_means;
  bool has_lz4;
  bool has_zstd;
  // Embedded-data block pointers exist (feature embedded_data, 0.6.4+).
  bool has_embedded;
  // Embedded blocks allowed with dedup=on (zio_write_compress lost its `!zp->zp_dedup` test:
  // openzfs/zfs PR #17113 "Prefer embedded blocks to dedup", commit 09f4dd06c3, in 2.4.0 and
  // 2.3.3). Upstream 2.3.0..2.3.2 still refuse, but the 2.3 profile follows the package it is
  // measured against: Debian's 2.3.2-2~bpo12+2 libzpool embeds data blocks of <= 112 compressed
  // bytes with dedup=on (tests/accuracy/openzfs23: no DDT entry, zdb shows "L0 EMBEDDED").
  bool embedded_with_dedup;
  // With dedup=on and compression=off, all-zero blocks become holes (2.4.0, backport 2.3.3;
  // dmu_write_policy switches compression to "empty", PR #17435). Before: written and
  // deduplicated, as Debian's 2.3.2 still does (measured: refcnt-4 entry of zero records).
  bool zero_hole_with_dedup_off;
  // zstd early abort (2.2.0+, zfs_zstd_compress_buf).
  bool zstd_early_abort;
  // Indirect block shift: 14 (16K) in v23 and <=0.6.5, 17 (128K) from 0.7.0 (DN_MAX_INDBLKSHIFT).
  int indirect_block_shift;
  // DDT ZAP leaf block shift: 12 (4K) through 2.1, 15 (32K) from 2.2 (ddt_zap_default_bs).
  int ddt_leaf_shift;
  // fast_dedup feature available (2.3.0+).
  bool has_fast_dedup;
  // Sync passes over which a txg's dedup-log flush is spread (ddt_log_drain.h): 8 in 2.3
  // (zfs_dedup_log_flush_passes_max, ddt_sync_flush_log_incremental), 1 from 2.4.0
  // (ddt_sync_flush_log returns in passes beyond the first: openzfs/zfs PR #17038, commit
  // 1b495eeab3 "FDT dedup log sync -- remove incremental"; not in 2.3.3, backported to 2.3.4 as
  // 661310ff5c): no leaf is then rewritten late in its txg, none stored raw. 0 without fast
  // dedup. So the 2.3 profile's 8 passes are 2.3.0-2.3.3 (Debian's 2.3.2, which the accuracy
  // suite measures); a 2.3.4+ pool drains as the 2.4 profile does.
  int ddt_log_flush_passes;
};

const ProfileRules& RulesFor(Profile profile);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_PROFILE_H_
