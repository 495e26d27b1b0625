// engine/codec/lz4_zfs.h
//
// LZ4 as ZFS writes it (docs/zfs_model.md §3.4): the r85-era compressor of module/zfs/lz4_zfs.c,
// re-implemented from its description, behind ZFS's 4-byte big-endian length header. Its output
// differs from liblz4's LZ4_compress_default (by 1-5 % at 128K and above), so liblz4 cannot stand
// in for it; decoding is plain LZ4 block format (liblz4 decodes it).
//
// Two variants, chosen by input size as ZFS does: below 65547 bytes a table of 8192 16-bit
// positions (hash log 13), otherwise 4096 32-bit positions (hash log 12) with a 65535-byte
// distance limit.
//
// Thread safety: an Lz4ZfsCompressor holds its hash table; one thread at a time.

#ifndef ZSIM_ENGINE_CODEC_LZ4_ZFS_H_
#define ZSIM_ENGINE_CODEC_LZ4_ZFS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::codec {

inline constexpr size_t kLz4HeaderBytes = 4;

class Lz4ZfsCompressor {
 public:
  Lz4ZfsCompressor();
  Lz4ZfsCompressor(const Lz4ZfsCompressor&) = delete;
  Lz4ZfsCompressor& operator=(const Lz4ZfsCompressor&) = delete;

  // Compresses src into dst (header included) with ZFS's budget d_len = dst.size(): the LZ4
  // block gets d_len - 4 bytes and ZFS's conservative per-sequence room checks. Returns 4 + the
  // LZ4 block length, or nullopt when ZFS's compressor gives up (or d_len < 4). On success,
  // `least_budget` (if given) receives the smallest d_len with which the same call succeeds:
  // the output does not depend on d_len, and each room test asks for a few bytes more than the
  // output holds there.
  // REQUIRES: src.size() <= 16 MiB.
  std::optional<size_t> Compress(ByteView src, MutableByteView dst, size_t* least_budget = nullptr);

 private:
  // ZFS's 16 KiB table, zeroed for every call as ZFS does (liblz4 clears its 16 KiB state per
  // LZ4_compress_default call too). A generation-tagged 32-bit table avoided the memset but
  // doubled the 64K variant's table to 32 KiB and measured slower (bench/codec_bench.cc).
  std::unique_ptr<uint32_t[]> table_;
};

// Decodes a block written by Lz4ZfsCompressor::Compress into dst (size = lsize). Returns
// kCorruption when the header's length exceeds src, or the LZ4 block is invalid or does not
// decode to exactly dst.size() bytes.
Status Lz4ZfsDecompress(ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_LZ4_ZFS_H_
