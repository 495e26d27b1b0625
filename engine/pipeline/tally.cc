#include "engine/pipeline/tally.h"

#include <cmath>

#include "engine/estimate/ratio_estimator.h"
#include "engine/estimate/sample_level.h"
#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/ddt_stats.h"

namespace zsim::pipeline {
namespace {

zfs::MetadataContext ContextFor(const ScanOptions& o) {
  zfs::MetadataContext ctx;
  ctx.profile = o.profile;
  ctx.vdev = o.vdev;
  ctx.ashift = o.ashift;
  ctx.copies = o.copies;
  return ctx;
}

DdtFootprint Footprint(const ScanOptions& o, DdtFormat format, uint64_t unique, uint64_t duplicate,
                       uint64_t typical_asize) {
  zfs::DdtFootprintInput in;
  in.unique_entries = unique;
  in.duplicate_entries = duplicate;
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

uint64_t Round(double v) { return v <= 0 ? 0 : static_cast<uint64_t>(std::llround(v)); }

// Sums over DDT entries, exact or sampled, for one histogram bucket of a sampled setting.
struct BucketSums {
  // Every non-hole entry (exact); `anchor` is the auxiliary value (SamplingState::anchor).
  double entries = 0, refs = 0, lsize = 0, ref_lsize = 0, anchor = 0, ref_anchor = 0;
  // Sampled entries only.
  double n = 0, s_refs = 0, s_lsize = 0, s_ref_lsize = 0, s_anchor = 0, s_ref_anchor = 0;
  double s_psize = 0, s_dsize = 0, s_asize = 0, s_emb = 0, s_emb_lsize = 0;
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

// The auxiliary value of an entry (see SamplingState::anchor).
double Anchor(const ddt::EntryView& e, int anchor) {
  if (anchor < 0) return double(e.lsize);
  const ddt::PsizeCode a = e.codes[static_cast<size_t>(anchor)];
  return ddt::IsHoleCode(a) || ddt::IsEmbeddedCode(a) ? 0.0 : double(ddt::AllocatedPsize(a));
}

}  // namespace

Tally::Tally(const ScanOptions& options, const zfs::WritePolicy& policy, size_t rows)
    : options_(options), policy_(policy), rows_(rows), settings_(options.compressions.size()) {
  metadata_.assign(rows_ * settings_, zfs::MetadataTally(ContextFor(options_)));
}

Tally::~Tally() = default;

void Tally::AddFile(const std::vector<zfs::RecordLayout>& layouts,
                    const std::vector<std::atomic<uint64_t>>& non_hole) {
  for (size_t r = 0; r < rows_; ++r) {
    for (size_t c = 0; c < settings_; ++c) {
      metadata_[r * settings_ + c].AddFile(layouts[r].blocks, non_hole[r * settings_ + c].load());
    }
  }
}

void Tally::AddDirectory(const DirectoryShape& dir) {
  for (zfs::MetadataTally& m : metadata_) {
    m.AddDirectory(dir.entries, dir.name_bytes, dir.longest_name);
  }
}

std::vector<SettingResult> Tally::Finish(size_t row, uint64_t block_bytes,
                                         const ddt::DedupTable& table, uint64_t sparse_holes,
                                         const SamplingState& sampling) const {
  const zfs::AllocationModel alloc = zfs::AllocationModel::For(options_.vdev, options_.ashift);
  const uint64_t m = uint64_t{1} << table.sample_shift();  // dedup sampling: 1/M of the keys
  std::vector<SettingResult> out(settings_);
  std::vector<zfs::DdtStatsBuilder> ddt(settings_);
  std::vector<uint64_t> dedup_asize(settings_, 0), ref_dsize(settings_, 0);
  for (size_t c = 0; c < settings_; ++c) {
    out[c].recordsize = block_bytes;
    out[c].compression = options_.compressions[c];
  }

  // Sampled settings: the level whose sample is used. Pass 1: ratio statistics per level over
  // the entries whose codes were computed at or above the level in force when the scan ended
  // (all of them were compressed: the level only rises).
  std::vector<int> level(settings_, -1);  // -1: exact setting
  std::vector<uint64_t> population(settings_, 0);
  std::vector<std::array<estimate::RatioEstimator, estimate::kMaxSampleLevel + 1>> per_level(
      settings_);
  bool any_sampled = false;
  for (size_t c = 0; c < settings_; ++c) {
    // At level 0 every unique block went through every codec: the exact path applies.
    if (sampling.sampled[c] && sampling.end_level > 0) {
      level[c] = sampling.end_level;
      any_sampled = true;
    }
  }
  if (any_sampled) {
    table.ForEach([&](const ddt::EntryView& e) {
      const int lv = estimate::SampleLevel(e.key.lo);
      for (size_t c = 0; c < settings_; ++c) {
        if (level[c] < 0 || ddt::IsHoleCode(e.codes[c])) continue;
        ++population[c];
        if (e.codes[c] == ddt::kPendingCode || lv < sampling.end_level) continue;
        const uint64_t psize =
            ddt::IsEmbeddedCode(e.codes[c]) ? 0 : ddt::AllocatedPsize(e.codes[c]);
        per_level[c][lv].Add(double(e.refcount) * Anchor(e, sampling.anchor),
                             double(e.refcount * psize));
      }
    });
    // The highest level whose sample alone meets the target; else the end level (most data).
    for (size_t c = 0; c < settings_; ++c) {
      if (level[c] < 0) continue;
      estimate::RatioEstimator above;
      for (int lv = estimate::kMaxSampleLevel; lv >= sampling.end_level; --lv) {
        above.Merge(per_level[c][lv]);
        if (above.n() >= estimate::kMinSampledBlocks &&
            above.RelativeHalfWidth95(double(population[c])) <=
                estimate::kTargetRelativeHalfWidth) {
          level[c] = lv;
          break;
        }
      }
    }
  }

  // Pass 2: every entry, every setting.
  std::vector<std::array<BucketSums, 64>> buckets(settings_);
  std::vector<estimate::RatioEstimator> sampled_ratio(settings_);
  std::vector<estimate::RatioEstimator> dedup_ratio(settings_);
  std::vector<double> anchor_totals(settings_, 0);
  table.ForEach([&](const ddt::EntryView& e) {
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
        continue;
      }
      s.lsize += e.lsize * refs;
      if (level[c] >= 0) {
        BucketSums& b = buckets[c][zfs::DdtBucket(refs)];
        b.entries += 1;
        b.refs += double(refs);
        b.lsize += double(e.lsize);
        b.ref_lsize += double(refs * e.lsize);
        const double x = Anchor(e, sampling.anchor);
        b.anchor += x;
        b.ref_anchor += double(refs) * x;
        if (code == ddt::kPendingCode || lv < level[c]) continue;
        const bool emb = ddt::IsEmbeddedCode(code);
        const uint64_t psize = emb ? 0 : ddt::AllocatedPsize(code);
        const zfs::BlockSpace space = emb ? zfs::BlockSpace{} : alloc.Block(psize, options_.copies);
        b.n += 1;
        b.s_refs += double(refs);
        b.s_lsize += double(e.lsize);
        b.s_ref_lsize += double(refs * e.lsize);
        b.s_anchor += x;
        b.s_ref_anchor += double(refs) * x;
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
        continue;
      }
      if (ddt::IsEmbeddedCode(code)) {
        // BP_GET_PSIZE is 0 for an embedded block: lsize counts, psize and asize do not.
        s.blocks.embedded += refs;
        s.embedded_bytes += ddt::EmbeddedPayload(code) * refs;
        continue;
      }
      const uint64_t psize = ddt::AllocatedPsize(code);
      const zfs::BlockSpace space = alloc.Block(psize, options_.copies);
      s.blocks.data += refs;
      s.psize += psize * refs;
      s.asize += space.asize * refs;
      ref_dsize[c] += space.dsize * refs;
      dedup_asize[c] += space.asize;  // once per entry: what the pool allocates with dedup
      ddt[c].AddEntry(refs, e.lsize, psize, space.dsize);
      if (m > 1) dedup_ratio[c].Add(double(space.dsize), double(refs * space.dsize));
    }
  });

