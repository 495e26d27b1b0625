// engine/report/decision.h
//
// The one evaluation every part of a report reads: which setting (recordsize or volblocksize,
// compression) is recommended, whether dedup is, and the savings figures those statements quote.
// Decide() computes it once from a ScanResult; the advice items (advice.h), the verdict, the
// settings table's mark, the JSON "decision" object and the HTML highlight are all written from
// it, so they cannot disagree.
//
// One definition of "saved" (SpaceOf): 1 - stored / logical, where logical is the data in
// records, all-zero ones included (LogicalOf) and stored is usable space as `zfs get used` counts
// it: parity and padding deflated by the vdev's ratio (vdev_deflate_ratio). Without dedup stored
// is `used`; with dedup it is `used` as dedup writes the data (less zero_used_without_dedup, plus
// embedding_lost_with_dedup), less
// what dedup removes (referenced - allocated DSIZE), plus the DDT's blocks deflated alike, so both
// sides of every comparison carry parity and padding the same way, and neither the pool-wide
// overhead that `zpool list` ALLOC adds (MOS, space maps). The legend of every report says so.
//
// The policy thresholds live in advice.h. Thread safety: pure functions.

#ifndef ZSIM_ENGINE_REPORT_DECISION_H_
#define ZSIM_ENGINE_REPORT_DECISION_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zsim/scan_result.h"

