// The whole ZFS write path per block (codec/zfs_block.h): holes, budgets, early abort,
// embedding per profile, and no allocation per call.

#include "engine/codec/zfs_block.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "tests/util/test_util.h"

// Counts C++ allocations in this test binary (the codecs' own buffers are C++; zlib and zstd
// contexts are created once per Compressor and reused).
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace
void* operator new(size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// Not inlined: GCC at -O1 sees free() inlined against a `new` it takes for the built-in one and
// warns (-Wmismatched-new-delete) though both are these replacements.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace zsim::codec {
namespace {

using A = CompressionAlgorithm;
using zfs::BlockKind;

zfs::WritePolicy Policy(Profile profile, bool dedup, uint64_t sector = 4096) {
  zfs::WritePolicy p;
  p.profile = profile;
  p.dedup = dedup;
  p.geometry = {sector, sector, sector == 4096 ? 12 : 9};
  return p;
}

zfs::BlockWrite Write(const zfs::WritePolicy& policy, Compression c,
                      const std::vector<uint8_t>& block) {
  static Compressor compressor;
  std::vector<uint8_t> scratch(block.size());
  return CompressZfsBlock(policy, c, block, IsAllZero(block), compressor, scratch);
}

// A 4K block with a few bytes set: every codec gets it far below 112 bytes.
std::vector<uint8_t> Sparse4K() {
  std::vector<uint8_t> b(4096, 0);
  b[100] = 1;
  b[2000] = 2;
  return b;
}

TEST(ZfsBlockTest, AllZeroBlocksAreHolesUnlessCompressionIsOff) {
  const std::vector<uint8_t> zeros(131072, 0);
  for (Profile p :
       {Profile::kV23, Profile::kZfs21, Profile::kZfs22, Profile::kZfs23, Profile::kZfs24}) {
    EXPECT_EQ(Write(Policy(p, false), {A::kLz4, 0}, zeros).kind, BlockKind::kHole);
    EXPECT_EQ(Write(Policy(p, false), {A::kOff, 0}, zeros).kind, BlockKind::kUncompressed);
  }
  // dedup=on + compression=off: "empty" compression from 2.4.0 (2.3.3), written before.
  EXPECT_EQ(Write(Policy(Profile::kZfs24, true), {A::kOff, 0}, zeros).kind, BlockKind::kHole);
  const zfs::BlockWrite w23 = Write(Policy(Profile::kZfs23, true), {A::kOff, 0}, zeros);
  EXPECT_EQ(w23.kind, BlockKind::kUncompressed);
  EXPECT_EQ(w23.psize, 131072u);
}

TEST(ZfsBlockTest, V23NeverCompresses512ByteBlocks) {
  const std::vector<uint8_t> text(512, 'a');
  const zfs::BlockWrite w = Write(Policy(Profile::kV23, false, 512), {A::kLzjb, 0}, text);
  EXPECT_EQ(w.kind, BlockKind::kUncompressed);
  EXPECT_EQ(w.psize, 512u);
  // The same block in 2.4 (ashift 9): budget 448 aligned to 0 -> 112, lzjb fits: embedded.
  const zfs::BlockWrite w24 = Write(Policy(Profile::kZfs24, false, 512), {A::kLzjb, 0}, text);
  EXPECT_EQ(w24.kind, BlockKind::kEmbedded);
  EXPECT_LE(w24.psize, 112u);
  // v23 rounds to 512 whatever the ashift: a 4K text block of one letter takes 512 bytes.
  const std::vector<uint8_t> text4k(4096, 'a');
  const zfs::BlockWrite v23 = Write(Policy(Profile::kV23, false, 4096), {A::kLzjb, 0}, text4k);
  EXPECT_EQ(v23.kind, BlockKind::kCompressed);
  EXPECT_EQ(v23.psize, 512u);
}

TEST(ZfsBlockTest, EmbeddingFollowsTheProfileAndDedup) {
  const std::vector<uint8_t> block = Sparse4K();
  struct Expect {
    Profile profile;
    bool dedup;
    BlockKind kind;
  };
  const Expect cases[] = {
      {Profile::kV23, false, BlockKind::kCompressed},  // no embedded blocks: 512-byte psize
      {Profile::kZfs21, false, BlockKind::kEmbedded},
      {Profile::kZfs21, true, BlockKind::kUncompressed},  // rounds to 4096 = lsize
      {Profile::kZfs22, false, BlockKind::kEmbedded},
      {Profile::kZfs22, true, BlockKind::kUncompressed},
      {Profile::kZfs23, false, BlockKind::kEmbedded},
      {Profile::kZfs23, true, BlockKind::kEmbedded},  // as Debian's 2.3.2 measured
      {Profile::kZfs24, false, BlockKind::kEmbedded},
      {Profile::kZfs24, true, BlockKind::kEmbedded},  // "Prefer embedded blocks to dedup"
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(std::string(ProfileName(e.profile)) + (e.dedup ? " dedup" : ""));
    const Compression c =
        e.profile == Profile::kV23 ? Compression{A::kLzjb, 0} : Compression{A::kLz4, 0};
    const zfs::BlockWrite w = Write(Policy(e.profile, e.dedup), c, block);
    EXPECT_EQ(w.kind, e.kind);
    if (w.kind == BlockKind::kEmbedded) {
      EXPECT_GT(w.psize, 0u);
      EXPECT_LE(w.psize, 112u);
    }
  }
}

TEST(ZfsBlockTest, IncompressibleBlocksAreStoredWhole) {
  const std::vector<uint8_t> random = testing::Xorshift64Bytes(42, 131072);
  for (Compression c : {Compression{A::kLzjb, 0}, Compression{A::kZle, 0}, Compression{A::kLz4, 0},
                        Compression{A::kGzip, 9}, Compression{A::kZstd, 1},
                        Compression{A::kZstd, 19}, Compression{A::kZstd, -1000}}) {
    const zfs::BlockWrite w = Write(Policy(Profile::kZfs24, true), c, random);
    EXPECT_EQ(w.kind, BlockKind::kUncompressed) << CompressionName(c);
    EXPECT_EQ(w.psize, 131072u);
  }
}

// What ZFS checksums (and so keys a DDT entry on): the output padded with zeros to psize.
TEST(ZfsBlockTest, WrittenBytesAreTheOutputPaddedWithZerosToPsize) {
  const std::vector<uint8_t> block = testing::GenerateBlock(131072, 0.6, 7);
  Compressor compressor;
  int padded = 0;
  for (Compression c : {Compression{A::kLz4, 0}, Compression{A::kGzip, 6}, Compression{A::kLzjb, 0},
                        Compression{A::kZstd, 3}}) {
    for (uint64_t sector : {512u, 4096u}) {
      SCOPED_TRACE(CompressionName(c) + " sector " + std::to_string(sector));
      const zfs::WritePolicy policy = Policy(Profile::kZfs23, true, sector);
      // The same compressor call the write path makes, under the same budget, on its own.
      std::vector<uint8_t> output(131072);
      const std::optional<size_t> length = ZfsCompress(
          policy, c, block, compressor,
          MutableByteView(output).first(zfs::CompressionBudget(policy, c, block.size())));
      ASSERT_TRUE(length.has_value());

      std::vector<uint8_t> scratch(block.size(), 0xAB);  // no zero where padding is due
      const WrittenBlock w = WriteZfsBlock(policy, c, block, false, compressor, scratch);
      EXPECT_EQ(w.write.kind, BlockKind::kCompressed);
      EXPECT_EQ(w.write.psize, Write(policy, c, block).psize);
      EXPECT_EQ(w.write.psize % sector, 0u);
      ASSERT_EQ(w.bytes.size(), w.write.psize);
      ASSERT_GE(w.bytes.size(), *length);
      EXPECT_TRUE(std::equal(w.bytes.begin(), w.bytes.begin() + *length, output.begin()));
      EXPECT_TRUE(IsAllZero(w.bytes.subspan(*length)));
      padded += w.bytes.size() > *length;
    }
  }
  EXPECT_EQ(padded, 8);  // no output of these ends on a sector boundary
}

TEST(ZfsBlockTest, WrittenBytesOfAStoredBlockAreTheBlockAndHolesOrEmbeddedHaveNone) {
  Compressor compressor;
  std::vector<uint8_t> scratch(131072);
  const zfs::WritePolicy policy = Policy(Profile::kZfs23, true);

  const std::vector<uint8_t> random = testing::Xorshift64Bytes(42, 131072);
  const WrittenBlock stored =
      WriteZfsBlock(policy, {A::kLz4, 0}, random, false, compressor, scratch);
  EXPECT_EQ(stored.write.kind, BlockKind::kUncompressed);
  EXPECT_EQ(stored.bytes.data(), random.data());
  EXPECT_EQ(stored.bytes.size(), random.size());
  const WrittenBlock off = WriteZfsBlock(policy, {A::kOff, 0}, random, false, compressor, scratch);
  EXPECT_EQ(off.write.kind, BlockKind::kUncompressed);
  EXPECT_EQ(off.bytes.data(), random.data());

  const std::vector<uint8_t> zeros(131072, 0);
  const WrittenBlock hole = WriteZfsBlock(policy, {A::kLz4, 0}, zeros, true, compressor, scratch);
  EXPECT_EQ(hole.write.kind, BlockKind::kHole);
  EXPECT_TRUE(hole.bytes.empty());
  // 2.3 with dedup and compression off writes the zeros (the "empty" rule came in 2.3.3).
  const WrittenBlock zeros_off =
      WriteZfsBlock(policy, {A::kOff, 0}, zeros, true, compressor, scratch);
  EXPECT_EQ(zeros_off.write.kind, BlockKind::kUncompressed);
  EXPECT_EQ(zeros_off.bytes.size(), zeros.size());

  const std::vector<uint8_t> sparse = Sparse4K();
  const WrittenBlock embedded =
      WriteZfsBlock(policy, {A::kLz4, 0}, sparse, false, compressor, scratch);
  EXPECT_EQ(embedded.write.kind, BlockKind::kEmbedded);
  EXPECT_TRUE(embedded.bytes.empty());
}

TEST(ZfsBlockTest, ZstdEarlyAbortGivesUpWhereZstd3AloneWouldFit) {
  // The golden block built for it: lz4 and zstd-1 overflow the budget, zstd-3 fits.
  std::vector<uint8_t> block =
      testing::ReadFileBytes(testing::GoldenDir() / "codec" / "inputs" / "abortedge-131072.bin");
  ASSERT_EQ(block.size(), 131072u);
  const zfs::BlockWrite with_abort = Write(Policy(Profile::kZfs24, false), {A::kZstd, 3}, block);
  EXPECT_EQ(with_abort.kind, BlockKind::kUncompressed);
  // 2.1 has no early abort: zstd-3 compresses it (113442 B with libzstd 1.5.4 -> 28 sectors).
  const zfs::BlockWrite without = Write(Policy(Profile::kZfs21, false), {A::kZstd, 3}, block);
  EXPECT_EQ(without.kind, BlockKind::kCompressed);
  EXPECT_EQ(without.psize, 114688u);
  // zstd-fast levels never take the pre-pass; neither does a block below 128K.
  std::vector<uint8_t> text(131072);
  for (size_t i = 0; i < text.size(); ++i)
    text[i] = static_cast<uint8_t>("zsim "[i % 5] + i / 4096);
  EXPECT_EQ(Write(Policy(Profile::kZfs24, false), {A::kZstd, 9}, text).kind,
            BlockKind::kCompressed);
}

TEST(ZfsBlockTest, AllocatesNothingPerBlockOnceWarm) {
  Compressor compressor;
  const std::vector<uint8_t> block = testing::GenerateBlock(131072, 0.5, 3);
  const std::vector<uint8_t> small = testing::GenerateBlock(4096, 0.5, 4);
  std::vector<uint8_t> scratch(131072);
  const zfs::WritePolicy policy = Policy(Profile::kZfs24, true);
  const Compression codecs[] = {{A::kLzjb, 0}, {A::kZle, 0},  {A::kLz4, 0},
                                {A::kGzip, 6}, {A::kZstd, 3}, {A::kZstd, -10}};
  auto run_all = [&] {
    for (const Compression& c : codecs) {
      (void)CompressZfsBlock(policy, c, block, false, compressor, scratch);
      (void)CompressZfsBlock(policy, c, small, false, compressor, scratch);
    }
  };
  const uint64_t start = g_allocations.load();
  run_all();  // warm: contexts and per-level streams are created here
  const uint64_t before = g_allocations.load();
  EXPECT_GT(before, start);  // the counter does see the codecs' first-use allocations
  for (int i = 0; i < 5; ++i) run_all();
  EXPECT_EQ(g_allocations.load(), before);
}

}  // namespace
}  // namespace zsim::codec
