// engine/report/html_report.h
//
// The `--html FILE` report: one self-contained HTML page (no network, no external file) that a
// storage administrator can mail or attach to a ticket. It holds the verdict and advice, what was
// scanned, the settings table, the zdb -DD text, the DDT size against RAM, the breakdowns, and
// five charts drawn as inline SVG by the page's own script from the embedded JSON report
// (ToJson): compression ratio against codec speed (a ratio per codec when the speed was not
// measured), dedup ratio by recordsize, the DDT histogram, savings per setting, and the DDT's RAM
// against the RAM budget. The recommended setting is marked (outlined, starred) in every chart
// that shows others; byte axes on log scales are ticked at round powers of two.
//
// Safety: every string from the scan (file names, paths, error texts) is made valid UTF-8 (each
// invalid byte becomes U+FFFD) and HTML-escaped; the embedded JSON escapes '<', '>' and '&' so no
// name can close the <script> element; the script writes text only through textContent.
//
// When every chart has been drawn the script sets document.title to "zsim report: ok" (to
// "zsim report: error: ..." if a chart failed) and each chart's <svg> gets data-drawn="N", the
// number of marks drawn: tests/html/ checks both in headless Chromium.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_HTML_REPORT_H_
#define ZSIM_ENGINE_REPORT_HTML_REPORT_H_

#include <string>
#include <string_view>

#include "engine/report/advice.h"
#include "zsim/scan_result.h"

namespace zsim::report {

// The ids of the chart <svg> elements, in page order.
inline constexpr const char* kChartIds[] = {"chart-codec", "chart-dedup-recordsize",
                                            "chart-ddt-histogram", "chart-savings",
                                            "chart-ddt-ram"};

std::string ToHtml(const ScanResult& result);
// The same with advice already computed by ComputeAdvice(result).
std::string ToHtml(const ScanResult& result, const Advice& advice);

// `text` with every byte that is not part of a valid UTF-8 sequence (overlong forms, surrogates
// and code points above U+10FFFF included) replaced by U+FFFD.
std::string ValidUtf8(std::string_view text);

// ValidUtf8(text) with & < > " ' written as entities: safe in element text and quoted attributes.
std::string HtmlEscape(std::string_view text);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_HTML_REPORT_H_
