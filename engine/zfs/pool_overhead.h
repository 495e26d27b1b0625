// engine/zfs/pool_overhead.h
//
// What a pool allocates outside its datasets' data, metadata and DDT ZAPs, for the profiles
// measured against OpenZFS 2.3.2's own pool code (tests/accuracy/openzfs23; docs/zfs_model.md
// §4): the MOS's blocks other than the DDT ZAPs, and the pool's root filesystem. Every MOS block
// is written with 3 DVAs (spa_max_replication; dmu_write_policy in module/zfs/dmu.c gives the MOS
// objset's blocks os_copies = spa_max_replication), so one MOS block costs 3 x its asize on the
// pool's layout: 12K at ashift 12 on a disk, 36K on raidz2:6.
//
// The MOS of a pool with one filesystem, as zdb -dd lists it on 2.3.2 (psize at ashift 9, where
// compression shows; at ashift 12 each block rounds to 4K):
//   - the meta-dnode: 3 blocks of 16K dnodes, about 1.5K each compressed;
//   - the object directory (a fat ZAP): 2 blocks, 1.5K and 2K;
//   - 7 metaslab space maps and the log space map's unflushed-phys object, 1K each (the metaslabs
//     the allocators and the ditto copies touched; 7 on every pool measured, up to 200 MB);
//   - the feature ZAPs: for_read 1K, for_write 1K, descriptions 3 blocks (3K, 3K, 512), enabled
//     txg 1K; SPA history 2K; the config nvlist 1K; the filesystem's properties ZAP 512;
//   - raidz only: one more ZAP of 1K (the smaller vdev ZAPs are embedded);
//   - with a DDT: its statistics object, 2 blocks (2K, 2.5K);
//   - with the fast (FDT) format: its directory ZAP (512) and about one more block per 1,500
//     entries, at most 5 (late sync passes of the log flush store the statistics block raw and
//     grow the meta-dnode: measured +1 block at 43 entries, +3 at 3,633, +6 at 7,872);
//   - with a DDT, MOS object ids past 95 (wide vdevs; the fast format's 5 objects): a 4th
//     meta-dnode block and the meta-dnode's indirect block (the .cc gives the ids measured).
// The pool's root filesystem is one 512-byte objset block with 2 DVAs.
// Checked to the byte on disk and mirror:2 at ashift 9 and 12 and raidz2:6 at ashift 12 (empty
// pool, tiny, fileserver, source, database, vmstore; ALLOC after the pool settles); raidz2:6 at
// ashift 9 is 9% high on this part (its 3-sector rounding of 1K blocks). Not measured beyond a
// 200 MB pool: space maps grow with the metaslabs a large pool touches (a few KiB each).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_POOL_OVERHEAD_H_
#define ZSIM_ENGINE_ZFS_POOL_OVERHEAD_H_

#include <cstdint>

#include "zsim/scan_options.h"

namespace zsim::zfs {

// The pool's dedup table as the MOS sees it.
struct PoolDdt {
  bool present = false;  // the pool has DDT entries
  DdtFormat format = DdtFormat::kLegacy;
  uint64_t entries = 0;  // unique + duplicate
};

// asize of the MOS blocks listed above plus the root filesystem's objset block, on `vdev` at
// `ashift`. REQUIRES: ValidateVdev(vdev), ValidateAshift(ashift).
uint64_t MosOverheadAsize(const VdevLayout& vdev, int ashift, const PoolDdt& ddt);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_POOL_OVERHEAD_H_
