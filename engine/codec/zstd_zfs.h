// engine/codec/zstd_zfs.h
//
// zstd as ZFS stores it (docs/zfs_model.md §3.5, module/zstd/zfs_zstd.c): an 8-byte header (frame
// length, big-endian; ZFS level enum; the 3-byte big-endian version of the zstd library that
// wrote it) and a magicless frame without checksum or content size, compressed with dst capacity
// d_len - 8. zsim links Debian's libzstd (1.5.4) where ZFS 2.x bundles 1.4.5: lengths agree to
// about 0.1 % in total (tests/codec/golden_test.cc measures it), bytes never (header version).
//
// Thread safety: a ZstdZfsCompressor holds one compression context; one thread at a time.
// ZstdZfsDecompress is stateless.

#ifndef ZSIM_ENGINE_CODEC_ZSTD_ZFS_H_
#define ZSIM_ENGINE_CODEC_ZSTD_ZFS_H_

#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

struct ZSTD_CCtx_s;

namespace zsim::codec {

inline constexpr size_t kZstdHeaderBytes = 8;

// ZFS's level enum for zstd level `level` (include/sys/zio_compress.h): zstd-N -> N (1..19);
// zstd-fast-N (level -N) -> 102 + N for N 1..10, 111 + N/10 for N 20..100, 122 for 500, 123
// for 1000. Returns nullopt for a level ZFS does not have.
std::optional<uint8_t> ZstdZfsLevelByte(int level);

class ZstdZfsCompressor {
 public:
  ZstdZfsCompressor();
  ~ZstdZfsCompressor();
  ZstdZfsCompressor(const ZstdZfsCompressor&) = delete;
  ZstdZfsCompressor& operator=(const ZstdZfsCompressor&) = delete;

  // Compresses src at zstd level `level` (1..19, or -N for zstd-fast-N) into dst, header
  // included, budget dst.size(). The context is reset with the parameters set anew on every
  // call, which gives the bytes of ZFS's fresh context per block. Returns 8 + frame length, or
  // nullopt when it does not fit (or zstd reports any error).
  // REQUIRES: ZstdZfsLevelByte(level) has a value.
  std::optional<size_t> Compress(int level, ByteView src, MutableByteView dst);

 private:
  ZSTD_CCtx_s* cctx_;
};

// Decodes header + magicless frame into dst (size = lsize). Returns kCorruption when the header
// length exceeds src or the frame is invalid or does not decode to exactly dst.size() bytes.
Status ZstdZfsDecompress(ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_ZSTD_ZFS_H_
