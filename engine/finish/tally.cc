#include "engine/finish/tally.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <optional>
#include <span>

#include "engine/ddt/written_key.h"
#include "engine/estimate/rare_difference.h"
#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/ratio_interval.h"
#include "engine/estimate/regression_estimator.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/exact_classes.h"
#include "engine/finish/known_codes.h"
#include "engine/state/rare_classes.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/ddt_stats.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/write_rules.h"

namespace zsim::finish {
namespace {

using estimate::CompressRatioInterval;

zfs::MetadataContext ContextFor(const ScanOptions& o) {
  zfs::MetadataContext ctx;
  ctx.profile = o.profile;
  ctx.vdev = o.vdev;
  ctx.ashift = o.ashift;
  ctx.copies = o.copies;
  return ctx;
}

// True when the table's keys of setting `c` are the keys ZFS's DDT would hold: SHA-256 (the
// checksum dedup=on selects) of the block as stored, i.e. as read where compression is off or
// the block is stored as is, and where it compresses the written key the table keeps
// (`written_key`: Tally::set_written_keys, ddt/written_key.h). The footprint uses them up to
// zfs::kMaxKnownKeyEntries per class (Tally::Finish stops collecting past that).
bool KeysAreZfsKeys(const ScanOptions& o, size_t c, size_t written_key) {
  return o.checksum == ChecksumKind::kSha256 &&
         (o.compressions[c].algorithm == CompressionAlgorithm::kOff ||
          written_key != state::kNoKey);
}

// The ZAP hash of entry `e`'s DDT key under setting `c` whose settled code is `code` (not a hole
// or embedded), or nullopt when the table does not keep it: the key's first word when the
// block is stored as is, else its written key's (`written_key`: its first column).
std::optional<uint64_t> ZapHashOf(const ddt::EntryView& e, ddt::PsizeCode code,
                                  size_t written_key) {
  if (ddt::AllocatedPsize(code) >= e.lsize) return ddt::ZfsChecksumWord0(e.key);
  if (written_key == state::kNoKey || written_key + ddt::kWrittenKeyColumns > e.codes.size()) {
    return std::nullopt;
  }
  const ddt::WrittenKey k =
      ddt::DecodeWrittenKey(e.codes.subspan(written_key, ddt::kWrittenKeyColumns));
  if (k.kind != ddt::WrittenKey::Kind::kWord) return std::nullopt;
  return k.word;
}

DdtFootprint Footprint(const ScanOptions& o, DdtFormat format, uint64_t unique, uint64_t duplicate,
                       uint64_t typical_asize, const KeySizeMixes& mixes, const ZapHashes* hashes) {
  zfs::DdtFootprintInput in;
  if (hashes != nullptr) {
    in.unique_hashes = (*hashes)[0];
    in.duplicate_hashes = (*hashes)[1];
  }
  in.unique_entries = unique;
  in.duplicate_entries = duplicate;
  in.unique_size_diversity = mixes[0].Diversity();
  in.duplicate_size_diversity = mixes[1].Diversity();
  in.profile = o.profile;
  in.format = format;
  in.vdev = o.vdev;
  in.ashift = o.ashift;
  in.copies = o.copies;
  if (typical_asize > 0) in.typical_block_asize = typical_asize;
  in.ram_bytes = o.ram_bytes;
  const zfs::DdtFootprintModel m = zfs::ModelDdtFootprint(in);
  DdtFootprint f = m.totals;
  auto fill = [](const zfs::DdtObjectModel& obj, DdtClassFootprint* out) {
    out->entries = obj.entries;
    out->in_core_bytes = obj.mspace_bytes;
    out->on_disk_bytes = obj.dspace_bytes;
    out->in_core_per_entry = obj.in_core_per_entry;
    out->on_disk_per_entry = obj.on_disk_per_entry;
  };
  fill(m.unique, &f.unique);
  fill(m.duplicate, &f.duplicate);
  // The other end of the unique object's history: every duplicate passed through it.
  zfs::DdtFootprintInput peak = in;
  peak.unique_peak_entries = unique + duplicate;
  const zfs::DdtFootprintModel mp = zfs::ModelDdtFootprint(peak);
  f.unique.in_core_per_entry_max =
      std::max(mp.unique.in_core_per_entry, f.unique.in_core_per_entry);
  f.unique.on_disk_per_entry_max =
      std::max(mp.unique.on_disk_per_entry, f.unique.on_disk_per_entry);
  f.duplicate.in_core_per_entry_max = f.duplicate.in_core_per_entry;
  f.duplicate.on_disk_per_entry_max = f.duplicate.on_disk_per_entry;
  f.asize_bytes = m.unique.asize_bytes + m.duplicate.asize_bytes;
  f.cached_bytes = (m.unique.l0_blocks + m.duplicate.l0_blocks) * f.leaf_bytes;
  return f;
}

// Sums over DDT entries, exact or sampled, for one histogram bucket of a sampled setting.
struct BucketSums {
  // Every non-hole entry (exact); `anchor` is the auxiliary value (SamplingState::anchor).
  double entries = 0, refs = 0, lsize = 0, ref_lsize = 0, anchor = 0, ref_anchor = 0;
  // The anchor's psize as the pool would allocate it (sectors, parity, copies): what an entry
  // is taken to take where the sample holds nothing to estimate it by.
  double anchor_dsize = 0, anchor_asize = 0, ref_anchor_dsize = 0, ref_anchor_asize = 0;
  // Sampled entries only.
  double n = 0, s_refs = 0, s_lsize = 0, s_ref_lsize = 0, s_anchor = 0, s_ref_anchor = 0;
  double s_psize = 0, s_dsize = 0, s_asize = 0, s_emb = 0, s_emb_lsize = 0;
  double s_anchor_dsize = 0, s_anchor_asize = 0, s_ref_anchor_dsize = 0, s_ref_anchor_asize = 0;
  double s_ref_psize = 0, s_ref_dsize = 0, s_ref_asize = 0, s_ref_emb = 0, s_ref_emb_lsize = 0,
         s_ref_emb_bytes = 0;
  void AddSample(const BucketSums& o) {
    n += o.n;
    s_refs += o.s_refs;
    s_lsize += o.s_lsize;
    s_ref_lsize += o.s_ref_lsize;
    s_anchor += o.s_anchor;
    s_ref_anchor += o.s_ref_anchor;
    s_psize += o.s_psize;
    s_dsize += o.s_dsize;
    s_anchor_dsize += o.s_anchor_dsize;
    s_anchor_asize += o.s_anchor_asize;
    s_ref_anchor_dsize += o.s_ref_anchor_dsize;
    s_ref_anchor_asize += o.s_ref_anchor_asize;
    s_asize += o.s_asize;
    s_emb += o.s_emb;
    s_emb_lsize += o.s_emb_lsize;
    s_ref_psize += o.s_ref_psize;
    s_ref_dsize += o.s_ref_dsize;
    s_ref_asize += o.s_ref_asize;
    s_ref_emb += o.s_ref_emb;
    s_ref_emb_lsize += o.s_ref_emb_lsize;
    s_ref_emb_bytes += o.s_ref_emb_bytes;
  }
};

// Ratios of a sample, taken from `own` when it holds enough entries, else from `global`.
const BucketSums& RatioSource(const BucketSums& own, const BucketSums& global) {
  constexpr double kMinBucketSample = 30;
  return own.n >= kMinBucketSample || own.n == own.entries ? own : global;
}

double Div(double a, double b) { return b > 0 ? a / b : 0.0; }

// A sampled setting's allocation (dsize or asize) over a bucket of `count` entries (or
// references): its psize estimate, plus the anchor's allocation beyond the anchor's psize (known
// for every entry), plus the sample's mean difference of the two overheads per entry. Sector
// rounding makes a small block's allocation many times its psize and a large one's barely more,
// so a ratio to psize swung with the share of small blocks among a few sampled ones
// (/var/lib/dpkg, --compression all at four recordsizes, 128K: gzip-9 psize +0.7%, asize +12.4%;
// gzip-6 +0.3% and -5.4%, which put gzip-9 above gzip-6), and a ratio to the anchor's allocation
// left gzip-9 at +2.7%. The anchor's rounding of the same blocks tracks the setting's; their
// difference per block is small and bounded (a sector, or raidz's parity of the psize
// difference), where a ratio of the two overheads divided by a sum that deflation on raidz can
// bring near 0 (an independent review's simulation: dsize +1.6% with psize -0.5%).
double AllocationOf(double psize, double anchor_alloc, double anchor_psize, double count,
                    double s_alloc, double s_psize, double s_anchor_alloc, double s_anchor_psize,
                    double s_count) {
  const double overhead = anchor_alloc - anchor_psize;
  const double difference = (s_alloc - s_psize) - (s_anchor_alloc - s_anchor_psize);
  return std::max(0.0, psize + overhead + count * Div(difference, s_count));
}

// True when sampled setting `c` takes a regression estimate: anchored on an exact codec
// (`regression_anchor`: SamplingState::anchors, with an exact table: 1/M of the keys leaves
// FinishSampledTable's calibration), and samples that carry the fit.
bool Regresses(bool regression_anchor, const estimate::RegressionEstimator& ref,
               const estimate::RegressionEstimator& alloc) {
  return regression_anchor && ref.HasFit() && alloc.HasFit();
}

// The auxiliary value of an entry (see SamplingState::anchor): lsize, or the anchor's psize (its
// lsize, stored uncompressed, when its chunk failed before the code was set).
double Anchor(const ddt::EntryView& e, int anchor) {
  if (anchor < 0) return double(e.lsize);
  const ddt::PsizeCode code = e.codes[static_cast<size_t>(anchor)];
  return code == ddt::kPendingCode ? double(e.lsize) : double(ddt::StoredPsize(code));
}

// A near-anchored setting (estimate::NearAnchors) whose plan also gives it a regression anchor
// (SamplingPlan::anchors: lz4 or lzjb, coded whole): both estimators' intervals on the blocks its
// final level samples, to take the narrower where the near anchor's would be the bounds of a rare
// difference (ChooseSamples).
struct FollowerChoice {
  estimate::RareDifferenceBound rare;          // on the near anchor
  estimate::RegressionEstimator regression;    // on the regression anchor, per referenced block
  estimate::RatioEstimator ratio;              // the same, where the regression has no fit
  std::vector<std::array<double, 3>> sampled;  // (lsize, anchor, psize), each x refs
  double sampled_psize = 0, unsampled_near = 0, ref_lsize = 0, ref_regression = 0;

