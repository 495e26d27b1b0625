#include "engine/codec/gzip.h"

#include <zlib.h>

#include <cassert>
#include <limits>
#include <new>

namespace zsim::codec {

struct GzipCompressor::Stream {
  z_stream z{};
  bool ready = false;
  ~Stream() {
    if (ready) deflateEnd(&z);
  }
};

GzipCompressor::GzipCompressor() = default;
GzipCompressor::~GzipCompressor() = default;

std::optional<size_t> GzipCompressor::Compress(int level, ByteView src, MutableByteView dst) {
  assert(level >= 1 && level <= 9);
  if (src.size() > std::numeric_limits<uInt>::max() ||
      dst.size() > std::numeric_limits<uInt>::max()) {
    return std::nullopt;
  }
  std::unique_ptr<Stream>& slot = streams_[static_cast<size_t>(level - 1)];
  if (!slot) {
    auto stream = std::make_unique<Stream>();
    // compress2 = deflateInit(level): windowBits 15, memLevel 8, default strategy.
    const int rc = deflateInit2(&stream->z, level, Z_DEFLATED, MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    // Out of memory is not "incompressible": let the pipeline count the file as failed.
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK) return std::nullopt;
    stream->ready = true;
    slot = std::move(stream);
  } else if (deflateReset(&slot->z) != Z_OK) {
    return std::nullopt;
  }
  z_stream& z = slot->z;
  z.next_in = const_cast<Bytef*>(src.data());  // zlib's API is not const-correct
  z.avail_in = static_cast<uInt>(src.size());
  z.next_out = dst.data();
  z.avail_out = static_cast<uInt>(dst.size());
  // deflate's bytes do not depend on how much output room it is given; when the room runs
  // out it stops short of Z_STREAM_END, which compress2 reports as Z_BUF_ERROR.
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) return std::nullopt;
  return static_cast<size_t>(z.total_out);
}

Status GzipDecompress(ByteView src, MutableByteView dst) {
  if (src.size() > std::numeric_limits<uLong>::max() ||
      dst.size() > std::numeric_limits<uInt>::max()) {
    return Status::Corruption("gzip: block too large");
  }
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return Status::Internal("gzip: inflateInit failed");
  z.next_in = const_cast<Bytef*>(src.data());
  z.avail_in = static_cast<uInt>(src.size());
  z.next_out = dst.data();
  z.avail_out = static_cast<uInt>(dst.size());
  const int rc = inflate(&z, Z_FINISH);
  const size_t produced = z.total_out;
  inflateEnd(&z);
  if (rc != Z_STREAM_END || produced != dst.size()) {
    return Status::Corruption("gzip: invalid or short zlib stream");
  }
  return Status::Ok();
}

}  // namespace zsim::codec
