#include "engine/zfs/zvol_reservation.h"

#include <algorithm>

#include "engine/zfs/allocation.h"
#include "engine/zfs/profile.h"

namespace zsim::zfs {
namespace {

constexpr uint64_t kIndirectBlockBytes = uint64_t{1} << 17;          // DN_MAX_INDBLKSHIFT
constexpr uint64_t kPointersPerIndirect = kIndirectBlockBytes >> 7;  // SPA_BLKPTRSHIFT: 1024

}  // namespace

uint64_t ThickZvolReservation(uint64_t volsize, uint64_t volblocksize, int copies,
                              const VdevLayout& vdev, int ashift) {
  uint64_t nblocks = volsize / volblocksize;
  // volsize_from_vdevs: raidz charges parity and padding, in units of a 128K block's share.
  uint64_t data = nblocks * volblocksize;
  if (vdev.kind == VdevKind::kRaidz) {
    const uint64_t block_asize = AllocatedSize(volblocksize, vdev, ashift);
    const uint64_t full_asize = AllocatedSize(kOldMaxBlockBytes, vdev, ashift);
    data = static_cast<uint64_t>(static_cast<unsigned __int128>(nblocks) * block_asize *
                                 kOldMaxBlockBytes / full_asize);
  }
  uint64_t indirect_blocks = 7;  // the meta-dnode, L0 to L6
  while (nblocks > 1) {
    nblocks = (nblocks + kPointersPerIndirect - 1) / kPointersPerIndirect;
    indirect_blocks += nblocks;
  }
  const uint64_t metadata_copies = uint64_t(std::min(3, copies + 1));  // SPA_DVAS_PER_BP
  return data * uint64_t(copies) + indirect_blocks * metadata_copies * kIndirectBlockBytes;
}

}  // namespace zsim::zfs
