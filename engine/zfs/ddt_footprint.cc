#include "engine/zfs/ddt_footprint.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <span>
#include <tuple>
#include <vector>

#include "engine/base/mix.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/simulation_cache.h"

namespace zsim::zfs {
namespace {

constexpr uint64_t kChunkBytes = 24;       // ZAP_LEAF_CHUNKSIZE
constexpr uint64_t kArrayChunkBytes = 21;  // ZAP_LEAF_ARRAY_BYTES
constexpr uint64_t kBlkptrBytes = 128;
// Fitted on zfs-fuse 0.7.0 (v23, lzjb, 4K leaves and indirects, docs/space_model.md):
constexpr double kLeafHeaderBytesPer4K = 640;  // compressed leaf size with no entries, per 4K
constexpr double kLeafBytesPerEntry = 53;      // compressed bytes one entry adds to a leaf
// Below ashift 12 a DVA offset's low sector bits vary unless every block is a multiple of 4K
// (the d9_* runs were): the suite's compressed and mixed-size data at ashift 9 measured 56-61.
constexpr double kLeafBytesPerEntrySmallSector = 58;
// First fitted on OpenZFS 2.3.2 (lz4 metadata, 32K leaves, ashift 12, disk and raidz2:6;
// tests/accuracy/openzfs23, zdb -dddddd of the DDT objects): a legacy leaf of n entries of c
// chunks compresses to about 156 B per KiB of leaf (5K for 32K: header, hash table, free-chunk
// list) + n * (27 + 7 c) bytes (4 chunks: 55 B per entry): 2 entries 5-8K (raidz2:6: 24K of
// asize, not 12K), 13 and 30 entries 8K, 90 and 124 12K, 197 16K (15 of 16), 210 16-20K. Each
// entry brings ~50 incompressible bytes (8-byte hash, 32-byte checksum, DVA offset, birth).
// (The first fit, 109 B per KiB + 34 + 7 c, left a 2-entry leaf at 4K: -23 % on the full tiny
// matrix's 1M raidz2:6 legacy tables.)
// Refitted (s31) on the leaves themselves, as fast dedup's were (below): 128 legacy leaves of 11
// DDT objects of OpenZFS 2.3.2 (database 16K lz4 a9 and off a12, fileserver 128K lz4 a12 and 1M
// lz4 a9, source 16K lz4 a9, vmstore 16K off a12; disk; tests/accuracy/openzfs23/leaf_survey.py
// --ddt legacy: each leaf read back with `zdb -R ... :dr` and compressed with the lz4 command,
// entries and key sizes from its chunks). A leaf of n 4-chunk entries: 6,815 B + (43.5 + 3.14 D) n,
// D the chance that two of the class's entries differ in (lsize, psize) (DdtKeySizeMix); residuals
// 106 B rms per leaf. The fit before (5,500 B + 52 B per entry, the leaves spread over 1,600 B,
// made on table totals of the full matrices, model change 13) was 446 B rms on these leaves and
// 370-770 B high on tables of equal sizes (database 16K off: D 0.09; vmstore 16K off: 0), which a
// 16K step on raidz2:6 made +10.5 %. The same fields as in fast dedup's leaves make D: the key's
// dk_prop and the DVA's asize repeat where every block has the same sizes, and lz4 copies them.
// Other chunk counts (copies 2 and 3: more DVAs) keep 7 B per chunk.
constexpr double kLz4LeafBytesPerKiB = 6815.0 / 32;
constexpr double kLz4LeafBytesPerEntry = 43.5 - 4 * 7;
constexpr double kLz4LeafBytesPerChunk = 7;
constexpr double kLz4LeafBytesPerDiverseEntry = 3.14;
// Fast dedup's leaves (7 chunks per entry: the raw 73-byte value of the 72-byte flat phys, see
// DdtEntryChunks), fitted on the leaves themselves: 484 compressed 32K leaves of 27 DDT objects
// of OpenZFS 2.3.2 (database, fileserver, source, vmstore at 16K and 128K, lz4 and off, ashift 9
// and 12, disk; each leaf read back with `zdb -R ... :dr` and compressed with the lz4 command,
// whose sizes agree with zdb's psize to the sector; entries and key sizes from the leaf's own
// chunks, zap_leaf.h). A leaf of n entries: 6,750 B + (51.5 + 4.75 D) n, 1 B less per entry
// at ashift 12 and up, D the chance that two entries' sizes differ (DdtKeySizeMix::Diversity);
// residuals 118 B rms per leaf (without D: 228). The parts, each made one value in every entry of a
// leaf and the leaf compressed again: the 32-byte checksum and the 8-byte ZAP hash (le_hash, the
// checksum's first word in the other byte order) do not compress, about 40 B per entry; the DVA's
// offset costs 4-7 B, the birth txg 0-1.5 B (only where the copy spanned txgs: vmstore), the DVA's
// asize 0 (all one size) to 1.8 B and the key's size fields (dk_prop) 0 to 2.3 B: those two are
// what D counts. The 1,278 chunks not taken by entries are free chunks (ZAP_CHUNK_FREE and a next
// index) and the 2K hash table mostly CHAIN_END: both compress, and an entry takes 7 of them, hence
// the slope below the entry's own bytes. The DVA offset's low bits, always zero at 4K sectors, save
// about 1 B per entry (the ashift-12 leaves of database, fileserver and source 16K). The former fit
// (5,500 B + 60 B per entry, +3 B per entry below ashift 12, +4 B x 2p(1-p) for the mix of partial
// records) was 200-550 B below most of these leaves of about 100-140 entries and 600 B above
// vmstore's uncompressed records'.
constexpr double kLz4FlatLeafBytesPerKiB = 6750.0 / 32;
constexpr double kLz4FlatLeafBytesPerEntry = 51.5;
constexpr double kLz4FlatLeafBytesPerDiverseEntry = 4.75;
constexpr double kLz4FlatLeafBytesPerEntryLargeSector = -1;
// A table's leaves are not all alike: a leaf split in two holds about half of what its
// neighbours do (zap_leaf_split), so a table between two doublings has leaves of two sizes
// (vmstore 16K unique: 85 to 179 entries). Each modelled leaf takes its own entry count from the
// simulated table (SimResult::occupancy) and its asize is rounded on its own; what is left
// within a count (the residuals above) spreads over 512 B.
constexpr double kLz4FlatLeafResidualSpread = 512;
constexpr double kIndirectBytesPerBp = 62;  // compressed bytes per MOS block pointer
constexpr double kHeaderBytesPer4K = 256;   // v23's lzjb ZAP header (fits one sector)
// The fat ZAP's header block under lz4 (DdtZapHeaderLz4Bytes): the 13 words of zap_phys_t and
// the zeros to the middle of the block, then one run of equal leaf ids per leaf in the embedded
// pointer table. Measured at ashift 9 (zdb -ddddd psize of block 0 of each DDT ZAP, OpenZFS
// 2.3.2): 512 B with 2, 16 and 32 leaves, 1,024 with 63, i.e. between 5.3 and 10.7 B per leaf
// over the base; the base is the 104 bytes of fields plus lz4's ~70 for the zero run.
constexpr double kZapHeaderBaseBytesLz4 = 170;
constexpr double kZapHeaderBytesPerLeafLz4 = 8;
constexpr uint64_t kDdtDnodeBlkptrs = 3;  // dn_nblkptr of a ZAP dnode without bonus
// Simulate until about this many leaves, then scale by powers of two.
constexpr uint64_t kSimulatedLeaves = 512;
// Seeded tables per simulated entry count, whose median leaf count stands for the table. The
// median of 9 was itself a draw where a table has few leaves and one leaf is several percent of
// it (vmstore 16K duplicate, 5,119 entries: 34 leaves, where the distribution's median is 33 and
// OpenZFS 2.3.2 had 32; docs/accuracy.md "The in-core leaf count as a draw"): up to
// kSmallTableEntries entries (about 180 leaves) 33 tables, cheap at that size; above, 9 (a
// leaf is a fraction of a percent there, and a report of large tables would pay 4 times the CPU).
constexpr uint64_t kSimulationSeeds = 9;
constexpr uint64_t kSimulationSeedsSmall = 33;
constexpr uint64_t kSmallTableEntries = uint64_t{1} << 15;

uint64_t DivRoundUp(uint64_t n, uint64_t d) { return (n + d - 1) / d; }

uint64_t SplitMix64(uint64_t* state) { return Mix64(*state += kGoldenGamma); }

struct SimResult {
  uint64_t leaves = 1;
  int table_shift = 0;
  // Block ids, holes included (header, leaves, pointer tables in allocation order), and the
  // ids of the freed ones (pointer tables outgrown by a later doubling).
  uint64_t block_ids = 2;
  std::vector<uint64_t> hole_ids;
  // Entries per leaf (of the simulated table: the same per leaf when scaled); MedianSimulation
  // gives those of all its runs.
  std::vector<uint32_t> occupancy;
};

// Extendible hashing exactly as the fat ZAP does it: a pointer table indexed by the top
// `shift` hash bits; a full leaf whose prefix is as long as the table doubles the table first,
// then splits on its next prefix bit (zap.c: zap_expand_leaf, zap_leaf_split). Block ids follow
// zap_allocate_blocks: 0 the header, 1 the first leaf, then leaves and pointer tables in the
// order they are needed; the table lives in the header up to `embedded_shift`, then in
// 8 << shift bytes of blocks of `block_bytes`; a table replaced by its double is freed.
// `hashes` in the order they are inserted (the table's leaves do not depend on it; its block ids
// do).
SimResult SimulateZapOf(std::span<const uint64_t> hashes, uint64_t capacity, int embedded_shift,
                        uint64_t block_bytes) {
  struct Leaf {
    int prefix_len = 0;
    std::vector<uint64_t> hashes;
  };
  std::vector<Leaf> leaves(1);
  std::vector<uint32_t> table(1, 0);
  int shift = 0;
  uint64_t next_id = 2;
  uint64_t table_id = 0, table_blocks = 0;
  std::vector<uint64_t> holes;
  for (const uint64_t h : hashes) {
    while (true) {
      const uint64_t idx = shift == 0 ? 0 : h >> (64 - shift);
      const uint32_t li = table[idx];
      if (leaves[li].hashes.size() < capacity || ZapLeafCannotSplit(leaves[li].hashes, h)) {
        leaves[li].hashes.push_back(h);
        break;
      }
      if (leaves[li].prefix_len == shift) {
        std::vector<uint32_t> doubled(table.size() * 2);
        for (size_t j = 0; j < table.size(); ++j) doubled[2 * j] = doubled[2 * j + 1] = table[j];
        table.swap(doubled);
        ++shift;
        if (shift > embedded_shift) {
          for (uint64_t b = 0; b < table_blocks; ++b) holes.push_back(table_id + b);
          table_blocks = std::max<uint64_t>(1, (uint64_t{8} << shift) / block_bytes);
          table_id = next_id;
          next_id += table_blocks;
        }
        continue;
      }
      const int plen = leaves[li].prefix_len + 1;
      const int bit = 64 - plen;
      Leaf fresh;
      fresh.prefix_len = plen;
      std::vector<uint64_t> keep;
      for (uint64_t x : leaves[li].hashes) ((x >> bit) & 1 ? fresh.hashes : keep).push_back(x);
      leaves[li].hashes.swap(keep);
      leaves[li].prefix_len = plen;
      const uint32_t ni = static_cast<uint32_t>(leaves.size());
      leaves.push_back(std::move(fresh));
      ++next_id;
      const uint64_t span = uint64_t{1} << (shift - plen + 1);
      const uint64_t first = (idx / span) * span;
      for (uint64_t j = first + span / 2; j < first + span; ++j) table[j] = ni;
    }
  }
  std::vector<uint32_t> occupancy;
  occupancy.reserve(leaves.size());
  for (const Leaf& l : leaves) occupancy.push_back(static_cast<uint32_t>(l.hashes.size()));
  return SimResult{leaves.size(), shift, next_id, std::move(holes), std::move(occupancy)};
}

// One table of `entries` uniform hashes, the `seed_index`-th of the model's fixed seeds.
SimResult SimulateZap(uint64_t entries, uint64_t capacity, int embedded_shift, uint64_t block_bytes,
                      uint64_t seed_index) {
  std::vector<uint64_t> hashes(entries);
  uint64_t seed = 0x5A17ED + 0x1000193 * seed_index;  // fixed: the model is deterministic
  for (uint64_t& h : hashes) h = SplitMix64(&seed);
  return SimulateZapOf(hashes, capacity, embedded_shift, block_bytes);
}

// One hash sequence is one possible table; the median leaf count of several seeds stands for the
// expected one (small tables vary by a leaf or two either way). A report models each setting's
// DDT objects in two formats, most of them of the same entry count: the simulations of a
// process are kept (a few hundred at most, of a few KB each) and each is run once.
SimResult MedianSimulation(uint64_t n, uint64_t capacity, int embedded_shift, uint64_t block_bytes,
                           uint64_t seeds) {
  using Key = std::tuple<uint64_t, uint64_t, int, uint64_t, uint64_t>;
  static SimulationCache<Key, SimResult> cache(4096);
  return cache.GetOrCompute(Key{n, capacity, embedded_shift, block_bytes, seeds}, [&] {
    std::vector<SimResult> runs;
    for (uint64_t seed = 0; seed < seeds; ++seed) {
      runs.push_back(SimulateZap(n, capacity, embedded_shift, block_bytes, seed));
    }
    std::sort(runs.begin(), runs.end(),
              [](const SimResult& a, const SimResult& b) { return a.leaves < b.leaves; });
    // The leaves' entry counts of every run: which leaves sit past a sector step is a draw of
    // the hash values too, and the runs together give its expectation.
    std::vector<uint32_t> occupancy;
    for (const SimResult& r : runs)
      occupancy.insert(occupancy.end(), r.occupancy.begin(), r.occupancy.end());
    SimResult median = std::move(runs[seeds / 2]);
    median.occupancy = std::move(occupancy);
    return median;
  });
}

// Above kSimulatedLeaves the table is simulated at 1/2^k of its entries and scaled: leaves,
// block ids and hole positions times 2^k.
SimResult SimulateScaled(uint64_t entries, uint64_t capacity, int embedded_shift,
                         uint64_t block_bytes) {
  const uint64_t limit = kSimulatedLeaves * capacity * 7 / 10;
  int k = 0;
  uint64_t n = entries;
  while (n > limit) {
    n = (n + 1) / 2;
    ++k;
  }
  // A table simulated whole and small takes more seeds (kSimulationSeedsSmall); a scaled one is
  // large, whatever the entries it is simulated at.
  const uint64_t seeds =
      k == 0 && n <= kSmallTableEntries ? kSimulationSeedsSmall : kSimulationSeeds;
  SimResult r = MedianSimulation(n, capacity, embedded_shift, block_bytes, seeds);
  if (k == 0) return r;
  r.leaves <<= k;
  r.table_shift += k;
  // Every table outgrown before the final one is a hole; the table for shift s was allocated
  // when about leaves * 2^(s - final shift) leaves existed (the table doubles as leaves do).
  r.hole_ids.clear();
  uint64_t tables_before = 0;
  for (int s = embedded_shift + 1; s < r.table_shift; ++s) {
    const uint64_t blocks = std::max<uint64_t>(1, (uint64_t{8} << s) / block_bytes);
    const uint64_t at = 1 + (r.leaves >> (r.table_shift - s)) + tables_before;
    for (uint64_t j = 0; j < blocks; ++j) r.hole_ids.push_back(at + j);
    tables_before += blocks;
  }
  const uint64_t final_blocks =
      r.table_shift > embedded_shift
          ? std::max<uint64_t>(1, (uint64_t{8} << r.table_shift) / block_bytes)
          : 0;
  r.block_ids = 1 + r.leaves + tables_before + final_blocks;
  return r;
}

// Mean asize of a block whose compressed size is `raw` give or take spread / 2 bytes: leaves
// differ in fill (a few entries either way), so their rounding to 512 (and to the allocation
// size) spreads rather than all hitting one side. psize is capped at the block's logical size.
double ExpectedAsize(double raw, uint64_t lsize, const AllocationModel& alloc,
                     double spread = 512) {
  constexpr int kSteps = 16;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = std::max(1.0, raw + (i + 0.5) / kSteps * spread - spread / 2.0);
    const uint64_t psize = std::min(DivRoundUp(static_cast<uint64_t>(x), 512) * 512, lsize);
    sum += static_cast<double>(alloc.Asize(psize));
  }
  return sum / kSteps;
}

void PutLe(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// The table's own hashes stand for it: one per entry, and few enough to simulate the ZAP on.
bool KnownHashes(std::span<const uint64_t> hashes, uint64_t entries) {
  return hashes.size() == entries && entries <= kMaxKnownKeyEntries;
}

}  // namespace

size_t ZleCompressedLength(const uint8_t* src, size_t s_len, size_t d_len) {
  // zfs_zle_compress_buf (module/zfs/zle.c), n = 64 (zio_compress_table's level for zle): runs
  // of zeros (up to 192) cost one length byte, other runs (up to 64 bytes, ending at two
  // zeros) a length byte plus their bytes, and a literal run only starts while 64 bytes of
  // output room are left; when the input is not consumed, ZFS reports s_len.
  constexpr size_t kN = 64;
  size_t src_pos = 0;
  size_t dst = 0;
  while (src_pos < s_len && dst + 1 < d_len) {
    const size_t first = src_pos;
    ++dst;  // the length byte
    if (src[src_pos] == 0) {
      const size_t last = std::min(s_len, first + (256 - kN));
      while (src_pos < last && src[src_pos] == 0) ++src_pos;
    } else {
      if (d_len - dst < kN) break;
      const size_t last = std::min(s_len, first + kN);
      while (src_pos + 1 < last && (src[src_pos] | src[src_pos + 1])) ++src_pos, ++dst;
      if (src[src_pos] != 0) ++src_pos, ++dst;
    }
  }
  return src_pos == s_len ? dst : s_len;
}

int ZapLeafChunks(int leaf_shift) {
  const uint64_t bytes = uint64_t{1} << leaf_shift;
  return static_cast<int>((bytes - 2 * (bytes / 32)) / kChunkBytes - 2);
}

int DdtEntryChunks(DdtFormat format, int copies, uint64_t asize, uint64_t refcount) {
  // A representative phys: DVAs on vdev 0 at an offset ~14 GB into the vdev, a birth txg of
  // ~128K, a class start time of late 2023. Its ZLE size is what decides the value chunks.
  std::array<uint8_t, 256> phys{};
  uint8_t* slot = phys.data();
  size_t bytes = 72;
  if (format == DdtFormat::kLegacy) {
    slot = phys.data() + 64 * std::clamp(copies, 1, 3);  // DDT_PHYS_SINGLE/DOUBLE/TRIPLE
    bytes = 256;
  }
  for (int d = 0; d < std::clamp(copies, 1, 3); ++d) {
    PutLe(slot + 16 * d, (asize >> 9) & 0xFFFFFF);
    PutLe(slot + 16 * d + 8, 0x1A2B3C4ull + 0x10000ull * d);
  }
  PutLe(slot + 48, refcount);
  PutLe(slot + 56, 0x1F2A3);
  if (format == DdtFormat::kFast) PutLe(slot + 64, 0x6553F100);
  // ddt_zap_update / ddt_zap_compress (module/zfs/ddt_zap.c, 2.3 and 2.4; ddt_compress in
  // ddt.c before): a one-byte header, then the phys ZLE-compressed into at most `bytes` bytes,
  // stored as it is when ZLE does not fit. The room check of ZLE's literal runs makes the
  // 72-byte flat phys of fast dedup always fail: its values are stored raw (73 bytes, 4 chunks;
  // zdb -dddd on OpenZFS 2.3.2: "Entries with n chunks: 6", zdb counting the 40-byte key as one
  // chunk), while the 256-byte legacy phys compresses to one or two chunks.
  const size_t value = 1 + ZleCompressedLength(phys.data(), bytes, bytes);
  return static_cast<int>(1 + DivRoundUp(40, kArrayChunkBytes) +
                          DivRoundUp(value, kArrayChunkBytes));
}

double DdtLeafLz4Bytes(int leaf_shift, double entries_per_leaf, int chunks_per_entry,
                       bool flat_phys, double size_diversity, int ashift) {
  const double leaf_kib = static_cast<double>((uint64_t{1} << leaf_shift) >> 10);
  if (!flat_phys) {
    return kLz4LeafBytesPerKiB * leaf_kib +
           (kLz4LeafBytesPerEntry + kLz4LeafBytesPerChunk * chunks_per_entry +
            kLz4LeafBytesPerDiverseEntry * size_diversity) *
               entries_per_leaf;
  }
  const double sector = ashift >= 12 ? kLz4FlatLeafBytesPerEntryLargeSector : 0;
  return kLz4FlatLeafBytesPerKiB * leaf_kib +
         (kLz4FlatLeafBytesPerEntry + kLz4FlatLeafBytesPerDiverseEntry * size_diversity + sector) *
             entries_per_leaf;
}

void DdtKeySizeMix::Add(uint64_t lsize, uint64_t psize, uint64_t count) {
  if (count == 0) return;
  entries_ += count;
  const uint64_t l = lsize / 512, p = psize / 512;
  if (lsize % 512 != 0 || psize % 512 != 0 || l >= kUnits || p >= kUnits) {
    other_[(lsize << 32) ^ psize] += count;
    return;
  }
  if (row_of_.empty()) row_of_.assign(kUnits, 0);
  uint32_t& r = row_of_[l];
  if (r == 0) {
    rows_.emplace_back();
    r = static_cast<uint32_t>(rows_.size());
  }
  std::vector<uint64_t>& row = rows_[r - 1];
  if (row.size() <= p) row.resize(p + 1);
  row[p] += count;
}

double DdtKeySizeMix::Diversity() const {
  if (entries_ < 2) return 0;
  double same = 0;
  for (const std::vector<uint64_t>& row : rows_) {
    for (uint64_t n : row) {
      if (n > 1) same += static_cast<double>(n) * static_cast<double>(n - 1);
    }
  }
  for (const auto& [sizes, n] : other_) same += static_cast<double>(n) * static_cast<double>(n - 1);
  const double n = static_cast<double>(entries_);
  return 1 - same / (n * (n - 1));
}

double DdtZapHeaderLz4Bytes(uint64_t leaves, int leaf_shift) {
  // zap_phys_t (module/zfs/zap.c, include/sys/zap_impl.h): the embedded pointer table is the
  // second half of the header block, 2^(leaf_shift - 4) leaf ids indexed by the top hash bits
  // (ZAP_EMBEDDED_PTRTBL_ENT); each leaf owns one contiguous range of it. When the table
  // outgrows it, zap_grow_ptrtbl copies it to blocks of its own and leaves the embedded copy as
  // it was: at most that many runs stay in the header.
  const uint64_t runs = std::min(leaves, uint64_t{1} << (leaf_shift - 4));
  return kZapHeaderBaseBytesLz4 + kZapHeaderBytesPerLeafLz4 * static_cast<double>(runs);
}

uint64_t ExpectedZapLeaves(uint64_t entries, int chunks_per_entry, int leaf_chunks) {
  const uint64_t capacity = static_cast<uint64_t>(leaf_chunks / chunks_per_entry);
  return SimulateScaled(entries, capacity, 8, 4096).leaves;
}

DdtObjectModel ModelDdtObject(uint64_t entries, uint64_t peak_entries, int chunks_per_entry,
                              int leaf_shift, bool lz4_metadata, const AllocationModel& alloc,
                              const DdtRawBlocks& raw, bool flat_phys, double size_diversity,
                              std::span<const uint64_t> hashes) {
  DdtObjectModel m;
  m.entries = entries;
  if (entries == 0) return m;
  peak_entries = std::max(peak_entries, entries);
  const uint64_t leaf_bytes = uint64_t{1} << leaf_shift;
  const uint64_t capacity = static_cast<uint64_t>(ZapLeafChunks(leaf_shift) / chunks_per_entry);
  // The pointer table lives in the header block up to 2^(leaf_shift - 4) entries, then in
  // blocks of its own; each earlier table is freed (a hole) when the table doubles.
  const int embedded_shift = leaf_shift - 4;
  const bool known = !hashes.empty() && KnownHashes(hashes, peak_entries);
  const SimResult sim = known ? SimulateZapOf(hashes, capacity, embedded_shift, leaf_bytes)
                              : SimulateScaled(peak_entries, capacity, embedded_shift, leaf_bytes);
  m.leaves = sim.leaves;
  const uint64_t table_blocks =
      sim.table_shift > embedded_shift ? (uint64_t{8} << sim.table_shift) / leaf_bytes : 0;
  m.l0_blocks = 1 + m.leaves + table_blocks;
  const uint64_t block_ids = std::max(sim.block_ids, m.l0_blocks);

  const double entries_per_leaf = static_cast<double>(entries) / static_cast<double>(m.leaves);
  const double leaf_kib = static_cast<double>(leaf_bytes >> 10);
  const double diversity = std::clamp(size_diversity, 0.0, 1.0);
  auto asize_of = [&](double bytes) { return ExpectedAsize(bytes, leaf_bytes, alloc); };
  const double raw_block = static_cast<double>(alloc.Asize(leaf_bytes));
  double leaf_asize = 0;
  if (lz4_metadata) {
    // Leaf by leaf at the simulated tables' counts, scaled from their entries to `entries`.
    double simulated = 0;
    for (uint32_t n : sim.occupancy) simulated += n;
    const double scale =
        entries_per_leaf * static_cast<double>(sim.occupancy.size()) / std::max(1.0, simulated);
    for (uint32_t n : sim.occupancy) {
      leaf_asize +=
          ExpectedAsize(DdtLeafLz4Bytes(leaf_shift, n * scale, chunks_per_entry, flat_phys,
                                        diversity, alloc.ashift()),
                        leaf_bytes, alloc, kLz4FlatLeafResidualSpread * std::sqrt(leaf_kib / 32.0));
    }
    leaf_asize /= static_cast<double>(std::max<size_t>(1, sim.occupancy.size()));
  } else {
    leaf_asize =
        asize_of(kLeafHeaderBytesPer4K * static_cast<double>(leaf_bytes) / 4096.0 +
                 (alloc.ashift() < 12 ? kLeafBytesPerEntrySmallSector : kLeafBytesPerEntry) *
                     entries_per_leaf);
  }
  double asize = static_cast<double>(m.leaves) *
                 ((1 - raw.leaf_share) * leaf_asize + raw.leaf_share * raw_block);
  // The header: the ZAP's phys header and (while it fits) the pointer table, whose entries
  // repeat runs of the same leaf id: one 512-byte sector compressed for a few leaves.
  if (raw.header_raw) {
    asize += raw_block;
  } else if (lz4_metadata) {
    // Its size follows the leaf count (DdtZapHeaderLz4Bytes), to the sector: no spread.
    const double header = DdtZapHeaderLz4Bytes(m.leaves, leaf_shift);
    asize += static_cast<double>(alloc.Asize(
        std::min(DivRoundUp(static_cast<uint64_t>(std::ceil(header)), 512) * 512, leaf_bytes)));
  } else {
    asize += asize_of(kHeaderBytesPer4K * static_cast<double>(leaf_bytes) / 4096.0);
  }
  asize += static_cast<double>(table_blocks) * asize_of(leaf_bytes / 4.0);  // ptrtbl
  // Indirect blocks (indirect block size = leaf size for DDT ZAPs). The dnode holds
  // kDdtDnodeBlkptrs block pointers (bonus length 0), so up to that many L0 blocks need no
  // indirect block at all.
  const uint64_t per_indirect = leaf_bytes / kBlkptrBytes;
  uint64_t below = block_ids;
  uint64_t filled_below = m.l0_blocks;
  uint64_t first_bp_span = 1;  // L0 block ids under the dnode's first block pointer
  while (below > kDdtDnodeBlkptrs) {
    const uint64_t n = DivRoundUp(below, per_indirect);
    const double bps = static_cast<double>(filled_below) / static_cast<double>(n);
    // The drain's last writes leave the indirect block above them raw (one per level).
    const uint64_t raw_here = raw.indirects_raw ? 1 : 0;
    asize += static_cast<double>(n - raw_here) * asize_of(kIndirectBytesPerBp * bps) +
             static_cast<double>(raw_here) * raw_block;
    m.indirect_blocks += n;
    filled_below = n;
    below = n;
    first_bp_span *= per_indirect;
  }
  // In core as zdb prints it: fill count x block size. zdb (v23 .. 2.2) takes the fill count
  // from dmu_object_info; on zfs-fuse 0.7.0 (v23) it measured as the fill of the dnode's FIRST
  // block pointer only (a one-entry ZAP of header + leaf: 50 %full, 4096 in core; a 2426-leaf
  // table at 3 levels: 1017 = the 1024 ids under the first L2 less 7 freed pointer-table
  // blocks); later versions sum all block pointers.
  uint64_t filled = m.l0_blocks;
  if (!lz4_metadata) {
    const uint64_t span = std::min(first_bp_span, block_ids);
    uint64_t holes = 0;
    for (uint64_t id : sim.hole_ids) holes += id < span ? 1 : 0;
    filled = std::min(m.l0_blocks, span - std::min(span, holes));
  }
  m.mspace_bytes = filled * leaf_bytes;
  // Every MOS block has kMosCopies DVAs; raidz deflation applies per DVA.
  m.asize_bytes = static_cast<uint64_t>(asize) * kMosCopies;
  m.dspace_bytes = static_cast<uint64_t>(asize / 512.0 * alloc.deflate_ratio()) * kMosCopies;
  m.in_core_per_entry = m.mspace_bytes / entries;
  m.on_disk_per_entry = m.dspace_bytes / entries;
  return m;
}

uint64_t L2arcHeaderBytes(Profile profile) { return profile == Profile::kV23 ? 180 : 96; }

uint64_t ManPageDedupRam(uint64_t data_bytes) {
  return static_cast<uint64_t>(static_cast<double>(data_bytes) * 1.25 / 1024.0);
}

DdtFootprintModel ModelDdtFootprint(const DdtFootprintInput& in) {
  const ProfileRules& rules = RulesFor(in.profile);
  const AllocationModel alloc = AllocationModel::For(in.vdev, in.ashift);
  const int leaf_shift = rules.ddt_leaf_shift;
  const bool lz4 = in.profile != Profile::kV23;
  DdtFootprintModel out;
  const uint64_t asize = alloc.Asize(in.typical_block_asize);
  const uint64_t peak = std::max(in.unique_peak_entries, in.unique_entries);
  const int unique_chunks = DdtEntryChunks(in.format, in.copies, asize, 1);
  const int duplicate_chunks = DdtEntryChunks(in.format, in.copies, asize, 2);
  // The table's own keys, where the scan knows them (DdtFootprintInput::unique_hashes): both
  // classes, or neither. The unique object at its peak of unique + duplicate entries (every
  // duplicate once sat in it) held both classes' keys.
  const bool known =
      in.unique_hashes.size() + in.duplicate_hashes.size() > 0 &&
      KnownHashes(in.unique_hashes, in.unique_entries) &&
      KnownHashes(in.duplicate_hashes, in.duplicate_entries) &&
      (peak == in.unique_entries || peak == in.unique_entries + in.duplicate_entries);
  const std::span<const uint64_t> duplicate_hashes =
      known ? in.duplicate_hashes : std::span<const uint64_t>{};
  std::span<const uint64_t> unique_hashes = known ? in.unique_hashes : std::span<const uint64_t>{};
  std::vector<uint64_t> peak_hashes;
  if (known && peak != in.unique_entries) {
    peak_hashes.resize(peak);
    std::merge(in.unique_hashes.begin(), in.unique_hashes.end(), in.duplicate_hashes.begin(),
               in.duplicate_hashes.end(), peak_hashes.begin());
    unique_hashes = peak_hashes;
  }
  // The legacy format has no log, and 2.4 flushes it in sync pass 1 only: every block
  // compressed. 2.3 spreads the flush over 8 passes (profile.h: ddt_log_flush_passes).
  DdtLogDrain drain;
  if (in.format == DdtFormat::kFast && rules.ddt_log_flush_passes == kDdtLogFlushPassesMax) {
    const uint64_t capacity = static_cast<uint64_t>(ZapLeafChunks(leaf_shift) /
                                                    std::max(unique_chunks, duplicate_chunks));
    drain = known ? DdtLogDrainOfKeys(in.unique_hashes, duplicate_hashes, capacity)
                  : SimulateDdtLogDrain(in.unique_entries, in.duplicate_entries, capacity);
  }
  out.unique =
      ModelDdtObject(in.unique_entries, peak, unique_chunks, leaf_shift, lz4, alloc, drain.unique,
                     in.format == DdtFormat::kFast, in.unique_size_diversity, unique_hashes);
  out.duplicate =
      ModelDdtObject(in.duplicate_entries, in.duplicate_entries, duplicate_chunks, leaf_shift, lz4,
                     alloc, drain.duplicate, in.format == DdtFormat::kFast,
                     in.duplicate_size_diversity, duplicate_hashes);
  DdtFootprint& t = out.totals;
  t.format = in.format;
  t.leaves_from_keys = known;
  t.leaf_bytes = uint64_t{1} << leaf_shift;
  t.in_core_bytes = out.unique.mspace_bytes + out.duplicate.mspace_bytes;
  t.on_disk_bytes = out.unique.dspace_bytes + out.duplicate.dspace_bytes;
  const uint64_t entries = in.unique_entries + in.duplicate_entries;
  if (entries != 0) {
    t.in_core_per_entry = t.in_core_bytes / entries;
    t.on_disk_per_entry = t.on_disk_bytes / entries;
  }
  if (in.format == DdtFormat::kFast) {
    // zfs_dedup_log_mem_max: 1 % of RAM, at least 1 MiB (ddt_log.c: ddt_log_init); a log entry
    // costs DDT_LOG_ENTRY_FLAT_SIZE = ddt_log_entry_t (72 B) + the 72-byte flat phys = 144 B
    // (ddt_log.c; OpenZFS 2.3.2 measured 144 B per entry right after a write). The log never
    // holds more than the table.
    const uint64_t bound = std::max<uint64_t>(in.ram_bytes / 100, 1 << 20);
    t.log_bytes = std::min<uint64_t>(bound, entries * kDdtLogEntryBytes);
  }
  t.l2arc_header_bytes =
      (out.unique.l0_blocks + out.duplicate.l0_blocks) * L2arcHeaderBytes(in.profile);
  t.rule_of_thumb_320 = 320 * entries;
  return out;
}

}  // namespace zsim::zfs
