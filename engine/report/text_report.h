// engine/report/text_report.h
//
// The text report printed by `zsim scan` (see json_report.h for the module overview): what was
// scanned, one line per (recordsize, compression) setting, and for the first setting that has
// data, the DDT histogram and ratio line exactly as `zdb -DD` prints them.
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_REPORT_TEXT_REPORT_H_
#define ZSIM_ENGINE_REPORT_TEXT_REPORT_H_

#include <string>

#include "zsim/scan_result.h"

namespace zsim::report {

std::string ToText(const ScanResult& result);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_TEXT_REPORT_H_
