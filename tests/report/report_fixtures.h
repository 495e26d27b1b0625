// tests/report/report_fixtures.h
//
// Hand-built ScanResults for the report tests: a setting is described by its sizes and dedup
// figures, and the DDT footprint by its in-core / on-disk sizes, so each test states exactly the
// situation the advice is judged on.

#ifndef ZSIM_TESTS_REPORT_REPORT_FIXTURES_H_
#define ZSIM_TESTS_REPORT_REPORT_FIXTURES_H_

#include <cstdint>
#include <string>

#include "zsim/scan_result.h"

namespace zsim::testing {

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = kKiB * 1024;
inline constexpr uint64_t kGiB = kMiB * 1024;

struct SettingSpec {
  uint64_t recordsize = 128 * kKiB;
  CompressionAlgorithm algorithm = CompressionAlgorithm::kLz4;
  int level = 0;
  uint64_t lsize = 0;
  double compressratio = 1.0;  // psize = lsize / compressratio
  double dedup_ratio = 1.0;    // allocated dsize = referenced dsize / dedup_ratio
  uint64_t ddt_in_core_bytes = 0;
  uint64_t ddt_on_disk_bytes = 0;
  DdtFormat format = DdtFormat::kLegacy;
};

// One SettingResult whose figures agree with each other the way the engine's do: used = psize
// (no metadata), pool_alloc = allocated dsize + DDT on-disk, one histogram row for refcount 1 and
// one for refcount 4 shaped to give dedup_ratio (1 .. 4), the ratios computed from the rows.
inline SettingResult MakeSetting(const SettingSpec& spec) {
  SettingResult s;
  s.recordsize = spec.recordsize;
  s.compression = Compression{spec.algorithm, spec.level};
  const uint64_t blocks = spec.lsize / spec.recordsize;
  const auto block_psize = static_cast<uint64_t>(double(spec.recordsize) / spec.compressratio);
  // x entries referenced once, y entries referenced 4 times: (x + 4y) / (x + y) = dedup_ratio.
  const auto entries = static_cast<uint64_t>(double(blocks) / spec.dedup_ratio);
  const uint64_t y = (blocks - entries + 2) / 3;  // rounded up: the floored ratio reaches the aim
  const uint64_t x = blocks - 4 * y;
  auto stat = [&](uint64_t n) {
    return DdtStat{n, n * spec.recordsize, n * block_psize, n * block_psize};
  };
  if (x > 0) s.dedup.histogram.push_back({1, stat(x), stat(x)});
  if (y > 0) s.dedup.histogram.push_back({4, stat(y), stat(4 * y)});
  for (const DdtHistogramRow& row : s.dedup.histogram) {
    s.dedup.total.allocated += row.allocated;
    s.dedup.total.referenced += row.referenced;
  }
  s.dedup.total.refcnt = 0;
  const DdtStat& a = s.dedup.total.allocated;
  const DdtStat& r = s.dedup.total.referenced;
  s.dedup.ratio = a.dsize ? double(r.dsize * 100 / a.dsize) / 100.0 : 1.0;
  s.dedup.unique_entries = x;
  s.dedup.duplicate_entries = y;
  s.dedup.zdb_dedup = a.dsize ? double(r.dsize) / double(a.dsize) : 1.0;
  s.dedup.zdb_compress = r.psize ? double(r.lsize) / double(r.psize) : 1.0;
  s.dedup.zdb_total = s.dedup.zdb_dedup * s.dedup.zdb_compress;
  DdtFootprint fp;
  fp.format = spec.format;
  fp.leaf_bytes = 4096;
  fp.in_core_bytes = spec.ddt_in_core_bytes;
  fp.on_disk_bytes = spec.ddt_on_disk_bytes;
  fp.l2arc_header_bytes = spec.ddt_in_core_bytes / 4096 * 96;
  fp.rule_of_thumb_320 = (x + y) * 320;
  fp.unique.entries = x;
  fp.duplicate.entries = y;
  s.dedup.footprints.push_back(fp);
  s.blocks.data = blocks;
  s.lsize = blocks * spec.recordsize;
  s.psize = blocks * block_psize;
  s.asize = s.psize;
  s.compressratio = s.psize ? double(s.lsize * 100 / s.psize) / 100.0 : 1.0;
  s.used = s.psize;
  s.pool_alloc = a.dsize + spec.ddt_on_disk_bytes;
  return s;
}

// A ScanResult with `ram_bytes` of RAM, profile 2.4, the given DDT format in force, no settings.
inline ScanResult MakeResult(uint64_t ram_bytes, DdtFormat format = DdtFormat::kLegacy) {
  ScanResult r;
  r.options.paths = {"/data"};
  r.options.ram_bytes = ram_bytes;
  r.options.ddt_format = format;
  r.input.paths = r.options.paths;
  return r;
}

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_REPORT_REPORT_FIXTURES_H_
