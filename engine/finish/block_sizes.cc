#include "engine/finish/block_sizes.h"

#include <bit>
#include <vector>

#include "engine/finish/known_codes.h"

namespace zsim::finish {
namespace {

constexpr uint64_t kSmallestThreshold = 4096;

// Per setting, by psize / 512 (every allocated psize is a multiple of 512): the references and
// the entries of that psize. The buckets and thresholds are summed from them at the end, so a
// table of 10 million entries costs two increments per entry and setting.
struct Sums {
  std::vector<uint64_t> refs, unique;
  // The references' count of an allocated code's psize (both vectors grown to hold it), or
  // null for a hole or an embedded block.
  uint64_t* At(ddt::PsizeCode code) {
    if (ddt::IsHoleCode(code) || ddt::IsEmbeddedCode(code)) return nullptr;
    const size_t unit = code;  // psize / 512 (ddt::AllocatedPsize)
    if (unit >= refs.size()) {
      refs.resize(unit + 1);
      unique.resize(unit + 1);
    }
    return &refs[unit];
  }
  uint64_t known_lsize = 0, all_lsize = 0;  // references with a code, and all of them
};

}  // namespace

void FillBlockSizes(const ddt::DedupTable& table, const CodeSettler& codes, uint64_t block_bytes,
                    const zfs::AllocationModel& alloc, int copies,
                    const std::vector<int>& known_levels, std::vector<SettingResult>* settings) {
  const size_t n = settings->size();
  std::vector<Sums> sums(n);
  const uint32_t shift = table.sample_shift();
  table.ForEach([&](const ddt::EntryView& e) {
    for (size_t c = 0; c < n && c < e.codes.size(); ++c) {
      Sums& s = sums[c];
      // The references as the dataset stores them without dedup, the unique blocks as dedup=on
      // allocates them: they differ where 2.1 and 2.2 embed only without dedup
      // (CodeSettler::differs_without_dedup).
      const ddt::PsizeCode known =
          KnownCode(e, c, c < known_levels.size() ? known_levels[c] : -1, shift);
      const ddt::PsizeCode code = codes.Settle(e, known, c);
      const ddt::PsizeCode bare =
          codes.differs_without_dedup() ? codes.SettleWithoutDedup(e, known, c) : code;
      s.all_lsize += e.lsize * e.refcount;
      if (code == ddt::kPendingCode) continue;
      s.known_lsize += e.lsize * e.refcount;
      if (uint64_t* refs = s.At(bare)) *refs += e.refcount;
      if (s.At(code) != nullptr) s.unique[code] += 1;
    }
  });
  const uint64_t sector = alloc.sector_bytes();
  const double sampled = double(uint64_t{1} << table.sample_shift());
  for (size_t c = 0; c < n; ++c) {
    const Sums& s = sums[c];
    // Power-of-two buckets by psize, and what each special_small_blocks threshold takes.
    std::vector<BlockSizeBucket> buckets;
    std::vector<SmallBlocks> small;
    for (uint64_t t = kSmallestThreshold; t <= block_bytes / 2; t *= 2) {
      small.push_back(SmallBlocks{t, 0, 0, 0, 0});
    }
    for (size_t unit = 1; unit < s.refs.size(); ++unit) {
      if (s.unique[unit] == 0 && s.refs[unit] == 0) continue;
      const uint64_t psize = uint64_t{unit} * 512, refs = s.refs[unit], unique = s.unique[unit];
      const uint64_t asize = alloc.Block(psize, copies).asize;
      const uint64_t size = std::bit_floor(psize);
      if (buckets.empty() || buckets.back().size != size) buckets.push_back(BlockSizeBucket{size});
      BlockSizeBucket& b = buckets.back();
      b.blocks += refs;
      b.psize += psize * refs;
      b.asize += asize * refs;
      b.unique_blocks += unique;
      b.unique_asize += asize * unique;
      const uint64_t special_asize = (psize + sector - 1) / sector * sector * uint64_t(copies);
      for (SmallBlocks& t : small) {
        if (psize > t.threshold) continue;
        t.blocks += refs;
        t.unique_blocks += unique;
        t.asize += special_asize * refs;
        t.unique_asize += special_asize * unique;
      }
    }
    // Scale: the table's key sampling, and a sampled codec's blocks without a code.
    const double scale =
        sampled * (s.known_lsize > 0 ? double(s.all_lsize) / double(s.known_lsize) : 1.0);
    auto up = [scale](uint64_t v) { return static_cast<uint64_t>(double(v) * scale + 0.5); };
    SettingResult& out = (*settings)[c];
    out.block_sizes.clear();
    for (const BlockSizeBucket& b : buckets) {
      out.block_sizes.push_back(BlockSizeBucket{b.size, up(b.blocks), up(b.psize), up(b.asize),
                                                up(b.unique_blocks), up(b.unique_asize)});
    }
    out.small_blocks.clear();
    for (const SmallBlocks& t : small) {
      out.small_blocks.push_back(SmallBlocks{t.threshold, up(t.blocks), up(t.unique_blocks),
                                             up(t.asize), up(t.unique_asize)});
    }
  }
}

void CalibrateBlockSizes(SettingResult* s) {
  if (s->exact && s->dedup.sample_modulus <= 1) return;
  uint64_t sum = 0, count = 0;
  for (const BlockSizeBucket& b : s->block_sizes) {
    sum += b.psize;
    count += b.blocks;
  }
  if (sum == 0 || s->psize == 0) return;
  // Sizes by the psize, counts by the data blocks (s->blocks.data): scaled by the psize alone,
  // a sample holding too few large blocks came out with half as many blocks again.
  const double factor = double(s->psize) / double(sum);
  const double per_block =
      count > 0 && s->blocks.data > 0 ? double(s->blocks.data) / double(count) : factor;
  auto scaled = [factor](uint64_t v) { return static_cast<uint64_t>(double(v) * factor + 0.5); };
  auto counted = [per_block](uint64_t v) {
    return static_cast<uint64_t>(double(v) * per_block + 0.5);
  };
  // The buckets' psize by cumulative rounding, so that they add up to the setting's exactly.
  double cumulative = 0, cumulative_blocks = 0;
  uint64_t given = 0, given_blocks = 0;
  for (BlockSizeBucket& b : s->block_sizes) {
    cumulative += double(b.psize) * factor;
    const uint64_t upto = static_cast<uint64_t>(cumulative + 0.5);
    b.psize = upto - given;
    given = upto;
    // The counts likewise, so that they add up to the data blocks.
    cumulative_blocks += double(b.blocks) * per_block;
    const uint64_t upto_blocks = static_cast<uint64_t>(cumulative_blocks + 0.5);
    b.blocks = upto_blocks - given_blocks;
    given_blocks = upto_blocks;
    b.asize = scaled(b.asize);
    b.unique_blocks = counted(b.unique_blocks);
    b.unique_asize = scaled(b.unique_asize);
  }
  for (SmallBlocks& t : s->small_blocks) {
    t.blocks = counted(t.blocks);
    t.unique_blocks = counted(t.unique_blocks);
    t.asize = scaled(t.asize);
    t.unique_asize = scaled(t.unique_asize);
  }
}

}  // namespace zsim::finish
