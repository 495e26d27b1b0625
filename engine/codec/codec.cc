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
