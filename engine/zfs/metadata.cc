#include "engine/zfs/metadata.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/microzap.h"
#include "engine/zfs/pool_overhead.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/write_rules.h"

namespace zsim::zfs {
namespace {

// Fitted on zfs-fuse 0.7.0 (pool v23, lzjb metadata); see docs/space_model.md.
constexpr double kDnodeBlockHeaderBytes = 64;
// A dnode block compresses to 101.5 B per used dnode, plus 38 B for a file with an indirect
// block (its dnode holds an L1 block pointer and a level count): fitted on the suite's source
// tree at 128K (59 multi-block files of 4507) and 8K (1413), database at 16K within 4 %.
constexpr double kCompressedBytesPerDnode = 101.5;
constexpr double kCompressedBytesPerIndirectFile = 38;
// From 0.7 (lz4 metadata, the SA bonus of zfs_mknode): DnodeBlockRawBytes. The mean psize per
// dnode (zdb -bbb, ashift 9) ranged from 56 B (database: 17 % of its files empty, 37 % embedded)
// to 84 B (source: 97 % with a block pointer); a file's indirect blocks add nothing visible.
constexpr double kDnodeBlockBytesLz4 = 280;
constexpr double kDnodeBlkptrBytesLz4 = 66;
constexpr double kEmbeddedPayloadShareLz4 = 0.35;
constexpr double kEmbeddedPayloadShareZstd = 0.6;
constexpr double kEmbeddedPayloadShareOther = 0.85;  // gzip (fitted), lzjb, zle (assumed)
// Of the ZPL's kExtraObjectsSa fixed objects, the ones whose dnode holds a block pointer: the
// master node, the SA registration and the SA layouts (zdb -ddddd on 2.3.2).
constexpr uint64_t kExtraObjectsWithBlkptr = 3;
// A block pointer compresses to its random parts: the 32-byte checksum and the DVAs' offsets.
// v23 (lzjb), fitted: 46 B with one DVA (data L1s of source 8K and database 16K within 0.4 %),
// 62 B with three (MOS, DDT ZAP indirects).
constexpr double kCompressedBpBaseBytes = 38;
constexpr double kCompressedBpBytesPerDva = 8;
// From 0.7 (lz4), refitted on OpenZFS 2.3.2 (zdb -ddddd psize and fill of every L1 at ashift 9:
// 329 of database 16K, 841 of source 16K, and the meta-dnode's L1s): 70 B per block + 34 B per
// block pointer + 8 per DVA. The flat 46 B per one-DVA pointer put a 1,024-pointer L1 at 47,104
// bytes where OpenZFS wrote 41,984 (database 16K: +9 KiB over 329 L1s, a compressratio step on
// gzip-6 at ashift 9) and an 11-pointer L1 at 1,024 where it wrote 1,536 (source: -5 KiB).
constexpr double kLz4IndirectBlockBytes = 70;
constexpr double kLz4CompressedBpBaseBytes = 34;
// lzjb encodes a run of zeros as 2-byte matches of at most 66 bytes plus a copy-map bit each:
// the unused part of an indirect block costs 530 B per 16K (a 16K L1 holding 2 block pointers
// is 1K compressed: measured on all 59 L1s of source 128K).
constexpr double kLzjbZeroRunBytesPerByte = 530.0 / 16384.0;
// lz4 (2.x metadata) extends a match by 255 bytes per length byte (not measured).
constexpr double kLz4ZeroRunBytesPerByte = 1.0 / 255.0;
constexpr double kMicrozapHeaderBytes = 64;
// A micro-ZAP entry compresses to a part of its name and value bytes: real trees' names share
// prefixes and extensions (the suite's source and database trees, 241 directories at ashift 9:
// 64 + 4 per entry + 0.7 per name byte gives their total exactly, 4K off in 168K per block);
// the random names of r9 cost more (8 + 1.0), sequential ones less (~6 per entry, m1, m2).
constexpr double kMicrozapBytesPerEntry = 4;
constexpr double kMicrozapBytesPerNameByte = 0.7;
constexpr uint64_t kDnodesPerBlock = 32;  // 512-byte dnodes in 16K blocks
constexpr uint64_t kDnodeBlockBytes = 16 << 10;
constexpr uint64_t kExtraObjects = 4;  // slot 0, master node, delete queue, shares dir
// From 0.7: also the SA master node, SA registration and SA layouts (zdb -dd on 2.3.2).
constexpr uint64_t kExtraObjectsSa = 7;
// v23: objset, master node, delete queue, 2 user/group, shares
constexpr int kFixedSmallBlocks = 6;

uint64_t DivRoundUp(uint64_t n, uint64_t d) { return (n + d - 1) / d; }

// Compressed size of an indirect block holding `bps` block pointers of `child_dvas` DVAs each,
// before rounding.
double IndirectRawBytes(Profile profile, double bps, int child_dvas) {
  const int shift = RulesFor(profile).indirect_block_shift;
  const double bytes = static_cast<double>(uint64_t{1} << shift);
  const double zeros = std::max(0.0, bytes - 128.0 * bps);
  if (profile == Profile::kV23) {
    return (kCompressedBpBaseBytes + kCompressedBpBytesPerDva * child_dvas) * bps +
           kLzjbZeroRunBytesPerByte * zeros;
  }
  return kLz4IndirectBlockBytes +
         (kLz4CompressedBpBaseBytes + kCompressedBpBytesPerDva * child_dvas) * bps +
         kLz4ZeroRunBytesPerByte * zeros;
}

uint64_t RoundUp(uint64_t n, uint64_t d) { return DivRoundUp(n, d) * d; }

}  // namespace

MetadataTally::MetadataTally(const MetadataContext& context)
    : context_(context),
      alloc_(AllocationModel::For(context.vdev, context.ashift)),
      special_alloc_(AllocationModel::For(VdevLayout{VdevKind::kMirror, 0, 2, 0}, context.ashift)),
      write_policy_{context.profile, GeometryFor(context.vdev, context.ashift), /*dedup=*/false},
      special_policy_{context.profile,
                      GeometryFor(VdevLayout{VdevKind::kMirror, 0, 2, 0}, context.ashift),
                      /*dedup=*/false},
      special_rounds_alike_(
          write_policy_.geometry.min_alloc == special_policy_.geometry.min_alloc &&
          write_policy_.geometry.gcd_alloc == special_policy_.geometry.gcd_alloc) {}

void MetadataTally::AddBlock(double lsize, double raw_psize, int copies, Space* into,
                             bool embeddable) const {
  // zio_write_compress treats a metadata block's compressed size as a data block's
  // (AcceptCompressed): rounded to 512 in v23, to the pool's allocation size from 2.1 (a 1K
  // indirect block takes 4K at ashift 12), kept whole when that does not save space. Only a
  // level-0 block of a type without fill counts may be embedded (a small micro-ZAP directory),
  // never an indirect or dnode block: those round as a 113-byte output would.
  const uint64_t c = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(raw_psize)));
  const auto write = [&](const WritePolicy& policy) {
    BlockWrite w = AcceptCompressed(policy, static_cast<uint64_t>(lsize), c);
    if (w.kind == BlockKind::kEmbedded && !embeddable) {
      w = AcceptCompressed(policy, static_cast<uint64_t>(lsize), kEmbeddedPayloadBytes + 1);
    }
    return w;
  };
  const BlockWrite w = write(write_policy_);
  if (w.kind == BlockKind::kEmbedded) {
    into->lsize += lsize;  // in the block pointer: no psize, no allocation
    return;
  }
  const uint64_t psize = w.psize;
  const BlockSpace s = alloc_.Block(psize, copies);
  into->lsize += lsize;
  into->psize += static_cast<double>(psize);  // one copy: what ds_compressed_bytes counts
  into->asize += static_cast<double>(s.asize);
  into->dsize += static_cast<double>(s.dsize);
  const BlockWrite special = special_rounds_alike_ ? w : write(special_policy_);
  if (special.kind != BlockKind::kEmbedded) {
    into->special_dsize += static_cast<double>(special_alloc_.Block(special.psize, copies).dsize);
  }
}

