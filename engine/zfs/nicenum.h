// engine/zfs/nicenum.h
//
// Numbers the way ZFS's tools print them in narrow columns (lib/libzutil/zutil_nicenum.c:
// zfs_nicenum_format; libzfs_util.c: zfs_nicenum in v23 and <= 0.7). Powers of 1024 with one
// letter; an exact multiple of the unit prints as an integer ("8K", "128K"), anything else with
// the most decimals (2, 1, 0) that fit in 5 characters ("1.17K", "10.9M", "130K").
// zfs_nicenum prints no unit below 1024 ("512"); zfs_nicebytes (0.8+) prints "512B".
// docs/zfs_model.md §5.4.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_NICENUM_H_
#define ZSIM_ENGINE_ZFS_NICENUM_H_

#include <cstdint>
#include <string>

#include "zsim/scan_options.h"

namespace zsim::zfs {

// zfs_nicenum: "512", "1K", "1.17K", "10.9M", "16E".
std::string NiceNumber(uint64_t n);

// zfs_nicebytes: "0B", "512B", "128K", "1.02G".
std::string NiceBytes(uint64_t n);

// The size format zdb's DDT histogram uses under `profile`: NiceNumber in v23 (and every release
// up to 0.7), NiceBytes from 0.8 on (every other profile). Block counts always use NiceNumber.
std::string NiceSize(uint64_t n, Profile profile);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_NICENUM_H_
