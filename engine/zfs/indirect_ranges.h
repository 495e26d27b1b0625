// engine/zfs/indirect_ranges.h
//
// Which indirect blocks a file has, from where its non-hole L0 blocks lie (docs/zfs_model.md §4).
// ZFS writes an indirect block only as the parent of a block it writes: dbuf_dirty dirties the
// parent chain of a dirtied block, dbuf_findbp / dbuf_hold_impl create a parent dbuf level by
// level on demand (module/zfs/dbuf.c), and a range never written stays a zero block pointer in
// its parent, which dnode_next_offset skips as a hole (module/zfs/dnode.c). So for a file written
// once, front to back, without overwrites, the indirect block of level l >= 1 covering L0 blocks
// [i * E^l, (i + 1) * E^l) exists exactly when one of those L0 blocks is not a hole, where E =
// 2^BlockPointerShift block pointers fit in an indirect block (indblkshift - SPA_BLKPTRSHIFT:
// 128 in pool v23, DN_MAX_INDBLKSHIFT 14; 1024 from 0.7.0, 17). The file has IndirectLevels
// levels above L0 (dnode_new_blkid raises dn_nlevels until E^levels covers maxblkid + 1).
//
// A file's blocks are read in parts (chunks in parallel, pieces on other hosts): IndirectRanges
// counts a range where it lies inside one part and names the ranges that cross a part's edge,
// so the parts of a file merge in any order and every range is counted once.
//
// Thread safety: values; one thread at a time.

#ifndef ZSIM_ENGINE_ZFS_INDIRECT_RANGES_H_
#define ZSIM_ENGINE_ZFS_INDIRECT_RANGES_H_

#include <cstdint>
#include <vector>

#include "engine/zfs/profile.h"

namespace zsim::zfs {

// log2 of the block pointers per indirect block of the profile (7 in v23, 10 from 0.7).
int BlockPointerShift(Profile profile);

// Levels of indirect blocks above L0 of an object of `blocks` L0 blocks (maxblkid + 1): 0 for
// at most one block (its block pointer is in the dnode).
int IndirectLevels(uint64_t blocks, int bp_shift);

// The ranges with data of one file, or of some of its parts.
class IndirectRanges {
 public:
  // Starts counting the part [first, end) of the L0 blocks of a file of `blocks` blocks; blocks
  // are then added in increasing order. REQUIRES: first <= end <= blocks, bp_shift in [1, 16].
  void StartPart(uint64_t first, uint64_t end, uint64_t blocks, int bp_shift);
  // Counts a non-hole L0 block of the current part.
  void Add(uint64_t blkid) {
    if (levels_ == 0 || blkid >> bp_shift_ == last_[0]) return;  // same L1 as the previous block
    AddNewL1(blkid);
  }

  // Adds the counts of another set of parts of the same file (disjoint from these).
  void Merge(const IndirectRanges& other);
  // Indirect blocks per level (index 0: L1) over every part merged so far; levels as the file
  // has (empty for a file of at most one block).
  std::vector<uint64_t> Counts() const;
  // Nothing counted (no block added, nothing merged that had any).
  bool empty() const;
  void Clear();

  // The flat form (state/frame and MPI encodings): per level the ranges counted inside a part,
  // then the ranges crossing a part's edge, each as (level << 56 | range index), sorted.
  const std::vector<uint64_t>& inside() const { return inside_; }
  const std::vector<uint64_t>& edges() const { return edges_; }
  // Rebuilds from the flat form; false (and empty) when it is not one IndirectRanges gives.
  bool Assign(std::vector<uint64_t> inside, std::vector<uint64_t> edges);

 private:
  void AddNewL1(uint64_t blkid);

  // Counting state of the current part.
  int bp_shift_ = 0;
  int levels_ = 0;
  uint64_t first_ = 0, end_ = 0, blocks_ = 0;
  uint64_t last_[8] = {};  // per level, the range of the previous block (~0: none yet)
  // The figures.
  std::vector<uint64_t> inside_;  // per level
  std::vector<uint64_t> edges_;   // sorted, unique
};

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_INDIRECT_RANGES_H_
