#include "engine/report/advice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>

#include "engine/base/size_suffix.h"
#include "engine/report/codec_choice.h"
#include "engine/report/codec_speed.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/zdb_text.h"
#include "engine/zfs/zvol_reservation.h"

namespace zsim::report {
namespace {

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

// A ratio computed here (not one of the scan's, which zdb's rules already floor), floored to
// hundredths as ZFS prints its ratios: a residual of 1.1985 is "1.19x", never the "1.20x" that
// reads as the threshold met. (1e-9: 1.2 is 119.99.. hundredths in binary.)
std::string FlooredRatio(double r) { return Ratio(std::floor(r * 100.0 + 1e-9) / 100.0); }

// The dedup ratio as a sentence names it: with the ratio its table's own blocks leave beside it
// where they moved the verdict down (DedupJudgement::table_outweighs), "1.59x, 1.03x counting
// its table's own blocks".
std::string DedupRatioText(const Decision& d, double ratio) {
  if (!d.dedup.table_outweighs) return Ratio(ratio);
  return fmt::format(
      "{}, {} counting its table's own blocks{}", Ratio(ratio),
      FlooredRatio(d.dedup.ratio_with_table),
      d.dedup.embedding_lost_bytes > 0 ? " and the small blocks it cannot embed" : "");
}

std::string Percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100.0); }

// A gain judged against `threshold`, in percent, as the sentence says it and its figure carries
// it (one number, so that "only 9% less" never stands beside a figure of 8): whole, or one
// decimal where the whole percent would read as the threshold itself, so that "10% less: worth
// it" and "only 10% less: not worth it" never stand for 10.4% and 9.6%; a gain below the
// threshold that one decimal would still round onto it is cut to two (9.99%, never 10.00%).
struct ShownGain {
  double percent = 0;
  int decimals = 0;
};
ShownGain GainShown(double gain, double threshold) {
  const double pct = gain * 100.0;
  if (std::abs(gain - threshold) * 100.0 >= 0.5) return {std::round(pct), 0};
  const double tenths = std::round(pct * 10.0) / 10.0;
  // Cut, never rounded up; the epsilon keeps 9.99 (0.0999 x 100 x 100 is 998.999...) from 9.98.
  if (gain < threshold && tenths >= threshold * 100.0) {
    return {std::floor(pct * 100.0 + 1e-9) / 100.0, 2};
  }
  return {tenths, 1};
}
std::string GainPercent(double gain, double threshold) {
  const ShownGain g = GainShown(gain, threshold);
  return fmt::format("{:.{}f}%", g.percent, g.decimals);
}

bool IsOff(const SettingResult& s) { return s.compression.algorithm == CompressionAlgorithm::kOff; }

// The cheap codec advised where compression is off: lz4, or lzjb where the release has no lz4
// (v23: "evaluate it with --compression lz4" named a codec the profile refuses).
std::string CheapCodec(Profile p) { return zfs::RulesFor(p).has_lz4 ? "lz4" : "lzjb"; }

