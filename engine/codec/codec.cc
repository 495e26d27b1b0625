#include "engine/codec/codec.h"

#include <cassert>

#include "engine/codec/gzip.h"
#include "engine/codec/lz4_zfs.h"
#include "engine/codec/lzjb.h"
#include "engine/codec/zle.h"
#include "engine/codec/zstd_zfs.h"

namespace zsim::codec {

struct Compressor::State {
  LzjbTable lzjb_table;
  Lz4ZfsCompressor lz4;
  GzipCompressor gzip;
  ZstdZfsCompressor zstd;
};

Compressor::Compressor() : state_(std::make_unique<State>()) {}
Compressor::~Compressor() = default;

std::optional<size_t> Compressor::Compress(Compression c, ByteView src, MutableByteView dst) {
  switch (c.algorithm) {
    case CompressionAlgorithm::kLzjb:
      return LzjbCompress(src, dst, state_->lzjb_table);
    case CompressionAlgorithm::kZle:
      return ZleCompress(src, dst);
    case CompressionAlgorithm::kLz4:
      return state_->lz4.Compress(src, dst);
    case CompressionAlgorithm::kGzip:
      return state_->gzip.Compress(c.level, src, dst);
    case CompressionAlgorithm::kZstd:
      return state_->zstd.Compress(c.level, src, dst);
    case CompressionAlgorithm::kOff:
      break;
  }
  assert(false && "Compress called with compression=off");
  return std::nullopt;
}

std::optional<Compressor::Fit> Compressor::CompressFit(Compression c, ByteView src,
                                                       MutableByteView dst) {
  Fit fit;
  std::optional<size_t> n;
  switch (c.algorithm) {
    case CompressionAlgorithm::kLzjb:
      n = LzjbCompress(src, dst, state_->lzjb_table, &fit.least_budget);
      break;
    case CompressionAlgorithm::kZle:
      n = ZleCompress(src, dst, &fit.least_budget);
      break;
    case CompressionAlgorithm::kLz4:
      n = state_->lz4.Compress(src, dst, &fit.least_budget);
      break;
    case CompressionAlgorithm::kGzip:
      // zlib's deflate (ZFS's gzip.c: z_compress_level, compress2 in userland) stops with
      // Z_BUF_ERROR exactly when its output does not fit: no room is asked for in advance.
      n = state_->gzip.Compress(c.level, src, dst);
      if (n) fit.least_budget = *n;
      break;
    case CompressionAlgorithm::kZstd:
    case CompressionAlgorithm::kOff:
      assert(false && "CompressFit called for a codec without a known least budget");
      return std::nullopt;
  }
  if (!n) return std::nullopt;
  fit.length = *n;
  assert(fit.least_budget >= fit.length && fit.least_budget <= dst.size());
  return fit;
}

Status Decompress(Compression c, ByteView src, MutableByteView dst) {
  switch (c.algorithm) {
    case CompressionAlgorithm::kLzjb:
      return LzjbDecompress(src, dst);
    case CompressionAlgorithm::kZle:
      return ZleDecompress(src, dst);
    case CompressionAlgorithm::kLz4:
      return Lz4ZfsDecompress(src, dst);
    case CompressionAlgorithm::kGzip:
      return GzipDecompress(src, dst);
    case CompressionAlgorithm::kZstd:
      return ZstdZfsDecompress(src, dst);
    case CompressionAlgorithm::kOff:
      break;
  }
  return Status::InvalidArgument("compression=off has no decoder");
}

}  // namespace zsim::codec
