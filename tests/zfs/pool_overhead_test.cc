#include "engine/zfs/pool_overhead.h"

#include <gtest/gtest.h>

#include "engine/zfs/metadata.h"
#include "tests/util/test_util.h"

namespace zsim::zfs {
namespace {

// The MOS (less the DDT ZAPs) plus the root filesystem, as OpenZFS 2.3.2 allocated them
// (tests/accuracy/openzfs23 harness: ALLOC - (dataset used - dedup savings) - DDT ZAPs on the
// settled pool, an 8G file vdev per disk).
const VdevLayout kDisk;
const VdevLayout kRaidz2x6{VdevKind::kRaidz, 2, 6, 0};

TEST(PoolOverheadTest, EmptyPoolOnADiskAsMeasured) {
  // ashift 12: 22 MOS blocks of 4K x 3 copies = 264K, root objset 2 x 4K.
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, {}), 270336u + 8192u);
  // ashift 9: 29K of MOS blocks x 3 copies, root objset 2 x 512.
  EXPECT_EQ(MosOverheadAsize(kDisk, 9, {}), 89088u + 1024u);
}

TEST(PoolOverheadTest, MirrorAllocatesAsADisk) {
  // zpool list counts a mirror's space once: measured equal to the disk pool.
  const VdevLayout mirror{VdevKind::kMirror, 0, 2, 0};
  EXPECT_EQ(MosOverheadAsize(mirror, 12, {}), MosOverheadAsize(kDisk, 12, {}));
}

TEST(PoolOverheadTest, RaidzPaysParityOnEveryMosCopy) {
  // raidz2:6 at ashift 12: 23 blocks (one more ZAP) of 1 data + 2 parity sectors, 3 copies:
  // 23 x 36K = 828K (measured MOS dsize 564696 = 847872 asize); root objset 2 x 12K.
  EXPECT_EQ(MosOverheadAsize(kRaidz2x6, 12, {}), 847872u + 24576u);
}

TEST(PoolOverheadTest, DedupTableAddsItsStatisticsAndFastDedupMore) {
  const uint64_t none = MosOverheadAsize(kDisk, 12, {});
  // Legacy: the statistics object's 2 blocks (measured +24K on every legacy pool).
  const PoolDdt legacy{true, DdtFormat::kLegacy, 2630};
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, legacy) - none, 2 * 12 * K);
  // Fast: the FDT directory ZAP, then one block per 1,500 entries (measured +12K at 43 entries,
  // +36K at 3,633, +72K at 7,872 over legacy).
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, {true, DdtFormat::kFast, 43}) - none, 3 * 12 * K);
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, {true, DdtFormat::kFast, 3633}) - none, 5 * 12 * K);
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, {true, DdtFormat::kFast, 7872}) - none, 8 * 12 * K);
}

TEST(PoolOverheadTest, FastDedupLatePassBlocksAreBounded) {
  // Those blocks belong to objects (the statistics object's raw block, the meta-dnode), not to
  // entries: a table 100 times larger than the largest measured gets no more of them.
  const uint64_t measured = MosOverheadAsize(kDisk, 12, {true, DdtFormat::kFast, 7872});
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, {true, DdtFormat::kFast, 787200}), measured);
}

TEST(PoolOverheadTest, WideVdevsPushTheMosPastThreeMetaDnodeBlocks) {
  // OpenZFS 2.3.2, tiny at 128K and 1M, ashift 12: fast minus legacy ALLOC is 12288 on a disk
  // (the FDT directory, one 4K block x 3 copies) and 110592 on raidz2:6, where the MOS's last
  // object id is 96 instead of 91: the directory plus a 4th meta-dnode block and the
  // meta-dnode's indirect block, 3 x 12K (1 data + 2 parity sectors) x 3 copies.
  const PoolDdt legacy{true, DdtFormat::kLegacy, 43};
  const PoolDdt fast{true, DdtFormat::kFast, 43};
  EXPECT_EQ(MosOverheadAsize(kDisk, 12, fast) - MosOverheadAsize(kDisk, 12, legacy), 12288u);
  EXPECT_EQ(MosOverheadAsize(kRaidz2x6, 12, fast) - MosOverheadAsize(kRaidz2x6, 12, legacy),
            110592u);
  // mirror:2 (last id 92) and raidz1:3 (93) stay within 3 dnode blocks, as measured.
  const VdevLayout mirror{VdevKind::kMirror, 0, 2, 0};
  const VdevLayout raidz1x3{VdevKind::kRaidz, 1, 3, 0};
  EXPECT_EQ(MosOverheadAsize(mirror, 12, fast), MosOverheadAsize(kDisk, 12, fast));
  // raidz1:3: the directory only, 1 data + 1 parity sector x 3 copies.
  EXPECT_EQ(MosOverheadAsize(raidz1x3, 12, fast) - MosOverheadAsize(raidz1x3, 12, legacy), 24576u);
}

TEST(PoolOverheadTest, PoolAllocatedUsesTheMosModelFrom23Only) {
  MetadataContext ctx;
  ctx.profile = Profile::kZfs23;
  const uint64_t data = 40ull << 20, meta = 2ull << 20, ddt = 1ull << 20;
  const PoolDdt shape{true, DdtFormat::kLegacy, 2630};
  EXPECT_EQ(PoolAllocated(ctx, data, meta, ddt, shape),
            data + meta + ddt + MosOverheadAsize(ctx.vdev, ctx.ashift, shape));
  // A DDT of some size implies the statistics object even without a shape.
  EXPECT_EQ(PoolAllocated(ctx, data, meta, ddt), PoolAllocated(ctx, data, meta, ddt, shape));
  // v23 keeps its fitted overhead, which grows with the allocation.
  ctx.profile = Profile::kV23;
  EXPECT_GT(PoolAllocated(ctx, 2 * data, meta, ddt) - PoolAllocated(ctx, data, meta, ddt), data);
}

}  // namespace
}  // namespace zsim::zfs
