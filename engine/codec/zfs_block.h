// engine/codec/zfs_block.h
//
// One logical block through ZFS's write path for one compression setting: hole test, budget,
// compressor (with zstd early abort where the profile has it), acceptance, rounding, embedding.
// This is the function the pipeline calls per (unique block, compression).
//
// Thread safety: as Compressor (one thread at a time per Compressor).

#ifndef ZSIM_ENGINE_CODEC_ZFS_BLOCK_H_
#define ZSIM_ENGINE_CODEC_ZFS_BLOCK_H_

#include "engine/base/byte_view.h"
#include "engine/codec/codec.h"
#include "engine/zfs/write_rules.h"

namespace zsim::codec {

// What ZFS's compress function returns for `block` with budget dst.size(): Compressor::Compress,
// preceded by the zstd early-abort pre-pass where ZstdEarlyAbortApplies (ZFS's lz4, then
// zstd-1: if neither fits, nullopt without trying the real level). dst receives the output.
std::optional<size_t> ZfsCompress(const zfs::WritePolicy& policy, Compression c, ByteView block,
                                  Compressor& compressor, MutableByteView dst);

// What a scan keeps of `block` written with `c` (state format 7, ddt/dedup_table.h raw codes):
// a hole, or the compressor's output length under the policy's budget (nullopt: it did not fit,
// the compressor failed or was not called, or c is off). Turned into what ZFS stores under this
// policy or another by zfs::ReplayCompressed. `is_all_zero` is the caller's IsAllZero(block)
// (computed once per block, not per setting). `scratch` must hold at least block.size() bytes; its
// contents are clobbered.
struct RawOutcome {
  bool hole = false;
  std::optional<uint64_t> length;
};
RawOutcome RawZfsCompress(const zfs::WritePolicy& policy, Compression c, ByteView block,
                          bool is_all_zero, Compressor& compressor, MutableByteView scratch);

// What a scan keeps of `block` written with `c` (not off) when zfs::LeastBudgetKept(policy, c,
// lsize): a hole, or the compressor's output under zfs::LargestCompressionBudget (nullopt: it did
// not fit) and the smallest budget it fits (for zstd, one in the same ddt::EncodeLeastBudget
// class: ZstdLeastBudget), whatever the policy's budget. Where early abort applies, zstd keeps
// RawZfsCompress's outcome. Arguments as RawZfsCompress's.
struct LeastBudgetOutcome {
  bool hole = false;
  std::optional<Compressor::Fit> fit;
};
LeastBudgetOutcome LeastBudgetZfsCompress(const zfs::WritePolicy& policy, Compression c,
                                          ByteView block, bool is_all_zero, Compressor& compressor,
                                          MutableByteView scratch);

// zstd (no early abort) run at zfs::LargestCompressionBudget, with the class of its least budget
// that every budget ZFS computes needs (112 bytes, a multiple of 512, or that largest one; see
// ddt::EncodeLeastBudget): whether 112 fits an output of at most 112 bytes, or whether the end
// of its 512-byte unit fits a longer one. zstd's capacity checks ask for room beyond what it
// writes (the frame header's 18 bytes, 4 for the sequences header, up to 17 for Huffman
// literals, 8 for each bit stream's last flush), and a check that fails may change what it
// writes (raw literals, raw weights, a raw block) rather than fail: so the candidate is run
// whenever it lies less than kZstdRunMargin above the output, and taken to fit otherwise.
// `scratch` must hold the largest budget. Returns nullopt when the largest budget does not fit.
inline constexpr uint64_t kZstdRunMargin = 64;
std::optional<Compressor::Fit> ZstdLeastBudget(Compression c, ByteView block,
                                               Compressor& compressor, MutableByteView scratch,
                                               uint64_t margin = kZstdRunMargin);

// zstd early abort (OpenZFS 2.2+, module/zstd/zfs_zstd.c zfs_zstd_compress_wrap: zstd level 3
// and up, blocks of zstd_abort_size = 128K and more) under a budget B: ZFS's lz4 runs first and
// lets the block through when its output is strictly below B; else zstd-1 runs and lets it
// through when it fits B; else the block is stored as is without running the real level. So the
// block compresses under B when B is at least the least budget that lets it through AND at least
// zstd's own least budget (`zstd`: ZstdLeastBudget of the setting), with zstd's output. Returns
// the larger of the two (in the class ddt::EncodeProbe keeps: lz4's is exact, zstd-1's as
// ZstdLeastBudget finds it), or nullopt when no budget up to zfs::LargestCompressionBudget lets it
// through or zstd does not fit. zstd-1 runs only where lz4 leaves it open. `scratch` as
// ZstdLeastBudget's.
std::optional<uint64_t> EarlyAbortLeastBudget(ByteView block,
                                              const std::optional<Compressor::Fit>& zstd,
                                              Compressor& compressor, MutableByteView scratch);

// EarlyAbortLeastBudget for the zstd settings of one block, with each probe run at most once:
// lz4's pass and zstd-1's do not depend on the level asking (a list of zstd-3 to zstd-19 ran
// both for each), and lz4's is taken from the scan's own lz4 run of the block where it has one
// (SetLz4). zstd-1 is still skipped where lz4 settles the answer. Bound to one block: a new one
// for the next.
class EarlyAbortProbes {
 public:
  // lz4's run of the block under LargestCompressionBudget (Compressor::CompressFit's answer).
  void SetLz4(const std::optional<Compressor::Fit>& lz4);
  std::optional<uint64_t> LeastBudget(ByteView block, const std::optional<Compressor::Fit>& zstd,
                                      Compressor& compressor, MutableByteView scratch);

 private:
  bool lz4_known_ = false;
  std::optional<uint64_t> lz4_pass_;  // the least budget lz4 lets the block through at
  bool zstd1_known_ = false;
  std::optional<uint64_t> zstd1_pass_;
};

// Returns what ZFS stores for `block` (lsize = block.size()) written with `c` under `policy`:
// RawZfsCompress, then zfs::ReplayCompressed. Arguments as RawZfsCompress's.
// A compressor failure counts as "did not fit" (ZFS does the same).
zfs::BlockWrite CompressZfsBlock(const zfs::WritePolicy& policy, Compression c, ByteView block,
                                 bool is_all_zero, Compressor& compressor, MutableByteView scratch);

// The bytes ZFS writes for `block` (lsize = block.size()) with `c` under `policy`, which its
// checksum, and so a DDT key, covers: for a block that compresses, the compressor's output
// followed by zeros up to the rounded psize (zio_write_compress in module/zfs/zio.c zeroes the
// tail with abd_zero_off before the checksum is taken); the block itself when it is stored as is;
// none for a hole or an embedded block (no allocation, no DDT entry). `bytes` points into
// `scratch` (which must hold block.size() bytes; clobbered) or into `block`. Other arguments as
// RawZfsCompress's; `write` is what CompressZfsBlock returns.
struct WrittenBlock {
  zfs::BlockWrite write;
  ByteView bytes;
};
WrittenBlock WriteZfsBlock(const zfs::WritePolicy& policy, Compression c, ByteView block,
                           bool is_all_zero, Compressor& compressor, MutableByteView scratch);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_ZFS_BLOCK_H_
