#include "engine/pipeline/block_code.h"

#include "engine/codec/zfs_block.h"

namespace zsim::pipeline {

zfs::WritePolicy ScanWritePolicy(const ScanOptions& options) {
  return zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift);
}

ddt::PsizeCode RawBlockCode(const zfs::WritePolicy& policy, Compression comp, ByteView block,
                            bool is_zero, codec::Compressor& compressor, MutableByteView scratch,
                            state::CodeKind kind) {
  // What the compressor produced, whatever the pool: the report settles it. lzjb, zle, lz4,
  // gzip and zstd without early abort under the largest budget, with the least budget their
  // output fits.
  if (state::KeepsLeastBudget(kind, policy, comp, block.size())) {
    const codec::LeastBudgetOutcome out =
        codec::LeastBudgetZfsCompress(policy, comp, block, is_zero, compressor, scratch);
    if (out.hole) return ddt::kHoleCode;
    if (!out.fit) return ddt::kNoFitCode;
    return ddt::EncodeLeastBudget(out.fit->length, out.fit->least_budget);
  }
  const codec::RawOutcome raw =
      codec::RawZfsCompress(policy, comp, block, is_zero, compressor, scratch);
  return raw.hole ? ddt::kHoleCode : ddt::EncodeRawLength(raw.length);
}

}  // namespace zsim::pipeline
