#include "engine/finish/block_sizes.h"

#include <bit>
#include <map>

#include "engine/finish/known_codes.h"

namespace zsim::finish {
namespace {

constexpr uint64_t kSmallestThreshold = 4096;

struct Sums {
  std::map<uint64_t, BlockSizeBucket> buckets;  // by bucket size
  std::vector<SmallBlocks> small;
  uint64_t known_lsize = 0, all_lsize = 0;  // references with a code, and all of them
};

}  // namespace

void FillBlockSizes(const ddt::DedupTable& table, const CodeSettler& codes, uint64_t block_bytes,
                    const zfs::AllocationModel& alloc, int copies,
                    const std::vector<int>& known_levels, std::vector<SettingResult>* settings) {
  const size_t n = settings->size();
  std::vector<Sums> sums(n);
  for (Sums& s : sums) {
    for (uint64_t t = kSmallestThreshold; t <= block_bytes / 2; t *= 2) {
      s.small.push_back(SmallBlocks{t, 0, 0, 0, 0});
    }
  }
  const uint64_t sector = alloc.sector_bytes();
  const uint32_t shift = table.sample_shift();
  table.ForEach([&](const ddt::EntryView& e) {
    for (size_t c = 0; c < n && c < e.codes.size(); ++c) {
      Sums& s = sums[c];
      const ddt::PsizeCode code = codes.Settle(
          e, KnownCode(e, c, c < known_levels.size() ? known_levels[c] : -1, shift), c);
      s.all_lsize += e.lsize * e.refcount;
      if (code == ddt::kPendingCode) continue;
      s.known_lsize += e.lsize * e.refcount;
      if (ddt::IsHoleCode(code) || ddt::IsEmbeddedCode(code)) continue;
      const uint64_t psize = ddt::AllocatedPsize(code);
      const uint64_t asize = alloc.Block(psize, copies).asize;
      BlockSizeBucket& b = s.buckets[std::bit_floor(psize)];
      b.size = std::bit_floor(psize);
      b.blocks += e.refcount;
      b.psize += psize * e.refcount;
      b.asize += asize * e.refcount;
      b.unique_blocks += 1;
      b.unique_asize += asize;
      const uint64_t special_asize = (psize + sector - 1) / sector * sector * uint64_t(copies);
      for (SmallBlocks& small : s.small) {
        if (psize > small.threshold) continue;
        small.blocks += e.refcount;
        small.unique_blocks += 1;
        small.asize += special_asize * e.refcount;
        small.unique_asize += special_asize;
      }
    }
  });
  const double sampled = double(uint64_t{1} << table.sample_shift());
  for (size_t c = 0; c < n; ++c) {
    const Sums& s = sums[c];
    // Scale: the table's key sampling, and a sampled codec's blocks without a code.
    const double scale =
        sampled * (s.known_lsize > 0 ? double(s.all_lsize) / double(s.known_lsize) : 1.0);
    auto up = [scale](uint64_t v) { return static_cast<uint64_t>(double(v) * scale + 0.5); };
    SettingResult& out = (*settings)[c];
    out.block_sizes.clear();
    for (const auto& [size, b] : s.buckets) {
      out.block_sizes.push_back(BlockSizeBucket{size, up(b.blocks), up(b.psize), up(b.asize),
                                                up(b.unique_blocks), up(b.unique_asize)});
    }
    out.small_blocks.clear();
    for (const SmallBlocks& small : s.small) {
      out.small_blocks.push_back(SmallBlocks{small.threshold, up(small.blocks),
                                             up(small.unique_blocks), up(small.asize),
                                             up(small.unique_asize)});
    }
  }
}

}  // namespace zsim::finish
