// engine/zfs/allocation.h
//
// Allocation: from the psize ZFS stores to the asize it allocates on a top-level vdev, and to the
// "deflated" dsize that zdb's DSIZE column, `zfs get used` and the dedup ratio count
// (docs/zfs_model.md §4). Covers single disks, mirrors, raidz1-3 and dRAID, copies=1..3, and the
// validation of those settings.
//
//   asize (one DVA)   disk/mirror: roundup(psize, 1 << ashift)         vdev.c: vdev_default_asize
//                     raidzP, C children: s = ceil(psize / sector); s += P * ceil(s / (C - P));
//                       s = roundup(s, P + 1)                       vdev_raidz.c: vdev_raidz_asize
//                     dRAID P, D data: rows = ceil(psize / (D sectors)); rows * (D + P) sectors
//                                                            vdev_draid.c:
//                                                            vdev_draid_psize_to_asize
//   deflate ratio     floor(131072 / (asize(128K) >> 9))           vdev.c: vdev_set_deflate_ratio
//   dsize (one DVA)   (asize >> 9) * deflate ratio             spa_misc.c: dva_get_dsize_sync
//   block             copies DVAs, each with its own asize; dsize of the block = sum over DVAs
//
// A mirror DVA records its asize once: raw disk use is asize x ways, but every figure ZFS prints
// (DSIZE, used, ALLOC) counts it once. Raidz expansion (2.3+) is not modelled: the layout given
// is the one every block was born with.
//
// Thread safety: pure functions and an immutable value type; call from any thread.

#ifndef ZSIM_ENGINE_ZFS_ALLOCATION_H_
#define ZSIM_ENGINE_ZFS_ALLOCATION_H_

#include <cstdint>

#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::zfs {

inline constexpr int kMinAshift = 9;   // SPA_MINBLOCKSHIFT
inline constexpr int kMaxAshift = 16;  // ASHIFT_MAX in OpenZFS (zpool create refuses more)
inline constexpr int kMaxCopies = 3;   // spa_max_replication (SPA_DVAS_PER_BP)
inline constexpr int kMaxRaidzParity = 3;
inline constexpr int kMaxVdevChildren = 255;  // raidz/draid children limit

// Each returns OK, or kInvalidArgument with a message that says what would be right.
Status ValidateAshift(int ashift);  // 9..16
Status ValidateCopies(int copies);  // 1..3
// disk; mirror with 2..255 ways; raidz parity 1..3 with parity < children <= 255; dRAID parity
// 1..3, data >= 1, data + parity <= children <= 255.
Status ValidateVdev(const VdevLayout& vdev);

// asize of one DVA holding `psize` bytes. 0 for psize 0 (holes and embedded blocks allocate
// nothing). REQUIRES: ValidateVdev(vdev) and ValidateAshift(ashift) are OK.
uint64_t AllocatedSize(uint64_t psize, const VdevLayout& vdev, int ashift);

// vdev_deflate_ratio: 512 for disks and mirrors (dsize == asize), less for raidz and dRAID
// (raidz1 5-wide ashift 12: 409). REQUIRES as AllocatedSize.
uint64_t DeflateRatio(const VdevLayout& vdev, int ashift);

// dva_get_dsize_sync: the dsize of one DVA of `asize` bytes on a vdev with `deflate_ratio`.
// Multiples of 512 only reach here (asize always is one).
inline uint64_t DeflatedSize(uint64_t asize, uint64_t deflate_ratio) {
  return (asize >> 9) * deflate_ratio;
}

// The space one block takes, summed over its DVAs.
struct BlockSpace {
  uint64_t asize = 0;  // sum of the DVAs' asize (what `zpool list` ALLOC counts)
  uint64_t dsize = 0;  // sum of the DVAs' dsize (zdb DSIZE, `zfs get used`)
  friend bool operator==(const BlockSpace&, const BlockSpace&) = default;
};

// The allocation rules of one pool layout, with the deflate ratio computed once. A value; copy it
// freely. Build it with AllocationModel::For after validating the layout.
class AllocationModel {
 public:
  // REQUIRES: ValidateVdev(vdev) and ValidateAshift(ashift) are OK.
  static AllocationModel For(const VdevLayout& vdev, int ashift);

  const VdevLayout& vdev() const { return vdev_; }
  int ashift() const { return ashift_; }
  uint64_t sector_bytes() const { return uint64_t{1} << ashift_; }
  uint64_t deflate_ratio() const { return deflate_ratio_; }

  // One DVA.
  uint64_t Asize(uint64_t psize) const { return AllocatedSize(psize, vdev_, ashift_); }
  uint64_t Dsize(uint64_t psize) const { return DeflatedSize(Asize(psize), deflate_ratio_); }

  // A block of `psize` written with `copies` DVAs (each on a vdev of this layout).
  // REQUIRES: 1 <= copies <= 3.
  BlockSpace Block(uint64_t psize, int copies) const;

 private:
  AllocationModel(const VdevLayout& vdev, int ashift, uint64_t ratio)
      : vdev_(vdev), ashift_(ashift), deflate_ratio_(ratio) {}
  VdevLayout vdev_;
  int ashift_;
  uint64_t deflate_ratio_;
};

// Number of DVAs ZFS writes for a metadata block (indirects, dnodes, ZAPs) of a dataset with
// `copies`: one more, at most 3 (dmu_write_policy, redundant_metadata=all).
inline int MetadataCopies(int copies) { return copies + 1 < kMaxCopies ? copies + 1 : kMaxCopies; }

// Number of DVAs of MOS blocks, the DDT's included: spa_max_replication = 3 (docs/zfs_model.md §4).
inline constexpr int kMosCopies = 3;

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_ALLOCATION_H_
