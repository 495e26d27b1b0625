#include "engine/report/sizing.h"

namespace zsim::report {

VdevSizing SizeVdevs(const ScanResult& r, const Decision& d) {
  VdevSizing out;
  if (d.featured < 0) return out;
  const SettingResult& f = r.results[size_t(d.featured)];
  const bool dedup = d.dedup_on || d.dedup_with_hardware;
  const DdtFootprint* fp = FootprintFor(f, d.ddt_format);
  const uint64_t ddt = dedup && fp != nullptr ? fp->on_disk_bytes : 0;
  out.dedup_vdev_bytes = ddt;
  SpecialVdevSize base;
  // On the special vdev itself (a mirror): the data vdevs' parity does not apply to it.
  base.metadata_bytes = f.special_metadata_bytes != 0 ? f.special_metadata_bytes : f.metadata_bytes;
  base.ddt_bytes = ddt;
  base.total_bytes = base.metadata_bytes + base.ddt_bytes;
  out.special.push_back(base);
  for (const SmallBlocks& s : f.small_blocks) {
    SpecialVdevSize v = base;
    v.threshold = s.threshold;
    v.small_blocks = d.dedup_on ? s.unique_blocks : s.blocks;
    v.small_block_bytes = d.dedup_on ? s.unique_asize : s.asize;
    v.total_bytes += v.small_block_bytes;
    out.special.push_back(v);
  }
  return out;
}

}  // namespace zsim::report
