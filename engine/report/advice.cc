#include "engine/report/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/base/size_suffix.h"
#include "engine/report/codec_speed.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/zdb_text.h"

namespace zsim::report {
namespace {

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

std::string Percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100.0); }

bool IsOff(const SettingResult& s) { return s.compression.algorithm == CompressionAlgorithm::kOff; }

// What a setting occupies for the advice: `used`, or `pool_alloc` when dedup would be on.
uint64_t Space(const SettingResult& s, bool with_dedup) {
  return with_dedup ? s.pool_alloc : s.used;
}

double Fraction(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

// Dedup on its own for one setting: the ratio against the RAM budget.
struct DedupJudgement {
  Verdict verdict = Verdict::kDedupNotWorthIt;
  const DdtFootprint* footprint = nullptr;
  uint64_t ram_need_bytes = 0;
  uint64_t budget_bytes = 0;
};

DedupJudgement JudgeDedup(const SettingResult& s, DdtFormat format, uint64_t ram_bytes) {
  DedupJudgement j;
  j.footprint = FootprintFor(s, format);
  j.ram_need_bytes = j.footprint != nullptr ? DdtRamBytes(*j.footprint) : 0;
  j.budget_bytes = static_cast<uint64_t>(static_cast<double>(ram_bytes) * kDdtRamFraction);
  // ram_bytes 0 means the RAM is unknown: judge on the ratio alone.
  const bool fits = ram_bytes == 0 || j.ram_need_bytes <= j.budget_bytes;
  const double d = s.dedup.ratio;
  if (d >= kDedupPaysRatio) {
    j.verdict = fits ? Verdict::kDedupPays : Verdict::kDedupNeedsHardware;
  } else if (d >= kDedupNotWorthRatio) {
    j.verdict = Verdict::kDedupMarginal;
  } else {
    j.verdict = Verdict::kDedupNotWorthIt;
  }
  return j;
}

// The cheap codec ZFS users turn on by default: lz4, or lzjb where lz4 is not evaluated.
int CheapIndex(const std::vector<SettingResult>& rs, uint64_t recordsize) {
  for (CompressionAlgorithm a : {CompressionAlgorithm::kLz4, CompressionAlgorithm::kLzjb}) {
    for (size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].recordsize == recordsize && rs[i].compression.algorithm == a) return int(i);
    }
  }
  return -1;
}

// The compressing setting at `recordsize` that stores least, -1 when none compresses.
int SmallestCompressedIndex(const std::vector<SettingResult>& rs, uint64_t recordsize) {
  int best = -1;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (rs[i].recordsize != recordsize || IsOff(rs[i])) continue;
    if (best < 0 || rs[i].used < rs[size_t(best)].used) best = int(i);
  }
  return best;
}

// Cost rank when speed was not measured: lz4 and zle are cheapest, zstd decompresses far faster
// than gzip at similar ratios.
int CostRank(CompressionAlgorithm a) {
  switch (a) {
    case CompressionAlgorithm::kLz4:
      return 0;
    case CompressionAlgorithm::kZle:
      return 1;
    case CompressionAlgorithm::kLzjb:
      return 2;
    case CompressionAlgorithm::kZstd:
      return 3;
    case CompressionAlgorithm::kGzip:
      return 4;
    default:
      return 5;
  }
}

// Of the codecs storing within kCodecTie of the smallest, the fastest: by measured speed when
// every one of them was timed, else by CostRank and level.
int StrongestWorthwhileIndex(const std::vector<SettingResult>& rs, uint64_t recordsize) {
  const int smallest = SmallestCompressedIndex(rs, recordsize);
  if (smallest < 0) return -1;
  const double limit = double(rs[size_t(smallest)].used) * (1.0 + kCodecTie);
  std::vector<int> near;
  bool timed = true;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (rs[i].recordsize != recordsize || IsOff(rs[i]) || double(rs[i].used) > limit) continue;
    near.push_back(int(i));
    timed &= CodecBytesPerSecond(rs[i]) > 0;
  }
  return *std::min_element(near.begin(), near.end(), [&](int x, int y) {
    const SettingResult& a = rs[size_t(x)];
    const SettingResult& b = rs[size_t(y)];
    if (timed) return CodecBytesPerSecond(a) > CodecBytesPerSecond(b);
    const int ra = CostRank(a.compression.algorithm), rb = CostRank(b.compression.algorithm);
    return ra != rb ? ra < rb : a.compression.level < b.compression.level;
  });
}

