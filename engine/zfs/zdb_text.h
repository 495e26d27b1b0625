// engine/zfs/zdb_text.h
//
// The `zdb -DD POOL` text, byte for byte as zdb prints it (cmd/zdb/zdb.c: dump_all_ddts,
// dump_ddt, dump_dedup_ratio; lib/libzutil/zutil_pool.c: zpool_dump_ddt; docs/zfs_model.md §5.4):
//
//   DDT-sha256-zap-duplicate: 200 entries, size 614 on disk, 184 in core     <- one per object
//   DDT-sha256-zap-unique: 1000 entries, size 479 on disk, 131 in core
//   <blank>
//   DDT histogram (aggregated over all DDTs):
//   <blank>
//   bucket              allocated                       referenced
//   ... header rows, one row per non-empty bucket, " Total" row ...
//   <blank>
//   dedup = 1.17, compress = 1.00, copies = 1.00, dedup * compress / copies = 1.17
//   <blank>
//
// Pinned against real zdb output of zfs-fuse 0.7.0 (pool v23) in tests/zfs/zdb_text_test.cc.
// The 2.3+ per-object line ("NAME: dspace=D; mspace=M; entries=N", totals) follows
// docs/zfs_model.md and is not verified against a 2.3 zdb.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_ZDB_TEXT_H_
#define ZSIM_ENGINE_ZFS_ZDB_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "zsim/scan_options.h"
#include "zsim/scan_result.h"

namespace zsim::zfs {

// One DDT ZAP object as zdb lists it. `name` like "DDT-sha256-zap-unique" (see DdtObjectName).
struct ZdbDdtObject {
  std::string name;
  uint64_t entries = 0;
  uint64_t dspace_bytes = 0;  // on disk: all blocks of the object, all copies
  uint64_t mspace_bytes = 0;  // in core: non-hole L0 blocks x block size
};

// "DDT-<checksum>-zap-<class>", class "duplicate" or "unique".
std::string DdtObjectName(std::string_view checksum, bool duplicate_class);

// One per-object line with its newline. <= 2.2 (and v23): per-entry figures
// (dspace / entries, mspace / entries, integer division); 2.3+: totals. Empty for 0 entries
// (zdb skips empty objects).
std::string ZdbObjectLine(const ZdbDdtObject& object, Profile profile);

// The table zpool_dump_ddt prints (starting and ending with a blank line): header, one row per
// non-empty bucket of `histogram`, then the Total row.
std::string ZdbHistogramTable(const std::vector<DdtHistogramRow>& histogram,
                              const DdtHistogramRow& total, Profile profile);

// "dedup = x.xx, compress = x.xx, copies = x.xx, dedup * compress / copies = x.xx\n\n", from
// the Total row; empty when it holds no blocks.
std::string ZdbRatioLine(const DdtHistogramRow& total);

// The whole `zdb -DD` block: object lines (duplicate before unique, as zdb walks classes),
// the aggregated histogram and the ratio line; "All DDTs are empty\n" after the object lines
// when the total holds no blocks.
std::string ZdbDedupText(const DedupResult& dedup, const std::vector<ZdbDdtObject>& objects,
                         Profile profile);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_ZDB_TEXT_H_
