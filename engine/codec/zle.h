// engine/codec/zle.h
//
// ZLE (zero-length encoding), written from docs/zfs_model.md §3.2 (module/zfs/zle.c, same in v23),
// with ZFS's parameter n = 64 for compression=zle. Bit-exact with ZFS (tests/codec/golden_test.cc).
//
// Thread safety: stateless; call from any thread.

#ifndef ZSIM_ENGINE_CODEC_ZLE_H_
#define ZSIM_ENGINE_CODEC_ZLE_H_

#include <cstddef>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::codec {

// Compresses src into dst with ZFS's budget d_len = dst.size(). Returns the output length, or
// nullopt when ZFS fails: it runs out of room (a literal run needs 64 free bytes after its
// length byte; any record needs 2). Never writes outside dst. On success, `least_budget` (if
// given) receives the smallest d_len with which the same call succeeds: the output does not
// depend on d_len, and each test asks for at most 64 bytes more than the output holds there.
std::optional<size_t> ZleCompress(ByteView src, MutableByteView dst,
                                  size_t* least_budget = nullptr);

// Decompresses src into dst (size = lsize). Returns kCorruption when a record runs past src or
// dst, or src ends before dst is full. Bytes of src after dst is full are ignored.
Status ZleDecompress(ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_ZLE_H_