// The compression to advise, judged at the first recordsize evaluated.
Compression PickCompression(const std::vector<SettingResult>& rs) {
  const uint64_t rs0 = rs.front().recordsize;
  const int strong = StrongestWorthwhileIndex(rs, rs0);
  if (strong < 0) return rs.front().compression;  // only "off" evaluated
  const int cheap = CheapIndex(rs, rs0);
  if (cheap < 0) return rs[size_t(strong)].compression;
  const double cheap_used = double(rs[size_t(cheap)].used);
  if (double(rs[size_t(strong)].used) <= cheap_used * (1.0 - kStrongerCodecGain)) {
    return rs[size_t(strong)].compression;
  }
  return rs[size_t(cheap)].compression;
}

// " at 178 MB/s per core" when the codec was timed, else "".
std::string SpeedText(const SettingResult& s) {
  const double bps = CodecBytesPerSecond(s);
  return bps > 0 ? fmt::format(" at {:.0f} MB/s per core", bps / 1e6) : "";
}

const char* FormatName(DdtFormat f) { return f == DdtFormat::kFast ? "fast" : "legacy"; }

bool HasBlockCloning(Profile p) {
  return p == Profile::kZfs22 || p == Profile::kZfs23 || p == Profile::kZfs24;
}

struct Context {
  const ScanResult& r;
  const SettingResult& f;  // featured
  DedupJudgement dedup;
  DdtFormat format;
  uint64_t ram_bytes;
  std::string codec;  // featured compression name
};

AdviceItem CompressionItem(const Context& c) {
  AdviceItem item{AdviceKind::kCompression, Verdict::kCompress, "", {}};
  const SettingResult& f = c.f;
  if (IsOff(f)) {
    item.verdict = Verdict::kCompressAnyway;
    item.sentence =
        "Only compression=off was evaluated: lz4 costs almost nothing and turns all-zero blocks "
        "into holes; evaluate it with --compression lz4.";
    return item;
  }
  const double r = f.compressratio;
  item.figures = {{"compressratio", r},
                  {"saved_percent", std::round((1.0 - 1.0 / r) * 100.0)},
                  {"lsize_bytes", double(f.lsize)},
                  {"psize_bytes", double(f.psize)},
                  {"used_bytes", double(f.used)}};
  const int cheap = CheapIndex(c.r.results, f.recordsize);
  const SettingResult* cheap_s = cheap >= 0 ? &c.r.results[size_t(cheap)] : nullptr;
  const bool featured_is_cheap = cheap_s == &f || cheap_s == nullptr;
  if (!featured_is_cheap) {
    const double gain = 1.0 - Fraction(double(f.used), double(cheap_s->used));
    item.figures.push_back({"cheap_compressratio", cheap_s->compressratio});
    item.figures.push_back({"gain_over_cheap_percent", std::round(gain * 100.0)});
    item.sentence = fmt::format(
        "{} saves {} ({}){}, storing {} less than {} ({}{}): worth its CPU cost on this data.",
        c.codec, SavedPercent(r), Ratio(r), SpeedText(f), Percent(gain),
        CompressionName(cheap_s->compression), Ratio(cheap_s->compressratio), SpeedText(*cheap_s));
    return item;
  }
  if (r < kCompressionPaysRatio) {
    item.verdict = Verdict::kCompressAnyway;
    item.sentence = fmt::format(
        "The data barely compresses: {} saves {} ({}). Keep {} on anyway: it gives up early on "
        "incompressible blocks and stores all-zero blocks as holes.",
        c.codec, SavedPercent(r), Ratio(r), c.codec);
    return item;
  }
  item.sentence =
      fmt::format("{} alone saves {} ({}) for almost no CPU: {} of records stored in {}.", c.codec,
                  SavedPercent(r), Ratio(r), FormatBytes(f.lsize), FormatBytes(f.psize));
  const int best = StrongestWorthwhileIndex(c.r.results, f.recordsize);
  if (best >= 0 && &c.r.results[size_t(best)] != &f) {
    const SettingResult& b = c.r.results[size_t(best)];
    const double gain = 1.0 - Fraction(double(b.used), double(f.used));
    if (gain > 0.005) {
      item.figures.push_back({"best_compressratio", b.compressratio});
      item.figures.push_back({"best_gain_percent", std::round(gain * 100.0)});
      item.sentence +=
          fmt::format(" {} would save {} ({}){}, only {} less space: not worth its CPU.",
                      CompressionName(b.compression), SavedPercent(b.compressratio),
                      Ratio(b.compressratio), SpeedText(b), Percent(gain));
    }
  }
  return item;
}