double Fraction(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

// " at 178 MB/s per core" when the codec was timed, else "".
std::string SpeedText(const SettingResult& s) {
  const double bps = CodecBytesPerSecond(s);
  return bps > 0 ? fmt::format(" at {:.0f} MB/s per core", bps / 1e6) : "";
}

const char* FormatName(DdtFormat f) { return f == DdtFormat::kFast ? "fast" : "legacy"; }

bool HasBlockCloning(Profile p) {
  return p == Profile::kZfs22 || p == Profile::kZfs23 || p == Profile::kZfs24;
}

// What stores whole-file copies once without a DDT under `p`. (A report under --profile v23 or
// 2.1 advised block cloning, which those releases do not have, in its verdict and dedup item,
// and said so in its last item.)
std::string CopiesRemedy(Profile p) {
  return HasBlockCloning(p) ? "block cloning or hard links" : "hard links";
}

// What dedup would remove that needs no DDT (NoDdtShare), named as it is: whole-file copies
// (which block cloning or hard links get: hard links only where the profile has no block
// cloning), all-zero blocks of an uncompressed setting (which any compression writes as holes),
// or both. An all-zero disk image is no whole-file copy.
struct NoDdtWhat {
  std::string noun;    // "whole-file copies", "all-zero blocks", or both
  std::string remedy;  // what gets them without a DDT, as a clause
};

NoDdtWhat NoDdtWhatOf(const NoDdtShare& n, Profile profile) {
  const bool files = n.file_bytes > 0, zeros = n.zero_bytes > 0;
  if (zeros && !files)
    return {"all-zero blocks", "any compression writes them as holes, which need no DDT"};
  const std::string copies = CopiesRemedy(profile);
  if (zeros) {
    return {"whole-file copies and all-zero blocks",
            copies +
                " get the copies without a DDT; any compression writes the zero blocks as "
                "holes"};
  }
  return {"whole-file copies", copies + " get those without a DDT"};
}

// Everything an item may read: the scan and the one decision.
struct Context {
  const ScanResult& r;
  const Decision& d;
  const SettingResult& f;  // the recommended setting
  std::string codec;       // its compression's name
  std::string settings;    // "compression=zstd-3, recordsize=128K" (volblocksize for zvols)
};

std::string BlockSetting(const ScanOptions& o, uint64_t bytes) {
  return fmt::format("{}={}", BlockSizeProperty(o), zfs::NiceBytes(bytes));
}

// The figure the compression verdict rests on (DataCompression), floored to two decimals as
// compressratio is; left out where it is unbounded (every record an all-zero hole).
void AddDataCompression(const SettingResult& s, AdviceItem& item) {
  const double x = DataCompression(s);
  if (std::isfinite(x))
    item.figures.push_back({"data_compressratio", std::floor(x * 100 + 1e-9) / 100});
}

// "for almost no CPU" for a cheap codec (IsCheapCodec); a costlier one's measured speed.
std::string CpuText(const SettingResult& s) {
  if (IsCheapCodec(s.compression.algorithm)) return "for almost no CPU";
  const double bps = CodecBytesPerSecond(s);
  return bps > 0 ? fmt::format("at {:.0f} MB/s per core", bps / 1e6) : "for its CPU cost";
}

// What makes the data take more room than compression leaves of it: sector rounding and
// metadata; on raidz the parity and padding of small blocks (zfs/allocation.h), on dRAID the
// padding of every block to a whole stripe (a new user's dRAID of 8 data disks stored 75% more
// than the data, which the report put down to "sector rounding and metadata"); with copies=N
// every block written N times.
std::string OverheadText(const ScanOptions& o) {
  std::string text =
      o.vdev.kind == VdevKind::kDraid
          ? fmt::format(
                "dRAID's padding of every block to a whole stripe of {} "
                "data sectors, its parity",
                o.vdev.data)
      : o.vdev.kind == VdevKind::kRaidz
          ? std::string("raidz's parity and padding of small blocks, sector rounding")
          : std::string("sector rounding");
  if (o.copies > 1) return text + fmt::format(", metadata and copies={}", o.copies);
  return text + " and metadata";
}

// On dRAID, where the data takes more room than its size: what keeps small blocks from taking a
// whole stripe.
std::string DraidSmallBlocksText(const ScanOptions& o, double saved) {
  if (o.vdev.kind != VdevKind::kDraid || SavedPercentOf(saved) >= 0) return "";
  return " On dRAID a small block takes a whole stripe: a special vdev with special_small_blocks "
         "set, or fewer data disks per group, keeps small blocks off it.";
}

// What of the table an L2ARC leaves in RAM: its headers, and the fast dedup log.
std::string L2arcRamText(const DdtFootprint& fp) {
  return fp.log_bytes > 0 ? fmt::format("its headers and the dedup log would still take {} of RAM",
                                        FormatBytes(fp.l2arc_header_bytes + fp.log_bytes))
                          : fmt::format("its headers alone would take {} of RAM",
                                        FormatBytes(fp.l2arc_header_bytes));
}

// The base of the saved figures as a sentence names it: "49.6 MiB of data" (the files' bytes
// outside holes), or "53.1 MiB of records" where a state of format 21 or older left it unknown.
std::string BaseText(const InputSummary& in, const SettingSpace& space) {
  return FormatBytes(space.base_bytes) + (in.bytes_data_known ? " of data" : " of records");
}

// Where the data takes more room than its size: ", through <OverheadText>", else "".
std::string AboveLogicalCause(const ScanOptions& o, double saved) {
  return SavedPercentOf(saved) < 0 ? ", through " + OverheadText(o) : std::string();
}

// An L2ARC can hold the table only where the RAM its headers take (one per cached block), with
// the fast dedup log (which stays in RAM), fits in the DDT's RAM budget; else only a
// special/dedup vdev will do.
bool L2arcHeadersFit(const Decision& d) {
  const DdtFootprint* fp = d.dedup.footprint;
  return fp != nullptr &&
         (d.ram_bytes == 0 || fp->l2arc_header_bytes + fp->log_bytes <= d.dedup.budget_bytes);
}

// "compressratio 1.00x", and where the codec's holes for all-zero records save more than the
// ratio shows (DataCompression above it), how much of the data they are.
std::string CompressText(const SettingResult& s) {
  std::string text = fmt::format("compressratio {}", Ratio(s.compressratio));
  if (s.zero_lsize > 0 && DataCompression(s) > s.compressratio * 1.005) {
    text += fmt::format(", and {} of all-zero records stored as holes", FormatBytes(s.zero_lsize));
  }
  return text;
}

AdviceItem CompressionItem(const Context& c) {
  AdviceItem item{AdviceKind::kCompression, Verdict::kCompress, "", {}};
  const SettingResult& f = c.f;
  if (IsOff(f)) {
    item.verdict = Verdict::kCompressAnyway;
    const std::string cheap = CheapCodec(c.r.options.profile);
    item.sentence = fmt::format(
        "Only compression=off was evaluated: {} costs almost nothing and turns all-zero blocks "
        "into holes; evaluate it with --compression {}.",
        cheap, cheap);
    return item;
  }
  const double r = f.compressratio;
  const std::string saves = SavesText(c.d.space.saved);
  item.figures = {{"compressratio", r},
                  {"saved_percent", double(SavedPercentOf(c.d.space.saved))},
                  {"lsize_bytes", double(f.lsize)},
                  {"logical_bytes", double(c.d.space.logical_bytes)},
                  {"base_bytes", double(c.d.space.base_bytes)},
                  {"psize_bytes", double(f.psize)},
                  {"used_bytes", double(f.used)}};
  AddDataCompression(f, item);
  const int cheap = CheapIndex(c.r.results, f.recordsize);
  const SettingResult* cheap_s = cheap >= 0 ? &c.r.results[size_t(cheap)] : nullptr;
  const bool featured_is_cheap = cheap_s == &f || cheap_s == nullptr;
  if (!featured_is_cheap) {
    const double gain = 1.0 - Fraction(double(f.used), double(cheap_s->used));
    item.figures.push_back({"cheap_compressratio", cheap_s->compressratio});
    item.figures.push_back(
        {"gain_over_cheap_percent", GainShown(gain, kStrongerCodecGain).percent});
    item.sentence = fmt::format(
        "{} {} ({}){}, storing {} less than {} ({}{}): worth its CPU cost on this data.", c.codec,
        saves, CompressText(f), SpeedText(f), GainPercent(gain, kStrongerCodecGain),
        CompressionName(cheap_s->compression), Ratio(cheap_s->compressratio), SpeedText(*cheap_s));
    return item;
  }
  if (DataCompression(f) < kCompressionPaysRatio) {
    item.verdict = Verdict::kCompressAnyway;
    item.sentence = fmt::format(
        "The data barely compresses: {} {}{} ({}). Keep {} on anyway: it gives up early on "
        "incompressible blocks and stores all-zero blocks as holes.{}",
        c.codec, saves, AboveLogicalCause(c.r.options, c.d.space.saved), CompressText(f), c.codec,
        DraidSmallBlocksText(c.r.options, c.d.space.saved));
    return item;
  }
  if (SavedPercentOf(c.d.space.saved) < 0) {
    // Compression pays, yet the data takes more room than its size: say both.
    item.sentence = fmt::format(
        "{} pays ({}) {}, but {} still make the data take more room than its size: {} "
        "{} ({} stored in {}).",
        c.codec, CompressText(f), CpuText(f), OverheadText(c.r.options), c.codec, saves,
        BaseText(c.r.input, c.d.space), FormatBytes(f.used));
    item.sentence += DraidSmallBlocksText(c.r.options, c.d.space.saved);
  } else {
    item.sentence = fmt::format("{} {} ({}) {}: {} stored in {}.", c.codec, saves, CompressText(f),
                                CpuText(f), BaseText(c.r.input, c.d.space), FormatBytes(f.used));
  }
  const int best = StrongestWorthwhileIndex(c.r.results, f.recordsize);
  if (best >= 0 && &c.r.results[size_t(best)] != &f) {
    const SettingResult& b = c.r.results[size_t(best)];
    const double gain = 1.0 - Fraction(double(b.used), double(f.used));
    if (gain > 0.005) {
      item.figures.push_back({"best_compressratio", b.compressratio});
      // Below the threshold by construction, and shown so: 9.6, 9.99, never the threshold's 10.
      item.figures.push_back({"best_gain_percent", GainShown(gain, kStrongerCodecGain).percent});
      item.sentence +=
          fmt::format(" {} (compressratio {}){} would store only {} less: not worth its CPU.",
                      CompressionName(b.compression), Ratio(b.compressratio), SpeedText(b),
                      GainPercent(gain, kStrongerCodecGain));
    }
  }
  return item;
}

// A sampled dedup ratio too uncertain to decide on (Verdict::kDedupUncertain): what it is, and
// what would settle it.
// "its ratio lies between 1.00x and 39.04x at 95% ...": after the ratio has been named.
// `o`: the scan's options (a table --max-memory sampled needs room, not a smaller M).
std::string UncertainDedupText(const SettingResult& f, const ScanOptions& o) {
  const std::array<double, 2> ci =
      PrintedInterval(f.dedup.ratio_ci95.value_or(std::array<double, 2>{1, 1}));
  const bool memory = f.dedup.sample_modulus > o.sample_modulus;
  return fmt::format(
      "its ratio lies between {} and {} at 95% (the dedup table kept 1/{} of the blocks{}): "
      "this sample cannot tell whether dedup would pay; scan {}, before turning dedup on",
      Ratio(ci[0]), Ratio(ci[1]), f.dedup.sample_modulus,
      memory ? ", sampled to fit --max-memory" : "",
      memory ? "with a larger --max-memory" : "with a smaller M in --sample 1/M, or without it");
}

AdviceItem DedupItem(const Context& c) {
  const SettingResult& f = c.f;
  const Decision& d = c.d;
  const double ratio = f.dedup.ratio;
  const uint64_t saved_bytes = d.space.stored_bytes > d.space.stored_dedup_bytes
                                   ? d.space.stored_bytes - d.space.stored_dedup_bytes
                                   : 0;
  AdviceItem item{AdviceKind::kDedup, d.dedup_verdict, "", {}};
  item.figures = {{"dedup_ratio", ratio},
                  {"saved_percent", double(SavedPercentOf(d.space.saved))},
                  {"saved_with_dedup_percent", double(SavedPercentOf(d.space.saved_dedup))},
                  {"saved_bytes", double(saved_bytes)},
                  {"ddt_ram_bytes", double(d.dedup.ram_need_bytes)},
                  {"ram_bytes", double(d.ram_bytes)},
                  {"ram_budget_bytes", double(d.dedup.budget_bytes)},
                  {"ddt_entries", double(f.dedup.unique_entries + f.dedup.duplicate_entries)},
                  {"table_dedup_ratio", d.dedup.ratio_with_table}};
  const std::string need = FormatBytes(d.dedup.ram_need_bytes);
  // "saved from 40% to 67%"; where either saving is negative, where the stored size lies
  // against the data's size instead ("from 40% above to 48% above the data's size").
  const bool both_save =
      SavedPercentOf(d.space.saved) >= 0 && SavedPercentOf(d.space.saved_dedup) >= 0;
  const std::string change =
      both_save ? fmt::format("Dedup ({}) {} saved from {} to {}", DedupRatioText(d, ratio),
                              d.dedup_on ? "takes" : "would take", SavedText(d.space.saved),
                              SavedText(d.space.saved_dedup))
                : fmt::format("Dedup ({}) {} the stored size from {} to {} the data's size",
                              DedupRatioText(d, ratio), d.dedup_on ? "takes" : "would take",
                              SideText(d.space.saved), SideText(d.space.saved_dedup));
  // Where the table's own blocks decided: how much room they take, against what dedup removes.
  const DdtFootprint* table = d.dedup.footprint;
  const std::string table_blocks =
      d.dedup.table_outweighs && table != nullptr
          ? fmt::format(
                ": its table's own blocks ({} on disk){} {}", FormatBytes(table->on_disk_bytes),
                d.dedup.embedding_lost_bytes > 0
                    ? fmt::format(" and the {} dedup allocates for small blocks this "
                                  "release embeds in their block pointers only without dedup",
                                  FormatBytes(d.dedup.embedding_lost_bytes))
                    : std::string(),
                d.dedup.ratio_with_table <= 1.0 ? "take more room than dedup removes"
                                                : "take back much of the room dedup removes")
          : std::string();
  switch (d.dedup_verdict) {
    case Verdict::kDedupPays:
      item.sentence = fmt::format(
          "{} ({} less), and its table needs {} of RAM, within a quarter of {}: dedup pays.",
          change, FormatBytes(saved_bytes), need, FormatBytes(d.ram_bytes));
      break;
    case Verdict::kDedupNeedsHardware:
      item.sentence = fmt::format(
          "{} ({} less) but its table needs {} of RAM, more than a quarter of {} ({}): it pays "
          "only with {} for the table{}.",
          change, FormatBytes(saved_bytes), need, FormatBytes(d.ram_bytes),
          FormatBytes(d.dedup.budget_bytes),
          L2arcHeadersFit(d) ? "an L2ARC or a special/dedup vdev" : "a special/dedup vdev",
          L2arcHeadersFit(d) ? "" : " (with an L2ARC, the table would not fit in RAM either)");
      break;
    case Verdict::kDedupCoveredByCloning: {
      const NoDdtWhat what = NoDdtWhatOf(d.no_ddt, c.r.options.profile);
      item.sentence = fmt::format(
          "{}, but {} make up {}{} of what it removes: {}, and the rest is only {}: dedup=off.",
          change, what.noun, d.no_ddt.estimated ? "an estimated " : "", Percent(d.no_ddt.share),
          what.remedy, FlooredRatio(d.no_ddt.residual_ratio));
      break;
    }
    case Verdict::kDedupUncertain:
      item.sentence = fmt::format("{}, but {}.", change, UncertainDedupText(f, c.r.options));
      break;
    case Verdict::kDedupMarginal:
      item.sentence = fmt::format(
          "{}{} for a table of {} in RAM: marginal, not worth it unless space matters more than "
          "write speed.",
          change, table_blocks, need);
      break;
    default:
      item.sentence =
          table_blocks.empty()
              ? fmt::format("{} but needs {} of RAM for its table: not worth it.", change, need)
              : fmt::format("{}{}, and it needs {} of RAM: not worth it.", change, table_blocks,
                            need);
      break;
  }
  return item;
}

std::optional<AdviceItem> DdtMemoryItem(const Context& c) {
  const Decision& d = c.d;
  const DdtFootprint* fp = d.dedup.footprint;
  const uint64_t entries = c.f.dedup.unique_entries + c.f.dedup.duplicate_entries;
  if (fp == nullptr || entries == 0) return std::nullopt;
  AdviceItem item{AdviceKind::kDdtMemory,
                  d.dedup.fits ? Verdict::kDdtFitsInRam : Verdict::kDdtNeedsL2arc,
                  "",
                  {{"ddt_entries", double(entries)},
                   {"ddt_in_core_bytes", double(fp->in_core_bytes)},
                   {"ddt_on_disk_bytes", double(fp->on_disk_bytes)},
                   {"ddt_log_bytes", double(fp->log_bytes)},
                   {"ddt_ram_bytes", double(d.dedup.ram_need_bytes)},
                   {"ram_bytes", double(d.ram_bytes)},
                   {"ram_budget_bytes", double(d.dedup.budget_bytes)},
                   {"l2arc_bytes", double(fp->in_core_bytes)},
                   {"l2arc_header_bytes", double(fp->l2arc_header_bytes)},
                   {"special_vdev_bytes", double(fp->on_disk_bytes)}}};
  // The count as the DDT section prints it ("2631 entries"), not zdb's 1024-based "2.57K".
  const std::string head = fmt::format(
      "The {} DDT of {} entr{} takes {} in core{} and {} on disk", FormatName(fp->format), entries,
      entries == 1 ? "y" : "ies", FormatBytes(fp->in_core_bytes),
      fp->log_bytes > 0 ? fmt::format(" (+{} log)", FormatBytes(fp->log_bytes)) : "",
      FormatBytes(fp->on_disk_bytes));
  if (d.dedup.fits) {
    item.sentence =
        d.ram_bytes == 0
            ? head + "."
            : fmt::format("{}: it fits in ARC with {} of RAM (budget: a quarter, {}).", head,
                          FormatBytes(d.ram_bytes), FormatBytes(d.dedup.budget_bytes));
  } else if (L2arcHeadersFit(d)) {
    item.sentence = fmt::format(
        "{}, more than a quarter of {} of RAM ({}): it needs an L2ARC of {} (whose headers cost "
        "{} of RAM) or a special/dedup vdev of {} (mirrored: losing that vdev loses the pool).",
        head, FormatBytes(d.ram_bytes), FormatBytes(d.dedup.budget_bytes),
        FormatBytes(fp->in_core_bytes), FormatBytes(fp->l2arc_header_bytes),
        FormatBytes(fp->on_disk_bytes));
  } else {
    item.sentence = fmt::format(
        "{}, more than a quarter of {} of RAM ({}): an L2ARC of {} would not do ({}, over that "
        "budget); it needs a special/dedup vdev of {} (mirrored: losing that vdev loses the "
        "pool).",
        head, FormatBytes(d.ram_bytes), FormatBytes(d.dedup.budget_bytes),
        FormatBytes(fp->in_core_bytes), L2arcRamText(*fp), FormatBytes(fp->on_disk_bytes));
  }
  return item;
}

// Every block size evaluated is below the pool's sector: each block takes a whole sector
// (vdev_ashift: the smallest allocation), which no compression or dedup figure says by itself.
std::optional<AdviceItem> BelowSectorItem(const Context& c) {
  const ScanOptions& o = c.r.options;
  const uint64_t sector = uint64_t{1} << o.ashift;
  uint64_t largest = 0;
  for (const Decision::Candidate& k : c.d.candidates) {
    largest = std::max(largest, c.r.results[size_t(k.index)].recordsize);
  }
  if (largest == 0 || largest >= sector) return std::nullopt;
  const uint64_t usual =
      o.volblocksize ? zfs::RulesFor(o.profile).default_volblocksize : uint64_t{128} << 10;
  const char* prop = BlockSizeProperty(o);
  AdviceItem item{AdviceKind::kRecordsize,
                  Verdict::kBlockBelowSector,
                  "",
                  {{"recordsize_bytes", double(c.f.recordsize)},
                   {"sector_bytes", double(sector)},
                   {"space_bytes", double(c.d.stored_bytes)}}};
  // --recordsize takes a list; --volblocksize one size per scan.
  const std::string sizes =
      o.volblocksize
          ? fmt::format("--volblocksize {}{}", zfs::NiceBytes(sector),
                        usual > sector ? " (or " + zfs::NiceBytes(usual) + ")" : std::string())
          : fmt::format("--recordsize {},{}{}", zfs::NiceBytes(c.f.recordsize),
                        zfs::NiceBytes(sector),
                        usual > sector ? "," + zfs::NiceBytes(usual) : std::string());
  item.sentence = fmt::format(
      "{} is below the pool's sector ({} at ashift {}): every block stored takes a whole sector "
      "at least, whatever it compresses to, and {}{} stores {}. Scan again with {} to compare a "
      "{} of a sector or more.",
      BlockSetting(o, c.f.recordsize), zfs::NiceBytes(sector), o.ashift, SettingsText(o, c.f),
      c.d.dedup_on ? " with dedup" : "", FormatBytes(c.d.stored_bytes), sizes, prop);
  return item;
}

std::optional<AdviceItem> BlockSizeItem(const Context& c) {
  const Decision& d = c.d;
  if (std::optional<AdviceItem> below = BelowSectorItem(c)) return below;
  if (d.candidates.size() < 2) return std::nullopt;  // one block size: nothing to compare
  const ScanOptions& o = c.r.options;
  const Decision::Candidate& first = d.candidates.front();
  const Decision::Candidate* best = &first;
  for (const Decision::Candidate& k : d.candidates) {
    if (k.stored_bytes < best->stored_bytes) best = &k;
  }
  const uint64_t first_rs = c.r.results[size_t(first.index)].recordsize;
  const uint64_t best_rs = c.r.results[size_t(best->index)].recordsize;
  const double gain = 1.0 - Fraction(double(best->stored_bytes), double(first.stored_bytes));
  const double featured_gain = 1.0 - Fraction(double(d.stored_bytes), double(first.stored_bytes));
  const char* prop = BlockSizeProperty(o);
  const char* how = d.dedup_on ? " with dedup" : "";
  AdviceItem item{AdviceKind::kRecordsize,
                  d.featured != first.index ? Verdict::kPreferRecordsize : Verdict::kKeepRecordsize,
                  "",
                  {{"recordsize_bytes", double(c.f.recordsize)},
                   {"space_bytes", double(d.stored_bytes)},
                   {"first_recordsize_bytes", double(first_rs)},
                   {"first_space_bytes", double(first.stored_bytes)},
                   {"best_recordsize_bytes", double(best_rs)},
                   {"gain_percent", GainShown(gain, kRecordsizeGain).percent}}};
  const SettingResult& first_s = c.r.results[size_t(first.index)];
  const SettingResult& best_s = c.r.results[size_t(best->index)];
  uint64_t named = 0;  // the recordsize the sentence advises or keeps, 0: none
  if (item.verdict == Verdict::kPreferRecordsize) {
    named = c.f.recordsize;
    // Of the block sizes, each with its chosen codec: a codec the tie rule passed over may
    // store a little less at the same block size (the compression item says why it was not).
    item.sentence = fmt::format(
        "{} stores least of the {}s (with compression={}): {} stored in {}{}, {} less than {} "
        "({}).",
        BlockSetting(o, c.f.recordsize), prop, CompressionName(c.f.compression),
        BaseText(c.r.input, d.space), FormatBytes(d.stored_bytes), how, Percent(featured_gain),
        SettingsText(o, first_s), FormatBytes(first.stored_bytes));
  } else if (std::all_of(d.candidates.begin(), d.candidates.end(),
                         [&](const Decision::Candidate& k) {
                           return FormatBytes(k.stored_bytes) == FormatBytes(first.stored_bytes);
                         })) {
    // Every block size stores what the report prints alike (a tree of small files, each one
    // block whatever the recordsize): said so, not "the others store more" beside a gain of 0%.
    item.sentence = fmt::format(
        "Every {} stores {} here (with compression={}: {}{}): any will do.", prop,
        std::all_of(
            d.candidates.begin(), d.candidates.end(),
            [&](const Decision::Candidate& k) { return k.stored_bytes == first.stored_bytes; })
            ? "the same"
            : "about the same",
        CompressionName(first_s.compression), FormatBytes(first.stored_bytes), how);
  } else if (best == &first) {
    // Some may store what the report prints alike: named ("as does 128K").
    std::vector<std::string> tied;
    for (const Decision::Candidate& k : d.candidates) {
      if (&k != &first && FormatBytes(k.stored_bytes) == FormatBytes(first.stored_bytes)) {
        tied.push_back(zfs::NiceBytes(c.r.results[size_t(k.index)].recordsize));
      }
    }
    std::string as;
    if (tied.size() == 1) as = ", as does " + tied[0];
    if (tied.size() > 1) {
      as = fmt::format(", as do {} and {}", fmt::join(tied.begin(), tied.end() - 1, ", "),
                       tied.back());
    }
    named = first_rs;
    item.sentence = fmt::format(
        "{} stores least of the {}s (with compression={}: {}{}){}; the others store more.",
        BlockSetting(o, first_s.recordsize), prop, CompressionName(first_s.compression),
        FormatBytes(first.stored_bytes), how, as);
  } else {
    named = first_rs;
    item.sentence = fmt::format(
        "Keep {} ({}{}): {} would store only {} less ({}), under the {} worth a change.",
        SettingsText(o, first_s), FormatBytes(first.stored_bytes), how, SettingsText(o, best_s),
        GainPercent(gain, kRecordsizeGain), FormatBytes(best->stored_bytes),
        Percent(kRecordsizeGain));
  }
  // Space is all a scan sees. A record larger than ZFS's default is read and written again whole
  // for every smaller write into it: said where the item names one (a PostgreSQL data directory
  // stores least at 1M and is written 8K at a time). Not where any recordsize will do.
  if (!o.volblocksize && named > zfs::kDefaultRecordsize) {
    item.sentence += fmt::format(
        " That is space only: ZFS reads and writes a {} record again whole for each smaller write "
        "into it, so files rewritten in place (a database's pages, VM images) want a recordsize "
        "near their write size whatever it stores.",
        zfs::NiceBytes(named));
  }
  return item;
}

std::optional<AdviceItem> NoDdtItem(const Context& c) {
  const NoDdtShare& n = c.d.no_ddt;
  const DedupSources& src = DedupSourcesOf(c.r, c.f);
  const char* how = HasBlockCloning(c.r.options.profile)
                        ? "block cloning (cp --reflink, OpenZFS 2.2+) or hard links"
                        : "hard links (block cloning needs OpenZFS 2.2+)";
  if (n.removed_lsize > 0 && n.share >= kNoDdtShare) {
    AdviceItem item{AdviceKind::kDedupWithoutDdt,
                    Verdict::kUseCloning,
                    "",
                    {{"duplicate_files", double(src.duplicate_files)},
                     {"duplicate_file_bytes", double(src.duplicate_file_bytes)},
                     {"zero_blocks", double(n.counts_zero_blocks ? src.zero_blocks : 0)},
                     {"zero_block_bytes", double(n.counts_zero_blocks ? src.zero_block_bytes : 0)},
                     {"dedup_removed_bytes", double(n.removed_lsize)},
                     {"share_percent", std::round(n.share * 100.0)},
                     {"residual_dedup_ratio", n.residual_ratio}}};
    const std::string files =
        fmt::format("{}{} file{}, {}", n.estimated ? "about " : "", src.duplicate_files,
                    src.duplicate_files == 1 ? "" : "s", FormatBytes(n.file_bytes));
    const std::string who = n.zero_bytes == 0 ? fmt::format("Whole-file duplicates ({})", files)
                            : n.file_bytes == 0
                                ? fmt::format("All-zero blocks ({})", FormatBytes(n.zero_bytes))
                                : fmt::format("Whole-file duplicates ({}) and all-zero blocks ({})",
                                              files, FormatBytes(n.zero_bytes));
    const std::string share =
        n.no_ddt_bytes >= n.removed_lsize
            ? fmt::format("cover all of what dedup removes ({})", FormatBytes(n.removed_lsize))
            : fmt::format("make up {} of what dedup removes ({})", Percent(n.share),
                          FormatBytes(n.removed_lsize));
    if (n.zero_bytes == 0) {
      item.sentence = fmt::format("{} {}: {} get them without a DDT.", who, share, how);
    } else if (n.file_bytes == 0) {
      // Nothing to clone: the verdict is the zero blocks' (the JSON's too).
      item.verdict = Verdict::kZeroBlocksAreFree;
      item.sentence = fmt::format(
          "{} {}: any compression writes them as holes, which need no DDT (compression=off "
          "stores them).",
          who, share);
    } else {
      item.sentence = fmt::format(
          "{} {}: {} get the copies without a DDT, and any compression writes the zero blocks "
          "as holes.",
          who, share, how);
    }
    return item;
  }
  if (src.zero_block_bytes > 0 && !IsOff(c.f)) {
    AdviceItem item{AdviceKind::kDedupWithoutDdt,
                    Verdict::kZeroBlocksAreFree,
                    "",
                    {{"zero_blocks", double(src.zero_blocks)},
                     {"zero_block_bytes", double(src.zero_block_bytes)}}};
    item.sentence = fmt::format(
        "{} of all-zero blocks ({} block{}) cost nothing with compression on: ZFS stores them as "
        "holes, no DDT needed.",
        FormatBytes(src.zero_block_bytes), zfs::NiceNumber(src.zero_blocks),
        src.zero_blocks == 1 ? "" : "s");
    return item;
  }
  return std::nullopt;
}

// The settings a directory's advice may rest on: their codec coded every block, in a table that
// kept every key. A sampled codec's psize per directory rests on the few sampled blocks that fall
// in it (a whole tree's row read 37.4 MiB where its setting's table said 62.1 MiB), and a sampled
// table's rows on the references of the keys it kept (--sample 1/16 of a small tree: a few
// hundred), too little to advise a dataset on.
bool CodedEveryBlock(const SettingResult& s) { return !EstimatedFiguresOf(s).with_dedup; }

// Directories whose data would store kDirectoryGain less with another setting, in a dataset of
// their own: from the per-setting breakdowns (psize of their blocks), largest saving first.
// A directory's setting is chosen as the compression item chooses the pool's (codec_choice.h):
// of the settings storing within kCodecTie of the least, the fastest, and only where it stores
// kDirectoryGain less than the recommended one. Shares are of the data in records (LogicalOf).
// A directory holding all but kDirectoryShare of the data is left out: its dataset would be the
// scan's, which the compression item decides (an input root advised gzip-6 "as a dataset of its
// own" beside "zstd-3 would store only 9.99% less: not worth its CPU", gzip-6 storing 11% less and
// tied with zstd-3).
std::vector<DirectoryAdvice> DirectoryAdvices(const ScanResult& r, const Decision& d) {
  std::vector<DirectoryAdvice> out;
  const Breakdowns* base = BreakdownFor(r, d.featured);
  if (base == nullptr) return out;
  const SettingResult& featured = r.results[size_t(d.featured)];
  if (!CodedEveryBlock(featured)) return out;
  // The data in records, as each row's lsize and zero_lsize count it (holes are in no row: an
  // input root of sparse images held 6% of their 128 MiB, all of their data).
  const double logical = double(LogicalOf(featured));
  if (logical <= 0) return out;
  for (const BreakdownRow& row : base->directories) {
    const double held = double(row.lsize + row.zero_lsize);
    if (held < kDirectoryShare * logical || held > (1.0 - kDirectoryShare) * logical ||
        row.psize == 0) {
      continue;
    }
    // Per setting, the directory's psize (0: not known, or no blocks that take space).
    std::vector<uint64_t> psize(r.results.size(), 0);
    uint64_t least = 0;
    for (size_t i = 0; i < r.results.size(); ++i) {
      const Breakdowns* b = BreakdownFor(r, int(i));
      if (b == nullptr || !CodedEveryBlock(r.results[i]) ||
          r.results[i].compression.algorithm == CompressionAlgorithm::kOff) {
        continue;
      }
      for (const BreakdownRow& other : b->directories) {
        if (other.name == row.name) psize[i] = other.psize;
      }
      if (psize[i] > 0 && (least == 0 || psize[i] < least)) least = psize[i];
    }
    if (least == 0) continue;
    std::vector<int> near;
    for (size_t i = 0; i < psize.size(); ++i) {
      if (psize[i] > 0 && double(psize[i]) <= double(least) * (1.0 + kCodecTie)) {
        near.push_back(int(i));
      }
    }
    const int pick = FastestIndex(r.results, near);
    const uint64_t picked = psize[size_t(pick)];
    if (pick == d.featured || double(picked) > double(row.psize) * (1.0 - kDirectoryGain)) {
      continue;
    }
    out.push_back({row.name, pick, row.lsize, picked, row.psize, row.psize - picked});
  }
  std::stable_sort(out.begin(), out.end(), [](const DirectoryAdvice& a, const DirectoryAdvice& b) {
    return a.saved_bytes > b.saved_bytes;
  });
  if (out.size() > 5) out.resize(5);
  return out;
}

std::optional<AdviceItem> DirectoryItem(const Context& c, const std::vector<DirectoryAdvice>& ds) {
  if (ds.empty()) return std::nullopt;
  AdviceItem item{
      AdviceKind::kPerDirectory, Verdict::kOwnDataset, "", {{"directories", double(ds.size())}}};
  uint64_t total = 0;
  std::string list;
  for (const DirectoryAdvice& d : ds) {
    total += d.saved_bytes;
    list +=
        fmt::format("{}{} ({}: {} instead of {}, {} less)", list.empty() ? "" : "; ", d.name,
                    SettingsText(c.r.options, c.r.results[size_t(d.setting)]), FormatBytes(d.psize),
                    FormatBytes(d.recommended_psize), FormatBytes(d.saved_bytes));
  }
  item.figures.push_back({"saved_bytes", double(total)});
  item.sentence = fmt::format(
      "{} would store {} less as {} of {} own with another setting (data blocks, before "
      "allocation): {}.",
      ds.size() == 1 ? "One directory" : fmt::format("{} directories", ds.size()),
      FormatBytes(total), ds.size() == 1 ? "a dataset" : "datasets",
      ds.size() == 1 ? "its" : "their", list);
  return item;
}

// Zvols: a thick zvol reserves its whole size (with raidz parity and padding, copies and
// indirect blocks) whatever compression and dedup save; only a sparse one shows the savings.
// Each input is one zvol; the volumes are taken as equal in size (the scan keeps no per-file
// sizes in its result).
std::optional<AdviceItem> ZvolItem(const Context& c) {
  const ScanOptions& o = c.r.options;
  // Every volume named whose size is known: those read whole, and those listed (read in part,
  // or not at all), whose sizes add up to the logical and unread bytes.
  const uint64_t zvols = c.r.input.files + FilesOfKnownSize(c.r.input.errors);
  if (!o.volblocksize || zvols == 0) return std::nullopt;
  const uint64_t block = *o.volblocksize;
  const uint64_t volumes_bytes = c.r.input.bytes_logical + UnreadBytes(c.r.input.errors);
  const uint64_t each = (volumes_bytes / zvols + block - 1) / block * block;
  const uint64_t reservation =
      zvols * zfs::ThickZvolReservation(each, block, o.copies, o.vdev, o.ashift);
  AdviceItem item{AdviceKind::kZvolReservation,
                  Verdict::kThickZvolReserves,
                  "",
                  {{"zvols", double(zvols)},
                   {"volsize_bytes", double(each * zvols)},
                   {"refreservation_bytes", double(reservation)},
                   {"stored_bytes", double(c.d.stored_bytes)}}};
  // The report knows the volumes' total, not each one's size: reckoned as equal, and the total
  // stated as it is (it was the reckoning's, each size rounded up: 1.03 MiB for 1 MiB and 4 KiB).
  item.sentence = fmt::format(
      "A thick zvol (zfs create -V, the default) reserves refreservation={} for {} ({}, vdev "
      "{}, copies={}, indirect blocks included{}), whatever compression and dedup save; the "
      "recommended settings store {}. Create sparse zvols (zfs create -s -V) to get the "
      "savings, and watch the pool's free space instead.",
      FormatBytes(reservation),
      zvols == 1 ? "1 volume of " + FormatBytes(each)
                 : fmt::format("{} volumes of {} in all", zvols, FormatBytes(volumes_bytes)),
      BlockSetting(o, block), VdevName(o.vdev), o.copies,
      zvols == 1 ? std::string()
                 : fmt::format("; reckoned as {} each, which moves the total by a few blocks "
                               "per volume at most: a reservation grows with its blocks",
                               FormatBytes(each)),
      FormatBytes(c.d.stored_bytes));
  return item;
}

AdviceItem SummaryItem(const Context& c) {
  const SettingResult& f = c.f;
  const Decision& d = c.d;
  const double ratio = f.dedup.ratio;
  // With dedup=on recommended, the compressratio of the dataset with it (2.1 and 2.2 embed
  // small blocks only without dedup: SettingResult::compressratio_with_dedup).
  const double r = d.verdict == Verdict::kDedupPays ? f.compressratio_with_dedup : f.compressratio;
  const std::string need = FormatBytes(d.dedup.ram_need_bytes);
  const std::string saves = SavesText(d.space.saved);
  const std::string saves_dedup = SavesText(d.space.saved_dedup);
  AdviceItem item{AdviceKind::kSummary, d.verdict, "", {}};
  item.figures = {{"dedup_ratio", ratio},
                  {"compressratio", r},
                  {"saved_percent", double(SavedPercentOf(d.saved))},
                  {"stored_bytes", double(d.stored_bytes)},
                  {"ddt_ram_bytes", double(d.dedup.ram_need_bytes)},
                  {"ram_bytes", double(d.ram_bytes)},
                  {"used_bytes", double(f.used)},
                  {"pool_alloc_bytes", double(f.pool_alloc)}};
  AddDataCompression(f, item);
  switch (d.verdict) {
    case Verdict::kCloneInsteadOfDedup: {
      // All-zero blocks alone (an uncompressed setting): no cloning to advise, compression
      // gets them; the setting's own compression may be off only because no other was asked.
      const NoDdtWhat what = NoDdtWhatOf(d.no_ddt, c.r.options.profile);
      const bool zeros_only = d.no_ddt.file_bytes == 0;
      std::string noun = what.noun;
      noun[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(noun[0])));
      item.sentence = fmt::format(
          "{}, no dedup: {}, dedup=off {}. {} make up {}{} of what dedup ({}) would remove{}, "
          "and without them dedup is only {}.",
          (IsOff(f) ? "Compression (" + CheapCodec(c.r.options.profile) + ")" : "Compression") +
              (zeros_only ? "" : " plus " + CopiesRemedy(c.r.options.profile)),
          c.settings, saves, noun, d.no_ddt.estimated ? "an estimated " : "",
          Percent(d.no_ddt.share), Ratio(ratio),
          zeros_only ? " (any compression writes them as holes)" : "",
          FlooredRatio(d.no_ddt.residual_ratio));
      break;
    }
    case Verdict::kDedupPays: {
      const std::string without = SavedPercentOf(d.space.saved) >= 0
                                      ? SavedText(d.space.saved)
                                      : SideText(d.space.saved) + " the data's size";
      item.sentence = fmt::format(
          "Dedup pays: dedup=on, {} {} ({} without dedup; dedup {}, compressratio {}), and "
          "its table ({} of RAM) fits in {}.",
          c.settings, saves_dedup, without, Ratio(ratio), Ratio(r), need, FormatBytes(d.ram_bytes));
      break;
    }
    case Verdict::kDedupNeedsHardware: {
      const DdtFootprint* fp = d.dedup.footprint;
      const std::string hardware =
          L2arcHeadersFit(d) ? fmt::format("an L2ARC of {} or a mirrored special/dedup vdev of {}",
                                           FormatBytes(fp ? fp->in_core_bytes : 0),
                                           FormatBytes(fp ? fp->on_disk_bytes : 0))
                             : fmt::format("a mirrored special/dedup vdev of {} (not an L2ARC: {})",
                                           FormatBytes(fp ? fp->on_disk_bytes : 0),
                                           fp ? L2arcRamText(*fp) : std::string());
      item.sentence = fmt::format(
          "Compression only unless the DDT gets hardware: {}, dedup=off {}. Dedup ({}) would "
          "{}, but its table ({} of RAM) does not fit in a quarter of {} ({}): turn it on only "
          "with {}.",
          c.settings, saves, Ratio(ratio), SavesText(d.space.saved_dedup, true), need,
          FormatBytes(d.ram_bytes), FormatBytes(d.dedup.budget_bytes), hardware);
      break;
    }
    case Verdict::kCompressionOnly:
      if (d.dedup.verdict == Verdict::kDedupUncertain) {
        item.sentence = fmt::format(
            "Compression only: {}, dedup=off {} ({}); dedup reads {}, but {}.", c.settings, saves,
            CompressText(f), Ratio(ratio), UncertainDedupText(f, c.r.options));
      } else if (SavedPercentOf(d.space.saved) >= 0 && SavedPercentOf(d.space.saved_dedup) >= 0) {
        item.sentence = fmt::format(
            "Compression only: {}, dedup=off {} ({}); dedup ({}) would make that {} for {} of "
            "DDT RAM: not worth it.",
            c.settings, saves, CompressText(f), DedupRatioText(d, ratio),
            SavedText(d.space.saved_dedup), need);
      } else {
        item.sentence = fmt::format(
            "Compression only: {}, dedup=off {} ({}: {} outweigh what compression saves); with "
            "dedup ({}) it would {}, for {} of DDT RAM: not worth it.",
            c.settings, saves, CompressText(f), OverheadText(c.r.options), DedupRatioText(d, ratio),
            SavesText(d.space.saved_dedup, true), need);
      }
      break;
    default:
      if (d.dedup.verdict == Verdict::kDedupUncertain) {
        item.sentence = fmt::format(
            "Compression ({}) saves little: {}, dedup=off {}{}; keep {} on (it costs almost "
            "nothing). Dedup reads {}, but {}.",
            Ratio(r), c.settings, saves, AboveLogicalCause(c.r.options, d.space.saved),
            IsOff(f) ? CheapCodec(c.r.options.profile) : c.codec, Ratio(ratio),
            UncertainDedupText(f, c.r.options));
        break;
      }
      item.sentence = fmt::format(
          "Neither compression ({}) nor dedup ({}) saves much: {}, dedup=off {}{}; keep {} on "
          "(it costs almost nothing).",
          Ratio(r), DedupRatioText(d, ratio), c.settings, saves,
          AboveLogicalCause(c.r.options, d.space.saved),
          IsOff(f) ? CheapCodec(c.r.options.profile) : c.codec);
      break;
  }
  return item;
}

