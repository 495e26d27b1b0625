#include "engine/zfs/record_layout.h"

#include <cassert>

namespace zsim::zfs {

RecordLayout FileLayout(uint64_t file_bytes, uint64_t recordsize) {
  assert(recordsize >= 512 && (recordsize & (recordsize - 1)) == 0);
  if (file_bytes == 0) return {};
  if (file_bytes <= recordsize) return {(file_bytes + 511) / 512 * 512, 1};
  return {recordsize, (file_bytes + recordsize - 1) / recordsize};
}

RecordLayout ZvolLayout(uint64_t volume_bytes, uint64_t volblocksize) {
  assert(volblocksize >= 512 && (volblocksize & (volblocksize - 1)) == 0);
  if (volume_bytes == 0) return {volblocksize, 0};
  return {volblocksize, (volume_bytes + volblocksize - 1) / volblocksize};
}

}  // namespace zsim::zfs