AdviceItem DedupItem(const Context& c) {
  const SettingResult& f = c.f;
  const double d = f.dedup.ratio;
  const uint64_t saved = f.dedup.total.referenced.dsize > f.dedup.total.allocated.dsize
                             ? f.dedup.total.referenced.dsize - f.dedup.total.allocated.dsize
                             : 0;
  AdviceItem item{AdviceKind::kDedup, c.dedup.verdict, "", {}};
  item.figures = {{"dedup_ratio", d},
                  {"saved_percent", std::round((1.0 - 1.0 / d) * 100.0)},
                  {"saved_bytes", double(saved)},
                  {"ddt_ram_bytes", double(c.dedup.ram_need_bytes)},
                  {"ram_bytes", double(c.ram_bytes)},
                  {"ram_budget_bytes", double(c.dedup.budget_bytes)},
                  {"ddt_entries", double(f.dedup.unique_entries + f.dedup.duplicate_entries)}};
  const std::string need = FormatBytes(c.dedup.ram_need_bytes);
  switch (c.dedup.verdict) {
    case Verdict::kDedupPays:
      item.sentence = fmt::format(
          "Dedup saves {} ({}, {}) on top of compression, and its table needs {} of RAM, within "
          "a quarter of {}: dedup pays.",
          SavedPercent(d), Ratio(d), FormatBytes(saved), need, FormatBytes(c.ram_bytes));
      break;
    case Verdict::kDedupNeedsHardware:
      item.sentence = fmt::format(
          "Dedup would save {} ({}, {}) but its table needs {} of RAM, more than a quarter of {} "
          "({}): it pays only with an L2ARC or a special/dedup vdev for the table.",
          SavedPercent(d), Ratio(d), FormatBytes(saved), need, FormatBytes(c.ram_bytes),
          FormatBytes(c.dedup.budget_bytes));
      break;
    case Verdict::kDedupMarginal:
      item.sentence = fmt::format(
          "Dedup would add {} ({}, {}) for a table of {} in RAM: marginal, not worth it unless "
          "space matters more than write speed.",
          SavedPercent(d), Ratio(d), FormatBytes(saved), need);
      break;
    default:
      item.sentence =
          fmt::format("Dedup would add {} ({}) but needs {} of RAM for its table: not worth it.",
                      SavedPercent(d), Ratio(d), need);
      break;
  }
  return item;
}

std::optional<AdviceItem> DdtMemoryItem(const Context& c) {
  const DdtFootprint* fp = c.dedup.footprint;
  const uint64_t entries = c.f.dedup.unique_entries + c.f.dedup.duplicate_entries;
  if (fp == nullptr || entries == 0) return std::nullopt;
  const bool fits = c.ram_bytes == 0 || c.dedup.ram_need_bytes <= c.dedup.budget_bytes;
  AdviceItem item{AdviceKind::kDdtMemory,
                  fits ? Verdict::kDdtFitsInRam : Verdict::kDdtNeedsL2arc,
                  "",
                  {{"ddt_entries", double(entries)},
                   {"ddt_in_core_bytes", double(fp->in_core_bytes)},
                   {"ddt_on_disk_bytes", double(fp->on_disk_bytes)},
                   {"ddt_log_bytes", double(fp->log_bytes)},
                   {"ddt_ram_bytes", double(c.dedup.ram_need_bytes)},
                   {"ram_bytes", double(c.ram_bytes)},
                   {"ram_budget_bytes", double(c.dedup.budget_bytes)},
                   {"l2arc_bytes", double(fp->in_core_bytes)},
                   {"l2arc_header_bytes", double(fp->l2arc_header_bytes)},
                   {"special_vdev_bytes", double(fp->on_disk_bytes)}}};
  const std::string head =
      fmt::format("The {} DDT of {} entries takes {} in core{} and {} on disk",
                  FormatName(fp->format), zfs::NiceNumber(entries), FormatBytes(fp->in_core_bytes),
                  fp->log_bytes > 0 ? fmt::format(" (+{} log)", FormatBytes(fp->log_bytes)) : "",
                  FormatBytes(fp->on_disk_bytes));
  if (fits) {
    item.sentence =
        c.ram_bytes == 0
            ? head + "."
            : fmt::format("{}: it fits in ARC with {} of RAM (budget: a quarter, {}).", head,
                          FormatBytes(c.ram_bytes), FormatBytes(c.dedup.budget_bytes));
  } else {
    item.sentence = fmt::format(
        "{}, more than a quarter of {} of RAM ({}): it needs an L2ARC of {} (whose headers cost "
        "{} of RAM) or a special/dedup vdev of {}.",
        head, FormatBytes(c.ram_bytes), FormatBytes(c.dedup.budget_bytes),
        FormatBytes(fp->in_core_bytes), FormatBytes(fp->l2arc_header_bytes),
        FormatBytes(fp->on_disk_bytes));
  }
  return item;
}

