#include "engine/pipeline/tally.h"

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
  f.asize_bytes = m.unique.asize_bytes + m.duplicate.asize_bytes;
  return f;
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
                                         const InputSummary& /*input*/) const {
  const zfs::AllocationModel alloc = zfs::AllocationModel::For(options_.vdev, options_.ashift);
  std::vector<SettingResult> out(settings_);
  std::vector<zfs::DdtStatsBuilder> ddt(settings_);
  std::vector<uint64_t> dedup_asize(settings_, 0), ref_dsize(settings_, 0);
  for (size_t c = 0; c < settings_; ++c) {
    out[c].recordsize = block_bytes;
    out[c].compression = options_.compressions[c];
    out[c].blocks.holes = sparse_holes;
  }
  // One pass over the table for every setting: per entry, what each setting made of it.
  table.ForEach([&](const ddt::EntryView& e) {
    const uint64_t refs = e.refcount;
    for (size_t c = 0; c < settings_; ++c) {
      SettingResult& s = out[c];
      const ddt::PsizeCode code = e.codes[c];
      if (ddt::IsHoleCode(code)) {
        s.blocks.holes += refs;
        continue;
      }
      s.lsize += e.lsize * refs;
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
    }
  });

  const zfs::MetadataContext ctx = ContextFor(options_);
  const DdtFormat chosen = options_.ddt_format.value_or(DdtFormat::kLegacy);
  for (size_t c = 0; c < settings_; ++c) {
    SettingResult& s = out[c];
    const zfs::MetadataTally& meta = metadata_[row * settings_ + c];
    s.dedup = ddt[c].Result();
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
    s.compressratio =
        zfs::RatioPercentFloor(s.lsize + meta.MetadataPsize(), s.psize + meta.MetadataPsize());
    s.used = ref_dsize[c] + s.metadata_bytes;
    s.pool_alloc = zfs::PoolAllocated(ctx, dedup_asize[c], meta.DatasetMetadataAsize(), ddt_asize);
  }
  return out;
}

}  // namespace zsim::pipeline
