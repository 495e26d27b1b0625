#include "engine/codec/zfs_block.h"

#include <algorithm>
#include <cassert>

namespace zsim::codec {

std::optional<size_t> ZfsCompress(const zfs::WritePolicy& policy, Compression c, ByteView block,
                                  Compressor& compressor, MutableByteView dst) {
  // zstd early abort (2.2+, zfs_zstd_compress_buf): ZFS's lz4 first; if its output is not
  // strictly below the budget, zstd-1; if that fails too, give up without the real level.
  if (zfs::ZstdEarlyAbortApplies(policy, c, block.size())) {
    const std::optional<size_t> lz4 =
        compressor.Compress({CompressionAlgorithm::kLz4, 0}, block, dst);
    if (!lz4 || *lz4 >= dst.size()) {
      if (!compressor.Compress({CompressionAlgorithm::kZstd, 1}, block, dst)) return std::nullopt;
    }
  }
  return compressor.Compress(c, block, dst);
}

RawOutcome RawZfsCompress(const zfs::WritePolicy& policy, Compression c, ByteView block,
                          bool is_all_zero, Compressor& compressor, MutableByteView scratch) {
  // Holes first: ZFS tests for zeros before compressing (docs/zfs_model.md §1 "Holes").
  if (is_all_zero && zfs::ZeroBlockIsHole(policy, c)) return {true, std::nullopt};
  const uint64_t budget = zfs::CompressionBudget(policy, c, block.size());
  if (budget == 0) return {};  // compression=off, or v23's 512-byte blocks
  assert(scratch.size() >= budget);
  const MutableByteView dst = scratch.first(static_cast<size_t>(budget));
  const std::optional<size_t> length = ZfsCompress(policy, c, block, compressor, dst);
  if (!length) return {};
  return {false, *length};
}

LeastBudgetOutcome LeastBudgetZfsCompress(const zfs::WritePolicy& policy, Compression c,
                                          ByteView block, bool is_all_zero, Compressor& compressor,
                                          MutableByteView scratch) {
  assert(zfs::LeastBudgetKept(policy, c, block.size()));
  if (is_all_zero && zfs::ZeroBlockIsHole(policy, c)) return {true, std::nullopt};
  const uint64_t budget = zfs::LargestCompressionBudget(block.size());
  assert(scratch.size() >= budget);
  if (c.algorithm == CompressionAlgorithm::kZstd) {
    return {false, ZstdLeastBudget(c, block, compressor, scratch)};
  }
  return {false, compressor.CompressFit(c, block, scratch.first(static_cast<size_t>(budget)))};
}

std::optional<Compressor::Fit> ZstdLeastBudget(Compression c, ByteView block,
                                               Compressor& compressor, MutableByteView scratch,
                                               uint64_t margin) {
  const uint64_t largest = zfs::LargestCompressionBudget(block.size());
  assert(scratch.size() >= largest);
  const auto fits = [&](uint64_t budget) {
    return compressor.Compress(c, block, scratch.first(static_cast<size_t>(budget))).has_value();
  };
  // The same run as ZFS's at this budget: the output the report rounds comes from it.
  const std::optional<size_t> out =
      compressor.Compress(c, block, scratch.first(static_cast<size_t>(largest)));
  if (!out) return std::nullopt;
  Compressor::Fit fit{*out, *out};
  // The one candidate budget that may lie short of the least budget: 112 for an output of at
  // most 112 bytes (the next, 512, lies 400 bytes further), else the end of the output's unit
  // (the next unit's end lies 512 bytes further). None when it is the largest budget or above.
  const uint64_t candidate =
      *out <= zfs::kEmbeddedPayloadBytes
          ? zfs::kEmbeddedPayloadBytes
          : (*out + zfs::kMinBlockBytes - 1) / zfs::kMinBlockBytes * zfs::kMinBlockBytes;
  if (candidate >= largest || candidate - *out >= margin || fits(candidate)) return fit;
  fit.least_budget = candidate + 1;  // the next candidate fits: it lies at least margin beyond
  return fit;
}

namespace {

// The budget ddt::EncodeProbe and ddt::EncodeLeastBudget keep a least budget as: the smallest
// candidate (112, a multiple of 512, or `largest`) at or above it.
uint64_t CandidateAtOrAbove(uint64_t least, uint64_t largest) {
  if (least <= zfs::kEmbeddedPayloadBytes) return zfs::kEmbeddedPayloadBytes;
  const uint64_t unit =
      (least + zfs::kMinBlockBytes - 1) / zfs::kMinBlockBytes * zfs::kMinBlockBytes;
  return std::min(unit, largest);
}

}  // namespace

std::optional<uint64_t> EarlyAbortLeastBudget(ByteView block,
                                              const std::optional<Compressor::Fit>& zstd,
                                              Compressor& compressor, MutableByteView scratch) {
  EarlyAbortProbes probes;
  return probes.LeastBudget(block, zstd, compressor, scratch);
}

void EarlyAbortProbes::SetLz4(const std::optional<Compressor::Fit>& lz4) {
  lz4_known_ = true;
  lz4_pass_.reset();
  if (!lz4) return;
  // lz4 passes under B when it fits B and its output is below B: from max(least, output + 1)
  // (above the largest budget: at none, LeastBudget's test).
  lz4_pass_ = std::max<uint64_t>(lz4->least_budget, lz4->length + 1);
}

std::optional<uint64_t> EarlyAbortProbes::LeastBudget(ByteView block,
                                                      const std::optional<Compressor::Fit>& zstd,
                                                      Compressor& compressor,
                                                      MutableByteView scratch) {
  if (!zstd) return std::nullopt;
  const uint64_t largest = zfs::LargestCompressionBudget(block.size());
  assert(scratch.size() >= largest);
  const uint64_t own = CandidateAtOrAbove(zstd->least_budget, largest);
  if (!lz4_known_) {
    const MutableByteView dst = scratch.first(static_cast<size_t>(largest));
    SetLz4(compressor.CompressFit({CompressionAlgorithm::kLz4, 0}, block, dst));
  }
  std::optional<uint64_t> pass;
  if (lz4_pass_ && *lz4_pass_ <= largest) pass = CandidateAtOrAbove(*lz4_pass_, largest);
  // Where lz4 lets it through at or below zstd's own least budget, zstd-1 cannot lower the answer;
  // nor where lz4 lets it through at every budget ZFS computes but 112 bytes and zstd's own output
  // needs more than 112 (the usual case on compressible data): zstd-1 could lower the stored least
  // budget only below every budget a report may ask, whose answers it leaves as they are.
  const bool settled_by_lz4 = pass && *pass <= zfs::LeastLargeCompressionBudget(block.size()) &&
                              own > zfs::kEmbeddedPayloadBytes;
  if (!settled_by_lz4 && (!pass || *pass > own)) {
    if (!zstd1_known_) {
      zstd1_known_ = true;
      if (const auto one =
              ZstdLeastBudget({CompressionAlgorithm::kZstd, 1}, block, compressor, scratch)) {
        zstd1_pass_ = CandidateAtOrAbove(one->least_budget, largest);
      }
    }
    if (zstd1_pass_) pass = pass ? std::min(*pass, *zstd1_pass_) : *zstd1_pass_;
  }
  if (!pass) return std::nullopt;
  return std::max(*pass, own);
}

zfs::BlockWrite CompressZfsBlock(const zfs::WritePolicy& policy, Compression c, ByteView block,
                                 bool is_all_zero, Compressor& compressor,
                                 MutableByteView scratch) {
  const uint64_t lsize = block.size();
  const RawOutcome raw = RawZfsCompress(policy, c, block, is_all_zero, compressor, scratch);
  if (raw.hole) return {zfs::BlockKind::kHole, 0};
  // Under its own budget the compressor's answer decides (off: no answer, stored as is).
  return zfs::AcceptCompressed(policy, lsize, raw.length);
}

WrittenBlock WriteZfsBlock(const zfs::WritePolicy& policy, Compression c, ByteView block,
                           bool is_all_zero, Compressor& compressor, MutableByteView scratch) {
  const RawOutcome raw = RawZfsCompress(policy, c, block, is_all_zero, compressor, scratch);
  if (raw.hole) return {{zfs::BlockKind::kHole, 0}, {}};
  const zfs::BlockWrite write = zfs::AcceptCompressed(policy, block.size(), raw.length);
  switch (write.kind) {
    case zfs::BlockKind::kHole:
    case zfs::BlockKind::kEmbedded:
      return {write, {}};
    case zfs::BlockKind::kUncompressed:
      return {write, block};
    case zfs::BlockKind::kCompressed:
      break;
  }
  // The output is in scratch's first raw.length bytes; psize <= lsize <= scratch.size().
  assert(raw.length && write.psize >= *raw.length && write.psize <= scratch.size());
  std::fill(scratch.begin() + static_cast<ptrdiff_t>(*raw.length),
            scratch.begin() + static_cast<ptrdiff_t>(write.psize), uint8_t{0});
  return {write, scratch.first(static_cast<size_t>(write.psize))};
}

}  // namespace zsim::codec
