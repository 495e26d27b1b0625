// engine/base/size_suffix.h
//
// Sizes as ZFS spells them: "512", "4k", "128K", "1M", "1.5G", "16MiB". Binary units (K = 1024).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_BASE_SIZE_SUFFIX_H_
#define ZSIM_ENGINE_BASE_SIZE_SUFFIX_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "zsim/status.h"

namespace zsim {

// Parses a size: a decimal number (fraction allowed with a suffix) followed by an optional suffix
// B, K, M, G, T, P, E (case-insensitive, optionally followed by "B" or "iB"). The result must be a
// whole number of bytes. Returns kInvalidArgument with a message naming the accepted forms.
Result<uint64_t> ParseSize(std::string_view text);

// Formats bytes the way people read them: "512 B", "128 KiB", "1.50 GiB" (3 significant digits).
std::string FormatBytes(uint64_t bytes);

}  // namespace zsim

#endif  // ZSIM_ENGINE_BASE_SIZE_SUFFIX_H_