constexpr std::string_view kKindNames[] = {"summary",       "compression",     "dedup",
                                           "ddt_memory",    "recordsize",      "dedup_without_ddt",
                                           "per_directory", "zvol_reservation"};
constexpr std::string_view kVerdictNames[] = {"dedup_pays",
                                              "dedup_needs_hardware",
                                              "compression_only",
                                              "clone_instead_of_dedup",
                                              "store_as_is",
                                              "nothing_scanned",
                                              "compress",
                                              "compress_anyway",
                                              "dedup_marginal",
                                              "dedup_not_worth_it",
                                              "ddt_fits_in_ram",
                                              "ddt_needs_l2arc_or_special_vdev",
                                              "prefer_recordsize",
                                              "keep_recordsize",
                                              "use_block_cloning_or_hard_links",
                                              "zero_blocks_are_free",
                                              "dedup_covered_by_cloning",
                                              "own_dataset",
                                              "thick_zvol_reserves",
                                              "dedup_uncertain",
                                              "block_below_sector"};

}  // namespace

std::string_view AdviceKindName(AdviceKind kind) { return kKindNames[size_t(kind)]; }
std::string_view VerdictName(Verdict verdict) { return kVerdictNames[size_t(verdict)]; }

double AdviceItem::Figure(std::string_view name, double fallback) const {
  for (const AdviceFigure& f : figures) {
    if (f.name == name) return f.value;
  }
  return fallback;
}

