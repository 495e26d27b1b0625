#include "engine/zfs/write_rules.h"

#include <algorithm>
#include <cassert>

namespace zsim::zfs {
namespace {

uint64_t RoundUp(uint64_t x, uint64_t align) { return (x + align - 1) / align * align; }

// How each release turns (lsize, c) into d_len and psize: docs/zfs_model.md §2.2, one row per
// Profile. The sources are module/zfs/zio.c (zio_write_compress, zio_compress_data before 2.3,
// zio_get_compression_max_size and zio_roundup_alloc_size after) as named per field.
struct CompressionRule {
  // v23 (zio_compress_data): d_len = P2ALIGN(lsize - lsize/8, 512), 0 -> not compressed.
  bool budget_aligned_to_512;
  // 2.3+ (zio_get_compression_max_size, commit 522f2629c8): d_len -= d_len % gcd_alloc, except
  // for zle; if then below min_alloc, d_len = BPE_PAYLOAD_SIZE (112).
  bool budget_aligned_to_gcd;
  // v23: psize = P2ROUNDUP(c, SPA_MINBLOCKSIZE) and never >= lsize (d_len < lsize).
  // 2.1: psize = P2ROUNDUP(c, spa_min_alloc), rejected if >= lsize.
  // 2.2+: zio_roundup_alloc_size: min_alloc if c <= min_alloc, else roundup(c, gcd_alloc),
  // rejected if >= lsize (GCD from commit d9bb583c25).
  enum class Rounding : uint8_t { kSector512, kMinAlloc, kMinAllocThenGcd } rounding;
};

constexpr CompressionRule kRules[] = {
    /* v23 */ {true, false, CompressionRule::Rounding::kSector512},
    /* 2.1 */ {false, false, CompressionRule::Rounding::kMinAlloc},
    /* 2.2 */ {false, false, CompressionRule::Rounding::kMinAllocThenGcd},
    /* 2.3 */ {false, true, CompressionRule::Rounding::kMinAllocThenGcd},
    /* 2.4 */ {false, true, CompressionRule::Rounding::kMinAllocThenGcd},
};
static_assert(sizeof(kRules) / sizeof(kRules[0]) == 5, "one row per Profile");

const CompressionRule& RuleFor(Profile profile) { return kRules[static_cast<size_t>(profile)]; }

// Embedded block pointers (feature embedded_data, 0.6.4+; zio_write_compress): not in v23, and
// with dedup=on only from 2.3.3 / 2.4.0 (commit 09f4dd06c3) and in Debian's 2.3.2 (the 2.3
// profile, see profile.h). Level-0 plain file data assumed.
bool EmbeddingAllowed(const WritePolicy& policy) {
  const ProfileRules& rules = RulesFor(policy.profile);
  return rules.has_embedded && (!policy.dedup || rules.embedded_with_dedup);
}

}  // namespace

WritePolicy DedupPolicyOf(Profile profile, const VdevLayout& vdev, int ashift) {
  WritePolicy p;
  p.profile = profile;
  p.geometry = GeometryFor(vdev, ashift);
  p.dedup = true;
  return p;
}

bool ZeroBlockIsHole(const WritePolicy& policy, Compression c) {
  // zio_write_compress / zio_compress_data: an all-zero block with compression on is a hole.
  if (c.algorithm != CompressionAlgorithm::kOff) return true;
  // 2.4.0 / 2.3.3: dmu_write_policy switches dedup + compression=off to "empty" (holes too).
  return policy.dedup && RulesFor(policy.profile).zero_hole_with_dedup_off;
}

bool ZeroBlockWrittenOnlyWithoutDedup(const WritePolicy& policy, Compression c) {
  WritePolicy with = policy, without = policy;
  with.dedup = true;
  without.dedup = false;
  return ZeroBlockIsHole(with, c) && !ZeroBlockIsHole(without, c);
}

bool EmbedsOnlyWithoutDedup(Profile profile) {
  const ProfileRules& rules = RulesFor(profile);
  return rules.has_embedded && !rules.embedded_with_dedup;
}

uint64_t CompressionBudget(const WritePolicy& policy, Compression c, uint64_t lsize) {
  if (c.algorithm == CompressionAlgorithm::kOff) return 0;
  const CompressionRule& rule = RuleFor(policy.profile);
  // The 12.5 % rule of every release: output must fit lsize - lsize/8.
  uint64_t d_len = lsize - lsize / 8;
  if (rule.budget_aligned_to_512) {
    return d_len / kMinBlockBytes * kMinBlockBytes;  // 512-byte blocks: 0, never compressed
  }
  if (rule.budget_aligned_to_gcd && c.algorithm != CompressionAlgorithm::kZle) {
    const uint64_t gcd = policy.geometry.gcd_alloc;
    d_len -= d_len % gcd;
    if (d_len < policy.geometry.min_alloc) d_len = kEmbeddedPayloadBytes;
  }
  return d_len;
}

BlockWrite AcceptCompressed(const WritePolicy& policy, uint64_t lsize,
                            std::optional<uint64_t> compressed_bytes) {
  // Compressor failure or overflow: stored uncompressed (compress=off in the BP, psize = lsize).
  if (!compressed_bytes || *compressed_bytes >= lsize) return {BlockKind::kUncompressed, lsize};
  const uint64_t c = *compressed_bytes;
  assert(c > 0);
  // Embedded: 0 < c <= BPE_PAYLOAD_SIZE, tested before any rounding (zio_write_compress).
  if (c <= kEmbeddedPayloadBytes && EmbeddingAllowed(policy)) return {BlockKind::kEmbedded, c};
  const uint64_t rounded = RoundedPsize(policy, c);
  if (rounded >= lsize) return {BlockKind::kUncompressed, lsize};
  return {BlockKind::kCompressed, rounded};
}

namespace {

// How `policy` rounds an output up (RoundedPsize): to `first` up to `first`, then to a multiple
// of `step`. v23: 512 bytes whatever the pool; 2.1 min_alloc; 2.2+ min_alloc, then gcd_alloc.
struct Rounding {
  uint64_t first = kMinBlockBytes;
  uint64_t step = kMinBlockBytes;
  friend bool operator==(const Rounding&, const Rounding&) = default;
};

Rounding RoundingOf(const WritePolicy& policy) {
  const PoolGeometry& g = policy.geometry;
  switch (RuleFor(policy.profile).rounding) {
    case CompressionRule::Rounding::kSector512:
      return {kMinBlockBytes, kMinBlockBytes};
    case CompressionRule::Rounding::kMinAlloc:
      return {g.min_alloc, g.min_alloc};
    case CompressionRule::Rounding::kMinAllocThenGcd:
      return {g.min_alloc, g.gcd_alloc};
  }
  return {g.min_alloc, g.min_alloc};
}

}  // namespace

uint64_t RoundedPsize(const WritePolicy& policy, uint64_t c) {
  const Rounding r = RoundingOf(policy);
  return c <= r.first ? r.first : RoundUp(c, r.step);
}

bool SamePsizeRounding(const WritePolicy& a, const WritePolicy& b) {
  return RoundingOf(a) == RoundingOf(b);
}

std::optional<BlockWrite> ReplayCompressed(const WritePolicy& scanned, const WritePolicy& policy,
                                           Compression c, uint64_t lsize,
                                           std::optional<uint64_t> raw) {
  const uint64_t budget = CompressionBudget(policy, c, lsize);
  // v23 does not call the compressor on a 512-byte block (budget 0).
  if (budget == 0) return BlockWrite{BlockKind::kUncompressed, lsize};
  const uint64_t then = CompressionBudget(scanned, c, lsize);
  bool fits = false;
  if (budget == then) {
    fits = raw.has_value();
  } else if (budget > then) {
    if (!raw) return std::nullopt;  // perhaps it fits the larger budget
    fits = true;
  } else {
    // A raw length above 112 is rounded up to 512: the output lies in (raw - 512, raw], and
    // above 112 (a shorter one is kept exact).
    const uint64_t least = !raw ? 0
                           : *raw <= kEmbeddedPayloadBytes
                               ? *raw
                               : std::max(*raw - 511, kEmbeddedPayloadBytes + 1);
    if (raw && least <= budget) return std::nullopt;  // perhaps short of the smaller budget
  }
  if (!fits) return BlockWrite{BlockKind::kUncompressed, lsize};
  return AcceptCompressed(policy, lsize, raw);
}

bool LeastBudgetKnown(Compression c) {
  return c.algorithm != CompressionAlgorithm::kZstd && c.algorithm != CompressionAlgorithm::kOff;
}

bool LeastBudgetKept(const WritePolicy& scan, Compression c, uint64_t lsize) {
  return LeastBudgetKnown(c) ||
         (c.algorithm == CompressionAlgorithm::kZstd && !ZstdEarlyAbortApplies(scan, c, lsize));
}

std::optional<BlockWrite> ReplayLeastBudget(const WritePolicy& policy, Compression c,
                                            uint64_t lsize, std::optional<uint64_t> length,
                                            uint64_t above, uint64_t at_most) {
  const uint64_t budget = CompressionBudget(policy, c, lsize);
  // v23 does not call the compressor on a 512-byte block (budget 0).
  if (budget == 0 || !length) return BlockWrite{BlockKind::kUncompressed, lsize};
  if (budget >= at_most || budget >= LargestCompressionBudget(lsize)) {
    return AcceptCompressed(policy, lsize, length);
  }
  if (budget > above) return std::nullopt;  // the smallest fitting budget may lie either side
  return BlockWrite{BlockKind::kUncompressed, lsize};
}

const char* ZeroBlockMismatch(const WritePolicy& scan, const WritePolicy& report, Compression c) {
  if (ZeroBlockIsHole(scan, c) != ZeroBlockIsHole(report, c) ||
      ZeroBlockWrittenOnlyWithoutDedup(scan, c) != ZeroBlockWrittenOnlyWithoutDedup(report, c)) {
    return "all-zero blocks are written otherwise (with dedup=on and compression=off they are "
           "holes from 2.3.3 and 2.4 on)";
  }
  return nullptr;
}

const char* ZstdEarlyAbortMismatch(const WritePolicy& scan, const WritePolicy& report,
                                   Compression c, uint64_t lsize) {
  const bool a = ZstdEarlyAbortApplies(scan, c, lsize);
  if (a != ZstdEarlyAbortApplies(report, c, lsize)) {
    return "zstd early abort (2.2 and later) decides what is compressed at 128K and above";
  }
  if (a && CompressionBudget(scan, c, lsize) != CompressionBudget(report, c, lsize)) {
    return "zstd early abort compares its lz4 pass against the compression budget, which "
           "follows the allocation unit (2.3 and later)";
  }
  return nullptr;
}

bool SameBlockWrites(const WritePolicy& a, const WritePolicy& b) {
  if (a.profile != b.profile || a.dedup != b.dedup) return false;
  const CompressionRule& rule = RuleFor(a.profile);
  const bool uses_geometry =
      rule.budget_aligned_to_gcd || rule.rounding != CompressionRule::Rounding::kSector512;
  return !uses_geometry || (a.geometry.min_alloc == b.geometry.min_alloc &&
                            a.geometry.gcd_alloc == b.geometry.gcd_alloc);
}

uint64_t PsizeRoundingUnit(const WritePolicy& policy) {
  switch (RuleFor(policy.profile).rounding) {
    case CompressionRule::Rounding::kSector512:
      return kMinBlockBytes;
    case CompressionRule::Rounding::kMinAlloc:  // AcceptCompressed: up to min_alloc
      return policy.geometry.min_alloc;
    case CompressionRule::Rounding::kMinAllocThenGcd:  // min_alloc, then steps of gcd_alloc
      return std::max(policy.geometry.min_alloc, policy.geometry.gcd_alloc);
  }
  return policy.geometry.min_alloc;
}

bool ZstdEarlyAbortApplies(const WritePolicy& policy, Compression c, uint64_t lsize) {
  // zfs_zstd_compress_buf (2.2.0+): zstd_earlyabort_pass = 1, zstd_cutoff_level = 3 (the test
  // is level >= 3, so never zstd-1/2 or zstd-fast), zstd_abort_size = 128K.
  return RulesFor(policy.profile).zstd_early_abort && ZstdEarlyAbortLevel(c) &&
         lsize >= kZstdEarlyAbortBytes;
}

bool ZstdEarlyAbortLevel(Compression c) {
  return c.algorithm == CompressionAlgorithm::kZstd && c.level >= 3;
}

}  // namespace zsim::zfs
