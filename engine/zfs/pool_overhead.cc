#include "engine/zfs/pool_overhead.h"

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
      one_copy += ddt.entries / kFdtEntriesPerLatePassBlock * alloc.Asize(kFdtLatePassBlock);
    }
  }
  return one_copy * kMosCopies + kRootObjsetCopies * alloc.Asize(kRootObjsetPsize);
}

}  // namespace zsim::zfs