std::optional<AdviceItem> RecordsizeItem(const Context& c, bool with_dedup) {
  const std::vector<SettingResult>& rs = c.r.results;
  const SettingResult* first = nullptr;
  const SettingResult* best = nullptr;
  for (const SettingResult& s : rs) {
    if (!(s.compression == c.f.compression)) continue;
    if (first == nullptr) first = &s;
    if (best == nullptr || Space(s, with_dedup) < Space(*best, with_dedup)) best = &s;
  }
  size_t count = 0;
  for (const SettingResult& s : rs) count += s.compression == c.f.compression ? 1 : 0;
  if (count < 2) return std::nullopt;  // one recordsize: nothing to compare
  const char* how = with_dedup ? " with dedup" : "";
  const double gain =
      1.0 - Fraction(double(Space(*best, with_dedup)), double(Space(*first, with_dedup)));
  AdviceItem item{AdviceKind::kRecordsize,
                  &c.f != first ? Verdict::kPreferRecordsize : Verdict::kKeepRecordsize,
                  "",
                  {{"recordsize_bytes", double(c.f.recordsize)},
                   {"space_bytes", double(Space(c.f, with_dedup))},
                   {"first_recordsize_bytes", double(first->recordsize)},
                   {"first_space_bytes", double(Space(*first, with_dedup))},
                   {"best_recordsize_bytes", double(best->recordsize)},
                   {"gain_percent", std::round(gain * 100.0)}}};
  if (item.verdict == Verdict::kPreferRecordsize) {
    item.sentence =
        fmt::format("recordsize {} saves most: {} stored in {}{}, {} less than with {} ({}).",
                    zfs::NiceBytes(c.f.recordsize), FormatBytes(c.f.lsize),
                    FormatBytes(Space(c.f, with_dedup)), how, Percent(gain),
                    zfs::NiceBytes(first->recordsize), FormatBytes(Space(*first, with_dedup)));
  } else if (best == first) {
    item.sentence =
        fmt::format("recordsize {} saves most ({}{}); the other recordsizes store more.",
                    zfs::NiceBytes(first->recordsize), FormatBytes(Space(*first, with_dedup)), how);
  } else {
    item.sentence = fmt::format(
        "Keep recordsize {} ({}{}): {} would store only {} less ({}), under the {} worth a change.",
        zfs::NiceBytes(first->recordsize), FormatBytes(Space(*first, with_dedup)), how,
        zfs::NiceBytes(best->recordsize), Percent(gain), FormatBytes(Space(*best, with_dedup)),
        Percent(kRecordsizeGain));
  }
  return item;
}

// How much of the dedup needs no DDT.
struct NoDdtShare {
  uint64_t removed_lsize = 0;  // what dedup removes (referenced - allocated lsize)
  uint64_t no_ddt_bytes = 0;   // whole-file duplicates (+ zero blocks when not compressing)
  double share = 0;            // no_ddt_bytes / removed_lsize, at most 1
  double residual_ratio = 1;   // dedup ratio once those are gone (lsize based)
  bool counts_zero_blocks = false;
};

NoDdtShare ComputeNoDdtShare(const ScanResult& r, const SettingResult& f) {
  NoDdtShare n;
  const DdtStat& ref = f.dedup.total.referenced;
  const DdtStat& alloc = f.dedup.total.allocated;
  n.removed_lsize = ref.lsize > alloc.lsize ? ref.lsize - alloc.lsize : 0;
  n.counts_zero_blocks = IsOff(f);
  n.no_ddt_bytes = r.dedup_sources.duplicate_file_bytes +
                   (n.counts_zero_blocks ? r.dedup_sources.zero_block_bytes : 0);
  if (n.removed_lsize == 0) return n;
  n.share = std::min(1.0, Fraction(double(n.no_ddt_bytes), double(n.removed_lsize)));
  const double rest = double(ref.lsize) - std::min(double(n.no_ddt_bytes), double(n.removed_lsize));
  n.residual_ratio = alloc.lsize > 0 ? std::max(1.0, rest / double(alloc.lsize)) : 1.0;
  return n;
}