namespace zsim::report {

// Values appear in --json output (VerdictName): append only, never rename.
enum class Verdict : uint8_t {
  // kSummary (and kDedup for the first two)
  kDedupPays,            // "dedup_pays"
  kDedupNeedsHardware,   // "dedup_needs_hardware": pays only with L2ARC or a special vdev
  kCompressionOnly,      // "compression_only"
  kCloneInsteadOfDedup,  // "clone_instead_of_dedup": compression + block cloning/hard links
                         // (or compression alone: the zero blocks of a setting without it)
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
  kUseCloning,         // "use_block_cloning_or_hard_links"
  kZeroBlocksAreFree,  // "zero_blocks_are_free": compression turns them into holes
  // kDedup, when the summary is kCloneInsteadOfDedup
  kDedupCoveredByCloning,  // "dedup_covered_by_cloning": cloning (or compression, for zero
                           // blocks) gets most of it, no DDT
  // kPerDirectory
  kOwnDataset,  // "own_dataset": some directories want their own dataset settings
  // kZvolReservation
  kThickZvolReserves,  // "thick_zvol_reserves": refreservation beyond what is stored
  // kDedup: a sampled dedup table (--sample 1/M, --max-memory) whose 95% interval on the ratio
  // reaches both sides of the ratio that turns dedup on (kDedupPaysRatio): the sample cannot
  // tell whether dedup pays, so it is not recommended.
  kDedupUncertain,  // "dedup_uncertain"
  // kRecordsize: every block size evaluated is below the pool's sector (1 << ashift), so each
  // block takes a whole sector; no larger size was evaluated to compare with.
  kBlockBelowSector,  // "block_below_sector"
};
std::string_view VerdictName(Verdict verdict);

// The data the files hold in a setting's records: lsize plus the all-zero records (holes in
// the tables, written as data by compression=off without dedup). The same for every compression
// of a record size, so that each saved figure of a row rests on one base, and a codec turning
// zero blocks into holes shows as a saving.
uint64_t LogicalOf(const SettingResult& setting);

// What compression does to the data in records, all-zero ones included: compressratio scaled
// by logical bytes over the bytes compressratio's records stand for plus the all-zero records
// written as data without dedup. Equal to compressratio where no record is all-zero or where
// zero records are written as data (compression=off); above it where a codec makes them holes.
// The compression verdict and advice judge on this, so that a codec saving by holes is not
// called useless. Infinite where every record is an all-zero hole.
double DataCompression(const SettingResult& setting);

// One setting's space on the one base of every "saved" figure: the data the files hold
// (InputSummary::bytes_data, their bytes outside holes), the same for every row, so that the
// row storing less always shows the larger saving; where a state of format 21 or older left it
// unknown, the row's logical size (LogicalOf), shared by the rows of a record size only.
struct SettingSpace {
  uint64_t logical_bytes = 0;  // LogicalOf
  uint64_t base_bytes = 0;     // what the savings are of: bytes_data, or logical_bytes
  uint64_t stored_bytes = 0;   // usable bytes without dedup: `used`
  // usable bytes with dedup: used less zero_used_without_dedup, plus embedding_lost_with_dedup,
  // less removed DSIZE, plus DDT
  uint64_t stored_dedup_bytes = 0;
  uint64_t ddt_bytes = 0;  // of which the DDT's own blocks, deflated as `used` is
  double saved = 0;        // 1 - stored_bytes / base_bytes (0 when the base is 0)
  double saved_dedup = 0;  // 1 - stored_dedup_bytes / base_bytes
};
SettingSpace SpaceOf(const SettingResult& setting, const ScanOptions& options,
                     const InputSummary& input);

// A saved fraction as every report prints it: whole percent, "-4%", never "-0%".
int SavedPercentOf(double saved);
std::string SavedText(double saved);  // "39%"; tables only: a sentence says it in words below
// A saving as a sentence states it, so a negative one never reads "saves -40%": "saves 39%", or,
// when the data takes more room than its size (sector rounding and metadata of small files
// outweigh what compression saves), "stores 40% more than the data's size"; from ten times
// the data's size on (a tree of a few bytes and its metadata), "stores 15018 times the data's
// size" (it read "1501700% more"). `base` gives the verb's base form for "would ...": "save
// 39%", "store 40% more than ...".
std::string SavesText(double saved, bool base = false);
// Where the stored size lies against the saved figures' base: "39% below" or "40% above"; from
// ten times on, "15018 times".
std::string SideText(double saved);

// Which of a setting's figures are estimates: those without dedup (psize, asize, used, saved)
// rest on its codec's figures, sampled unless --exact; those with dedup (the dedup ratio, of
// DSIZE, used and saved with dedup, pool ALLOC) on the codec's and on the dedup table, sampled
// under --sample or --max-memory.
struct EstimatedFigures {
  bool table = false;  // the dedup table was sampled
  bool without_dedup = false;
  bool with_dedup = false;
};
EstimatedFigures EstimatedFiguresOf(const SettingResult& setting);
// A figure as the tables show it: "~" before it where it is an estimate.
std::string Marked(bool estimated, std::string text);

// A ratio's 95% interval as every report prints it: bounds to two decimals, rounded outward
// (the low one down, the high one up), so that the printed interval holds the computed one
// and a verdict quoting the bounds says what the table does.
std::array<double, 2> PrintedInterval(const std::array<double, 2>& ci95);

// Dedup on its own for one setting: the ratio against the RAM budget.
struct DedupJudgement {
  // Pays, needs hardware, marginal, not worth it, or uncertain (a sampled ratio whose interval
  // reaches both sides of kDedupPaysRatio).
  Verdict verdict = Verdict::kDedupNotWorthIt;
  const DdtFootprint* footprint = nullptr;
  uint64_t ram_need_bytes = 0;
  uint64_t budget_bytes = 0;
  bool fits = true;
  // The dedup ratio with the table's own blocks counted as allocated: referenced DSIZE over
  // allocated DSIZE plus the DDT's (SettingSpace::ddt_bytes). The verdict judges the lower of
  // this and the dedup ratio, so that a table whose blocks take back what dedup removes (512-byte
  // records, 1.59x: 8% above the data's size with dedup against 5% without, "Dedup pays ... (0 B
  // less)") never pays. Only the table: metadata and sector rounding, which dedup leaves as
  // they are, do not enter it.
  double ratio_with_table = 1;
  // Under 2.1 and 2.2, what dedup=on allocates for small blocks that without dedup sit in their
  // block pointers (SettingResult::embedding_lost_with_dedup): counted against dedup in
  // ratio_with_table, as the table's blocks are. 0 under the other profiles.
  uint64_t embedding_lost_bytes = 0;
  // The table's own blocks moved the verdict down a class (pays or marginal to marginal or not
  // worth it): the sentences say so.
  bool table_outweighs = false;
};

// How much of the dedup needs no DDT (whole-file duplicates, zero blocks when not compressing).
struct NoDdtShare {
  uint64_t removed_lsize = 0;  // what dedup removes (referenced - allocated lsize)
  uint64_t no_ddt_bytes = 0;   // whole-file duplicates (+ zero blocks when not compressing)
  uint64_t file_bytes = 0;     // of which whole-file duplicates
  uint64_t zero_bytes = 0;     // of which all-zero blocks (counts_zero_blocks only)
  double share = 0;            // no_ddt_bytes / removed_lsize, at most 1
  double residual_ratio = 1;   // dedup ratio once those are gone (lsize based)
  bool counts_zero_blocks = false;
  // The whole-file duplicates are an estimate (DedupSources::sample_modulus > 1): the sentences
  // that quote them say so.
  bool estimated = false;
};

struct Decision {
  int featured = -1;  // the recommended setting: index in ScanResult::results; -1: none
  Verdict verdict = Verdict::kNothingScanned;  // the summary's
  // dedup=on recommended outright (verdict kDedupPays), or only with a special/dedup vdev or an
  // L2ARC for the table (kDedupNeedsHardware). Neither: dedup=off.
  bool dedup_on = false;
  bool dedup_with_hardware = false;
  Verdict dedup_verdict = Verdict::kDedupNotWorthIt;  // the dedup item's (consistent with above)
  DedupJudgement dedup;                               // of the featured setting
  NoDdtShare no_ddt;                                  // of the featured setting
  SettingSpace space;                                 // of the featured setting
  // The saved figure of the recommendation: space.saved_dedup when dedup_on, else space.saved.
  double saved = 0;
  uint64_t stored_bytes = 0;  // and its stored bytes
  uint64_t ram_bytes = 0;     // the RAM the DDT is judged against
  DdtFormat ddt_format = DdtFormat::kLegacy;
  bool zvol = false;  // the settings are volblocksizes (the property to name)
  // The block sizes compared, in evaluation order, each with the compression recommended at it:
  // the setting's index and what it stores under its own decision (dedup on where it would be).
  struct Candidate {
    int index = -1;
    uint64_t stored_bytes = 0;
    bool dedup_on = false;
  };
  std::vector<Candidate> candidates;
};

// The decision for `result` (options as resolved by the pipeline). Never fails: an empty result
// gives kNothingScanned with featured -1 (or 0 when there are results but no data).
Decision Decide(const ScanResult& result);

// The DDT format in force for `options`: ddt_format, else fast for 2.3+ and legacy before.
DdtFormat DdtFormatInForce(const ScanOptions& options);

// The footprint of `setting` for `format`, or nullptr when the engine did not compute it.
const DdtFootprint* FootprintFor(const SettingResult& setting, DdtFormat format);

// Bytes of RAM the DDT needs held in core: its cached ZAP blocks plus the fast-dedup log.
uint64_t DdtRamBytes(const DdtFootprint& footprint);

// The breakdown of setting `index` of result.results (matched by block size and compression), or
// nullptr when the scan collected none for it.
const Breakdowns* BreakdownFor(const ScanResult& result, int index);

// What compression saves of a breakdown row's records (as compressratio counts them, padding
// included: not the headline's base, which is the files' data): the data in its records,
// all-zero records included, less what is stored without dedup (psize, and the all-zero
// records where the setting writes them without dedup). 0 where the row's psize is not known
// (BreakdownRow::psize_known): shown as "-".
uint64_t BreakdownSaved(const Breakdowns& b, const BreakdownRow& row);

// "recordsize" or "volblocksize": the property a block size of these options is.
const char* BlockSizeProperty(const ScanOptions& options);

}  // namespace zsim::report

#endif  // ZSIM_ENGINE_REPORT_DECISION_H_
