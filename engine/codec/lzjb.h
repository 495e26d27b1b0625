// engine/codec/lzjb.h
//
// LZJB, the original ZFS block compressor, written from docs/zfs_model.md §3.1 (module/zfs/lzjb.c,
// identical in pool version 23). Output is bit-exact with ZFS for a source buffer that ZFS holds
// 1024-byte aligned (every block whose size is a multiple of 4K): tests/codec/golden_test.cc
// pins it against tests/golden/codec.
//
// Thread safety: LzjbCompress uses the caller's table (one per thread); LzjbDecompress is
// stateless.

#ifndef ZSIM_ENGINE_CODEC_LZJB_H_
#define ZSIM_ENGINE_CODEC_LZJB_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::codec {

// LZJB's hash table ("lempel"): 1024 16-bit slots, reset on every call.
using LzjbTable = std::array<uint16_t, 1024>;

// Compresses src into dst with ZFS's budget d_len = dst.size(). Returns the output length, or
// nullopt when ZFS gives up: at the start of each 8-item group, when the output already holds
// d_len - 17 bytes or more. Never writes outside dst. On success, `least_budget` (if given)
// receives the smallest d_len with which the same call succeeds: the output does not depend on
// d_len, and each group start asks for 18 bytes more than the output holds there (at most 17
// bytes above the output's length).
std::optional<size_t> LzjbCompress(ByteView src, MutableByteView dst, LzjbTable& table,
                                   size_t* least_budget = nullptr);

// Decompresses src into dst (size = the block's lsize). Returns kCorruption when src ends early
// or a match points before the start of the block (or has offset 0, which the encoder never
// writes). Bytes of src after the last needed one are ignored (ZFS pads to psize).
Status LzjbDecompress(ByteView src, MutableByteView dst);

}  // namespace zsim::codec

#endif  // ZSIM_ENGINE_CODEC_LZJB_H_
