#include "engine/zfs/zvol_reservation.h"

#include <gtest/gtest.h>

#include "tests/util/test_util.h"

namespace zsim::zfs {
namespace {

TEST(ZvolReservationTest, DiskReservesTheVolumeAndItsIndirectBlocks) {
  // 1 GiB of 16K blocks: 65536 blocks -> 64 L1 + 1 L2 indirect blocks, plus the meta-dnode's 7,
  // each 128K with 2 copies (copies=1 + 1 for metadata).
  const VdevLayout disk;
  EXPECT_EQ(ThickZvolReservation(G, 16 * K, 1, disk, 12), G + (7 + 64 + 1) * 2 * 128 * K);
  // copies=2 doubles the data and gives metadata a third copy.
  EXPECT_EQ(ThickZvolReservation(G, 16 * K, 2, disk, 12), 2 * G + (7 + 64 + 1) * 3 * 128 * K);
}

TEST(ZvolReservationTest, RaidzChargesParityAndPaddingOfSmallBlocks) {
  // raidz2:6, ashift 12: a 16K block is 4 data + 2 parity sectors = 6, padded to 6 (x3):
  // 24K; a 128K block is 32 + 16 = 48 sectors: 192K. Reserved per 16K block: 24K x 128/192 = 16K.
  const VdevLayout raidz2{VdevKind::kRaidz, 2, 6, 0};
  const uint64_t meta = (7 + 64 + 1) * 2 * 128 * K;
  EXPECT_EQ(ThickZvolReservation(G, 16 * K, 1, raidz2, 12), G + meta);
  // An 8K block: 2 data + 2 parity = 4, padded to 6 sectors (24K) for 8K: twice the volume.
  const uint64_t meta8 = (7 + 128 + 1) * 2 * 128 * K;
  EXPECT_EQ(ThickZvolReservation(G, 8 * K, 1, raidz2, 12), 2 * G + meta8);
}

}  // namespace
}  // namespace zsim::zfs