  // Sampled blocks whose residual about the fit (the regression's, else the ratio's) is not 0:
  // those carry its variance. A sample whose psize the anchor predicts exactly but on a few
  // blocks (psize equal on every sampled block, or equal to the anchor's) leaves a normal
  // interval of about zero width, whatever the unsampled blocks hold.
  uint64_t ResidualBlocks() const {
    double a = 0, b = 0;
    if (regression.HasFit()) {
      const estimate::RegressionEstimator::Fit fit = regression.Coefficients();
      a = fit.a;
      b = fit.b;
    } else {
      b = ratio.Ratio();
    }
    double mean = 0;
    for (const auto& [l, x, y] : sampled) mean += y - a * l - b * x;
    mean /= std::max<double>(1, double(sampled.size()));
    uint64_t count = 0;
    // Half a byte: the sizes are whole bytes, rounding noise of the fit is far below.
    for (const auto& [l, x, y] : sampled) count += std::abs(y - a * l - b * x - mean) > 0.5;
    return count;
  }

  // Sampled blocks whose psize differs from the regression anchor's: fewer than
  // kMinIntervalBlocks and pass 2 gives the regression the rare difference's bounds on that
  // anchor instead of its normal interval (the same zero-residual trap).
  uint64_t DifferingFromRegressionAnchor() const {
    uint64_t count = 0;
    for (const auto& [l, x, y] : sampled) count += x != y;
    return count;
  }
};

// Which sample each sampled setting of a row rests on, and on what auxiliary: Tally::Finish's
// first pass over the table.
struct SampleChoice {
  uint64_t m = 1;                    // dedup sampling: the table kept 1/M of the keys
  std::vector<int> level;            // the level whose sample is used; -1: an exact setting
  std::vector<uint64_t> population;  // entries the sample stands for (the census's excluded)
  std::vector<int> anchor;           // the auxiliary's setting (Anchor), -1: lsize
  std::vector<bool> near_anchored;   // a ratio estimate on anchor[c] (estimate::NearAnchors)
  state::RareClasses rare_classes;   // the row's (empty under dedup sampling)

