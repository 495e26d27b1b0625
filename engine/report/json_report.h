// engine/report/json_report.h
//
// The report module, overview. Turns a ScanResult into what people and tools read: the advice
// (advice.h: verdicts computed from the engine's figures with stated thresholds), the JSON
// object documented in docs/json.md (json_report.h), the text report (text_report.h) and the
// self-contained HTML page with charts (html_report.h). No I/O: callers write the strings.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_JSON_REPORT_H_
#define ZSIM_ENGINE_REPORT_JSON_REPORT_H_

#include <string>

#include "engine/report/advice.h"
#include "zsim/scan_result.h"

namespace zsim::report {

// The JSON report's schema version ("schema_version"): raised when a field changes meaning or
// goes away; new fields alone do not raise it. docs/json.md is the field reference.
inline constexpr int kJsonSchemaVersion = 5;

// The JSON object (docs/json.md), pretty-printed, ending in a newline. Field names are stable:
// new fields may be added, none renamed. Strings that are not valid UTF-8 (file
// names) keep their valid parts; each invalid byte becomes U+FFFD, never an exception.
// Besides the contract's fields: "advice" (verdict, summary, featured setting, the decision of
// decision.h, thresholds, and the items of advice.h with kind, verdict, sentence and figures),
// "breakdown" and "dedup_sources" (scan_result.h; empty arrays / zeros when the scan did not
// collect them).
std::string ToJson(const ScanResult& result);
// The same with advice already computed by ComputeAdvice(result).
std::string ToJson(const ScanResult& result, const Advice& advice);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_JSON_REPORT_H_
