#include "engine/zfs/allocation.h"

#include <cassert>
#include <string>

#include "engine/zfs/profile.h"
#include "engine/zfs/write_rules.h"

namespace zsim::zfs {
namespace {

uint64_t DivRoundUp(uint64_t n, uint64_t d) { return (n + d - 1) / d; }

}  // namespace

Status ValidateAshift(int ashift) {
  if (ashift < kMinAshift || ashift > kMaxAshift) {
    return Status::InvalidArgument("ashift " + std::to_string(ashift) +
                                   " is out of range: use 9 (512-byte sectors) .. 16 (64K); "
                                   "12 (4K) suits most disks");
  }
  return Status::Ok();
}

Status ValidateCopies(int copies) {
  if (copies < 1 || copies > kMaxCopies) {
    return Status::InvalidArgument("copies " + std::to_string(copies) +
                                   " is out of range: ZFS accepts copies=1, 2 or 3");
  }
  return Status::Ok();
}

Status ValidateVdev(const VdevLayout& v) {
  const std::string forms = " (accepted: disk, mirror:N, raidzP:C, draidP:D:C or draidP:Dd:Cc:Ss)";
  switch (v.kind) {
    case VdevKind::kDisk:
      return Status::Ok();
    case VdevKind::kMirror:
      if (v.children < 2 || v.children > kMaxVdevChildren) {
        return Status::InvalidArgument("a mirror needs 2.." + std::to_string(kMaxVdevChildren) +
                                       " ways, not " + std::to_string(v.children) + forms);
      }
      return Status::Ok();
    case VdevKind::kRaidz:
      if (v.parity < 1 || v.parity > kMaxRaidzParity) {
        return Status::InvalidArgument("raidz parity must be 1, 2 or 3, not " +
                                       std::to_string(v.parity) + forms);
      }
      if (v.children <= v.parity || v.children > kMaxVdevChildren) {
        return Status::InvalidArgument(
            "raidz" + std::to_string(v.parity) + " needs more children than its parity (at least " +
            std::to_string(v.parity + 1) + ", at most " + std::to_string(kMaxVdevChildren) +
            "), not " + std::to_string(v.children) + forms);
      }
      return Status::Ok();
    case VdevKind::kDraid:
      if (v.parity < 1 || v.parity > kMaxRaidzParity) {
        return Status::InvalidArgument("draid parity must be 1, 2 or 3, not " +
                                       std::to_string(v.parity) + forms);
      }
      if (v.data < 1) {
        return Status::InvalidArgument("draid needs at least 1 data disk per group, not " +
                                       std::to_string(v.data) + forms);
      }
      if (v.children < v.data + v.parity || v.children > kMaxVdevChildren) {
        return Status::InvalidArgument(
            "draid" + std::to_string(v.parity) + ":" + std::to_string(v.data) +
            " needs data + parity = " + std::to_string(v.data + v.parity) + " .. " +
            std::to_string(kMaxVdevChildren) + " children, not " + std::to_string(v.children) +
            forms);
      }
      return Status::Ok();
  }
  return Status::InvalidArgument("unknown vdev kind" + forms);
}

uint64_t AllocatedSize(uint64_t psize, const VdevLayout& v, int ashift) {
  assert(ValidateVdev(v).ok() && ValidateAshift(ashift).ok());
  if (psize == 0) return 0;
  const uint64_t sector = uint64_t{1} << ashift;
  switch (v.kind) {
    case VdevKind::kDisk:
    case VdevKind::kMirror:
      return DivRoundUp(psize, sector) * sector;
    case VdevKind::kRaidz: {
      const uint64_t parity = static_cast<uint64_t>(v.parity);
      const uint64_t data_cols = static_cast<uint64_t>(v.children) - parity;
      uint64_t sectors = DivRoundUp(psize, sector);
      sectors += parity * DivRoundUp(sectors, data_cols);
      sectors = DivRoundUp(sectors, parity + 1) * (parity + 1);
      return sectors << ashift;
    }
    case VdevKind::kDraid: {
      const uint64_t data = static_cast<uint64_t>(v.data);
      const uint64_t rows = DivRoundUp(psize, data << ashift);
      return (rows * (data + static_cast<uint64_t>(v.parity))) << ashift;
    }
  }
  return 0;
}

uint64_t DeflateRatio(const VdevLayout& vdev, int ashift) {
  return kOldMaxBlockBytes / (AllocatedSize(kOldMaxBlockBytes, vdev, ashift) >> 9);
}

AllocationModel AllocationModel::For(const VdevLayout& vdev, int ashift) {
  return AllocationModel(vdev, ashift, DeflateRatio(vdev, ashift));
}

BlockSpace AllocationModel::Block(uint64_t psize, int copies) const {
  assert(copies >= 1 && copies <= kMaxCopies);
  const uint64_t one = Asize(psize);
  const uint64_t n = static_cast<uint64_t>(copies);
  return BlockSpace{one * n, DeflatedSize(one, deflate_ratio_) * n};
}

PoolGeometry GeometryFor(const VdevLayout& vdev, int ashift) {
  // vdev_spa_set_alloc: min_alloc is one sector, except dRAID which allocates whole rows of
  // data sectors (vdev_draid_min_alloc). With a single top-level layout the GCD equals it.
  PoolGeometry g;
  g.ashift = ashift;
  const uint64_t sector = uint64_t{1} << ashift;
  g.min_alloc = vdev.kind == VdevKind::kDraid ? static_cast<uint64_t>(vdev.data) * sector : sector;
  g.gcd_alloc = g.min_alloc;
  return g;
}

}  // namespace zsim::zfs