  // A sampled setting's heavy entries (ddt::kHeavyRefcount and up) and those of rare anchor
  // classes, taken exactly, outside the sample (see ChooseSamples).
  bool Census(const ddt::EntryView& e, size_t c) const {
    return m == 1 && e.codes[c] != ddt::kPendingCode &&
           (e.refcount >= ddt::kHeavyRefcount || rare_classes.Census(c, e.key));
  }
};

SampleChoice ChooseSamples(const ScanOptions& options, size_t row, const ddt::DedupTable& table,
                           const CodeSettler& codes, const state::SamplingState& sampling,
                           const estimate::DistinctBlocks& distinct) {
  const size_t settings = options.compressions.size();
  SampleChoice out;
  out.m = uint64_t{1} << table.sample_shift();
  const uint64_t m = out.m;
  out.level.assign(settings, -1);
  out.population.assign(settings, 0);
  out.anchor.assign(settings, -1);
  out.near_anchored.assign(settings, false);
  // Sampled settings: the level whose sample is used. Pass 1: ratio statistics per level over
  // the entries whose codes were computed at or above the level in force when the scan ended
  // (all of them were compressed: the scan's level never exceeds it).
  std::vector<int>& level = out.level;
  std::vector<uint64_t>& population = out.population;
  std::vector<estimate::LevelSamples> per_level(settings);
  // A sampled setting's heavy entries (ddt::kHeavyRefcount and up) all went through its codec
  // (pipeline/scan_blocks.cc): they are taken as a census, exactly, and the sample covers the rest.
  // A few of them can hold much of the referenced bytes, and a histogram bucket of few entries
  // would otherwise borrow the whole sample's ratio (RatioSource). Under dedup sampling the table's
  // own calibration applies (FinishSampledTable).
  // So are the entries of rare anchor classes (state/rare_classes.h): the regression's residual
  // sits mostly on them, and a sample of a few thousand holds too few of them to say how much.
  if (m == 1) out.rare_classes = state::RareClasses(table, sampling, options, row);
  bool any_sampled = false;
  std::vector<int> complete(settings, 0);
  for (size_t c = 0; c < settings; ++c) {
    complete[c] = sampling.LevelOf(row, c);
    // At level 0 every unique block went through every codec: the exact path applies, unless
    // the levels follow the codec budget (estimate/codec_budget.h), where the base decides.
    if (sampling.sampled[c] && (complete[c] > 0 || sampling.adaptive)) {
      level[c] = complete[c];
      any_sampled = true;
    }
  }
  // Each sampled setting's auxiliary: its plan's anchor (SamplingState::anchors, a regression
  // estimate on an exact codec), or its near anchor where that one went through every unique
  // block of this row (estimate::NearAnchors, a ratio estimate: the budget codes such a follower
  // on fewer blocks, codec_budget.h), or lsize. The base levels (known_codes.h) say which
  // settings went through every unique block.
  const std::vector<int> known =
      any_sampled ? KnownCodeLevels(options, sampling, row) : std::vector<int>(settings, -1);
  std::vector<bool> whole(settings, false);
  for (size_t c = 0; c < settings; ++c) whole[c] = known[c] < 0;
  const std::vector<int> near = estimate::NearAnchors(options.compressions, whole);
  std::vector<int>& anchor = out.anchor;
  std::vector<bool>& near_anchored = out.near_anchored;
  for (size_t c = 0; c < settings; ++c) {
    if (m > 1) continue;  // FinishSampledTable calibrates on lsize
    near_anchored[c] = near[c] >= 0;
    anchor[c] = near_anchored[c] ? near[c] : sampling.anchors[c];
  }
  // Near-anchored settings that may take their regression anchor instead (FollowerChoice), at
  // their final level: the base (they never take a higher one, below).
  std::vector<std::optional<FollowerChoice>> choice(settings);
  for (size_t c = 0; c < settings; ++c) {
    if (level[c] >= 0 && near_anchored[c] && sampling.anchors[c] >= 0 && known[c] > 0) {
      choice[c].emplace();
    }
  }
  if (any_sampled) {
    codes.ForEach(table, [&](const ddt::EntryView& e) {
      const int lv = estimate::SampleLevel(e.key.lo);
      for (size_t c = 0; c < settings; ++c) {
        if (level[c] < 0 || ddt::IsHoleCode(e.codes[c])) continue;
        if (out.Census(e, c)) continue;
        ++population[c];
        if (choice[c]) {
          FollowerChoice& f = *choice[c];
          const double refs = double(e.refcount), x = Anchor(e, anchor[c]);
          const double z = Anchor(e, sampling.anchors[c]);
          f.ref_lsize += refs * double(e.lsize);
          f.ref_regression += refs * z;
          if (e.codes[c] == ddt::kPendingCode || lv < known[c]) {
            f.rare.AddUnsampled(refs * (double(e.lsize) - x), refs * x);
            f.unsampled_near += refs * x;
          } else {
            const double y =
                ddt::IsEmbeddedCode(e.codes[c]) ? 0.0 : double(ddt::AllocatedPsize(e.codes[c]));
            f.rare.AddSampled(refs * y, refs * x);
            f.regression.Add(refs * double(e.lsize), refs * z, refs * y);
            f.ratio.Add(refs * z, refs * y);
            f.sampled.push_back({refs * double(e.lsize), refs * z, refs * y});
            f.sampled_psize += refs * y;
          }
        }
        if (e.codes[c] == ddt::kPendingCode || lv < complete[c]) continue;
        const uint64_t psize =
            ddt::IsEmbeddedCode(e.codes[c]) ? 0 : ddt::AllocatedPsize(e.codes[c]);
        // A sampled table's estimate (FinishSampledTable) calibrates on lsize, not on an
        // anchor: the level must be chosen with the auxiliary that estimate uses, or an anchor
        // far better than lsize would pick a level whose sample is too small for it.
        per_level[c][lv].Add(double(e.refcount) * Anchor(e, anchor[c]), double(e.refcount * psize));
      }
    });
    // The highest level at or above the base whose sample alone meets the target; else the
    // base (known_codes.h): at or above any level a scan of the same data used (the same
    // figures for any thread count, and a merge's figures are one scan's).
    for (size_t c = 0; c < settings; ++c) {
      if (level[c] < 0) continue;
      const int base = std::max(known[c], 0);
      if (base == 0) {
        level[c] = -1;  // every unique block went through the codec
        continue;
      }
      level[c] = base;
      // A setting anchored on an exact codec uses every block coded (the base): a regression's
      // interval from a few hundred blocks undercovers (heavy-tailed residuals: gzip-6 on lz4
      // held 68-75% of 40 resamplings of the bundled database sample at 400-800 blocks, 93-97%
      // at 1,500-3,000), and the highest level whose own blocks meet the target would pick the
      // samples whose spread looks small by chance.
      // So does one on a near anchor (a ratio estimate on few blocks: a level chosen for its
      // tight look would favour the same chance).
      if (anchor[c] >= 0) continue;
      // A sampled table keeps 1/M of the non-zero keys (every zero key): the sketches count
      // the population.
      const double units =
          m > 1 ? std::max(double(population[c]), distinct.full_keys() + distinct.small_keys())
                : double(population[c]);
      const int met = estimate::LevelMeetingTheTarget(per_level[c], base, units);
      if (met >= 0) level[c] = met;
    }
  }
  // A near-anchored setting whose sample holds fewer than kMinIntervalBlocks blocks differing
  // from its near anchor takes the bounds of a rare difference (pass 2), which are wide where a
  // sample is a small share of its row: at 4K sectors zstd-4 equals zstd-1 on most 16K blocks of
  // the file-server sample, and coded on a quarter of them under the cap its interval spanned
  // +-12% to +-42%. Where the regression on its plan's anchor (lz4 or lzjb) leaves residuals on at
  // least kMinIntervalBlocks sampled blocks of at least kMinSampledBlocks, those carry a normal
  // interval; the setting takes the regression when that interval is the narrower. Not on fewer
  // blocks: the regression's residuals are heavy-tailed and its interval undercovers on a small
  // sample (gzip-9 at ashift 9 on 15 salted 150-block trees of the database sample, some 80
  // blocks sampled: +-3% where the rare-difference bounds gave +-90-135%, and one of 11 missed
  // by -2.9%). Nor where the sample is worth fewer than kMinIntervalBlocks blocks (a few large
  // blocks among many small ones, the 1M row): there the certain bounds would apply (pass 2),
  // wider than the rare difference's, which lie within them. A choice by the codes of the blocks at
  // the setting's level only: the same for any thread count and in a merge.
  for (size_t c = 0; c < settings; ++c) {
    if (!choice[c] || level[c] < 0) continue;
    const FollowerChoice& f = *choice[c];
    if (f.rare.differing() >= estimate::kMinIntervalBlocks ||
        f.regression.n() < estimate::kMinSampledBlocks ||
        f.ratio.EffectiveUnits() < double(estimate::kMinIntervalBlocks) ||
        f.ResidualBlocks() < estimate::kMinIntervalBlocks ||
        f.DifferingFromRegressionAnchor() < estimate::kMinIntervalBlocks) {
      continue;
    }
    const std::array<double, 2> d = f.rare.Bounds();
    const double near_known = f.sampled_psize + f.unsampled_near;
    const double rare_rel = near_known > 0 ? (d[0] + d[1]) / 2 / near_known : 0.0;
    const double units = double(population[c]);
    const double regression_rel = f.regression.HasFit() ? f.regression.RelativeHalfWidth95(
                                                              units, f.ref_lsize, f.ref_regression)
                                                        : f.ratio.RelativeHalfWidth95(units);
    if (std::isfinite(regression_rel) && regression_rel < rare_rel) {
      near_anchored[c] = false;
      anchor[c] = sampling.anchors[c];
    }
  }
  return out;
}

}  // namespace

uint64_t AuxiliarySize(const zfs::AllocationModel& alloc, uint64_t lsize, int copies) {
  return alloc.Block(lsize, copies).asize;
}

Tally::Tally(const ScanOptions& options, size_t rows)
    : options_(options),
      alloc_(zfs::AllocationModel::For(options.vdev, options.ashift)),
      rows_(rows),
      settings_(options.compressions.size()) {
  metadata_.assign(rows_ * settings_, zfs::MetadataTally(ContextFor(options_)));
  non_hole_blocks_.assign(rows_ * settings_, 0);
  non_hole_lsize_.assign(rows_ * settings_, 0);
  non_hole_aux_.assign(rows_ * settings_, 0);
  zfs::WritePolicy policy;
  policy.profile = options_.profile;
  for (const Compression& c : options_.compressions) {
    zero_written_without_dedup_.push_back(zfs::ZeroBlockWrittenOnlyWithoutDedup(policy, c));
  }
  zero_dsize_without_dedup_.assign(rows_ * settings_, 0);
  metadata_without_dedup_.assign(rows_ * settings_, zfs::MetadataTally(ContextFor(options_)));
}

Tally::~Tally() = default;

void Tally::AddFiles(size_t row, size_t setting, const state::FileShape& shape, uint64_t count) {
  const size_t i = row * settings_ + setting;
  for (uint64_t k = 0; k < count; ++k) {
    metadata_[i].AddFile(shape.blocks, shape.non_hole, shape.indirects);
  }
  non_hole_blocks_[i] += count * shape.non_hole;
  non_hole_lsize_[i] += count * shape.non_hole * shape.block_bytes;
  if (shape.non_hole != 0) {
    non_hole_aux_[i] +=
        count * shape.non_hole * AuxiliarySize(alloc_, shape.block_bytes, options_.copies);
  }
  if (zero_written_without_dedup_[setting]) {
    // Written as data without dedup (FileShape::zero_blocks): `used` counts them, and the
    // indirect blocks over them and the non-hole blocks (FileShape::written_indirects; a state
    // of format < 23 does not have them: AddFile then takes the data as spread over the file).
    const std::span<const uint64_t> indirects =
        shape.zero_blocks == 0 ? std::span<const uint64_t>(shape.indirects)
                               : std::span<const uint64_t>(shape.written_indirects);
    for (uint64_t k = 0; k < count; ++k) {
      metadata_without_dedup_[i].AddFile(shape.blocks, shape.non_hole + shape.zero_blocks,
                                         indirects);
    }
    zero_dsize_without_dedup_[i] +=
        count * shape.zero_blocks * alloc_.Block(shape.block_bytes, options_.copies).dsize;
  }
}

void Tally::AddDirectories(const state::DirectoryShape& dir, uint64_t count) {
  for (zfs::MetadataTally& m : metadata_) {
    for (uint64_t k = 0; k < count; ++k)
      m.AddDirectory(dir.entries, dir.name_bytes, dir.longest_name, dir.microzap_lz4_bytes);
  }
  for (zfs::MetadataTally& m : metadata_without_dedup_) {
    for (uint64_t k = 0; k < count; ++k)
      m.AddDirectory(dir.entries, dir.name_bytes, dir.longest_name, dir.microzap_lz4_bytes);
  }
}

std::vector<SettingResult> Tally::Finish(size_t row, uint64_t block_bytes,
                                         const ddt::DedupTable& table, const CodeSettler& codes,
                                         uint64_t sparse_holes,
                                         const state::SamplingState& sampling,
                                         const estimate::DistinctBlocks& distinct,
                                         const estimate::OccurrenceSample* occurrences) const {
  const zfs::AllocationModel alloc = zfs::AllocationModel::For(options_.vdev, options_.ashift);
  const SampleChoice choice = ChooseSamples(options_, row, table, codes, sampling, distinct);
  const std::vector<int>& level = choice.level;
  const std::vector<uint64_t>& population = choice.population;
  const std::vector<int>& anchor = choice.anchor;
  const std::vector<bool>& near_anchored = choice.near_anchored;
  if (choice.m > 1) {
    return FinishSampledTable(row, block_bytes, table, codes, sparse_holes, level, distinct,
                              occurrences, sampling.occurrence_level);
  }

  // Pass 2: every entry, every setting.
  std::vector<SettingResult> out(settings_);
  std::vector<zfs::DdtStatsBuilder> ddt(settings_);
  std::vector<uint64_t> dedup_asize(settings_, 0), ref_dsize(settings_, 0);
  for (size_t c = 0; c < settings_; ++c) {
    out[c].recordsize = block_bytes;
    out[c].compression = options_.compressions[c];
  }
  std::vector<std::array<BucketSums, 64>> buckets(settings_);
  std::vector<estimate::RatioEstimator> sampled_ratio(settings_);
  // A setting anchored on an exact codec's psize (SamplingPlan::anchors): the regression of
  // psize on (lsize, the anchor's psize) over the sampled entries, per referenced block (each
  // entry's figures times its refs) and per entry (the allocated side).
  std::vector<estimate::RegressionEstimator> sampled_ref(settings_), sampled_alloc(settings_);
  std::vector<uint64_t> census_psize(settings_, 0);  // sampled settings: the census's exact psize
  // Every sampled setting: how many sampled blocks differ from its anchor (a near anchor, lz4 of
  // a regression, or lsize), and how far each unsampled one could (rare_difference.h), for when
  // too few differ to rest a normal interval on.
  std::vector<estimate::RareDifferenceBound> rare(settings_);
  // The entries' sizes, (unique, duplicate): of a sampled setting, those of its sampled entries.
  std::vector<KeySizeMixes> mixes(settings_);
  // A sampled setting on a regression anchor (not a near one) whose samples carry the fit.
  auto regresses = [&](size_t c) {
    return Regresses(anchor[c] >= 0 && !near_anchored[c], sampled_ref[c], sampled_alloc[c]);
  };
  // An exact setting's entries of the row's block size, counted by (refcount bucket, code): what
  // they add is integer sums linear in their entries and references, taken once per class after
  // the pass (a 10M-entry table has a few hundred classes per setting).
  ExactClasses classes(settings_, block_bytes);
  // The settings whose DDT keys the table holds as ZFS makes them (KeysAreZfsKeys): their
  // entries' ZAP hashes, per class, for the footprint's leaves.
  std::vector<ZapHashes> hashes(settings_);
  std::vector<bool> keys_known(settings_, false);
  std::vector<size_t> written_key(settings_, state::kNoKey);
  for (size_t c = 0; c < settings_; ++c) {
    if (c < written_keys_.size()) written_key[c] = written_keys_[c];
    keys_known[c] = level[c] < 0 && KeysAreZfsKeys(options_, c, written_key[c]);
  }
  // What `entries` entries of bucket `bucket`, `lsize` and stored code `code` holding `refs`
  // references add to setting c: one entry of the pass, or a class of them.
  auto add_stored = [&](size_t c, int bucket, uint64_t lsize, ddt::PsizeCode code, uint64_t entries,
                        uint64_t refs) {
    SettingResult& s = out[c];
    if (ddt::IsEmbeddedCode(code)) {
      // BP_GET_PSIZE is 0 for an embedded block: lsize counts, psize and asize do not.
      s.blocks.embedded += refs;
      s.embedded_bytes += ddt::EmbeddedPayload(code) * refs;
      return;
    }
    const uint64_t psize = ddt::AllocatedPsize(code);
    const zfs::BlockSpace space = alloc.Block(psize, options_.copies);
    if (level[c] >= 0) census_psize[c] += psize * refs;
    s.blocks.data += refs;
    s.psize += psize * refs;
    s.asize += space.asize * refs;
    ref_dsize[c] += space.dsize * refs;
    dedup_asize[c] += space.asize * entries;  // once per entry: what the pool allocates with dedup
    mixes[c][bucket == 0 ? 0 : 1].Add(lsize, psize, entries);
    ddt[c].AddEntriesOfBucket(bucket, entries, refs, lsize, psize, space.dsize);
  };
  codes.ForEach(table, [&](const ddt::EntryView& e) {
    const uint64_t refs = e.refcount;
    const int lv = estimate::SampleLevel(e.key.lo);
    for (size_t c = 0; c < settings_; ++c) {
      SettingResult& s = out[c];
      ddt::PsizeCode code = e.codes[c];
      // An exact setting's code is missing only when the file's chunk failed after inserting
      // its blocks (out of memory while compressing): count the block as stored uncompressed.
      if (level[c] < 0 && code == ddt::kPendingCode) code = ddt::EncodeAllocated(e.lsize);
      if (ddt::IsHoleCode(code)) {
        s.blocks.holes += refs;
        s.zero_lsize += e.lsize * refs;
        continue;
      }
      s.lsize += e.lsize * refs;
      if (keys_known[c] && !ddt::IsEmbeddedCode(code)) {
        std::vector<uint64_t>& h = hashes[c][refs == 1 ? 0 : 1];
        const std::optional<uint64_t> hash = ZapHashOf(e, code, written_key[c]);
        if (hash && h.size() < zfs::kMaxKnownKeyEntries) {
          h.push_back(*hash);
        } else {  // a key not kept, or a class too large for the footprint to lay out: the
                  // model, without the keys
          keys_known[c] = false;
          hashes[c] = {};
        }
      }
      if (level[c] >= 0 && !choice.Census(e, c)) {
        BucketSums& b = buckets[c][zfs::DdtBucket(refs)];
        b.entries += 1;
        b.refs += double(refs);
        b.lsize += double(e.lsize);
        b.ref_lsize += double(refs * e.lsize);
        const double x = Anchor(e, anchor[c]);
        b.anchor += x;
        b.ref_anchor += double(refs) * x;
        const zfs::BlockSpace as_anchor =
            x > 0 ? alloc.Block(static_cast<uint64_t>(x), options_.copies) : zfs::BlockSpace{};
        b.anchor_dsize += double(as_anchor.dsize);
        b.anchor_asize += double(as_anchor.asize);
        b.ref_anchor_dsize += double(refs * as_anchor.dsize);
        b.ref_anchor_asize += double(refs * as_anchor.asize);
        if (code == ddt::kPendingCode || lv < level[c]) {
          rare[c].AddUnsampled(double(refs) * (double(e.lsize) - x), double(refs) * x);
          continue;
        }
        const bool emb = ddt::IsEmbeddedCode(code);
        const uint64_t psize = emb ? 0 : ddt::AllocatedPsize(code);
        const zfs::BlockSpace space = emb ? zfs::BlockSpace{} : alloc.Block(psize, options_.copies);
        if (!emb) mixes[c][refs == 1 ? 0 : 1].Add(e.lsize, psize);
        b.n += 1;
        b.s_refs += double(refs);
        b.s_lsize += double(e.lsize);
        b.s_ref_lsize += double(refs * e.lsize);
        b.s_anchor += x;
        b.s_ref_anchor += double(refs) * x;
        b.s_anchor_dsize += double(as_anchor.dsize);
        b.s_anchor_asize += double(as_anchor.asize);
        b.s_ref_anchor_dsize += double(refs * as_anchor.dsize);
        b.s_ref_anchor_asize += double(refs * as_anchor.asize);
        b.s_psize += double(psize);
        b.s_dsize += double(space.dsize);
        b.s_asize += double(space.asize);
        b.s_ref_psize += double(refs * psize);
        b.s_ref_dsize += double(refs * space.dsize);
        b.s_ref_asize += double(refs * space.asize);
        if (emb) {
          b.s_emb += 1;
          b.s_emb_lsize += double(e.lsize);
          b.s_ref_emb += double(refs);
          b.s_ref_emb_lsize += double(refs * e.lsize);
          b.s_ref_emb_bytes += double(refs * ddt::EmbeddedPayload(code));
        }
        sampled_ratio[c].Add(double(refs) * x, double(refs * psize));
        rare[c].AddSampled(double(refs * psize), double(refs) * x);
        sampled_ref[c].Add(double(refs * e.lsize), double(refs) * x, double(refs * psize));
        sampled_alloc[c].Add(double(e.lsize), x, double(psize));
        continue;
      }
      if (level[c] < 0 && e.lsize == block_bytes && classes.Add(c, code, refs)) continue;
      add_stored(c, zfs::DdtBucket(refs), e.lsize, code, 1, refs);
    }
  });
  classes.ForEach([&](size_t c, int bucket, ddt::PsizeCode code, uint64_t entries, uint64_t refs) {
    add_stored(c, bucket, block_bytes, code, entries, refs);
  });

  // Sampled settings: each bucket's exact lsize times the sample's ratios (its own when it has
  // enough entries, the whole sample's otherwise), added to the census's exact figures.
  for (size_t c = 0; c < settings_; ++c) {
    if (level[c] < 0) continue;
    SettingResult& s = out[c];
    BucketSums global;
    for (const BucketSums& b : buckets[c]) global.AddSample(b);
    // Anchored on an exact codec: psize ~ a lsize + b anchor per entry plus the sample's mean
    // residual, all fitted on the whole sample, so that the buckets add up to the regression
    // estimate (regression_estimator.h); dsize and asize follow psize and the anchor's overhead
    // (AllocationOf). (A bucket's own residuals, as the ratios below take them, would post-stratify
    // the estimate: on the bundled database sample the 257 entries referenced 2-3 times, 26 of them
    // sampled, borrowed the whole sample's residual while the 24,351 referenced once took their
    // own, which put zstd-3 0.6% low, outside its +-0.31%.) Otherwise ratios to the anchor
    // (lsize).
    const bool regression = regresses(c);
    const estimate::RegressionEstimator::Fit fit_ref =
        regression ? sampled_ref[c].Coefficients() : estimate::RegressionEstimator::Fit{};
    const estimate::RegressionEstimator::Fit fit_alloc =
        regression ? sampled_alloc[c].Coefficients() : estimate::RegressionEstimator::Fit{};
    double psize = 0, asize = 0, rdsize = 0, emb = 0, emb_bytes = 0, dasize = 0, refs_all = 0;
    for (int bi = 0; bi < 64; ++bi) {
      const BucketSums& b = buckets[c][bi];
      if (b.entries == 0) continue;
      const BucketSums& src = RatioSource(b, global);
      const double e_frac = Div(src.s_emb, src.n);
      DdtStat a, r;
      a.blocks = Round(b.entries * (1 - e_frac));
      a.lsize = Round(b.lsize * (1 - Div(src.s_emb_lsize, src.s_lsize)));
      r.blocks = Round(b.refs * (1 - Div(src.s_ref_emb, src.s_refs)));
      r.lsize = Round(b.ref_lsize * (1 - Div(src.s_ref_emb_lsize, src.s_ref_lsize)));
      // The bucket's psize from the estimates `ap` (its entries) and `rp` (their references),
      // and its allocation as their overhead over the anchor's (AllocationOf).
      auto take = [&](double ap, double rp) {
        a.psize = Round(ap);
        r.psize = Round(rp);
        a.dsize = Round(AllocationOf(ap, b.anchor_dsize, b.anchor, b.entries, src.s_dsize,
                                     src.s_psize, src.s_anchor_dsize, src.s_anchor, src.n));
        r.dsize = Round(AllocationOf(rp, b.ref_anchor_dsize, b.ref_anchor, b.refs, src.s_ref_dsize,
                                     src.s_ref_psize, src.s_ref_anchor_dsize, src.s_ref_anchor,
                                     src.s_refs));
        asize +=
            AllocationOf(rp, b.ref_anchor_asize, b.ref_anchor, b.refs, src.s_ref_asize,
                         src.s_ref_psize, src.s_ref_anchor_asize, src.s_ref_anchor, src.s_refs);
        dasize += AllocationOf(ap, b.anchor_asize, b.anchor, b.entries, src.s_asize, src.s_psize,
                               src.s_anchor_asize, src.s_anchor, src.n);
      };
      if (regression && global.s_psize > 0 && global.s_ref_psize > 0) {
        const BucketSums& g = global;
        const double ap = std::max(
            0.0, fit_alloc.a * b.lsize + fit_alloc.b * b.anchor +
                     b.entries *
                         Div(g.s_psize - fit_alloc.a * g.s_lsize - fit_alloc.b * g.s_anchor, g.n));
        const double rp =
            std::max(0.0, fit_ref.a * b.ref_lsize + fit_ref.b * b.ref_anchor +
                              b.entries * Div(g.s_ref_psize - fit_ref.a * g.s_ref_lsize -
                                                  fit_ref.b * g.s_ref_anchor,
                                              g.n));
        take(ap, rp);
      } else if (global.n == 0 || global.s_anchor <= 0) {
        // Nothing sampled (a row whose unique blocks fell short of what its plan promised, by
        // chance or by dedup, and that could not be topped up), or only blocks whose anchor
        // embeds them: no ratio to take. Each entry is taken as stored as its anchor's psize
        // (allocated as the pool allocates it), and the interval's certain bounds (below) say
        // how little that is known; a ratio of 0 would have reported the row's data as
        // compressing to nothing.
        a.psize = Round(b.anchor);
        a.dsize = Round(b.anchor_dsize);
        r.psize = Round(b.ref_anchor);
        r.dsize = Round(b.ref_anchor_dsize);
        asize += b.ref_anchor_asize;
        dasize += b.anchor_asize;
      } else {
        // psize by its ratio to the anchor (every sampled anchor is above 0, so the sample's
        // are too), dsize and asize by their overhead over it (AllocationOf). A ratio of
        // allocation to psize took each block's allocation as proportional to its size, which
        // sector rounding makes it only for large blocks: at 4K records on 4K sectors every
        // block takes one sector, a file's 100-byte tail too, and zstd-3 alone put asize 1.8%
        // above the exact figure on /usr/share/doc, /usr/share/man and /etc, above blocks x 4
        // KiB, which no pool exceeds.
        take(b.anchor * Div(src.s_psize, src.s_anchor),
             b.ref_anchor * Div(src.s_ref_psize, src.s_ref_anchor));
      }
      ddt[c].AddBucket(bi, a.blocks, a, r);
      psize += double(r.psize);
      rdsize += double(r.dsize);
      emb += b.refs * Div(src.s_ref_emb, src.s_refs);
      emb_bytes += b.ref_lsize * Div(src.s_ref_emb_bytes, src.s_ref_lsize);
      refs_all += b.refs;
    }
    const uint64_t imputed_embedded = Round(emb);
    s.psize += Round(psize);
    s.asize += Round(asize);
    s.blocks.embedded += imputed_embedded;
    s.blocks.data += Round(refs_all) - std::min(Round(refs_all), imputed_embedded);
    s.embedded_bytes += Round(emb_bytes);
    ref_dsize[c] += Round(rdsize);
    dedup_asize[c] += Round(dasize);
    s.exact = false;
  }

  for (size_t c = 0; c < settings_; ++c) {
    SettingResult& s = out[c];
    s.blocks.holes += sparse_holes;
    s.dedup = ddt[c].Result();
    for (std::vector<uint64_t>& h : hashes[c]) std::sort(h.begin(), h.end());
    // One key per entry of each class, or the footprint would quietly take the model.
    assert(!keys_known[c] || (hashes[c][0].size() == s.dedup.unique_entries &&
                              hashes[c][1].size() == s.dedup.duplicate_entries));
    Complete(row, c, ref_dsize[c], dedup_asize[c], &s, mixes[c],
             keys_known[c] ? &hashes[c] : nullptr);
    hashes[c] = {};
    if (level[c] >= 0) {
      // The psize estimate imputes each histogram bucket with its own ratio where it has enough
      // sampled entries; its relative error is that of the whole sample's ratio R = psize /
      // anchor, so the interval is the estimate +- R's relative half width (centred on the
      // estimate, which a whole-sample R x anchor total need not equal). The census part and
      // the metadata are exact.
      const uint64_t meta_psize = MetadataOf(row, c, s).MetadataPsize();
      double ref_lsize = 0, ref_anchor = 0;
      BucketSums sample;  // every bucket's sampled sums
      for (const BucketSums& b : buckets[c]) {
        ref_lsize += b.ref_lsize;
        ref_anchor += b.ref_anchor;
        sample.AddSample(b);
      }
      const double rel = regresses(c) ? sampled_ref[c].RelativeHalfWidth95(double(population[c]),
                                                                           ref_lsize, ref_anchor)
                                      : sampled_ratio[c].RelativeHalfWidth95(double(population[c]));
      const double p = double(s.psize - std::min(s.psize, census_psize[c]));
      std::array<double, 2> p_range{p * (1 - rel), p * (1 + rel)};
      // A sample worth fewer than kMinIntervalBlocks blocks (a row with few unique blocks, a
      // costly codec under the cap; a few large blocks among small ones count as few): the
      // sampled blocks' psize exactly, the others between 0 and their lsize.
      const bool few_units =
          sampled_ratio[c].EffectiveUnits() < double(estimate::kMinIntervalBlocks);
      // On a near anchor, a sample holding fewer than kMinIntervalBlocks blocks whose psize
      // differs from the anchor's: its residuals are mostly 0 and say nothing of the unsampled
      // blocks (at 4K sectors gzip-9 equals gzip-6 on ~99% of blocks). The bounds of a rare
      // difference instead (rare_difference.h): the sampled psize and the unsampled anchor
      // exactly, plus what a 97.5% bound on the count of unsampled differing blocks could rise
      // or fall. They lie within the certain bounds (an unsampled block between 0 and its
      // lsize), so they take their place too where the sample is worth few blocks.
      // The same holds on any anchor: at 4K records on 4K sectors a block's psize is 4K or 0 under
      // every codec, so zle's equals lz4's on all but a handful of blocks, and a sample of an
      // eighth that held none of them fitted psize = lz4 with no residual at all: an interval of
      // zero width, 11.5 KiB from the exact psize (the bundled source tree at 4K). A regression
      // or ratio whose sample holds fewer than kMinIntervalBlocks differing blocks takes the
      // rare-difference bounds too.
      const bool few_differing = rare[c].differing() < estimate::kMinIntervalBlocks;
      if (few_differing || (near_anchored[c] && few_units)) {
        const double known = sample.s_ref_psize + (ref_anchor - sample.s_ref_anchor);
        const std::array<double, 2> d = rare[c].Bounds();
        p_range = {std::max(0.0, known - d[0]), known + d[1]};
      } else if (few_units) {
        p_range = estimate::CertainPsizeBounds(sample.s_ref_psize, ref_lsize - sample.s_ref_lsize);
      }
      s.ci95 =
          CompressRatioInterval(double(s.lsize + meta_psize), double(census_psize[c] + meta_psize),
                                p, p_range[0], p_range[1], /*compressing=*/true);
    }
  }
  return out;
}

zfs::MetadataTally Tally::MetadataOf(size_t row, size_t c, const SettingResult& s,
                                     bool written_zeros) const {
  const size_t i = row * settings_ + c;
  zfs::MetadataTally meta = written_zeros ? metadata_without_dedup_[i] : metadata_[i];
  meta.SetEmbedded(s.blocks.embedded, s.embedded_bytes, options_.compressions[c]);
  return meta;
}

void Tally::Complete(size_t row, size_t c, uint64_t ref_dsize, uint64_t dedup_asize,
                     SettingResult* sp, const KeySizeMixes& mixes, const ZapHashes* hashes) const {
  SettingResult& s = *sp;
  const zfs::MetadataTally meta = MetadataOf(row, c, s);
  const uint64_t entries = s.dedup.unique_entries + s.dedup.duplicate_entries;
  const uint64_t typical_asize = entries ? dedup_asize / entries : 0;
  s.dedup.footprints.push_back(Footprint(options_, DdtFormat::kLegacy, s.dedup.unique_entries,
                                         s.dedup.duplicate_entries, typical_asize, mixes, hashes));
  if (zfs::RulesFor(options_.profile).has_fast_dedup) {
    s.dedup.footprints.push_back(Footprint(options_, DdtFormat::kFast, s.dedup.unique_entries,
                                           s.dedup.duplicate_entries, typical_asize, mixes,
                                           hashes));
  }
  const DdtFormat chosen = options_.ddt_format.value_or(DdtFormat::kLegacy);
  uint64_t ddt_asize = 0;
  for (const DdtFootprint& f : s.dedup.footprints) {
    if (f.format == chosen) ddt_asize = f.asize_bytes;
  }
  s.metadata_bytes = meta.DatasetMetadataDsize();
  s.special_metadata_bytes = meta.SpecialVdevMetadataDsize();
  // compressratio = ds_uncompressed_bytes / ds_compressed_bytes over every block born in the
  // dataset; a metadata block (indirect, dnode, ZAP) adds BP_GET_UCSIZE = its psize to both
  // sides (include/sys/spa.h BP_GET_UCSIZE; dsl_dataset_block_born), so it dilutes the ratio
  // but never inflates it.
  const uint64_t meta_psize = meta.MetadataPsize();
  s.compressratio = zfs::RatioPercentFloor(s.lsize + meta_psize, s.psize + meta_psize);
  s.compressratio_with_dedup = s.compressratio;  // finish.cc's second tally sets it otherwise
  s.compressratio_unrounded =
      s.psize + meta_psize > 0 ? double(s.lsize + meta_psize) / double(s.psize + meta_psize) : 1.0;
  s.used = ref_dsize + s.metadata_bytes;
  if (zero_written_without_dedup_[c]) {
    // Without dedup the zero blocks are written as data (docs/zfs_model.md §1 "Holes": 2.4.0/2.3.3
    // dmu_write_policy() in module/zfs/dmu.c switches compression=off to "empty" only when dedup
    // is on; zio_write_compress() tests for zeros only when a compression runs).
    const size_t i = row * settings_ + c;
    const zfs::MetadataTally written = MetadataOf(row, c, s, /*written_zeros=*/true);
    s.metadata_bytes = written.DatasetMetadataDsize();
    s.special_metadata_bytes = written.SpecialVdevMetadataDsize();
    const uint64_t dedup_layout_used = s.used;
    s.used = ref_dsize + zero_dsize_without_dedup_[i] + s.metadata_bytes;
    s.zero_used_without_dedup = s.used - std::min(s.used, dedup_layout_used);
  }
  zfs::PoolDdt pool_ddt;
  pool_ddt.present = entries != 0;
  pool_ddt.format = chosen;
  pool_ddt.entries = entries;
  s.pool_alloc = zfs::PoolAllocated(ContextFor(options_), dedup_asize, meta.DatasetMetadataAsize(),
                                    ddt_asize, pool_ddt);
}

}  // namespace zsim::finish
