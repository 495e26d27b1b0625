// engine/zfs/record_layout.h
//
// How ZFS cuts a file or a zvol into level-0 blocks (docs/zfs_model.md §1; module/zfs/zfs_vnops.c
// zfs_write, module/zfs/dnode.c dnode_set_blksz).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_RECORD_LAYOUT_H_
#define ZSIM_ENGINE_ZFS_RECORD_LAYOUT_H_

#include <cstdint>

namespace zsim::zfs {

struct RecordLayout {
  uint64_t block_bytes = 0;  // lsize of every block of the object
  uint64_t blocks = 0;       // maxblkid + 1
};

// A file written front to back with `recordsize` in force:
//  - size 0: no block;
//  - size <= recordsize: one block of roundup(size, 512) (SPA_MINBLOCKSIZE, never ashift);
//  - larger: ceil(size / recordsize) blocks of recordsize, the last one zero-padded.
// REQUIRES: recordsize is a power of two in [512, 16M].
RecordLayout FileLayout(uint64_t file_bytes, uint64_t recordsize);

// A zvol (or an image scanned as one): ceil(size / volblocksize) blocks of volblocksize.
RecordLayout ZvolLayout(uint64_t volume_bytes, uint64_t volblocksize);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_RECORD_LAYOUT_H_
