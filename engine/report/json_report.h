// engine/report/json_report.h
//
// The report module, overview. Turns a ScanResult into what people and tools read: the JSON
// object of DESIGN.md's contract (json_report.h) and the text report (text_report.h). Pure
// formatting: no I/O, no figures computed here that the engine did not compute.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_JSON_REPORT_H_
#define ZSIM_ENGINE_REPORT_JSON_REPORT_H_

#include <string>

#include "zsim/scan_result.h"

namespace zsim::report {

// The JSON object (DESIGN.md, "JSON contract"), pretty-printed, ending in a newline. Field names
// are stable: new fields may be added, none renamed. Strings that are not valid UTF-8 (file
// names) keep their valid parts; each invalid byte becomes U+FFFD, never an exception.
std::string ToJson(const ScanResult& result);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_JSON_REPORT_H_
