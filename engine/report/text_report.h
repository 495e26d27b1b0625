// engine/report/text_report.h
//
// The text report printed by `zsim scan` (see json_report.h for the module overview). After a
// header and the one-line verdict, its sections, in this order (each opens with "== <title> =="):
//   1. What was scanned: files, directories, bytes, skipped paths by reason, unreadable paths.
//   2. Settings evaluated: one row per (recordsize, compression): logical, physical, allocated,
//      compressratio, dedup ratio, combined ratio, used without dedup and with dedup (ALLOC
//      deflated), the savings of both on the one base of decision.h, and ALLOC raw; the
//      recommended setting is marked "*".
//   3. DDT histogram of the featured setting (the one the advice recommends), exactly as
//      `zdb -DD` prints it, with its ratio line.
//   4. DDT size and RAM: in core and on disk per DDT format, the rules of thumb for comparison,
//      and what that means against --ram (ARC, L2ARC with its header cost, special vdev).
//   5. Block sizes and special vdev: the recommended setting's data blocks by psize as zdb -bb
//      groups them, and what a special vdev (metadata + small blocks under each
//      special_small_blocks threshold, + the DDT) or a dedup vdev would hold (sizing.h).
//   6. Breakdown: top directories and file types by duplicate bytes and by compression savings
//      (omitted with a note when the scan collected none).
//   7. Advice: every advice item's sentence (advice.h), the summary first.
// Control characters in file names print as '?', so a name cannot forge report lines.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_TEXT_REPORT_H_
#define ZSIM_ENGINE_REPORT_TEXT_REPORT_H_

#include <array>
#include <string>

#include "engine/report/advice.h"
#include "zsim/scan_result.h"

namespace zsim::report {

// Section titles, in report order (tests assert the order).
inline constexpr const char* kSectionScanned = "What was scanned";
inline constexpr const char* kSectionSettings = "Settings evaluated (recordsize x compression)";
inline constexpr const char* kSectionHistogram = "DDT histogram";
inline constexpr const char* kSectionDdtSize = "DDT size and RAM";
inline constexpr const char* kSectionBlockSizes = "Block sizes and special vdev";
inline constexpr const char* kSectionBreakdown = "Breakdown";
inline constexpr const char* kSectionAdvice = "Advice";

// How wide the report may be: `width` columns (the terminal's, 100 when not a terminal); prose
// is folded to it and the settings table leaves out its least needed columns (allocated,
// combined, physical, logical, ALLOC(raw), used+dedup) until it fits, unless `wide`.
struct TextOptions {
  size_t width = 100;
  bool wide = false;
};

std::string ToText(const ScanResult& result);
// The same with advice already computed by ComputeAdvice(result).
std::string ToText(const ScanResult& result, const Advice& advice, const TextOptions& text = {});

// An estimated ratio and its 95% interval, "3.23x ±0.06 (3.17x-3.29x)": the ± is the wider side
// (a ratio's interval need not be symmetric). The ratio is floored to 2 decimals as zfs and
// zpool print it, and so are the bounds: the interval of the figure shown.
// What was scanned, in bytes: "69.6 MiB in size, 49.6 MiB of data (holes not counted)", and what
// this run read where it differs (a --since rescan).
std::string ScannedBytesText(const InputSummary& input);

// Under a section of the featured setting whose figures rest on a sample (the histogram, the DDT
// size, the block sizes, the breakdown): which sample, or "" where none; `with_codec`: the
// section's sizes rest on the codec's sample too; `calibrated`: its sample's counts and sizes
// are scaled to add up to the setting's psize (finish/block_sizes.h CalibrateBlockSizes), not
// scaled up by the table's sampling alone.
std::string SampledNoteText(const SettingResult& setting, bool with_codec, bool calibrated = false);

// The settings table's note on the base of its saved figures (the HTML report's too).
std::string SavedBaseText(const ScanResult& r);

std::string RatioWithInterval(double ratio, const std::array<double, 2>& ci95);

// What the top-up did with one row, in a sentence without a line break (the text and HTML
// reports' "What was scanned"): "recordsize 16K has few unique blocks: ..." for a row topped up,
// else a sentence ending in a colon that the reason (TopUpSummary::left) follows.
std::string TopUpSentence(const TopUpSummary& t, const ScanOptions& options);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_TEXT_REPORT_H_
