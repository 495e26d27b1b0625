#include "engine/codec/gzip.h"

#include <zlib.h>

#include <cassert>
#include <limits>
#include <new>
#include <string>
#include <vector>

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

namespace {

// 64 KiB of text-like bytes: words of a small vocabulary in an order from a fixed LCG, with
// numbers, so that every level finds matches of several lengths and literals.
std::vector<uint8_t> ReferenceDeflateInput() {
  static constexpr const char* kWords[] = {
      "pool ",   "block ", "dedup ", "table ", "leaf ",   "zap ", "entry ", "checksum ",
      "record ", "txg ",   "sync ",  "vdev ",  "ashift ", "\n",   ", ",     ". "};
  std::vector<uint8_t> out;
  out.reserve(size_t{64} << 10);
  uint64_t x = 0x5EED5EED;
  while (out.size() < (size_t{64} << 10)) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const char* w = kWords[(x >> 60) & 15];
    while (*w != '\0' && out.size() < (size_t{64} << 10)) out.push_back(static_cast<uint8_t>(*w++));
    if (((x >> 52) & 7) == 0) {
      for (char c : std::to_string((x >> 20) & 0xFFFF)) {
        if (out.size() < (size_t{64} << 10)) out.push_back(static_cast<uint8_t>(c));
      }
    }
  }
  return out;
}

}  // namespace

bool GzipWritesReferenceBytes() {
  // (level, output length, CRC-32 of the output) as Debian's zlib 1.2.13 writes them.
  static constexpr struct {
    int level;
    size_t length;
    uint32_t crc;
  } kReference[] = {{1, 20531, 0x969A74CE}, {6, 16446, 0x16022F37}, {9, 16082, 0x963563E0}};
  static const bool same = [] {
    const std::vector<uint8_t> in = ReferenceDeflateInput();
    std::vector<uint8_t> out(in.size() * 2);
    GzipCompressor gzip;
    for (const auto& ref : kReference) {
      const std::optional<size_t> n = gzip.Compress(ref.level, ByteView(in.data(), in.size()),
                                                    MutableByteView(out.data(), out.size()));
      if (!n || *n != ref.length || crc32(0, out.data(), static_cast<uInt>(*n)) != ref.crc) {
        return false;
      }
    }
    return true;
  }();
  return same;
}

}  // namespace zsim::codec
