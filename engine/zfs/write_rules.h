// engine/zfs/write_rules.h
//
// What ZFS does between a logical block and the psize it stores (docs/zfs_model.md §2.2): the
// budget handed to the compressor, the acceptance rule, psize rounding, embedded block pointers and
// all-zero blocks. Pure functions; the compressors themselves live in engine/codec, and
// codec/zfs_block.h joins the two.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_WRITE_RULES_H_
#define ZSIM_ENGINE_ZFS_WRITE_RULES_H_

#include <cstdint>
#include <optional>

#include "engine/zfs/profile.h"

namespace zsim::zfs {

// Allocation granularity that compression rounding follows (module/zfs/vdev.c:
// vdev_spa_set_alloc): min_alloc = smallest allocation of any normal-class top-level vdev
// (1 << ashift; dRAID: data disks << ashift); gcd_alloc = their GCD (2.2+).
struct PoolGeometry {
  uint64_t min_alloc = 4096;
  uint64_t gcd_alloc = 4096;
  int ashift = 12;
};
PoolGeometry GeometryFor(const VdevLayout& vdev, int ashift);

// The pool/dataset facts the write path depends on.
struct WritePolicy {
  Profile profile = Profile::kZfs24;
  PoolGeometry geometry;
  bool dedup = true;  // dataset has dedup=on (embedding before 2.3.3, zero blocks with off)
};

// The dedup=on write policy of a scan's or report's profile, vdev and ashift.
WritePolicy DedupPolicyOf(Profile profile, const VdevLayout& vdev, int ashift);

// Values appear in --json output (block counts): append only, never rename.
enum class BlockKind : uint8_t {
  kHole,          // nothing allocated, no DDT entry
  kEmbedded,      // data inside the block pointer: no allocation, no DDT entry
  kCompressed,    // allocated, psize < lsize
  kUncompressed,  // allocated, psize == lsize
};

struct BlockWrite {
  BlockKind kind = BlockKind::kHole;
  // 0 for a hole; the payload bytes c for an embedded block (ZFS accounts 0 for it, see
  // docs/zfs_model.md §2.2 "Accounting of embedded blocks"); the rounded compressed size; or lsize.
  uint64_t psize = 0;
};

// True if an all-zero logical block becomes a hole under `c` (docs/zfs_model.md §1 "Holes"):
// compression != off, or (dedup=on and the profile has the 2.4/2.3.3 "empty" rule).
bool ZeroBlockIsHole(const WritePolicy& policy, Compression c);

// True if an all-zero block is a hole on the dedup=on write path but written as data with
// dedup=off (compression=off on 2.3.3/2.4: dmu_write_policy() in module/zfs/dmu.c switches
// compression off to "empty" only when dedup is on, docs/zfs_model.md §1 "Holes"). The no-dedup
// figures (`used`) must then count such blocks. `policy.dedup` is ignored.
bool ZeroBlockWrittenOnlyWithoutDedup(const WritePolicy& policy, Compression c);

// True when `profile` embeds small blocks in their block pointers with dedup=off but never with
// dedup=on (2.1 and 2.2: feature embedded_data, but zio_write_compress skips embedding for a
// dedup write until commit 09f4dd06c3, 2.3.3 / 2.4.0): a block whose compressed output is
// kEmbeddedPayloadBytes or less takes an allocation with dedup and none without. The no-dedup
// figures (`used`) must then count such blocks as embedded.
bool EmbedsOnlyWithoutDedup(Profile profile);

// The d_len ZFS hands to the compressor for a block of `lsize` (§2.2 table, per profile).
// 0 means the compressor is not called at all (v23: 512-byte blocks).
uint64_t CompressionBudget(const WritePolicy& policy, Compression c, uint64_t lsize);

// Turns the compressor's answer into what ZFS stores. `compressed_bytes` is the compressor's
// output length (including ZFS's lz4/zstd header) or nullopt if it failed or did not fit the
// budget. REQUIRES: c is not off; the block is not all zero (see ZeroBlockIsHole).
BlockWrite AcceptCompressed(const WritePolicy& policy, uint64_t lsize,
                            std::optional<uint64_t> compressed_bytes);

// The psize an output of `c` bytes (not embedded) is rounded up to under `policy`, before
// AcceptCompressed compares it with lsize: zio_write_compress (module/zfs/zio.c) rounds with
// zio_roundup_alloc_size in 2.2 and later (min_alloc up to min_alloc, then multiples of
// gcd_alloc), P2ROUNDUP to spa_min_alloc in 2.1, to SPA_MINBLOCKSIZE (512) in v23; and zeroes
// the bytes between the output and the rounded psize before the checksum is taken.
uint64_t RoundedPsize(const WritePolicy& policy, uint64_t c);

// True when `a` and `b` round every output alike (RoundedPsize): a block that compresses under
// both writes the same bytes, so has the same checksum and DDT key.
bool SamePsizeRounding(const WritePolicy& a, const WritePolicy& b);

// What ZFS stores under `policy` for a block of `lsize` (not all zero) written with `c` (not off),
// given what the compressor did under `scanned`'s budget (state format 7, ddt/dedup_table.h raw
// codes): `raw` bytes of output, or nullopt when it did not fit that budget (or failed, or was not
// called). `raw` may be rounded up to a multiple of 512 above kEmbeddedPayloadBytes: every
// rounding unit is such a multiple. Nullopt when the answer is not known from these: the
// compressors give up short of their budget's end (lz4 and lzjb keep room for a worst-case step,
// zstd needs room for its intermediate steps; the OpenZFS edge vectors in tests/golden show
// outputs of 111 bytes refused by a 112-byte budget), so an output known to fit one budget may or
// may not fit a smaller one, and one that did not fit may fit a larger one. Known: the same
// budget; a larger one after a fit (the same output, more room); a smaller one after no fit, or
// smaller than the output. With policy == scanned the answer is what CompressZfsBlock gives.
std::optional<BlockWrite> ReplayCompressed(const WritePolicy& scanned, const WritePolicy& policy,
                                           Compression c, uint64_t lsize,
                                           std::optional<uint64_t> raw);

// The largest budget any release hands the compressor for a block of `lsize`: lsize - lsize/8
// (every other budget is this one aligned down, or 112 bytes, or 0: §2.2).
inline uint64_t LargestCompressionBudget(uint64_t lsize) { return lsize - lsize / 8; }

// A bound under every budget CompressionBudget gives a block of `lsize` but 0 and 112 bytes,
// whatever the profile, ashift and vdev: each other budget B is the largest one, d, aligned down
// to 512 bytes (v23) or to gcd_alloc (2.3+) and then at least min_alloc >= gcd_alloc, so
// B > d - gcd_alloc and B >= gcd_alloc, hence 2B > d; and d - 511 > d / 2 from d = 1K on.
// An early-abort probe that lets a block through at this budget lets it through at every budget
// ZFS computes above 112 bytes (codec/zfs_block.h EarlyAbortLeastBudget).
inline uint64_t LeastLargeCompressionBudget(uint64_t lsize) {
  return LargestCompressionBudget(lsize) / 2 + 1;
}

// True for the compressors whose smallest fitting budget a scan keeps (state format 8,
// ddt/dedup_table.h least-budget codes; codec::Compressor::CompressFit): lzjb, zle, lz4 and gzip.
// zstd's intermediate steps need room that only trying a budget shows: it keeps raw codes.
bool LeastBudgetKnown(Compression c);

// True when a scan of state format 9 keeps a least-budget code for a block of `lsize` written
// with `c` under the scan's policy `scan`: LeastBudgetKnown(c), and zstd where early abort does
// not apply under `scan` (blocks under 128K, levels below 3, 2.1): zstd's least budget is found
// by runs at the budgets near its output (codec/zfs_block.h ZstdLeastBudget). Where early abort
// applies, zstd keeps its raw output under the scan's budget: whether the lz4 and zstd-1 probes
// pass depends on their own least budgets, which one 2-byte code cannot add.
bool LeastBudgetKept(const WritePolicy& scan, Compression c, uint64_t lsize);

// What ZFS stores under `policy` for a block of `lsize` (not all zero) written with `c` (not
// off), from what its compressor did under LargestCompressionBudget(lsize) (state format 8,
// ddt/dedup_table.h least-budget codes): `length` bytes of output (exact up to
// kEmbeddedPayloadBytes, else possibly rounded up to a multiple of 512), or nullopt when it did
// not fit even that budget; and the smallest budget it fits lies in (above, at_most]. Success is
// monotone in the budget and the output does not depend on it. Nullopt when the policy's budget
// lies strictly inside that interval and below the largest budget: never for the budgets
// CompressionBudget gives when the interval is one of the code's (112 bytes, a multiple of 512,
// or the largest budget itself).
std::optional<BlockWrite> ReplayLeastBudget(const WritePolicy& policy, Compression c,
                                            uint64_t lsize, std::optional<uint64_t> length,
                                            uint64_t above, uint64_t at_most);

// Why all-zero blocks a scan under `scan` kept for `c` are written otherwise under `report`, or
// nullptr: with compression=off and dedup they are holes from 2.3.3 and 2.4 on.
const char* ZeroBlockMismatch(const WritePolicy& scan, const WritePolicy& report, Compression c);

// Why what a scan under `scan` kept for a block of `lsize` written with `c` cannot give what ZFS
// stores under `report` whatever the block, or nullptr: zstd early abort applied by one profile
// and not the other, or against another budget (2.3+ aligns it to gcd_alloc). Per block,
// ReplayCompressed may still not know.
const char* ZstdEarlyAbortMismatch(const WritePolicy& scan, const WritePolicy& report,
                                   Compression c, uint64_t lsize);

// True when every block gets the same BlockWrite under `a` and `b`, whatever its content: the same
// profile and dedup, and the same allocation unit where the profile's budget or rounding follows
// it (2.1 and later; v23 rounds to 512 bytes whatever the pool). A scan's codes then hold for a
// report made under the other policy.
bool SameBlockWrites(const WritePolicy& a, const WritePolicy& b);

// The coarsest unit a compressed psize is rounded up to under `policy` (zio_write_compress, as
// AcceptCompressed): 512 bytes (SPA_MINBLOCKSIZE) in v23, whatever the pool; min_alloc in 2.1
// (vdev_ashift rounding); in 2.2 and later min_alloc up to min_alloc and gcd_alloc above it
// (zio_roundup_alloc_size), min_alloc being the coarser of the two.
uint64_t PsizeRoundingUnit(const WritePolicy& policy);

// zstd early abort applies (2.2+, zstd level >= 3, lsize >= 128K): see codec/zfs_block.h.
bool ZstdEarlyAbortApplies(const WritePolicy& policy, Compression c, uint64_t lsize);
// The settings early abort may apply to under some profile (zstd level >= 3, zstd_cutoff_level),
// and the least lsize it applies to (zstd_abort_size).
bool ZstdEarlyAbortLevel(Compression c);
inline constexpr uint64_t kZstdEarlyAbortBytes = uint64_t{128} << 10;

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_WRITE_RULES_H_
