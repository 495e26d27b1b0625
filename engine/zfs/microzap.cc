#include "engine/zfs/microzap.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace zsim::zfs {
namespace {

constexpr uint64_t kMinBlockBytes = 512;                       // SPA_MINBLOCKSIZE
constexpr uint64_t kBlockTypeMicro = (uint64_t{1} << 63) + 3;  // ZBT_MICRO
// Stands for mz_salt, which OpenZFS draws at random per directory: eight distinct bytes.
constexpr uint64_t kSalt = 0x9E3779B97F4A7C15ull;
// Offsets in mzap_ent_phys_t.
constexpr size_t kValueOffset = 0;
constexpr size_t kNameOffset = 8 + 4 + 2;  // after mze_value, mze_cd, mze_pad

void PutLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

uint64_t MicrozapBlockBytes(uint64_t entries) {
  const uint64_t bytes = (entries + 1) * kMicrozapEntryBytes;
  return std::max(kMinBlockBytes, (bytes + kMinBlockBytes - 1) / kMinBlockBytes * kMinBlockBytes);
}

bool IsMicrozap(uint64_t entries, uint64_t longest_name) {
  return longest_name < kMicrozapNameMax && MicrozapBlockBytes(entries) <= kMicrozapMaxBytes;
}

std::vector<uint8_t> MicrozapImage(std::vector<MicrozapEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const MicrozapEntry& a, const MicrozapEntry& b) { return a.name < b.name; });
  std::vector<uint8_t> block(MicrozapBlockBytes(entries.size()), 0);
  PutLe64(block.data(), kBlockTypeMicro);
  PutLe64(block.data() + 8, kSalt);  // mz_normflags and the pad stay zero
  uint64_t object = kMicrozapFirstObject;
  for (size_t i = 0; i < entries.size(); ++i) {
    const MicrozapEntry& e = entries[i];
    assert(e.name.size() < kMicrozapNameMax);
    uint8_t* at = block.data() + (i + 1) * kMicrozapEntryBytes;
    PutLe64(at + kValueOffset, uint64_t{static_cast<uint8_t>(e.type)} << 60 | object++);
    std::memcpy(at + kNameOffset, e.name.data(),
                std::min<size_t>(e.name.size(), kMicrozapNameMax - 1));
  }
  return block;
}

}  // namespace zsim::zfs