  // Sampled settings: each bucket's exact lsize times the sample's ratios (its own when it has
  // enough entries, the whole sample's otherwise).
  for (size_t c = 0; c < settings_; ++c) {
    if (level[c] < 0) continue;
    SettingResult& s = out[c];
    BucketSums global;
    for (const BucketSums& b : buckets[c]) global.AddSample(b);
    double psize = 0, asize = 0, rdsize = 0, emb = 0, emb_bytes = 0, dasize = 0, refs_all = 0,
           anchor_total = 0;
    for (int bi = 0; bi < 64; ++bi) {
      const BucketSums& b = buckets[c][bi];
      if (b.entries == 0) continue;
      const BucketSums& src = RatioSource(b, global);
      const double e_frac = Div(src.s_emb, src.n);
      DdtStat a, r;
      a.blocks = Round(b.entries * (1 - e_frac));
      a.lsize = Round(b.lsize * (1 - Div(src.s_emb_lsize, src.s_lsize)));
      a.psize = Round(b.anchor * Div(src.s_psize, src.s_anchor));
      a.dsize = Round(b.anchor * Div(src.s_dsize, src.s_anchor));
      r.blocks = Round(b.refs * (1 - Div(src.s_ref_emb, src.s_refs)));
      r.lsize = Round(b.ref_lsize * (1 - Div(src.s_ref_emb_lsize, src.s_ref_lsize)));
      r.psize = Round(b.ref_anchor * Div(src.s_ref_psize, src.s_ref_anchor));
      r.dsize = Round(b.ref_anchor * Div(src.s_ref_dsize, src.s_ref_anchor));
      ddt[c].AddBucket(bi, a.blocks, a, r);
      psize += double(r.psize);
      rdsize += double(r.dsize);
      asize += b.ref_anchor * Div(src.s_ref_asize, src.s_ref_anchor);
      dasize += b.anchor * Div(src.s_asize, src.s_anchor);
      anchor_total += b.ref_anchor;
      emb += b.refs * Div(src.s_ref_emb, src.s_refs);
      emb_bytes += b.ref_lsize * Div(src.s_ref_emb_bytes, src.s_ref_lsize);
      refs_all += b.refs;
    }
    s.psize = Round(psize);
    s.asize = Round(asize);
    s.blocks.embedded = Round(emb);
    s.blocks.data = Round(refs_all) - std::min(Round(refs_all), s.blocks.embedded);
    s.embedded_bytes = Round(emb_bytes);
    ref_dsize[c] = Round(rdsize);
    dedup_asize[c] = Round(dasize);
    s.exact = false;
    anchor_totals[c] = anchor_total;
  }

