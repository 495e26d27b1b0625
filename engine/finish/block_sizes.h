// engine/finish/block_sizes.h
//
// The block-size histogram of each setting's data blocks (as `zdb -bb` / `zdb -bbb` group them:
// by psize, power-of-two buckets, with their asize) and the data blocks a special vdev would hold
// under each special_small_blocks threshold: the sizing admins ask for beside the DDT's (OpenZFS
// issues #9158, #16417). Read from a row's dedup table once the scan has drained.
//
// A block goes to the special class when it is file data of psize at most special_small_blocks
// (module/zfs/spa_misc.c: spa_preferred_class, "size <= special_smallblk"); on the special vdev
// (a mirror) each copy takes its psize rounded up to a sector (vdev_default_asize).
//
// Thread safety: pure function of a drained table.

#ifndef ZSIM_ENGINE_FINISH_BLOCK_SIZES_H_
#define ZSIM_ENGINE_FINISH_BLOCK_SIZES_H_

#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/finish/settled_codes.h"
#include "engine/zfs/allocation.h"
#include "zsim/scan_result.h"

namespace zsim::finish {

// Fills block_sizes and small_blocks of `settings` (one per code of the table, in its order)
// from every entry of `table` (one row, block size `block_bytes`). `alloc` is the pool's layout,
// `copies` the copies property, `known_levels` the codes each setting may use (known_codes.h
// KnownCodeLevels). Entries are weighted by the table's sampling (2^sample_shift), and a sampled
// codec's known codes by their share of the lsize.
// REQUIRES: nothing inserts into the table meanwhile.
// `codes` reads the table's codes as the report's pool stores them (settled_codes.h).
void FillBlockSizes(const ddt::DedupTable& table, const CodeSettler& codes, uint64_t block_bytes,
                    const zfs::AllocationModel& alloc, int copies,
                    const std::vector<int>& known_levels, std::vector<SettingResult>* settings);

// Where `s`'s histogram is an estimate (a sampled table, --sample or --max-memory; a sampled
// codec), scales its buckets and thresholds so that the buckets' psize adds up to the setting's
// own (`s->psize`, from the tally: the estimate the settings table states), and their block
// counts to its data blocks (`s->blocks.data`); asizes go with the psize. The histogram keeps
// its sample's shape; scaled by the table's sampling alone, a sample of 1/16 of /usr/share/doc's
// keys added up to 53.6 MB against the setting's 83.6 MB (its few largest blocks drawn or not),
// and the special vdev's sizes came from it. Exact histograms are left as they are (they add up
// already).
void CalibrateBlockSizes(SettingResult* s);

}  // namespace zsim::finish

#endif  // ZSIM_ENGINE_FINISH_BLOCK_SIZES_H_
