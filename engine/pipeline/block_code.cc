#include "engine/pipeline/block_code.h"

#include "engine/codec/zfs_block.h"

namespace zsim::pipeline {

zfs::WritePolicy ScanWritePolicy(const ScanOptions& options) {
  zfs::WritePolicy policy;
  policy.profile = options.profile;
  policy.geometry = zfs::GeometryFor(options.vdev, options.ashift);
  policy.dedup = true;
  return policy;
}

ddt::PsizeCode RawBlockCode(const zfs::WritePolicy& policy, Compression comp, ByteView block,
                            bool is_zero, codec::Compressor& compressor, MutableByteView scratch) {
  // What the compressor produced, whatever the pool: the report settles it.
  const codec::RawOutcome raw =
      codec::RawZfsCompress(policy, comp, block, is_zero, compressor, scratch);
  return raw.hole ? ddt::kHoleCode : ddt::EncodeRawLength(raw.length);
}

}  // namespace zsim::pipeline