void MetadataTally::AddBlockSpread(double lsize, double raw_psize, int copies, Space* into) const {
  constexpr int kSteps = 8;
  constexpr double kSpread = 512;
  Space part;
  for (int i = 0; i < kSteps; ++i) {
    const double raw = std::max(1.0, raw_psize + (i + 0.5) / kSteps * kSpread - kSpread / 2);
    AddBlock(lsize, raw, copies, &part);
  }
  into->lsize += part.lsize / kSteps;
  into->psize += part.psize / kSteps;
  into->asize += part.asize / kSteps;
  into->dsize += part.dsize / kSteps;
  into->special_dsize += part.special_dsize / kSteps;
}

void MetadataTally::AddFile(uint64_t block_slots, uint64_t data_blocks,
                            std::span<const uint64_t> indirects) {
  ++files_;
  if (data_blocks != 0) ++data_files_;
  if (block_slots <= 1 || data_blocks == 0) return;  // the blkptr lives in the dnode
  const int shift = RulesFor(context_.profile).indirect_block_shift;
  const uint64_t ind_bytes = uint64_t{1} << shift;
  const uint64_t per_indirect = ind_bytes / 128;
  const int mcopies = MetadataCopies(context_.copies);
  uint64_t slots = block_slots;
  uint64_t filled = data_blocks;
  int child_dvas = context_.copies;  // L1s point at data blocks, higher levels at indirects
  ++indirect_files_;
  for (size_t level = 0; slots > 1; ++level) {
    // Indirects covering only holes are not written (indirect_ranges.h): their number per level
    // as the read stage counted it, else (not known) as many as the ranges and blocks allow,
    // as if the data were spread over the whole file. Within them, full indirects first, the
    // remainder spread over the rest. An indirect block's unused block pointers are zeros,
    // which lzjb still spends bytes on.
    const uint64_t most = std::min(DivRoundUp(slots, per_indirect), filled);
    const uint64_t n = level < indirects.size()
                           ? std::clamp(indirects[level], DivRoundUp(filled, per_indirect), most)
                           : most;
    auto indirect_raw = [&](double bps) {
      return IndirectRawBytes(context_.profile, bps, child_dvas);
    };
    // Full ones only as far as every other one keeps a block pointer (n <= filled): for
    // contiguous data, all but the last.
    const uint64_t full = std::min({n, filled / per_indirect, (filled - n) / (per_indirect - 1)});
    for (uint64_t i = 0; i < full; ++i) {
      AddBlock(static_cast<double>(ind_bytes), indirect_raw(static_cast<double>(per_indirect)),
               mcopies, &variable_);
    }
    if (n > full) {
      const double rest = static_cast<double>(filled - full * per_indirect) / (n - full);
      for (uint64_t i = full; i < n; ++i) {
        AddBlock(static_cast<double>(ind_bytes), indirect_raw(rest), mcopies, &variable_);
      }
    }
    slots = DivRoundUp(slots, per_indirect);
    filled = n;
    child_dvas = mcopies;
  }
}

