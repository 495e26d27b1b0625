#include "engine/zfs/pool_overhead.h"

#include <algorithm>
#include <array>

#include "engine/zfs/allocation.h"

namespace zsim::zfs {
namespace {

// psize of each MOS block of a pool with one filesystem and no DDT (pool_overhead.h lists them).
constexpr std::array<uint64_t, 22> kMosBlocks = {
    1536, 1536, 1536,                          // meta-dnode
    1536, 2048,                                // object directory
    1024, 1024, 1024, 1024, 1024, 1024, 1024,  // metaslab space maps
    1024,                                      // log space map's unflushed phys
    1024, 1024, 3072, 3072, 512,  1024,        // feature ZAPs
    2048,                                      // SPA history
    1024,                                      // config nvlist
    512,                                       // the filesystem's properties
};
constexpr uint64_t kRaidzVdevZap = 1024;
constexpr std::array<uint64_t, 2> kDdtStats = {2048, 2560};
constexpr uint64_t kFdtDirectory = 512;
constexpr uint64_t kFdtLatePassBlock = 1024;
constexpr uint64_t kFdtEntriesPerLatePassBlock = 1500;
// The blocks behind that term are per object, not per entry (the statistics object's block
// rewritten raw from sync pass 8, ddt_log_drain.h; the meta-dnode's growth): capped at the
// largest table measured (7,872 entries: 5 blocks).
constexpr uint64_t kFdtLatePassBlocksMax = 5;
// MOS object ids (zdb -dd on 2.3.2, every pool of the suite): with a legacy DDT on a one-disk
// pool the last object (the second DDT ZAP) is 86; each further leaf vdev adds one (its vdev
// ZAP, vdev_construct_zaps), the fast format 5 (FDT directory, the two log objects and their
// siblings): 91 on a disk, 92 on mirror:2, 93 on raidz1:3, 96 on raidz2:6 (legacy 91). The
// meta-dnode holds 32 dnodes per 16K block and 3 block pointers: past id 95 it needs a 4th
// dnode block and an indirect block (raidz2:6 fast: meta-dnode 120K against 72K legacy).
constexpr uint64_t kMosLastObjectLegacyDdt = 86;
constexpr uint64_t kFdtMosObjects = 5;
constexpr uint64_t kDnodesPerMetaBlock = 32;
constexpr uint64_t kMetaDnodeBlkptrs = 3;
constexpr uint64_t kMetaDnodeBlock = 1536;  // as the 3 of kMosBlocks
constexpr uint64_t kMetaDnodeIndirect = 1024;

uint64_t LeafVdevs(const VdevLayout& vdev) {
  return vdev.kind == VdevKind::kDisk ? 1 : static_cast<uint64_t>(vdev.children);
}
constexpr uint64_t kRootObjsetPsize = 512;
constexpr int kRootObjsetCopies = 2;

}  // namespace

uint64_t MosOverheadAsize(const VdevLayout& vdev, int ashift, const PoolDdt& ddt) {
  const AllocationModel alloc = AllocationModel::For(vdev, ashift);
  uint64_t one_copy = 0;
  for (uint64_t psize : kMosBlocks) one_copy += alloc.Asize(psize);
  if (vdev.kind == VdevKind::kRaidz) one_copy += alloc.Asize(kRaidzVdevZap);
  if (ddt.present) {
    for (uint64_t psize : kDdtStats) one_copy += alloc.Asize(psize);
    if (ddt.format == DdtFormat::kFast) {
      one_copy += alloc.Asize(kFdtDirectory);
      one_copy += std::min(ddt.entries / kFdtEntriesPerLatePassBlock, kFdtLatePassBlocksMax) *
                  alloc.Asize(kFdtLatePassBlock);
    }
    const uint64_t last_object = kMosLastObjectLegacyDdt + LeafVdevs(vdev) - 1 +
                                 (ddt.format == DdtFormat::kFast ? kFdtMosObjects : 0);
    const uint64_t dnode_blocks = last_object / kDnodesPerMetaBlock + 1;
    if (dnode_blocks > kMetaDnodeBlkptrs) {
      one_copy += (dnode_blocks - kMetaDnodeBlkptrs) * alloc.Asize(kMetaDnodeBlock) +
                  alloc.Asize(kMetaDnodeIndirect);
    }
  }
  return one_copy * kMosCopies + kRootObjsetCopies * alloc.Asize(kRootObjsetPsize);
}

}  // namespace zsim::zfs
