// engine/report/advice.h
//
// The decision a scan is for, in plain words: turn dedup on or not, which compression, which
// recordsize, and what the dedup table needs (RAM, L2ARC, a special/dedup vdev). Computed once
// from a ScanResult by ComputeAdvice, which writes every item from one Decision (decision.h); the
// text, JSON and HTML reports print the same items.
// Each item is data (kind, verdict, the figures it rests on) plus the sentence, whose sizes come
// from FormatBytes and whose ratios are the ones the report tables show.
//
// The thresholds below are the whole policy; change them here and the tests in
// tests/report/advice_test.cc say what moved.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_ADVICE_H_
#define ZSIM_ENGINE_REPORT_ADVICE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/report/decision.h"
#include "zsim/scan_result.h"

namespace zsim::report {

// Dedup pays from this `zpool list` DEDUP ratio on (it saves at least 1/6 of the space) when its
// table fits the RAM budget below (or, with the same ratio, "needs hardware" when it does not).
inline constexpr double kDedupPaysRatio = 1.20;
// Below this ratio dedup is not worth its table whatever the RAM; between the two it is marginal.
inline constexpr double kDedupNotWorthRatio = 1.10;
// The DDT "fits in ARC" when its in-core size (plus the fast-dedup log) is at most this fraction
// of RAM: ARC's default ceiling on Linux is half of RAM and the table shares it with data and
// other metadata, so a quarter keeps most of the table cached.
inline constexpr double kDdtRamFraction = 0.25;
// Compression "pays" from this ratio on (5 % saved), judged on DataCompression (decision.h):
// compressratio with the all-zero records the codec stores as holes counted in; below it, lz4 is
// still advised because it gives up early on incompressible blocks.
inline constexpr double kCompressionPaysRatio = 1.05;
// A costlier codec (zstd, gzip) is advised over the cheap one (lz4; lzjb where lz4 does not
// exist) only when it stores at least this fraction less (`used` bytes).
inline constexpr double kStrongerCodecGain = 0.10;
// Codecs storing within this fraction of the smallest count as equal; the fastest of them (by
// measured speed, else lz4 < zle < lzjb < zstd < gzip, lower level first) is the one advised.
// 5 %: on the kernel source sample gzip-6 stores 2.9 % less than zstd-3 at a quarter of its speed.
inline constexpr double kCodecTie = 0.05;
// A recordsize other than the first one evaluated is advised only when it stores at least this
// fraction less.
inline constexpr double kRecordsizeGain = 0.03;
// When whole-file duplicates (plus zero blocks, if the featured setting does not compress) make
// up at least this share of what dedup removes, block cloning / hard links are advised instead
// of a DDT, unless dedup still pays on the rest.
inline constexpr double kNoDdtShare = 0.50;

// Values appear in --json output (AdviceKindName): append only, never rename.
enum class AdviceKind : uint8_t {
  kSummary,          // the one-line answer, always first
  kCompression,      // which codec
  kDedup,            // dedup on or off
  kDdtMemory,        // the table against RAM: ARC, L2ARC, special/dedup vdev
  kRecordsize,       // which recordsize stores least
  kDedupWithoutDdt,  // whole-file duplicates / zero blocks: cloning, hard links, holes
  kPerDirectory,     // directories that would want their own dataset settings
  kZvolReservation,  // zvols: what a thick zvol reserves against what it stores
};
std::string_view AdviceKindName(AdviceKind kind);  // "summary", "compression", ...

// A figure an advice sentence rests on. Names carry the unit: *_bytes, *_ratio, *_percent,
// *_entries.
struct AdviceFigure {
  std::string name;
  double value = 0;
};

struct AdviceItem {
  AdviceKind kind = AdviceKind::kSummary;
  Verdict verdict = Verdict::kNothingScanned;
  std::string sentence;  // plain words, each claim with its figure
  std::vector<AdviceFigure> figures;
  // The figure named `name`, or `fallback` when the item has none by that name.
  double Figure(std::string_view name, double fallback = 0) const;
};

// A directory that would store at least kDirectoryGain less in its own dataset with another
// setting than with the recommended one (breakdown psize, per setting).
inline constexpr double kDirectoryGain = 0.10;
// ... and holds at least this share of the data in records (smaller ones are not worth a dataset
// of their own), and not all but this share (its dataset would be the scan's).
inline constexpr double kDirectoryShare = 0.02;
struct DirectoryAdvice {
  std::string name;
  int setting = -1;                // its best setting: index in ScanResult::results
  uint64_t lsize = 0;              // under the recommended setting
  uint64_t psize = 0;              // with its best setting
  uint64_t recommended_psize = 0;  // with the recommended setting
  uint64_t saved_bytes = 0;        // recommended_psize - psize
};

// The decision (decision.h: the recommended setting, dedup on or off, the saved figure), and the
// items that say it in words. Every item is written from the decision, never judged again.
struct Advice : Decision {
  std::vector<AdviceItem> items;                  // kSummary first; at most one item per kind
  std::vector<DirectoryAdvice> directories;       // kPerDirectory's, most saved first (at most 5)
  const AdviceItem* Find(AdviceKind kind) const;  // nullptr when absent
};

// The advice for `result` (options as resolved by the pipeline: ram_bytes and ddt_format set;
// when ddt_format is unset the profile's default applies). Never fails: an empty result gives one
// kNothingScanned summary. Empty breakdown / dedup_sources just leave out what needs them.
Advice ComputeAdvice(const ScanResult& result);

// "compression=zstd-3, recordsize=128K" (volblocksize=... for zvols): how the advice names a
// setting.
std::string SettingsText(const ScanOptions& options, const SettingResult& setting);

// Said beside the verdict when files the scan could not read hold data (their size known):
// "100 MiB in 1 file could not be read (99.9% of the data named): every figure here covers the
// rest." Empty when nothing of known size went unread.
std::string UnreadSentence(const ScanResult& result);

// Of a partial report: "the scan was interrupted; figures cover what was read" and, where the
// sizing walk had counted what the paths hold, how much of it: "64.0 MiB of the 480 MiB in 4
// files the paths hold (13%)". Empty for a complete scan.
std::string PartialSentence(const ScanResult& result);

// Said beside the verdict when a merge counted files in more than one part
// (InputSummary::files_counted_twice); empty otherwise.
std::string CountedTwiceSentence(const ScanResult& result);

// What of a listed path the figures hold, after its error: " (8.00 MiB not read)", " (8.00 MiB
// of 28.0 MiB in the figures, 20.0 MiB not read)", " (all 28.0 MiB in the figures)", or empty
// for a path of unknown size.
std::string PathErrorExtent(const PathError& error);

// The heading of the list of paths listed: "Could not read 2 paths (40.0 MiB not read)", or
// "Could not read, or read in part, ..." when some file is in the figures in part.
std::string PathErrorsHeading(const std::vector<PathError>& errors);

// The whole `zdb -DD` block for `setting` (object lines sized with `format`, histogram, ratio
// line), as text and HTML both print it.
std::string ZdbBlock(const SettingResult& setting, DdtFormat format, Profile profile);
// Said beside it: zdb rounds its ratios where `zpool list` and the table's dedup and compress
// columns truncate them (3.27 in the block and 3.26x above are one ratio, 3.2653).
inline constexpr const char* kZdbRoundingNote =
    "zdb rounds its ratios; zpool list, and the compress and dedup columns above, truncate them.";

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_ADVICE_H_