void MetadataTally::AddDirectory(uint64_t entries, uint64_t name_bytes, uint64_t longest_name,
                                 uint64_t microzap_lz4_bytes) {
  ++directories_;
  const int mcopies = MetadataCopies(context_.copies);
  if (IsMicrozap(entries, longest_name)) {
    // The block compressed as it is written (microzap.h), from 0.7 where metadata is lz4 and
    // the scan measured it; else (v23's lzjb, a state without it) the fit.
    const bool measured = microzap_lz4_bytes != 0 && context_.profile != Profile::kV23;
    AddBlock(static_cast<double>(MicrozapBlockBytes(entries)),
             measured
                 ? static_cast<double>(microzap_lz4_bytes)
                 : kMicrozapHeaderBytes + kMicrozapBytesPerEntry * static_cast<double>(entries) +
                       kMicrozapBytesPerNameByte * static_cast<double>(name_bytes),
             mcopies, &variable_, /*embeddable=*/true);
    return;
  }
  // Fat ZAP: 16K header + leaves; an entry = 1 + ceil((name + 1) / 21) + 1 chunks.
  const uint64_t avg_name = entries ? name_bytes / entries : 0;
  const int chunks = static_cast<int>(2 + DivRoundUp(avg_name + 1, 21));
  const uint64_t leaves = ExpectedZapLeaves(entries, chunks, ZapLeafChunks(14));
  AddBlock(16384, 1024, mcopies, &variable_);
  for (uint64_t i = 0; i < leaves; ++i) {
    // Not measured: half the leaf's used bytes, names assumed half compressible.
    const double used = static_cast<double>(entries) / static_cast<double>(leaves) * chunks * 24;
    AddBlock(16384, 512 + used * 0.5, mcopies, &variable_);
  }
  (void)name_bytes;
}