std::optional<AdviceItem> NoDdtItem(const Context& c, const NoDdtShare& n) {
  const DedupSources& src = c.r.dedup_sources;
  const char* how = HasBlockCloning(c.r.options.profile)
                        ? "block cloning (cp --reflink, OpenZFS 2.2+) or hard links"
                        : "hard links (block cloning needs OpenZFS 2.2+)";
  if (n.removed_lsize > 0 && n.share >= kNoDdtShare) {
    AdviceItem item{AdviceKind::kDedupWithoutDdt,
                    Verdict::kUseCloning,
                    "",
                    {{"duplicate_files", double(src.duplicate_files)},
                     {"duplicate_file_bytes", double(src.duplicate_file_bytes)},
                     {"zero_block_bytes", double(n.counts_zero_blocks ? src.zero_block_bytes : 0)},
                     {"dedup_removed_bytes", double(n.removed_lsize)},
                     {"share_percent", std::round(n.share * 100.0)},
                     {"residual_dedup_ratio", n.residual_ratio}}};
    const std::string who = n.counts_zero_blocks
                                ? fmt::format("Whole-file duplicates and all-zero blocks ({})",
                                              FormatBytes(n.no_ddt_bytes))
                                : fmt::format("Whole-file duplicates ({} files, {})",
                                              src.duplicate_files, FormatBytes(n.no_ddt_bytes));
    const std::string share =
        n.no_ddt_bytes >= n.removed_lsize
            ? fmt::format("cover all of what dedup removes ({})", FormatBytes(n.removed_lsize))
            : fmt::format("make up {} of what dedup removes ({})", Percent(n.share),
                          FormatBytes(n.removed_lsize));
    item.sentence = fmt::format(
        "{} {}: {} get them without a DDT{}.", who, share, how,
        n.counts_zero_blocks ? " (and any compression stores zero blocks as holes)" : "");
    return item;
  }
  if (src.zero_block_bytes > 0 && !IsOff(c.f)) {
    AdviceItem item{AdviceKind::kDedupWithoutDdt,
                    Verdict::kZeroBlocksAreFree,
                    "",
                    {{"zero_blocks", double(src.zero_blocks)},
                     {"zero_block_bytes", double(src.zero_block_bytes)}}};
    item.sentence = fmt::format(
        "{} of all-zero blocks ({} blocks) cost nothing with compression on: ZFS stores them as "
        "holes, no DDT needed.",
        FormatBytes(src.zero_block_bytes), zfs::NiceNumber(src.zero_blocks));
    return item;
  }
  return std::nullopt;
}

AdviceItem SummaryItem(const Context& c, const NoDdtShare& n) {
  const SettingResult& f = c.f;
  const double d = f.dedup.ratio;
  const double r = f.compressratio;
  const std::string need = FormatBytes(c.dedup.ram_need_bytes);
  const std::string settings =
      fmt::format("compression={}, recordsize={}", c.codec, zfs::NiceBytes(f.recordsize));
  AdviceItem item{AdviceKind::kSummary, Verdict::kStoreAsIs, "", {}};
  item.figures = {{"dedup_ratio", d},
                  {"compressratio", r},
                  {"ddt_ram_bytes", double(c.dedup.ram_need_bytes)},
                  {"ram_bytes", double(c.ram_bytes)},
                  {"used_bytes", double(f.used)},
                  {"pool_alloc_bytes", double(f.pool_alloc)}};
  const bool dedup_helps =
      c.dedup.verdict == Verdict::kDedupPays || c.dedup.verdict == Verdict::kDedupNeedsHardware;
  if (dedup_helps && n.share >= kNoDdtShare && n.residual_ratio < kDedupPaysRatio) {
    item.verdict = Verdict::kCloneInsteadOfDedup;
    item.sentence = fmt::format(
        "Compression plus block cloning or hard links, no dedup: whole-file copies make up {} of "
        "what dedup ({}) would save, and without them dedup is only {:.2f}x. Use {}.",
        Percent(n.share), Ratio(d), n.residual_ratio, settings);
  } else if (c.dedup.verdict == Verdict::kDedupPays) {
    item.verdict = Verdict::kDedupPays;
    item.sentence = fmt::format(
        "Dedup pays: it saves {} ({}) on top of {} ({}), and its table ({} of RAM) fits in {}. "
        "Use dedup=on, {}.",
        SavedPercent(d), Ratio(d), c.codec, Ratio(r), need, FormatBytes(c.ram_bytes), settings);
  } else if (c.dedup.verdict == Verdict::kDedupNeedsHardware) {
    item.verdict = Verdict::kDedupNeedsHardware;
    const DdtFootprint* fp = c.dedup.footprint;
    item.sentence = fmt::format(
        "Dedup saves {} ({}) but its table ({} of RAM) does not fit in {}: turn it on only with "
        "an L2ARC of {} or a special/dedup vdev of {}; otherwise use compression only ({}, {}).",
        SavedPercent(d), Ratio(d), need, FormatBytes(c.ram_bytes),
        FormatBytes(fp ? fp->in_core_bytes : 0), FormatBytes(fp ? fp->on_disk_bytes : 0), c.codec,
        Ratio(r));
  } else if (r >= kCompressionPaysRatio) {
    item.verdict = Verdict::kCompressionOnly;
    item.sentence = fmt::format(
        "Compression only: {} saves {} ({}); dedup would add {} ({}) for {} of DDT RAM: not "
        "worth it. Use {}, dedup=off.",
        c.codec, SavedPercent(r), Ratio(r), SavedPercent(d), Ratio(d), need, settings);
  } else {
    item.sentence = fmt::format(
        "Neither compression ({}, {}) nor dedup ({}) saves much: keep {} on (it costs almost "
        "nothing) and dedup off.",
        c.codec, Ratio(r), Ratio(d), IsOff(f) ? std::string("lz4") : c.codec);
  }
  return item;
}

