#include "engine/pipeline/tally.h"

#include "engine/zfs/allocation.h"
#include "engine/zfs/ddt_stats.h"

namespace zsim::pipeline {

Tally::Tally(const ScanOptions& options, const zfs::WritePolicy& policy, size_t rows)
    : options_(options), policy_(policy), rows_(rows), settings_(options.compressions.size()) {}

Tally::~Tally() = default;

void Tally::AddFile(const std::vector<zfs::RecordLayout>& /*layouts*/,
                    const std::vector<std::atomic<uint64_t>>& /*non_hole*/) {}

void Tally::AddDirectory(const DirectoryShape& /*dir*/) {}

std::vector<SettingResult> Tally::Finish(size_t /*row*/, uint64_t block_bytes,
                                         const ddt::DedupTable& table, uint64_t sparse_holes,
                                         const InputSummary& /*input*/) const {
  const zfs::AllocationModel alloc = zfs::AllocationModel::For(options_.vdev, options_.ashift);
  std::vector<SettingResult> out(settings_);
  std::vector<zfs::DdtStatsBuilder> ddt(settings_);
  std::vector<uint64_t> data_asize(settings_, 0), data_dsize(settings_, 0);
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
      data_dsize[c] += space.dsize * refs;
      data_asize[c] += space.asize;  // once per entry: what the pool allocates with dedup
      ddt[c].AddEntry(refs, e.lsize, psize, space.dsize);
    }
  });
  for (size_t c = 0; c < settings_; ++c) {
    SettingResult& s = out[c];
    s.dedup = ddt[c].Result();
    s.compressratio = zfs::RatioPercentFloor(s.lsize, s.psize);
    s.used = data_dsize[c] + s.metadata_bytes;
    s.pool_alloc = data_asize[c] + s.metadata_bytes;
  }
  return out;
}

}  // namespace zsim::pipeline