const AdviceItem* Advice::Find(AdviceKind kind) const {
  for (const AdviceItem& i : items) {
    if (i.kind == kind) return &i;
  }
  return nullptr;
}

std::string ZdbBlock(const SettingResult& s, DdtFormat format, Profile profile) {
  std::vector<zfs::ZdbDdtObject> objects;
  if (const DdtFootprint* fp = FootprintFor(s, format)) {
    for (const bool dup : {true, false}) {
      const DdtClassFootprint& c = dup ? fp->duplicate : fp->unique;
      if (c.entries == 0) continue;
      objects.push_back(zfs::ZdbDdtObject{zfs::DdtObjectName("sha256", dup), c.entries,
                                          c.on_disk_bytes, c.in_core_bytes});
    }
  }
  return zfs::ZdbDedupText(s.dedup, objects, profile);
}

std::string UnreadSentence(const ScanResult& r) {
  const uint64_t unread = UnreadBytes(r.input.errors);
  if (unread == 0) return "";
  const size_t files = size_t(std::count_if(r.input.errors.begin(), r.input.errors.end(),
                                            [](const PathError& e) { return e.bytes > 0; }));
  // Of the data, holes not counted, as the report's other "data" (a 1 GiB sparse file holding
  // 1 MiB beside an unreadable 1 MiB one: half, not 0.1%). An unreadable file counts at its size
  // (what its error keeps: st_blocks would bound its data, not what a read would find), which
  // errs towards the warning.
  const uint64_t read = r.input.bytes_data_known ? r.input.bytes_data : r.input.bytes_logical;
  const double share = double(unread) / double(unread + read);
  // An interrupted scan lists the files it was reading with what it had not read of them, and
  // knows nothing of the files it never reached.
  return fmt::format(
      "{} in {} file{} {} ({} of the data {}): every figure here covers the rest.",
      FormatBytes(unread), files, files == 1 ? "" : "s",
      r.partial ? "was not read, cut short by the interrupt or unreadable" : "could not be read",
      share >= 0.999 && read > 0 ? std::string("nearly all")
                                 : fmt::format("{:.1f}%", share * 100.0),
      r.partial ? "the scan reached" : "named");
}

