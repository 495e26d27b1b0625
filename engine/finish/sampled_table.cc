// engine/finish/sampled_table.cc
//
// Tally::FinishSampledTable: the figures of a table that kept 1/M of the key space (--sample
// 1/M), calibrated to what is known for every block; the full table's are in tally.cc.

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/ratio_interval.h"
#include "engine/estimate/ratio_regression.h"
#include "engine/estimate/regression_estimator.h"
#include "engine/estimate/sample_level.h"
#include "engine/finish/tally.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_stats.h"

namespace zsim::finish {

using estimate::CompressRatioInterval;
using estimate::RegressionSums;
namespace {

// A sampled table's entries of one stratum (full or small blocks, distinct_blocks.h) for one
// setting: sums over the entries whose code is known. Embedded blocks are not DDT entries
// (`ne` sums count the others).
struct StratumSums {
  double n = 0, x = 0;  // entries; auxiliary total (entries for full blocks, u for small)
  double ne = 0, unique_ne = 0, lsize_ne = 0, psize = 0, dsize = 0, asize = 0;
  estimate::RatioEstimator dsize_per_x;
  RegressionSums regression;
};

// The referenced side: refcount-weighted sums over the same entries. `u` is the auxiliary size
// (AuxiliarySize: the asize of the block stored uncompressed).
struct ReferencedSums {
  double r = 0, r_ne = 0, r_lsize = 0, r_lsize_ne = 0, r_u = 0, r_psize = 0, r_dsize = 0,
         r_asize = 0, r_emb_bytes = 0;
  estimate::RatioEstimator dsize_per_u, psize_per_u;  // x = refs x u
};

// A sampled table's ratios per referenced block, lsize byte or auxiliary byte.
struct SideRatios {
  double ne_share, lsize_ne_share, psize_per, dsize_per, asize_per, emb_bytes_per_lsize;
};

// An occurrence sample's ratios; none when it holds no occurrence.
std::optional<SideRatios> OccurrenceRatios(const estimate::OccurrenceSums& o) {
  if (o.n() == 0 || o.u() <= 0 || o.lsize <= 0) return std::nullopt;
  return SideRatios{double(o.ne) / double(o.n()),
                    o.lsize_ne / o.lsize,
                    o.psize() / o.u(),
                    o.dsize() / o.u(),
                    o.asize / o.u(),
                    o.emb_bytes / o.lsize};
}

// Histogram sums per bucket of a stratum's sampled entries (DDT entries only).
struct BucketRows {
  double entries = 0, lsize = 0, psize = 0, dsize = 0;
  double refs = 0, ref_lsize = 0, ref_psize = 0, ref_dsize = 0;
};

// Exact sums over the all-zero entries (the table keeps every one).
struct ZeroSums {
  uint64_t holes = 0, hole_lsize = 0, embedded = 0, embedded_bytes = 0, non_hole_refs = 0,
           non_hole_lsize = 0, non_hole_u = 0;
  DdtStat allocated, referenced;  // DDT entries only
  uint64_t entries = 0, unique = 0, asize = 0, ref_asize = 0;
};

}  // namespace

// A table sampled 1/M sees only 1/M of the distinct blocks; scaling its sums by M carries the
// sample's whole error, and a key referenced far more than the others (the sample has it or
// not) can move the referenced side by tens of percent. So the figures are calibrated to what
// is known for every block:
//   - referenced side: the exact non-hole block count, lsize and auxiliary size (AuxiliarySize,
//     counted per file) times the sample's refcount-weighted ratios (DDT share per block and
//     per lsize byte; psize, dsize, asize per auxiliary byte);
//   - allocated side: per stratum, the sketch-counted distinct blocks (full: entries; small:
//     entries and auxiliary bytes) times the sample's mean per entry or per auxiliary byte;
//   - all-zero blocks: exact, the table keeps them all.
// The histogram's rows are the sample's entries, each standing for its stratum's share of the
// distinct blocks; the Total row and everything derived from it are the calibrated totals.
std::vector<SettingResult> Tally::FinishSampledTable(
    size_t row, uint64_t block_bytes, const ddt::DedupTable& table, const CodeSettler& codes,
    uint64_t sparse_holes, const std::vector<int>& level, const estimate::DistinctBlocks& distinct,
    const estimate::OccurrenceSample* occurrences, int occurrence_level) const {
  const zfs::AllocationModel alloc = zfs::AllocationModel::For(options_.vdev, options_.ashift);
  const uint64_t m = uint64_t{1} << table.sample_shift();
  std::vector<std::array<StratumSums, 2>> strata(settings_);  // [0] full, [1] small
  std::vector<ReferencedSums> refs_side(settings_);
  std::vector<std::array<std::array<BucketRows, 64>, 2>> rows(settings_);
  std::vector<ZeroSums> zero(settings_);
  std::vector<zfs::DdtStatsBuilder> zero_ddt(settings_);
  std::vector<KeySizeMixes> mixes(settings_);  // the zero entries' and the kept entries' sizes
  // A non-zero kept entry whose code under setting c is known and of a level the estimate uses
  // (both passes below take exactly these).
  struct KeptUnit {
    bool embedded;
    uint64_t psize;  // 0 when embedded
    zfs::BlockSpace space;
    int stratum;  // 0: full blocks, 1: a file's single smaller block
    double u;     // AuxiliarySize
  };
  auto kept_unit = [&](const ddt::EntryView& e, size_t c, int lv) -> std::optional<KeptUnit> {
    ddt::PsizeCode code = e.codes[c];
    if (level[c] < 0 && code == ddt::kPendingCode) code = ddt::EncodeAllocated(e.lsize);
    if (code == ddt::kPendingCode || ddt::IsHoleCode(code) || lv < level[c]) return std::nullopt;
    const bool emb = ddt::IsEmbeddedCode(code);
    const uint64_t psize = emb ? 0 : ddt::AllocatedPsize(code);
    return KeptUnit{emb, psize, emb ? zfs::BlockSpace{} : alloc.Block(psize, options_.copies),
                    e.lsize >= block_bytes ? 0 : 1,
                    double(AuxiliarySize(alloc_, e.lsize, options_.copies))};
  };
  codes.ForEach(table, [&](const ddt::EntryView& e) {
    const uint64_t refs = e.refcount;
    const int lv = estimate::SampleLevel(e.key.lo);
    for (size_t c = 0; c < settings_; ++c) {
      ddt::PsizeCode code = e.codes[c];
      if (level[c] < 0 && code == ddt::kPendingCode) code = ddt::EncodeAllocated(e.lsize);
      if (e.is_zero) {
        ZeroSums& z = zero[c];
        if (ddt::IsHoleCode(code)) {
          z.holes += refs;
          z.hole_lsize += refs * e.lsize;
          continue;
        }
        if (code == ddt::kPendingCode) code = ddt::EncodeAllocated(e.lsize);
        z.non_hole_refs += refs;
        z.non_hole_lsize += refs * e.lsize;
        z.non_hole_u += refs * AuxiliarySize(alloc_, e.lsize, options_.copies);
        if (ddt::IsEmbeddedCode(code)) {
          z.embedded += refs;
          z.embedded_bytes += refs * ddt::EmbeddedPayload(code);
          continue;
        }
        const uint64_t psize = ddt::AllocatedPsize(code);
        const zfs::BlockSpace space = alloc.Block(psize, options_.copies);
        zero_ddt[c].AddEntry(refs, e.lsize, psize, space.dsize);
        mixes[c][refs == 1 ? 0 : 1].Add(e.lsize, psize);
        z.allocated += DdtStat{1, e.lsize, psize, space.dsize};
        z.referenced += DdtStat{refs, refs * e.lsize, refs * psize, refs * space.dsize};
        z.entries += 1;
        z.unique += refs == 1;
        z.asize += space.asize;
        z.ref_asize += refs * space.asize;
        continue;
      }
      const std::optional<KeptUnit> unit = kept_unit(e, c, lv);
      if (!unit) continue;
      const bool emb = unit->embedded;
      const uint64_t psize = unit->psize;
      const zfs::BlockSpace space = unit->space;
      const int k = unit->stratum;
      const double u = unit->u;
      const double x = k == 0 ? 1.0 : u;
      StratumSums& st = strata[c][k];
      st.n += 1;
      st.x += x;
      st.psize += double(psize);
      st.dsize += double(space.dsize);
      st.asize += double(space.asize);
      st.dsize_per_x.Add(x, double(space.dsize));
      ReferencedSums& rs = refs_side[c];
      const double r = double(refs), rl = double(refs * e.lsize);
      st.regression.Add(r, u / 512, double(space.dsize) / 512);  // units of 512 bytes
      rs.r += r;
      rs.r_lsize += rl;
      rs.r_u += r * u;
      rs.r_psize += r * double(psize);
      rs.r_dsize += r * double(space.dsize);
      rs.r_asize += r * double(space.asize);
      rs.dsize_per_u.Add(r * u, r * double(space.dsize));
      rs.psize_per_u.Add(r * u, r * double(psize));
      if (emb) {
        rs.r_emb_bytes += r * double(ddt::EmbeddedPayload(code));
        continue;
      }
      mixes[c][refs == 1 ? 0 : 1].Add(e.lsize, psize);
      st.ne += 1;
      st.unique_ne += refs == 1;
      st.lsize_ne += double(e.lsize);
      rs.r_ne += r;
      rs.r_lsize_ne += rl;
      BucketRows& b = rows[c][k][zfs::DdtBucket(refs)];
      b.entries += 1;
      b.lsize += double(e.lsize);
      b.psize += double(psize);
      b.dsize += double(space.dsize);
      b.refs += r;
      b.ref_lsize += rl;
      b.ref_psize += r * double(psize);
      b.ref_dsize += r * double(space.dsize);
    }
  });
  if (occurrences != nullptr) {
    // The regressions' second pass: residuals about the first pass's ratios, same entries.
    codes.ForEach(table, [&](const ddt::EntryView& e) {
      if (e.is_zero) return;
      const int lv = estimate::SampleLevel(e.key.lo);
      for (size_t c = 0; c < settings_; ++c) {
        const std::optional<KeptUnit> unit = kept_unit(e, c, lv);
        if (!unit) continue;
        strata[c][unit->stratum].regression.AddResiduals(double(e.refcount), unit->u / 512,
                                                         double(unit->space.dsize) / 512);
      }
    });
  }

  // Sketch-counted populations per stratum: entries, and the auxiliary total (entries, u).
  const double pop_entries[2] = {distinct.full_keys(), distinct.small_keys()};
  const double pop_x[2] = {distinct.full_keys(), distinct.small_aux()};
  const double pop_error[2] = {distinct.full_keys_error(), distinct.small_aux_error()};
  const double full_u = double(AuxiliarySize(alloc_, block_bytes, options_.copies));
  // The population the sampled entries are drawn from: every distinct non-zero block (embedded
  // ones included; the zero keys are kept exactly, not sampled).
  const double pop_units = std::max(1.0, pop_entries[0] + pop_entries[1]);

  std::vector<SettingResult> out(settings_);
  for (size_t c = 0; c < settings_; ++c) {
    SettingResult& s = out[c];
    s.recordsize = block_bytes;
    s.compression = options_.compressions[c];
    s.exact = false;
    const ZeroSums& z = zero[c];
    const ReferencedSums& rs = refs_side[c];
    const size_t i = row * settings_ + c;
    // The non-zero blocks' exact referenced totals (embedded ones included).
    const double nz_blocks =
        double(non_hole_blocks_[i] - std::min(non_hole_blocks_[i], z.non_hole_refs));
    const double nz_lsize =
        double(non_hole_lsize_[i] - std::min(non_hole_lsize_[i], z.non_hole_lsize));
    const double nz_u = double(non_hole_aux_[i] - std::min(non_hole_aux_[i], z.non_hole_u));
    // Ratios per referenced lsize byte or auxiliary byte, from the kept entries weighted by
    // their references. With no kept entry nothing is known about compression from them: count
    // the blocks as stored uncompressed in the DDT, which the exact totals give exactly
    // (psize = lsize; asize = u; dsize = u x the deflate ratio).
    const bool known = rs.r_u > 0;
    const SideRatios kept =
        known ? SideRatios{rs.r_ne / rs.r,      rs.r_lsize_ne / rs.r_lsize,
                           rs.r_psize / rs.r_u, rs.r_dsize / rs.r_u,
                           rs.r_asize / rs.r_u, rs.r_emb_bytes / rs.r_lsize}
              : SideRatios{1.0,
                           1.0,
                           nz_u > 0 ? nz_lsize / nz_u : 0.0,
                           double(alloc.Block(block_bytes, options_.copies).dsize) / full_u,
                           1.0,
                           0.0};
    // --sample 1/M: the occurrence sample's ratios give the referenced side instead. A kept key
    // stands for all of its references, so a few heavily referenced keys kept or missed moved
    // the kept entries' ratios by tens of percent; an occurrence weighs one block.
    estimate::OccurrenceSums o, o_stratum[2];
    if (occurrences != nullptr) {
      for (int k = 0; k < 2; ++k) {
        for (int lv = occurrence_level; lv <= estimate::kMaxSampleLevel; ++lv) {
          o_stratum[k].Merge(occurrences->At(c, k, lv));
        }
        o.Merge(o_stratum[k]);
      }
    }
    // compression=off: psize is lsize and the block is stored as is (no embedding), so the
    // referenced side is known exactly from the exact totals; nothing of it is estimated.
    const bool is_off = options_.compressions[c].algorithm == CompressionAlgorithm::kOff;
    const std::optional<SideRatios> from_occurrences = is_off ? std::nullopt : OccurrenceRatios(o);
    const SideRatios occ =
        is_off ? SideRatios{1.0,
                            1.0,
                            nz_u > 0 ? nz_lsize / nz_u : 0.0,
                            double(alloc.Block(block_bytes, options_.copies).dsize) / full_u,
                            1.0,
                            0.0}
               : from_occurrences.value_or(kept);
    DdtStat ref;
    ref.blocks = Round(nz_blocks * occ.ne_share) + z.referenced.blocks;
    ref.lsize = Round(nz_lsize * occ.lsize_ne_share) + z.referenced.lsize;
    ref.psize = Round(nz_u * occ.psize_per) + z.referenced.psize;
    ref.dsize = Round(nz_u * occ.dsize_per) + z.referenced.dsize;
    uint64_t ref_asize = Round(nz_u * occ.asize_per) + z.ref_asize;
    if (is_off) {
      ref.psize = Round(nz_lsize) + z.referenced.psize;
      ref_asize = Round(nz_u) + z.ref_asize;
    }

    s.lsize = non_hole_lsize_[i];
    s.psize = ref.psize;
    s.asize = ref_asize;
    s.blocks.data = ref.blocks;
    s.blocks.embedded = non_hole_blocks_[i] - std::min(non_hole_blocks_[i], ref.blocks);
    s.embedded_bytes = Round(nz_lsize * occ.emb_bytes_per_lsize) + z.embedded_bytes;
    s.blocks.holes = z.holes + sparse_holes;
    s.zero_lsize = z.hole_lsize;

    // Allocated side, per stratum, from the kept entries: a key counts once there, so no key
    // can weigh more than one block, and the estimate improves with the number kept. With an
    // occurrence sample the referenced side is the better one; the two are estimated apart.
    const double full_lsize_per_u = double(block_bytes) / full_u;
    DdtStat a = z.allocated;
    double unique = double(z.unique), entries = double(z.entries), asize = double(z.asize);
    double a_var = 0;  // variance of the allocated dsize estimate
    // What the regression's corrections in doubt (below) moved the allocated dsize by: the
    // interval runs from the estimate without them to the estimate with them.
    double doubted = 0;
    double weight_count[2] = {0, 0}, weight_size[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const StratumSums& st = strata[c][k];
      if (pop_entries[k] <= 0) continue;
      const double u = k == 0 ? pop_x[k] * full_u : pop_x[k];  // the stratum's auxiliary total
      const estimate::OccurrenceSums& ok = o_stratum[k];
      double stratum_dsize;
      if (st.n > 0) {
        weight_count[k] = pop_entries[k] / st.n;
        weight_size[k] = pop_x[k] / st.x;
        // With the stratum's occurrences, the kept entries' ratio corrected by regression on
        // their referenced ratio (RegressionSums); the sizes that follow dsize follow it.
        RegressionSums::Fit fit{0.0, 1.0, 0.0};
        double correction = 1.0;
        // Only for a stratum of fewer kept entries than a sample needs to stand alone
        // (kMinSampledBlocks): with thousands, their own ratio was the better one (database at
        // 1K, 9,549 kept entries: 2.7% off alone, 7.9% corrected, the kept entries' referenced
        // ratio being off through the few heavily referenced keys they held, within 3 standard
        // errors); with a dozen, the correction is what brings it near (42% off alone, 5%).
        const double v_occ = ok.dsize_per_u.RelativeUnitVariance();  // infinite below 2
        const bool regress = ok.n() >= 2 && ok.u() > 0 && st.n >= 3 && st.dsize > 0 &&
                             st.n < double(estimate::kMinSampledBlocks);
        double se_rho = 0;  // of the occurrences' referenced ratio
        // The stratum's occurrences are 2^-level of its references (all of them at level 0).
        const double stratum_refs = std::ldexp(double(ok.n()), occurrence_level);
        if (regress) {
          se_rho = ok.dsize_per_u.StandardError(stratum_refs);
          if (!std::isfinite(se_rho)) se_rho = 0;
          fit = st.regression.Correct(ok.dsize_per_u.Ratio(), se_rho * se_rho, v_occ);
          correction = fit.a / (st.regression.d / st.regression.u);
        }
        entries += weight_count[k] * st.ne;
        unique += weight_count[k] * st.unique_ne;
        a.lsize += Round(weight_size[k] * st.lsize_ne);
        a.psize += Round(weight_size[k] * st.psize * correction);
        stratum_dsize = weight_size[k] * st.dsize * correction;
        asize += weight_size[k] * st.asize * correction;
        double rel_se = st.dsize > 0
                            ? st.dsize_per_x.StandardError(pop_entries[k]) / st.dsize_per_x.Ratio()
                            : 0.0;
        if (!std::isfinite(rel_se)) rel_se = 1.0;
        // A few kept entries can look alike when the blocks do not: 14 of them, all compressing
        // well, put a stratum 42% low and, judged by their own spread around their own level,
        // said +-6%. The stratum's occurrences show the blocks' spread (taken when larger) and
        // a level to judge it at (the larger of the two).
        double level_dsize = stratum_dsize;
        if (ok.n() >= 2 && std::isfinite(v_occ) && st.n < pop_entries[k]) {
          const double f = std::min(1.0, double(st.n) / pop_entries[k]);
          rel_se = std::max(rel_se, std::sqrt((1 - f) * v_occ / double(st.n)));
          level_dsize = std::max(level_dsize, u * ok.dsize_per_u.Ratio());
        }
        // What the regression leaves of a's variance, from an estimated correlation: not
        // trusted below 1/sqrt(n) of it.
        const double residual =
            std::max(fit.residual * (st.n - 1) / std::max(1.0, st.n - 3), 1 / std::sqrt(st.n));
        a_var += level_dsize * level_dsize * rel_se * rel_se * std::min(1.0, residual) +
                 stratum_dsize * stratum_dsize * pop_error[k] * pop_error[k];
        if (fit.b != 0) a_var += std::pow(u * fit.b * se_rho, 2);
        // Where the stratum's keys repeat, the correction is in doubt (estimate::KeysRepeat):
        // the interval runs over every share of it, none to all (below).
        const double keys_error = k == 0 ? distinct.full_keys_error() : distinct.small_keys_error();
        if (fit.b != 0 &&
            estimate::KeysRepeat(pop_entries[k], keys_error, double(ok.n()), occurrence_level)) {
          doubted += stratum_dsize - weight_size[k] * st.dsize;
        }
      } else {
        // Distinct blocks the sample missed entirely: the referenced side's ratios stand in,
        // those of the stratum's own occurrences when there are some (a file's single small
        // block compresses unlike full records).
        const SideRatios q = OccurrenceRatios(ok).value_or(occ);
        entries += pop_entries[k] * q.ne_share;
        a.lsize += Round(u * full_lsize_per_u * q.lsize_ne_share);
        a.psize += Round(u * q.psize_per);
        stratum_dsize = u * q.dsize_per;
        asize += u * q.asize_per;
        a_var += stratum_dsize * stratum_dsize;  // unknown to within itself
      }
      a.dsize += Round(stratum_dsize);
    }
    a.blocks = Round(entries);
    if (is_off) a.psize = a.lsize;  // stored as is: the allocated side's psize is its lsize
    // A table never allocates more than is referenced: a sketch's error must not say otherwise.
    a.blocks = std::min(a.blocks, ref.blocks);
    a.lsize = std::min(a.lsize, ref.lsize);
    a.psize = std::min(a.psize, ref.psize);
    a.dsize = std::min(a.dsize, ref.dsize);
    asize = std::min(asize, double(ref_asize));
    const uint64_t unique_entries = std::min(a.blocks, Round(unique));

    // The histogram: exact zero entries plus each stratum's sampled entries, weighted.
    zfs::DdtStatsBuilder hist = zero_ddt[c];
    for (int k = 0; k < 2; ++k) {
      for (int bi = 0; bi < 64; ++bi) {
        const BucketRows& b = rows[c][k][bi];
        if (b.entries == 0) continue;
        const double wc = weight_count[k], ws = weight_size[k];
        const DdtStat ab{Round(wc * b.entries), Round(ws * b.lsize), Round(ws * b.psize),
                         Round(ws * b.dsize)};
        const DdtStat rb{Round(wc * b.refs), Round(ws * b.ref_lsize), Round(ws * b.ref_psize),
                         Round(ws * b.ref_dsize)};
        hist.AddBucket(bi, ab.blocks, ab, rb);
      }
    }
    s.dedup = hist.ResultWithTotals(a, ref, unique_entries, a.blocks - unique_entries);
    s.dedup.sample_modulus = m;

    // 95% interval of the dedup ratio ref.dsize / a.dsize, each side's interval taken at the
    // end that widens it (conservative: the sides' errors are independent with an occurrence
    // sample, positively correlated without). The allocated side's lower end is floored at what
    // its blocks take at the least (one sector each, halved: their count is an estimate too).
    if (a.dsize > 0 && ref.dsize > 0) {
      const double nz_share = double(ref.dsize - z.referenced.dsize) / double(ref.dsize);
      double ref_rel = 0;
      if (from_occurrences) {
        // Drawn from the non-zero references: a census when every one was taken (level 0).
        const double se = o.dsize_per_u.StandardError(nz_blocks);
        ref_rel = o.dsize() <= 0 ? 0.0 : std::isfinite(se) ? se / o.dsize_per_u.Ratio() : 1.0;
      } else if (known && rs.r_dsize > 0) {
        const double se = rs.dsize_per_u.StandardError(pop_units);
        ref_rel = std::isfinite(se) ? se / rs.dsize_per_u.Ratio() : 1.0;
      } else if (!known && nz_blocks > 0) {
        ref_rel = 1.0;
      }
      ref_rel *= nz_share;
      const double a_dsize = double(a.dsize), a_sd = std::sqrt(a_var);
      const double a_least =
          std::max(1.0, double(a.blocks) * double(alloc.Block(512, options_.copies).dsize) / 2.0);
      // The allocated side's interval: from the lesser of the estimate and the estimate
      // without the corrections in doubt to the greater (one where none is), capped as a.dsize
      // is, with the corrected estimate's sampling error on each end. (The uncorrected one's
      // own, without the regression's reduction, made the file-server, database and VM-store
      // samples' intervals 0.46 of the ratio wide on average, where these are 0.28, and held
      // the exact ratio on one more of 72: bench/results/2026-12-06-s51-dedup-intervals.)
      const double ref_dsize = double(ref.dsize);
      const double without = std::min(a_dsize - doubted, ref_dsize);
      const double a_high = std::max(a_dsize, without) + 1.96 * a_sd;
      const double a_low = std::max(a_least, std::min(a_dsize, without) - 1.96 * a_sd);
      const double lo = ref_dsize * std::max(0.0, 1 - 1.96 * ref_rel) / a_high;
      const double hi = ref_dsize * (1 + 1.96 * ref_rel) / a_low;
      s.dedup.ratio_ci95 = std::array<double, 2>{std::max(1.0, lo), std::max(1.0, hi)};
    }
    Complete(row, c, ref.dsize, Round(asize), &s, mixes[c]);
    // compressratio's interval from the psize-per-auxiliary-byte ratio's.
    // Without a usable sample (none, or a single entry) the interval of psize per u is infinite.
    const uint64_t meta_psize = MetadataOf(row, c, s).MetadataPsize();
    const std::array<double, 2> r =
        from_occurrences ? o.psize_per_u.Interval95(nz_blocks)
        : known          ? rs.psize_per_u.Interval95(pop_units)
                         : std::array<double, 2>{0.0, std::numeric_limits<double>::infinity()};
    // The codec's figures are exact where nothing of them was drawn: compression=off, or an
    // occurrence sample that took every non-zero block's occurrence with its code (a row
    // under its occurrence budget, level 0: the ratios are the whole row's). The dedup side
    // still rests on the kept keys (its own interval, DedupResult::ratio_ci95).
    const bool census = from_occurrences && occurrence_level == 0 && double(o.n()) == nz_blocks;
    s.exact = is_off || census;
    if (!s.exact) {
      s.ci95 = CompressRatioInterval(double(s.lsize + meta_psize),
                                     double(z.referenced.psize + meta_psize),
                                     double(s.psize - std::min(s.psize, z.referenced.psize)),
                                     r[0] * nz_u, r[1] * nz_u, /*compressing=*/true);
    }
  }
  return out;
}

}  // namespace zsim::finish
