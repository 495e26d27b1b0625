// engine/report/advice.h
//
// The decision a scan is for, in plain words: turn dedup on or not, which compression, which
// recordsize, and what the dedup table needs (RAM, L2ARC, a special/dedup vdev). Computed once
// from a ScanResult by ComputeAdvice; the text, JSON and HTML reports print the same items.
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
// Compression "pays" from this compressratio on (5 % saved); below it, lz4 is still advised
// because it gives up early on incompressible blocks and turns all-zero blocks into holes.
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
};
std::string_view AdviceKindName(AdviceKind kind);  // "summary", "compression", ...

// Values appear in --json output (VerdictName): append only, never rename.
enum class Verdict : uint8_t {
  // kSummary (and kDedup for the first two)
  kDedupPays,            // "dedup_pays"
  kDedupNeedsHardware,   // "dedup_needs_hardware": pays only with L2ARC or a special vdev
  kCompressionOnly,      // "compression_only"
  kCloneInsteadOfDedup,  // "clone_instead_of_dedup": compression + block cloning/hard links
  kStoreAsIs,            // "store_as_is": nothing saves much (lz4 still on)
  kNothingScanned,       // "nothing_scanned"
  // kCompression
  kCompress,        // "compress": the codec saves enough
  kCompressAnyway,  // "compress_anyway": saves little, costs nothing
  // kDedup
  kDedupMarginal,    // "dedup_marginal"
  kDedupNotWorthIt,  // "dedup_not_worth_it"
  // kDdtMemory
  kDdtFitsInRam,   // "ddt_fits_in_ram"
  kDdtNeedsL2arc,  // "ddt_needs_l2arc_or_special_vdev"
  // kRecordsize
  kPreferRecordsize,  // "prefer_recordsize"
  kKeepRecordsize,    // "keep_recordsize"
  // kDedupWithoutDdt
  kUseCloning,        // "use_block_cloning_or_hard_links"
  kZeroBlocksAreFree  // "zero_blocks_are_free": compression turns them into holes
};
std::string_view VerdictName(Verdict verdict);

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

struct Advice {
  // The setting the advice recommends, which the reports show in full (DDT histogram, sizes):
  // `featured` indexes ScanResult::results, -1 when there are no results.
  int featured = -1;
  uint64_t ram_bytes = 0;  // the RAM the DDT is judged against (ScanOptions::ram_bytes)
  DdtFormat ddt_format = DdtFormat::kLegacy;
  std::vector<AdviceItem> items;                  // kSummary first; at most one item per kind
  const AdviceItem* Find(AdviceKind kind) const;  // nullptr when absent
};

// The advice for `result` (options as resolved by the pipeline: ram_bytes and ddt_format set;
// when ddt_format is unset the profile's default applies). Never fails: an empty result gives one
// kNothingScanned summary. Empty breakdown / dedup_sources just leave out what needs them.
Advice ComputeAdvice(const ScanResult& result);

// The DDT format in force for `options`: ddt_format, else fast for 2.3+ and legacy before.
DdtFormat DdtFormatInForce(const ScanOptions& options);

// The footprint of `setting` for `format`, or nullptr when the engine did not compute it.
const DdtFootprint* FootprintFor(const SettingResult& setting, DdtFormat format);

// The whole `zdb -DD` block for `setting` (object lines sized with `format`, histogram, ratio
// line), as text and HTML both print it.
std::string ZdbBlock(const SettingResult& setting, DdtFormat format, Profile profile);

// Bytes of RAM the DDT needs held in core: its cached ZAP blocks plus the fast-dedup log.
uint64_t DdtRamBytes(const DdtFootprint& footprint);

// "41%" style percentage of what a ratio saves: 1 - 1/ratio, rounded to whole percent.
std::string SavedPercent(double ratio);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_ADVICE_H_