std::string PartialSentence(const ScanResult& r) {
  if (!r.partial) return "";
  std::string s = "the scan was interrupted; figures cover what was read";
  const InputSummary& in = r.input;
  if (in.bytes_named > 0) {
    s += fmt::format(
        ": {} of the {}{} in {}{} file{} the paths hold ({:.0f}%)", FormatBytes(in.bytes_logical),
        in.named_complete ? "" : "at least ", FormatBytes(in.bytes_named),
        in.named_complete ? "" : "at least ", in.files_named, in.files_named == 1 ? "" : "s",
        100.0 * double(std::min(in.bytes_logical, in.bytes_named)) / double(in.bytes_named));
    if (!in.named_complete) s += ", counted before the interrupt stopped the sizing walk";
  }
  return s + ".";
}

std::string CountedTwiceSentence(const ScanResult& r) {
  const uint64_t n = r.input.files_counted_twice;
  if (n == 0) return "";
  return fmt::format(
      "files held by more than one of the merged states (overlapping inputs, hard links of scans "
      "made in another boot, or a linked file changed between the scans) count in each: {} "
      "file count{} too many, whose blocks read as duplicates of themselves, so the dedup "
      "figures are too high. Merge states of disjoint inputs.",
      n, n == 1 ? "" : "s");
}

