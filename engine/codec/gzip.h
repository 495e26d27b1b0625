// engine/codec/gzip.h
//
// gzip-N as ZFS stores it (docs/zfs_model.md §3.3, module/zfs/gzip.c): zlib format (2-byte header,
// deflate, Adler-32), equal to zlib's compress2(dst, &d_len, src, lsize, N); no ZFS header.
// Kept as one deflate stream per level, reset per block (no allocation per block).
//
// Thread safety: a GzipCompressor is used by one thread at a time; GzipDecompress is stateless.

#ifndef ZSIM_ENGINE_CODEC_GZIP_H_
#define ZSIM_ENGINE_CODEC_GZIP_H_

#include <array>
#include <cstddef>
#include <memory>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::codec {

class GzipCompressor {
 public:
  GzipCompressor();
  ~GzipCompressor();
  GzipCompressor(const GzipCompressor&) = delete;
  GzipCompressor& operator=(const GzipCompressor&) = delete;

  // Compresses src at `level` (1..9) into dst; the budget is dst.size(). Returns the length, or
  // nullopt when it does not fit (zlib's Z_BUF_ERROR) or zlib fails (out of memory).
  std::optional<size_t> Compress(int level, ByteView src, MutableByteView dst);

 private:
  struct Stream;
  std::array<std::unique_ptr<Stream>, 9> streams_;  // created on first use of each level
};

// True when the linked zlib deflates a reference input (ReferenceDeflateInput) at levels 1, 6
// and 9 into the bytes the zlib did whose gzip output was checked against OpenZFS 2.3.2's own
// DDT keys (Debian's zlib 1.2.13, tests/accuracy/openzfs23/key_check.py). Another deflate
// (zlib-ng, a hardware offload) may compress as well yet write other bytes, so other keys: a
// scan then keeps no written keys for gzip (ddt/written_key.h). Computed once.
bool GzipWritesReferenceBytes();

// Inflates a zlib stream into dst (size = lsize). Returns kCorruption unless it is a complete
// valid stream of exactly dst.size() bytes.
Status GzipDecompress(ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_GZIP_H_
