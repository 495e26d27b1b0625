// tests/util/result_compare.h
//
// Whether two ScanResults give the same figures: every count, size, ratio, interval, histogram
// row, DDT footprint, breakdown row and input figure; the work done (seconds, codec time and
// bytes: separate scans compress a block they share once each) and zsim's own memory are left
// out. Used where a report is made two ways (from a state, from a merge of states) and must not
// differ.

#ifndef ZSIM_TESTS_UTIL_RESULT_COMPARE_H_
#define ZSIM_TESTS_UTIL_RESULT_COMPARE_H_

#include <gtest/gtest.h>

#include <string>

#include "zsim/scan_result.h"

namespace zsim::testing {

inline void ExpectSameDdt(const DedupResult& a, const DedupResult& b, const std::string& where) {
  EXPECT_EQ(a.ratio, b.ratio) << where;
  EXPECT_EQ(a.sample_modulus, b.sample_modulus) << where;
  EXPECT_EQ(a.ratio_ci95, b.ratio_ci95) << where;
  EXPECT_EQ(a.unique_entries, b.unique_entries) << where;
  EXPECT_EQ(a.duplicate_entries, b.duplicate_entries) << where;
  EXPECT_EQ(a.histogram, b.histogram) << where;
  EXPECT_EQ(a.total, b.total) << where;
  EXPECT_EQ(a.zdb_dedup, b.zdb_dedup) << where;
  EXPECT_EQ(a.zdb_compress, b.zdb_compress) << where;
  EXPECT_EQ(a.zdb_total, b.zdb_total) << where;
  ASSERT_EQ(a.footprints.size(), b.footprints.size()) << where;
  for (size_t i = 0; i < a.footprints.size(); ++i) {
    EXPECT_EQ(a.footprints[i].format, b.footprints[i].format) << where;
    EXPECT_EQ(a.footprints[i].in_core_bytes, b.footprints[i].in_core_bytes) << where;
    EXPECT_EQ(a.footprints[i].on_disk_bytes, b.footprints[i].on_disk_bytes) << where;
    EXPECT_EQ(a.footprints[i].asize_bytes, b.footprints[i].asize_bytes) << where;
    EXPECT_EQ(a.footprints[i].cached_bytes, b.footprints[i].cached_bytes) << where;
    EXPECT_EQ(a.footprints[i].l2arc_header_bytes, b.footprints[i].l2arc_header_bytes) << where;
    EXPECT_EQ(a.footprints[i].leaves_from_keys, b.footprints[i].leaves_from_keys) << where;
  }
}

inline void ExpectSameFigures(const ScanResult& a, const ScanResult& b) {
  EXPECT_EQ(a.partial, b.partial);
  EXPECT_EQ(a.input.paths, b.input.paths);
  EXPECT_EQ(a.input.files, b.input.files);
  EXPECT_EQ(a.input.directories, b.input.directories);
  EXPECT_EQ(a.input.bytes_logical, b.input.bytes_logical);
  EXPECT_EQ(a.input.bytes_data, b.input.bytes_data);  // the saved figures' base
  EXPECT_EQ(a.input.bytes_data_known, b.input.bytes_data_known);
  EXPECT_EQ(a.input.bytes_read, b.input.bytes_read);
  EXPECT_EQ(a.input.skipped, b.input.skipped);
  EXPECT_EQ(a.input.errors.size(), b.input.errors.size());
  EXPECT_EQ(a.options.vdev, b.options.vdev);
  EXPECT_EQ(a.options.ashift, b.options.ashift);
  EXPECT_EQ(a.options.copies, b.options.copies);
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {
    const SettingResult& x = a.results[i];
    const SettingResult& y = b.results[i];
    const std::string where = std::to_string(x.recordsize) + " " + CompressionName(x.compression);
    EXPECT_EQ(x.recordsize, y.recordsize) << where;
    EXPECT_EQ(x.compression, y.compression) << where;
    EXPECT_EQ(x.blocks.data, y.blocks.data) << where;
    EXPECT_EQ(x.blocks.holes, y.blocks.holes) << where;
    EXPECT_EQ(x.blocks.embedded, y.blocks.embedded) << where;
    EXPECT_EQ(x.lsize, y.lsize) << where;
    EXPECT_EQ(x.psize, y.psize) << where;
    EXPECT_EQ(x.asize, y.asize) << where;
    EXPECT_EQ(x.embedded_bytes, y.embedded_bytes) << where;
    EXPECT_EQ(x.compressratio, y.compressratio) << where;
    EXPECT_EQ(x.exact, y.exact) << where;
    EXPECT_EQ(x.ci95, y.ci95) << where;
    EXPECT_EQ(x.used, y.used) << where;
    EXPECT_EQ(x.pool_alloc, y.pool_alloc) << where;
    EXPECT_EQ(x.metadata_bytes, y.metadata_bytes) << where;
    ExpectSameDdt(x.dedup, y.dedup, where);
  }
  auto rows_equal = [](const std::vector<BreakdownRow>& p, const std::vector<BreakdownRow>& q) {
    ASSERT_EQ(p.size(), q.size());
    for (size_t i = 0; i < p.size(); ++i) {
      EXPECT_EQ(p[i].name, q[i].name);
      EXPECT_EQ(p[i].files, q[i].files) << p[i].name;
      EXPECT_EQ(p[i].bytes, q[i].bytes) << p[i].name;
      EXPECT_EQ(p[i].lsize, q[i].lsize) << p[i].name;
      EXPECT_EQ(p[i].psize, q[i].psize) << p[i].name;
      EXPECT_EQ(p[i].duplicate_bytes, q[i].duplicate_bytes) << p[i].name;
      EXPECT_EQ(p[i].zero_lsize, q[i].zero_lsize) << p[i].name;
      EXPECT_EQ(p[i].psize_known, q[i].psize_known) << p[i].name;
    }
  };
  ASSERT_EQ(a.breakdowns.size(), b.breakdowns.size());
  for (size_t i = 0; i < a.breakdowns.size(); ++i) {  // one per setting
    EXPECT_EQ(a.breakdowns[i].recordsize, b.breakdowns[i].recordsize);
    EXPECT_EQ(a.breakdowns[i].compression, b.breakdowns[i].compression);
    rows_equal(a.breakdowns[i].directories, b.breakdowns[i].directories);
    rows_equal(a.breakdowns[i].extensions, b.breakdowns[i].extensions);
    EXPECT_EQ(a.breakdowns[i].sample_modulus, b.breakdowns[i].sample_modulus);
    EXPECT_EQ(a.breakdowns[i].zero_lsize_known, b.breakdowns[i].zero_lsize_known);
  }
  ASSERT_EQ(a.results.size(), b.results.size());
  for (size_t i = 0; i < a.results.size(); ++i) {  // block sizes and the special vdev's share
    ASSERT_EQ(a.results[i].block_sizes.size(), b.results[i].block_sizes.size());
    for (size_t k = 0; k < a.results[i].block_sizes.size(); ++k) {
      EXPECT_EQ(a.results[i].block_sizes[k].blocks, b.results[i].block_sizes[k].blocks);
      EXPECT_EQ(a.results[i].block_sizes[k].asize, b.results[i].block_sizes[k].asize);
    }
  }
  ASSERT_EQ(a.dedup_sources.size(), b.dedup_sources.size());
  for (size_t r = 0; r < a.dedup_sources.size(); ++r) {
    EXPECT_EQ(a.dedup_sources[r].recordsize, b.dedup_sources[r].recordsize) << r;
    EXPECT_EQ(a.dedup_sources[r].duplicate_files, b.dedup_sources[r].duplicate_files) << r;
    EXPECT_EQ(a.dedup_sources[r].duplicate_file_bytes, b.dedup_sources[r].duplicate_file_bytes)
        << r;
    EXPECT_EQ(a.dedup_sources[r].zero_blocks, b.dedup_sources[r].zero_blocks) << r;
    EXPECT_EQ(a.dedup_sources[r].zero_block_bytes, b.dedup_sources[r].zero_block_bytes) << r;
    EXPECT_EQ(a.dedup_sources[r].sample_modulus, b.dedup_sources[r].sample_modulus) << r;
  }
}

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_RESULT_COMPARE_H_