  const zfs::MetadataContext ctx = ContextFor(options_);
  const DdtFormat chosen = options_.ddt_format.value_or(DdtFormat::kLegacy);
  for (size_t c = 0; c < settings_; ++c) {
    SettingResult& s = out[c];
    const zfs::MetadataTally& meta = metadata_[row * settings_ + c];
    if (m > 1) {
      // Dedup sampling: everything the table gave stands for M times as much.
      ddt[c].Scale(m);
      for (uint64_t* v : {&s.blocks.data, &s.blocks.holes, &s.blocks.embedded, &s.lsize, &s.psize,
                          &s.asize, &s.embedded_bytes, &ref_dsize[c], &dedup_asize[c]}) {
        *v *= m;
      }
      s.exact = false;
    }
    s.blocks.holes += sparse_holes;
    s.dedup = ddt[c].Result();
    s.dedup.sample_modulus = m;
    if (m > 1) {
      const std::array<double, 2> ci = dedup_ratio[c].Interval95(double(dedup_ratio[c].n() * m));
      s.dedup.ratio_ci95 = std::array<double, 2>{std::max(1.0, ci[0]), ci[1]};
    }
    const uint64_t entries = s.dedup.unique_entries + s.dedup.duplicate_entries;
    const uint64_t typical_asize = entries ? dedup_asize[c] / entries : 0;
    s.dedup.footprints.push_back(Footprint(options_, DdtFormat::kLegacy, s.dedup.unique_entries,
                                           s.dedup.duplicate_entries, typical_asize));
    if (zfs::RulesFor(options_.profile).has_fast_dedup) {
      s.dedup.footprints.push_back(Footprint(options_, DdtFormat::kFast, s.dedup.unique_entries,
                                             s.dedup.duplicate_entries, typical_asize));
    }
    uint64_t ddt_asize = 0;
    for (const DdtFootprint& f : s.dedup.footprints) {
      if (f.format == chosen) ddt_asize = f.asize_bytes;
    }
    s.metadata_bytes = meta.DatasetMetadataDsize();
    // compressratio = ds_uncompressed_bytes / ds_compressed_bytes over every block born in the
    // dataset; a metadata block (indirect, dnode, ZAP) adds BP_GET_UCSIZE = its psize to both
    // sides (include/sys/spa.h BP_GET_UCSIZE; dsl_dataset_block_born), so it dilutes the ratio
    // but never inflates it.
    const uint64_t meta_psize = meta.MetadataPsize();
    s.compressratio = zfs::RatioPercentFloor(s.lsize + meta_psize, s.psize + meta_psize);
    if (level[c] >= 0) {
      // psize ~ R x anchor total: the interval of R gives the interval of compressratio.
      const std::array<double, 2> r = sampled_ratio[c].Interval95(double(population[c]));
      const double l = double(s.lsize + meta_psize);
      const double x = anchor_totals[c] * double(m);
      const double lo = l / (r[1] * x + double(meta_psize));
      const double hi = r[0] > 0 ? l / (r[0] * x + double(meta_psize)) : lo;
      s.ci95 = std::array<double, 2>{lo, hi};
    }
    s.used = ref_dsize[c] + s.metadata_bytes;
    s.pool_alloc = zfs::PoolAllocated(ctx, dedup_asize[c], meta.DatasetMetadataAsize(), ddt_asize);
  }
  return out;
}

}  // namespace zsim::pipeline
