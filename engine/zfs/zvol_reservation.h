// engine/zfs/zvol_reservation.h
//
// The refreservation `zfs create -V SIZE` sets on a thick (non-sparse) zvol, so its writes can
// never fail for lack of space: libzfs's zvol_volsize_to_reservation (lib/libzfs/
// libzfs_dataset.c). The data part is the volume's blocks as the pool would allocate them, in
// deflated (usable) bytes: on raidz, volsize_from_vdevs charges each volblocksize block its
// asize with parity and padding, scaled by 128K / asize(128K) (a 16K block on raidz2:6 at ashift
// 12 reserves 2x its size); on other layouts the blocks themselves. Times copies. Then the
// metadata: the meta-dnode's 7 levels plus every indirect level above the blocks (1024 block
// pointers per 128K indirect block, DNODES_PER_LEVEL), each a 128K block (DN_MAX_INDBLKSHIFT)
// with min(3, copies + 1) copies. `zfs create -s` makes a sparse zvol: no reservation.
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_ZFS_ZVOL_RESERVATION_H_
#define ZSIM_ENGINE_ZFS_ZVOL_RESERVATION_H_

#include <cstdint>

#include "zsim/scan_options.h"

namespace zsim::zfs {

// refreservation of a thick zvol of `volsize` bytes. REQUIRES: volblocksize a power of two
// (512..16M), copies 1..3, a valid vdev and ashift (ValidateVdev, ValidateAshift).
uint64_t ThickZvolReservation(uint64_t volsize, uint64_t volblocksize, int copies,
                              const VdevLayout& vdev, int ashift);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_ZVOL_RESERVATION_H_
