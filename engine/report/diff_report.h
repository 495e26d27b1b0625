// engine/report/diff_report.h
//
// What changed between two scans (zsim diff OLD NEW): per (recordsize, compression) both hold,
// the figures an administrator follows over time: logical size (decision.h LogicalOf) and
// physical size, compressratio, dedup ratio, DDT entries and
// their RAM (the format each scan reports), `used`, the pool's allocation, and the fraction saved
// without and with dedup (decision.h SpaceOf, as the reports give it); and the input's files and
// bytes; each scan's pool (its options: every figure is the scan's under its own) and the
// settings only one holds. As text (a table of old, new and the change) or JSON (docs/json.md,
// "zsim diff --json").
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_DIFF_REPORT_H_
#define ZSIM_ENGINE_REPORT_DIFF_REPORT_H_

#include <string>

#include "zsim/scan_result.h"

namespace zsim::report {

// `old_name`, `new_name`: how the two scans are named (their state files).
std::string DiffText(const ScanResult& old_scan, const ScanResult& new_scan,
                     const std::string& old_name, const std::string& new_name);
std::string DiffJson(const ScanResult& old_scan, const ScanResult& new_scan,
                     const std::string& old_name, const std::string& new_name);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_DIFF_REPORT_H_
