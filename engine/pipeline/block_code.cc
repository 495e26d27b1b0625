#include "engine/pipeline/block_code.h"

#include <algorithm>
#include <cassert>

#include "engine/codec/gzip.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/finish/settled_codes.h"

namespace zsim::pipeline {

zfs::WritePolicy ScanWritePolicy(const ScanOptions& options) {
  return zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift);
}

BlockCodes CodeBlock(const zfs::WritePolicy& policy, Compression comp, ByteView block, bool is_zero,
                     codec::Compressor& compressor, MutableByteView scratch, state::CodeKind kind,
                     bool with_probe) {
  // What the compressor produced, whatever the pool: the report settles it.
  if (kind == state::CodeKind::kEarlyAbort && comp.algorithm == CompressionAlgorithm::kZstd) {
    // zstd under the largest budget with its least budget, and early abort's (2.2+, level 3 and
    // up, 128K and more) whatever the scan's profile: a report may ask either.
    if (is_zero && zfs::ZeroBlockIsHole(policy, comp))
      return {ddt::kHoleCode, ddt::kHoleCode, std::nullopt};
    const std::optional<codec::Compressor::Fit> fit =
        codec::ZstdLeastBudget(comp, block, compressor, scratch);
    BlockCodes out;
    out.code = fit ? ddt::EncodeLeastBudget(fit->length, fit->least_budget) : ddt::kNoFitCode;
    if (with_probe && state::HasProbe(kind, comp)) {
      out.probe = EarlyAbortCode(block, out.code, compressor, scratch);
    }
    return out;
  }
  // lzjb, zle, lz4, gzip (and zstd without early abort in a format-9 table) under the largest
  // budget, with the least budget their output fits.
  if (state::KeepsLeastBudget(kind, policy, comp, block.size())) {
    const codec::LeastBudgetOutcome out =
        codec::LeastBudgetZfsCompress(policy, comp, block, is_zero, compressor, scratch);
    if (out.hole) return {ddt::kHoleCode, ddt::kHoleCode, std::nullopt};
    if (!out.fit) return {ddt::kNoFitCode, ddt::kHoleCode, std::nullopt};
    return {ddt::EncodeLeastBudget(out.fit->length, out.fit->least_budget), ddt::kHoleCode,
            out.fit};
  }
  const codec::RawOutcome raw =
      codec::RawZfsCompress(policy, comp, block, is_zero, compressor, scratch);
  return {raw.hole ? ddt::kHoleCode : ddt::EncodeRawLength(raw.length), ddt::kHoleCode,
          std::nullopt};
}

bool WritesZfsBytes(Compression c) {
  return c.algorithm != CompressionAlgorithm::kGzip || codec::GzipWritesReferenceBytes();
}

std::optional<uint64_t> WrittenKeyWord(const zfs::WritePolicy& policy, uint64_t lsize,
                                       const BlockCodes& codes, MutableByteView scratch) {
  if (!codes.fit) return std::nullopt;
  const uint64_t length = codes.fit->length;
  const uint64_t rounded = zfs::RoundedPsize(policy, length);
  if (rounded >= lsize) return std::nullopt;
  assert(rounded <= scratch.size());
  // zio_write_compress zeroes the rounded tail before the checksum (codec::WriteZfsBlock).
  std::fill(scratch.begin() + static_cast<ptrdiff_t>(length),
            scratch.begin() + static_cast<ptrdiff_t>(rounded), uint8_t{0});
  return ddt::ZfsChecksumWord0(
      ddt::ComputeFingerprint(ChecksumKind::kSha256, scratch.first(static_cast<size_t>(rounded))));
}

ddt::PsizeCode EarlyAbortCode(ByteView block, ddt::PsizeCode code, codec::Compressor& compressor,
                              MutableByteView scratch, codec::EarlyAbortProbes* probes) {
  if (block.size() < zfs::kZstdEarlyAbortBytes || code == ddt::kHoleCode) return ddt::kHoleCode;
  if (code == ddt::kNoFitCode) return ddt::kNoFitCode;
  // zstd's own least budget as its code keeps it (the class is all early abort's answer needs).
  const ddt::LeastBudget own = ddt::LeastBudgetOf(code);
  const codec::Compressor::Fit fit{
      static_cast<size_t>(*own.length),
      static_cast<size_t>(std::min(own.at_most, zfs::LargestCompressionBudget(block.size())))};
  codec::EarlyAbortProbes alone;  // where the caller keeps none: this setting's own
  return ddt::EncodeProbe(
      (probes != nullptr ? *probes : alone).LeastBudget(block, fit, compressor, scratch));
}

void SeedLz4Probe(Compression comp, const BlockCodes& codes, codec::EarlyAbortProbes* probes) {
  // Only an output under the largest budget (a least-budget table's) is the probe's own run; an
  // lz4 that did not fit is left for the probe to run again (rare: incompressible blocks), as a
  // "did not fit" of another table kind may be under a smaller budget.
  if (comp.algorithm == CompressionAlgorithm::kLz4 && codes.fit) probes->SetLz4(codes.fit);
}

BlockCodes CodeBlockOfKind(const zfs::WritePolicy& policy, Compression comp, ByteView block,
                           bool is_zero, codec::Compressor& compressor, MutableByteView scratch,
                           state::CodeKind kind) {
  if (kind == state::CodeKind::kEarlyAbort || kind == state::CodeKind::kLeastBudgetZstd ||
      kind == state::CodeKind::kLeastBudget) {
    return CodeBlock(policy, comp, block, is_zero, compressor, scratch, kind, false);
  }
  if (kind == state::CodeKind::kRaw) {
    const codec::RawOutcome raw =
        codec::RawZfsCompress(policy, comp, block, is_zero, compressor, scratch);
    return {raw.hole ? ddt::kHoleCode : ddt::EncodeRawLength(raw.length), ddt::kHoleCode,
            std::nullopt};
  }
  return {finish::SettledCodeOf(
              codec::CompressZfsBlock(policy, comp, block, is_zero, compressor, scratch)),
          ddt::kHoleCode, std::nullopt};
}

}  // namespace zsim::pipeline