void MetadataTally::SetEmbedded(uint64_t blocks, uint64_t payload_bytes, Compression compression) {
  embedded_files_ = std::min(blocks, data_files_);
  embedded_payload_bytes_ = payload_bytes;
  embedded_compression_ = compression;
}

double DnodeBlockRawBytes(double dnodes, double with_blkptr, double embedded_payload_bytes,
                          Compression compression) {
  (void)dnodes;  // empty and all-hole files' dnodes: nothing measurable (see the header)
  const double share =
      compression.algorithm == CompressionAlgorithm::kLz4    ? kEmbeddedPayloadShareLz4
      : compression.algorithm == CompressionAlgorithm::kZstd ? kEmbeddedPayloadShareZstd
                                                             : kEmbeddedPayloadShareOther;
  return kDnodeBlockBytesLz4 + kDnodeBlkptrBytesLz4 * with_blkptr + share * embedded_payload_bytes;
}

MetadataTally::Space MetadataTally::Fixed() const {
  Space s;
  const int mcopies = MetadataCopies(context_.copies);
  const uint64_t objects =
      files_ + directories_ + (context_.profile == Profile::kV23 ? kExtraObjects : kExtraObjectsSa);
  const uint64_t blocks = DivRoundUp(objects, kDnodesPerBlock);
  // Files with indirects are spread evenly over the blocks; each block's compressed size varies
  // by a few hundred bytes with its dnodes, so its rounding to 512 is averaged.
  const double indirect_share =
      objects ? static_cast<double>(indirect_files_) / static_cast<double>(objects) : 0.0;
  const bool v23 = context_.profile == Profile::kV23;
  const double per_dnode_v23 =
      kCompressedBytesPerDnode + kCompressedBytesPerIndirectFile * indirect_share;
  // From 0.7: the dnodes that hold a block pointer (files with data whose block is not
  // embedded, directories, a few fixed objects) and the embedded payload, spread evenly.
  const double n = objects ? static_cast<double>(objects) : 1.0;
  const double blkptr_share =
      static_cast<double>(data_files_ - embedded_files_ + directories_ + kExtraObjectsWithBlkptr) /
      n;
  const double payload_per_dnode = static_cast<double>(embedded_payload_bytes_) / n;
  for (uint64_t b = 0; b < blocks; ++b) {
    const uint64_t used = std::min(kDnodesPerBlock, objects - b * kDnodesPerBlock);
    const double u = static_cast<double>(used);
    const double raw = v23 ? kDnodeBlockHeaderBytes + per_dnode_v23 * u
                           : DnodeBlockRawBytes(u, std::min(u, blkptr_share * u),
                                                payload_per_dnode * u, embedded_compression_);
    AddBlockSpread(kDnodeBlockBytes, raw, mcopies, &s);
  }
  // Meta-dnode indirects: 16K in v23 (7 levels), 128K later (6 levels: zdb -dd on 2.3.2).
  const uint64_t per_indirect = (v23 ? 16384 : 131072) / 128;
  const int levels = v23 ? 6 : 5;
  uint64_t below = blocks;
  for (int level = 0; level < levels; ++level) {
    const uint64_t n = DivRoundUp(below, per_indirect);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t bps = std::min(per_indirect, below - i * per_indirect);
      AddBlock(v23 ? 16384 : 131072,
               IndirectRawBytes(context_.profile, static_cast<double>(bps), mcopies), mcopies, &s);
    }
    below = n;
  }
  if (v23) {
    for (int i = 0; i < kFixedSmallBlocks; ++i) AddBlock(512, 512, mcopies, &s);
    return s;
  }
  // The ZPL's fixed objects from 0.7 on, as zdb -bbb shows them on a new OpenZFS 2.3.2
  // filesystem (ashift 9 psizes; zfs_create_fs, sa_setup): the 4K objset block (it holds the
  // user/group/project-used dnodes), the master node, the SA attribute registry and the two
  // 16K blocks of the SA layouts ZAP. The delete queue, SA master node, shares directory and
  // the three space-accounting ZAPs are micro-ZAPs small enough to be embedded.
  AddBlock(4096, 512, mcopies, &s);                                // objset
  AddBlock(512, 512, mcopies, &s);                                 // master node
  AddBlock(1536, 512, mcopies, &s);                                // SA registration
  for (int i = 0; i < 2; ++i) AddBlock(16384, 2048, mcopies, &s);  // SA layouts
  return s;
}

