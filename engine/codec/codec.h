// engine/codec/codec.h
//
// The codec layer, module overview. ZFS-equivalent compressors with ZFS's on-disk framing:
// lzjb and zle written from docs/zfs_model.md §3.1/§3.2 (bit-exact), lz4 as ZFS's own r85-era code
// writes it (4-byte big-endian length header, §3.4), gzip-N through zlib compress2 (§3.3),
// zstd-N / zstd-fast-N through libzstd with ZFS's 8-byte header and a magicless frame (§3.5).
// Entry points: Compressor::Compress (one block, one setting), Decompress (tests, fuzzing), and
// codec/zfs_block.h, which applies ZFS's write rules around them (CompressZfsBlock).
//
// Files: lzjb.h, zle.h, lz4_zfs.h, gzip.h, zstd_zfs.h (one codec each), codec.cc (dispatch),
// zfs_block.h (the write path). Depends on engine/base, engine/zfs (rules), and privately on
// zlib, libzstd, liblz4 (decoding only). Exactness: tests/codec/golden_test.cc against ZFS's own
// compressors (tests/golden/codec); speed: bench/codec_bench.cc.
//
// A successful output never depends on the budget: the budget only decides success, as in ZFS.
//
// Thread safety: a Compressor holds per-thread contexts (zstd CCtx, zlib state, lz4/lzjb hash
// tables) and is used by one thread at a time; keep one per worker. Decompress is stateless.

#ifndef ZSIM_ENGINE_CODEC_CODEC_H_
#define ZSIM_ENGINE_CODEC_CODEC_H_

#include <cstddef>
#include <memory>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/scan_options.h"
#include "zsim/status.h"

namespace zsim::codec {

class Compressor {
 public:
  Compressor();
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // Compresses src (one logical block, lsize bytes) with `c` as ZFS's routine does, framing
  // included, into dst. The budget is dst.size() (ZFS's d_len): returns the compressed length
  // (<= dst.size()), or nullopt when the output does not fit (ZFS then stores the block
  // uncompressed). Never writes outside dst. Allocates nothing per call once warmed up.
  // REQUIRES: c.algorithm != kOff; src.size() <= zfs::kMaxBlockBytes.
  // No zstd early abort here: see CompressZfsBlock in codec/zfs_block.h.
  std::optional<size_t> Compress(Compression c, ByteView src, MutableByteView dst);

  // Compress, and on success the smallest budget with which the same call succeeds too (the
  // output is the same: only the give-up decision depends on the budget, and success is
  // monotone in it). Known for the codecs whose give-up tests zsim follows
  // (zfs::LeastBudgetKnown: lzjb, zle and lz4 track the room each test asks for; gzip fits
  // exactly when its output does, deflate's bytes not depending on the room it has).
  // REQUIRES: zfs::LeastBudgetKnown(c).
  struct Fit {
    size_t length = 0;
    size_t least_budget = 0;  // >= length
  };
  std::optional<Fit> CompressFit(Compression c, ByteView src, MutableByteView dst);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Decompresses a block written by Compressor::Compress (framing included) into dst, whose size
// must be the block's lsize. Returns kCorruption if src is not a valid stream for that size;
// never reads outside src nor writes outside dst, whatever src holds.
Status Decompress(Compression c, ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_CODEC_H_
