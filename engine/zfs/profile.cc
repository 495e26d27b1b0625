#include "engine/zfs/profile.h"

#include <array>

namespace zsim::zfs {
namespace {

using A = CompressionAlgorithm;

// Sources per column: see the field comments in profile.h and docs/zfs_model.md.
constexpr std::array<ProfileRules, 5> kRules = {{
    // profile, max_rs, volblk, on, lz4, zstd, embed, emb+dd, zero0, eabort, ind, leaf, fast,
    // log flush passes
    {Profile::kV23, 128 << 10, 8 << 10, A::kLzjb, false, false, false, false, false, false, 14, 12,
     false, 0},
    {Profile::kZfs21, 1 << 20, 8 << 10, A::kLz4, true, true, true, false, false, false, 17, 12,
     false, 0},
    {Profile::kZfs22, 16 << 20, 16 << 10, A::kLz4, true, true, true, false, false, true, 17, 15,
     false, 0},
    // 2.3: embedding with dedup as Debian's 2.3.2 package does (see profile.h).
    {Profile::kZfs23, 16 << 20, 16 << 10, A::kLz4, true, true, true, true, false, true, 17, 15,
     true, 8},
    {Profile::kZfs24, 16 << 20, 16 << 10, A::kLz4, true, true, true, true, true, true, 17, 15, true,
     1},
}};

}  // namespace

const ProfileRules& RulesFor(Profile profile) { return kRules[static_cast<size_t>(profile)]; }

}  // namespace zsim::zfs
