// engine/base/byte_view.h
//
// Byte buffers travel as spans, never as (pointer, length) pairs (STYLE.md §2).

#ifndef ZSIM_ENGINE_BASE_BYTE_VIEW_H_
#define ZSIM_ENGINE_BASE_BYTE_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace zsim {

using ByteView = std::span<const uint8_t>;
using MutableByteView = std::span<uint8_t>;

// True if every byte of `bytes` is zero (an empty view is all zero). Word-at-a-time.
bool IsAllZero(ByteView bytes);

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_BYTE_VIEW_H_