uint64_t MetadataTally::DatasetMetadataDsize() const {
  return static_cast<uint64_t>(Fixed().dsize + variable_.dsize);
}
uint64_t MetadataTally::DatasetMetadataAsize() const {
  return static_cast<uint64_t>(Fixed().asize + variable_.asize);
}
uint64_t MetadataTally::MetadataLsize() const {
  return static_cast<uint64_t>(Fixed().lsize + variable_.lsize);
}
uint64_t MetadataTally::MetadataPsize() const {
  return static_cast<uint64_t>(Fixed().psize + variable_.psize);
}
uint64_t MetadataTally::SpecialVdevMetadataDsize() const {
  return static_cast<uint64_t>(Fixed().special_dsize + variable_.special_dsize);
}

uint64_t IndirectBlockPsize(Profile profile, uint64_t block_pointers, int child_dvas) {
  const uint64_t bytes = uint64_t{1} << RulesFor(profile).indirect_block_shift;
  const double raw = IndirectRawBytes(profile, static_cast<double>(block_pointers), child_dvas);
  return std::min<uint64_t>(RoundUp(static_cast<uint64_t>(std::ceil(raw)), 512), bytes);
}

uint64_t PoolOverheadAsize(const MetadataContext& context, uint64_t allocated_bytes) {
  const AllocationModel alloc = AllocationModel::For(context.vdev, context.ashift);
  const double mos_block = static_cast<double>(alloc.Asize(512)) * kMosCopies;
  // Space maps grow with the metaslabs touched; on the 6 GiB calibration pools that showed as
  // a term proportional to the allocated space, capped here because a metaslab's space map
  // stays small however much of it is allocated (not measured on large pools).
  const double per_byte = context.ashift >= 12 ? 0.00086 : 0.0003;
  const double grown = static_cast<double>(std::min<uint64_t>(allocated_bytes, 256ull << 20));
  return static_cast<uint64_t>(38.5 * mos_block + 49000 + per_byte * grown);
}

uint64_t PoolAllocated(const MetadataContext& context, uint64_t data_asize_deduplicated,
                       uint64_t metadata_asize, uint64_t ddt_asize, const PoolDdt& ddt) {
  uint64_t inner = data_asize_deduplicated + metadata_asize + ddt_asize;
  if (RulesFor(context.profile).has_fast_dedup) {
    // Measured on OpenZFS 2.3.2 (pool_overhead.h); the 2.4 MOS holds the same objects.
    PoolDdt shape = ddt;
    shape.present = shape.present || ddt_asize != 0;
    return inner + MosOverheadAsize(context.vdev, context.ashift, shape);
  }
  if (ddt_asize != 0) {
    // The DDT statistics object: 2 blocks of about 1.75K compressed, 3 copies (measured).
    const AllocationModel alloc = AllocationModel::For(context.vdev, context.ashift);
    inner += 2 * kMosCopies * alloc.Asize(1792);
  }
  return inner + PoolOverheadAsize(context, inner);
}

}  // namespace zsim::zfs
