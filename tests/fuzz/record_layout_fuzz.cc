// Fuzz target: how files and zvols are cut into blocks, on arbitrary sizes. Input: 8 bytes of
// size (little-endian, below 2^63 as st_size and BLKGETSIZE64 are) and 1 byte choosing the block
// size 2^(9 + b % 16) (512 to 16M). The layouts must cover the size exactly as record_layout.h
// says, with no overflow.

#include <cstddef>
#include <cstdint>

#include "engine/zfs/record_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  uint64_t bytes = 0;
  for (int i = 0; i < 8; ++i) bytes |= uint64_t{data[i]} << (8 * i);
  bytes &= (uint64_t{1} << 63) - 1;
  const uint64_t block = uint64_t{1} << (9 + data[8] % 16);

  const zsim::zfs::RecordLayout f = zsim::zfs::FileLayout(bytes, block);
  if (bytes == 0) {
    if (f.blocks != 0) __builtin_trap();
  } else if (bytes <= block) {
    // One block of the size rounded up to 512.
    if (f.blocks != 1 || f.block_bytes < bytes || f.block_bytes - bytes >= 512 ||
        f.block_bytes % 512 != 0 || f.block_bytes > block) {
      __builtin_trap();
    }
  } else {
    // ceil(bytes / block) blocks of block: they cover the file, the last one not empty.
    if (f.block_bytes != block || f.blocks == 0 || f.blocks > bytes / block + 1) __builtin_trap();
    if ((f.blocks - 1) * block >= bytes) __builtin_trap();
    if (f.blocks <= bytes / block && f.blocks * block < bytes) __builtin_trap();
  }

  const zsim::zfs::RecordLayout z = zsim::zfs::ZvolLayout(bytes, block);
  if (z.block_bytes != block) __builtin_trap();
  if (bytes == 0 ? z.blocks != 0 : (z.blocks == 0 || (z.blocks - 1) * block >= bytes)) {
    __builtin_trap();
  }
  if (z.blocks != bytes / block + (bytes % block != 0)) __builtin_trap();
  return 0;
}
