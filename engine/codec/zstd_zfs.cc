#include "engine/codec/zstd_zfs.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_format / ZSTD_d_format (magicless frames)
#include <zstd.h>
#include <zstd_errors.h>

#include <cassert>
#include <new>

namespace zsim::codec {

std::optional<uint8_t> ZstdZfsLevelByte(int level) {
  if (level >= 1 && level <= 19) return static_cast<uint8_t>(level);
  const int n = -level;
  if (n >= 1 && n <= 10) return static_cast<uint8_t>(102 + n);  // ZIO_ZSTD_LEVEL_FAST_1 = 103
  if (n >= 20 && n <= 100 && n % 10 == 0) return static_cast<uint8_t>(111 + n / 10);
  if (n == 500) return 122;
  if (n == 1000) return 123;
  return std::nullopt;
}

ZstdZfsCompressor::ZstdZfsCompressor() : cctx_(ZSTD_createCCtx()) {}
ZstdZfsCompressor::~ZstdZfsCompressor() { ZSTD_freeCCtx(cctx_); }

std::optional<size_t> ZstdZfsCompressor::Compress(int level, ByteView src, MutableByteView dst) {
  const std::optional<uint8_t> level_byte = ZstdZfsLevelByte(level);
  assert(level_byte.has_value());
  // No context (its allocation failed) is out of memory, not "incompressible": the pipeline
  // then counts the file as failed instead of scoring the block as stored uncompressed.
  if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
  if (cctx_ == nullptr) throw std::bad_alloc();
  if (!level_byte || dst.size() <= kZstdHeaderBytes) return std::nullopt;
  // zfs_zstd_compress_impl: level, magicless format, no checksum, no content size.
  if (ZSTD_isError(ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_and_parameters)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_format, ZSTD_f_zstd1_magicless)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 0)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 0))) {
    return std::nullopt;
  }
  const size_t n = ZSTD_compress2(cctx_, dst.data() + kZstdHeaderBytes,
                                  dst.size() - kZstdHeaderBytes, src.data(), src.size());
  if (ZSTD_isError(n)) {
    if (ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation) throw std::bad_alloc();
    return std::nullopt;
  }
  const unsigned version = ZSTD_versionNumber();  // of the library actually linked
  dst[0] = static_cast<uint8_t>(n >> 24);
  dst[1] = static_cast<uint8_t>(n >> 16);
  dst[2] = static_cast<uint8_t>(n >> 8);
  dst[3] = static_cast<uint8_t>(n);
  dst[4] = *level_byte;
  dst[5] = static_cast<uint8_t>(version >> 16);
  dst[6] = static_cast<uint8_t>(version >> 8);
  dst[7] = static_cast<uint8_t>(version);
  return n + kZstdHeaderBytes;
}

Status ZstdZfsDecompress(ByteView src, MutableByteView dst) {
  if (src.size() < kZstdHeaderBytes) return Status::Corruption("zstd: shorter than its header");
  const uint64_t n = (static_cast<uint64_t>(src[0]) << 24) | (static_cast<uint64_t>(src[1]) << 16) |
                     (static_cast<uint64_t>(src[2]) << 8) | src[3];
  if (n + kZstdHeaderBytes > src.size()) return Status::Corruption("zstd: length exceeds input");
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return Status::OutOfMemory("zstd: cannot create a context");
  size_t got = ZSTD_DCtx_setParameter(dctx, ZSTD_d_format, ZSTD_f_zstd1_magicless);
  if (!ZSTD_isError(got)) {
    got = ZSTD_decompressDCtx(dctx, dst.data(), dst.size(), src.data() + kZstdHeaderBytes, n);
  }
  ZSTD_freeDCtx(dctx);
  if (ZSTD_isError(got) || got != dst.size()) return Status::Corruption("zstd: invalid frame");
  return Status::Ok();
}

}  // namespace zsim::codec