constexpr std::string_view kKindNames[] = {"summary",    "compression", "dedup",
                                           "ddt_memory", "recordsize",  "dedup_without_ddt"};
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
                                              "zero_blocks_are_free"};

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

uint64_t DdtRamBytes(const DdtFootprint& fp) {
  // The cached ZAP blocks (what zdb calls in core, except where v23's zdb undercounts), or the
  // in-core figure for a footprint built without it.
  return std::max(fp.cached_bytes, fp.in_core_bytes) + fp.log_bytes;
}

std::string SavedPercent(double ratio) {
  if (ratio <= 0) return "0%";
  return Percent(1.0 - 1.0 / ratio);
}

Advice ComputeAdvice(const ScanResult& r) {
  Advice a;
  a.ram_bytes = r.options.ram_bytes;
  a.ddt_format = DdtFormatInForce(r.options);
  uint64_t lsize = 0;
  for (const SettingResult& s : r.results) lsize = std::max(lsize, s.lsize);
  if (r.results.empty() || lsize == 0) {
    a.featured = r.results.empty() ? -1 : 0;
    a.items.push_back({AdviceKind::kSummary,
                       Verdict::kNothingScanned,
                       "Nothing to advise: the scan found no data to store.",
                       {}});
    return a;
  }
  const Compression codec = PickCompression(r.results);
  // The recordsize: the first evaluated unless another stores kRecordsizeGain less (with dedup
  // when dedup pays there).
  int first = -1, best = -1;
  uint64_t first_space = 0, best_space = 0;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const SettingResult& s = r.results[i];
    if (!(s.compression == codec)) continue;
    const bool dedup_on = JudgeDedup(s, a.ddt_format, a.ram_bytes).verdict == Verdict::kDedupPays;
    const uint64_t space = Space(s, dedup_on);
    if (first < 0) first = int(i), first_space = space;
    if (best < 0 || space < best_space) best = int(i), best_space = space;
  }
  a.featured = double(best_space) <= double(first_space) * (1.0 - kRecordsizeGain) ? best : first;

  const SettingResult& f = r.results[size_t(a.featured)];
  const Context c{r,
                  f,
                  JudgeDedup(f, a.ddt_format, a.ram_bytes),
                  a.ddt_format,
                  a.ram_bytes,
                  CompressionName(f.compression)};
  const NoDdtShare share = ComputeNoDdtShare(r, f);
  a.items.push_back(SummaryItem(c, share));
  a.items.push_back(CompressionItem(c));
  a.items.push_back(DedupItem(c));
  if (auto item = DdtMemoryItem(c)) a.items.push_back(std::move(*item));
  if (auto item = RecordsizeItem(c, c.dedup.verdict == Verdict::kDedupPays)) {
    a.items.push_back(std::move(*item));
  }
  if (auto item = NoDdtItem(c, share)) a.items.push_back(std::move(*item));
  return a;
}

}  // namespace zsim::report