std::string PathErrorExtent(const PathError& e) {
  const uint64_t size = e.bytes + e.bytes_in_figures;
  if (size == 0) return "";
  if (e.bytes_in_figures == 0) return " (" + FormatBytes(e.bytes) + " not read)";
  if (e.bytes == 0) return " (all " + FormatBytes(size) + " in the figures)";
  return fmt::format(" ({} of {} in the figures, {} not read)", FormatBytes(e.bytes_in_figures),
                     FormatBytes(size), FormatBytes(e.bytes));
}

std::string PathErrorsHeading(const std::vector<PathError>& errors) {
  const uint64_t unread = UnreadBytes(errors);
  return fmt::format("Could not read{} {} path{}{}",
                     FilesInPart(errors) ? ", or read in part," : "", errors.size(),
                     errors.size() == 1 ? "" : "s",
                     unread ? fmt::format(" ({} not read)", FormatBytes(unread)) : "");
}

std::string SettingsText(const ScanOptions& o, const SettingResult& s) {
  return fmt::format("compression={}, {}", CompressionName(s.compression),
                     BlockSetting(o, s.recordsize));
}

Advice ComputeAdvice(const ScanResult& r) {
  Advice a;
  static_cast<Decision&>(a) = Decide(r);
  if (a.verdict == Verdict::kNothingScanned) {
    a.items.push_back({AdviceKind::kSummary,
                       Verdict::kNothingScanned,
                       "Nothing to advise: the scan found no data to store.",
                       {}});
    return a;
  }
  const SettingResult& f = r.results[size_t(a.featured)];
  const Context c{r, a, f, CompressionName(f.compression), SettingsText(r.options, f)};
  a.items.push_back(SummaryItem(c));
  std::optional<AdviceItem> block_size = BlockSizeItem(c);
  // A block size below the sector qualifies every figure after it: said right after the summary.
  if (block_size && block_size->verdict == Verdict::kBlockBelowSector) {
    a.items.push_back(std::move(*block_size));
    block_size.reset();
  }
  a.items.push_back(CompressionItem(c));
  a.items.push_back(DedupItem(c));
  if (auto item = DdtMemoryItem(c)) a.items.push_back(std::move(*item));
  if (block_size) a.items.push_back(std::move(*block_size));
  if (auto item = NoDdtItem(c)) a.items.push_back(std::move(*item));
  if (auto item = ZvolItem(c)) a.items.push_back(std::move(*item));
  a.directories = DirectoryAdvices(r, a);
  if (auto item = DirectoryItem(c, a.directories)) a.items.push_back(std::move(*item));
  return a;
}

}  // namespace zsim::report
