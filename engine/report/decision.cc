#include "engine/report/decision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "engine/report/advice.h"
#include "engine/report/codec_choice.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/write_rules.h"

namespace zsim::report {
namespace {

double Fraction(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

bool IsOff(const SettingResult& s) { return s.compression.algorithm == CompressionAlgorithm::kOff; }

Verdict DedupClass(double ratio, bool fits) {
  if (ratio >= kDedupPaysRatio) return fits ? Verdict::kDedupPays : Verdict::kDedupNeedsHardware;
  if (ratio >= kDedupNotWorthRatio) return Verdict::kDedupMarginal;
  return Verdict::kDedupNotWorthIt;
}

DedupJudgement JudgeDedup(const SettingResult& s, DdtFormat format, uint64_t ram_bytes,
                          const SettingSpace& space) {
  DedupJudgement j;
  j.footprint = FootprintFor(s, format);
  j.ram_need_bytes = j.footprint != nullptr ? DdtRamBytes(*j.footprint) : 0;
  j.budget_bytes = static_cast<uint64_t>(static_cast<double>(ram_bytes) * kDdtRamFraction);
  // ram_bytes 0 means the RAM is unknown: judge on the ratio alone.
  j.fits = ram_bytes == 0 || j.ram_need_bytes <= j.budget_bytes;
  const double d = s.dedup.ratio;
  const DdtStat& ref = s.dedup.total.referenced;
  const DdtStat& alloc = s.dedup.total.allocated;
  // A dedup ratio with the table's blocks counted as allocated: the allocated DSIZE it implies
  // (referenced / ratio) plus the table's; and, under 2.1 and 2.2, over the referenced DSIZE
  // less the blocks that only dedup=on allocates (embedded in their block pointers without it:
  // SettingResult::embedding_lost_with_dedup).
  j.embedding_lost_bytes = s.embedding_lost_with_dedup;
  const double referenced = std::max(0.0, double(ref.dsize) - double(s.embedding_lost_with_dedup));
  auto with_table = [&](double ratio) {
    return ratio > 0 ? referenced / (double(ref.dsize) / ratio + double(space.ddt_bytes)) : 0.0;
  };
  j.ratio_with_table =
      alloc.dsize > 0 && ref.dsize > 0 ? with_table(double(ref.dsize) / double(alloc.dsize)) : d;
  j.verdict = DedupClass(std::min(d, j.ratio_with_table), j.fits);
  j.table_outweighs = j.verdict != DedupClass(d, j.fits);
  // A sampled table (--sample 1/M, --max-memory): where its interval reaches both sides of the
  // ratio that turns dedup on, the point estimate decides nothing (a table of a few sampled
  // keys read 3x on data that dedups 1.2x). Marginal or not worth it both leave it off. The
  // interval is the judged ratio's: at each bound of the dedup ratio's, the allocated DSIZE it
  // implies (referenced / bound) plus the table's blocks, so that a table whose blocks settle
  // the verdict over the whole interval is not called uncertain, nor one that settles it only
  // at the point estimate called certain. The bounds as the reports print them
  // (PrintedInterval), so that an interval shown reaching 1.20x is never called certain.
  if (s.dedup.ratio_ci95 && ref.dsize > 0) {
    const auto [lo, hi] = PrintedInterval(
        {with_table((*s.dedup.ratio_ci95)[0]), with_table((*s.dedup.ratio_ci95)[1])});
    if (lo < kDedupPaysRatio && hi >= kDedupPaysRatio) j.verdict = Verdict::kDedupUncertain;
  }
  return j;
}

NoDdtShare ComputeNoDdtShare(const ScanResult& r, const SettingResult& f) {
  NoDdtShare n;
  const DdtStat& ref = f.dedup.total.referenced;
  const DdtStat& alloc = f.dedup.total.allocated;
  n.removed_lsize = ref.lsize > alloc.lsize ? ref.lsize - alloc.lsize : 0;
  n.counts_zero_blocks = IsOff(f);
  const DedupSources& src = DedupSourcesOf(r, f);  // of the setting's own block size
  n.file_bytes = src.duplicate_file_bytes;
  n.zero_bytes = n.counts_zero_blocks ? src.zero_block_bytes : 0;
  n.no_ddt_bytes = n.file_bytes + n.zero_bytes;
  n.estimated = src.sample_modulus > 1 && src.duplicate_file_bytes > 0;
  if (n.removed_lsize == 0) return n;
  n.share = std::min(1.0, Fraction(double(n.no_ddt_bytes), double(n.removed_lsize)));
  const double rest = double(ref.lsize) - std::min(double(n.no_ddt_bytes), double(n.removed_lsize));
  n.residual_ratio = alloc.lsize > 0 ? std::max(1.0, rest / double(alloc.lsize)) : 1.0;
  return n;
}

// The whole decision for one setting, as if it were the recommended one.
Decision DecideFor(const ScanResult& r, size_t index, const Decision& base) {
  Decision d = base;
  const SettingResult& s = r.results[index];
  d.featured = int(index);
  d.space = SpaceOf(s, r.options, r.input);
  d.dedup = JudgeDedup(s, d.ddt_format, d.ram_bytes, d.space);
  d.no_ddt = ComputeNoDdtShare(r, s);
  d.dedup_verdict = d.dedup.verdict;
  const bool dedup_helps =
      d.dedup.verdict == Verdict::kDedupPays || d.dedup.verdict == Verdict::kDedupNeedsHardware;
  if (dedup_helps && d.no_ddt.share >= kNoDdtShare && d.no_ddt.residual_ratio < kDedupPaysRatio) {
    d.verdict = Verdict::kCloneInsteadOfDedup;
    d.dedup_verdict = Verdict::kDedupCoveredByCloning;
  } else if (d.dedup.verdict == Verdict::kDedupPays) {
    d.verdict = Verdict::kDedupPays;
    d.dedup_on = true;
  } else if (d.dedup.verdict == Verdict::kDedupNeedsHardware) {
    d.verdict = Verdict::kDedupNeedsHardware;
    d.dedup_with_hardware = true;
  } else if (DataCompression(s) >= kCompressionPaysRatio) {
    d.verdict = Verdict::kCompressionOnly;
  } else {
    d.verdict = Verdict::kStoreAsIs;
  }
  d.saved = d.dedup_on ? d.space.saved_dedup : d.space.saved;
  d.stored_bytes = d.dedup_on ? d.space.stored_dedup_bytes : d.space.stored_bytes;
  return d;
}

}  // namespace

uint64_t LogicalOf(const SettingResult& s) { return s.lsize + s.zero_lsize; }

double DataCompression(const SettingResult& s) {
  // The all-zero records this setting writes as data without dedup: with dedup=off only a
  // compressor makes them holes (zfs/write_rules.h ZeroBlockIsHole, zio_write_compress); they
  // take their lsize, like the records compressratio already counts at 1x. (zero_lsize holds
  // them where the dedup=on path makes them holes; where neither path does, lsize has them.)
  zfs::WritePolicy without_dedup;
  without_dedup.dedup = false;
  const uint64_t written_zero =
      zfs::ZeroBlockIsHole(without_dedup, s.compression) ? 0 : s.zero_lsize;
  const uint64_t written_lsize = s.lsize + written_zero;
  if (written_lsize == 0) {
    // Every record is all-zero and a hole: unbounded, unless nothing was scanned.
    return LogicalOf(s) > 0 ? std::numeric_limits<double>::infinity() : s.compressratio;
  }
  return s.compressratio * double(LogicalOf(s)) / double(written_lsize);
}

SettingSpace SpaceOf(const SettingResult& s, const ScanOptions& o, const InputSummary& in) {
  SettingSpace space;
  space.logical_bytes = LogicalOf(s);
  space.base_bytes = in.bytes_data_known ? in.bytes_data : space.logical_bytes;
  space.stored_bytes = s.used;
  // With dedup: `used` as the dedup write path lays the data out (compression=off makes
  // all-zero blocks holes there; 2.1 and 2.2 embed no block there) less what dedup removes
  // (referenced - allocated DSIZE, both deflated as `used` is) plus the DDT's own blocks, deflated
  // by the same vdev_deflate_ratio. The pool-wide overhead in ALLOC (MOS, space maps) is on neither
  // side.
  const DdtStat& ref = s.dedup.total.referenced;
  const DdtStat& alloc = s.dedup.total.allocated;
  const uint64_t removed = ref.dsize > alloc.dsize ? ref.dsize - alloc.dsize : 0;
  uint64_t ddt = 0;
  if (const DdtFootprint* fp = FootprintFor(s, DdtFormatInForce(o))) {
    const uint64_t ratio = zfs::ValidateVdev(o.vdev).ok() && zfs::ValidateAshift(o.ashift).ok()
                               ? zfs::DeflateRatio(o.vdev, o.ashift)
                               : 512;
    ddt = zfs::DeflatedSize(fp->asize_bytes, ratio);
  }
  const uint64_t written =
      s.used - std::min(s.used, s.zero_used_without_dedup) + s.embedding_lost_with_dedup;
  space.stored_dedup_bytes = (written > removed ? written - removed : 0) + ddt;
  space.ddt_bytes = ddt;
  if (space.base_bytes > 0) {
    space.saved = 1.0 - double(space.stored_bytes) / double(space.base_bytes);
    space.saved_dedup = 1.0 - double(space.stored_dedup_bytes) / double(space.base_bytes);
  }
  return space;
}

int SavedPercentOf(double saved) {
  const double percent = std::round(saved * 100.0);
  return percent == 0 ? 0 : int(percent);
}

std::string SavedText(double saved) { return std::to_string(SavedPercentOf(saved)) + "%"; }

namespace {

// The stored size in times the data's size where it is ten times or more, else nullopt.
std::optional<double> TimesTheData(double saved) {
  const double times = 1.0 - saved;
  if (!(times >= 10.0)) return std::nullopt;
  return std::round(times);
}

}  // namespace

std::string SavesText(double saved, bool base) {
  const int percent = SavedPercentOf(saved);
  if (percent >= 0) return fmt::format("{} {}%", base ? "save" : "saves", percent);
  if (const std::optional<double> times = TimesTheData(saved)) {
    return fmt::format("{} {:.0f} times the data's size", base ? "store" : "stores", *times);
  }
  return fmt::format("{} {}% more than the data's size", base ? "store" : "stores", -percent);
}

std::string SideText(double saved) {
  if (const std::optional<double> times = TimesTheData(saved)) {
    return fmt::format("{:.0f} times", *times);
  }
  const int percent = SavedPercentOf(saved);
  return fmt::format("{}% {}", percent < 0 ? -percent : percent, percent < 0 ? "above" : "below");
}

EstimatedFigures EstimatedFiguresOf(const SettingResult& s) {
  EstimatedFigures e;
  e.table = s.dedup.sample_modulus > 1 || s.dedup.ratio_ci95.has_value();
  e.without_dedup = s.ci95.has_value();
  e.with_dedup = e.without_dedup || e.table;
  return e;
}

std::string Marked(bool estimated, std::string text) { return estimated ? "~" + text : text; }

std::array<double, 2> PrintedInterval(const std::array<double, 2>& ci95) {
  // 1e-9: a bound of 2.3 is 229.99.. hundredths in binary, and stays 2.30 either way.
  return {std::floor(ci95[0] * 100 + 1e-9) / 100, std::ceil(ci95[1] * 100 - 1e-9) / 100};
}

DdtFormat DdtFormatInForce(const ScanOptions& o) {
  if (o.ddt_format) return *o.ddt_format;
  return (o.profile == Profile::kZfs23 || o.profile == Profile::kZfs24) ? DdtFormat::kFast
                                                                        : DdtFormat::kLegacy;
}

const DdtFootprint* FootprintFor(const SettingResult& s, DdtFormat format) {
  for (const DdtFootprint& fp : s.dedup.footprints) {
    if (fp.format == format) return &fp;
  }
  return nullptr;
}

uint64_t DdtRamBytes(const DdtFootprint& fp) {
  // The cached ZAP blocks (what zdb calls in core, except where v23's zdb undercounts), or the
  // in-core figure for a footprint built without it.
  return std::max(fp.cached_bytes, fp.in_core_bytes) + fp.log_bytes;
}

const Breakdowns* BreakdownFor(const ScanResult& r, int index) {
  if (index < 0 || size_t(index) >= r.results.size()) return nullptr;
  const SettingResult& s = r.results[size_t(index)];
  for (const Breakdowns& b : r.breakdowns) {
    if (b.recordsize == s.recordsize && b.compression == s.compression) return &b;
  }
  return nullptr;
}

uint64_t BreakdownSaved(const Breakdowns& b, const BreakdownRow& row) {
  if (!row.psize_known) return 0;
  const uint64_t data = row.lsize + row.zero_lsize;
  const uint64_t stored = row.psize + (b.zero_written_without_dedup ? row.zero_lsize : 0);
  return data > stored ? data - stored : 0;
}

const char* BlockSizeProperty(const ScanOptions& o) {
  return o.volblocksize ? "volblocksize" : "recordsize";
}

Decision Decide(const ScanResult& r) {
  Decision base;
  base.ram_bytes = r.options.ram_bytes;
  base.ddt_format = DdtFormatInForce(r.options);
  base.zvol = r.options.volblocksize.has_value();
  // The budget is the RAM's whatever was scanned (decision.ddt_ram_budget_bytes is
  // ram_bytes x ddt_ram_fraction, also where nothing was).
  base.dedup.budget_bytes =
      static_cast<uint64_t>(static_cast<double>(base.ram_bytes) * kDdtRamFraction);
  uint64_t lsize = 0;
  for (const SettingResult& s : r.results) lsize = std::max(lsize, LogicalOf(s));
  if (r.results.empty() || lsize == 0) {
    base.featured = r.results.empty() ? -1 : 0;
    base.verdict = Verdict::kNothingScanned;
    return base;
  }
  // Per block size, the compression to recommend (codec_choice.h); then the block size: the
  // first evaluated unless another stores kRecordsizeGain less, each judged under its own
  // decision (dedup on where dedup would be recommended for it).
  std::vector<uint64_t> block_sizes;
  for (const SettingResult& s : r.results) {
    if (std::find(block_sizes.begin(), block_sizes.end(), s.recordsize) == block_sizes.end()) {
      block_sizes.push_back(s.recordsize);
    }
  }
  int first = -1, best = -1;
  uint64_t first_space = 0, best_space = 0;
  for (uint64_t block : block_sizes) {
    const int i = PickCompression(r.results, block);
    if (i < 0) continue;
    const Decision d = DecideFor(r, size_t(i), base);
    const uint64_t space = d.stored_bytes;
    base.candidates.push_back({i, space, d.dedup_on});
    if (first < 0) first = i, first_space = space;
    if (best < 0 || space < best_space) best = i, best_space = space;
  }
  const int featured =
      double(best_space) <= double(first_space) * (1.0 - kRecordsizeGain) ? best : first;
  return DecideFor(r, size_t(featured), base);
}

}  // namespace zsim::report
