#include "engine/ddt/dedup_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <thread>
#include <tuple>

#include "engine/ddt/fingerprint.h"
#include "tests/util/test_util.h"

namespace zsim::ddt {
namespace {

Fingerprint Key(uint64_t i) {
  const std::vector<uint8_t> bytes = testing::Xorshift64Bytes(i + 1, 64);
  return ComputeFingerprint(ChecksumKind::kXxh128, bytes);
}

TEST(FingerprintTest, SameBytesSameKeyDifferentBytesDifferentKey) {
  std::vector<uint8_t> a(4096, 7), b(4096, 7);
  EXPECT_EQ(ComputeFingerprint(ChecksumKind::kXxh128, a),
            ComputeFingerprint(ChecksumKind::kXxh128, b));
  b[4095] = 8;
  EXPECT_FALSE(ComputeFingerprint(ChecksumKind::kXxh128, a) ==
               ComputeFingerprint(ChecksumKind::kXxh128, b));
  EXPECT_FALSE(ComputeFingerprint(ChecksumKind::kSha256, a) ==
               ComputeFingerprint(ChecksumKind::kSha256, b));
}

TEST(FingerprintTest, KnownValuesNeverChange) {
  // Stability promise of fingerprint.h: these values are part of zsim's behaviour.
  const std::vector<uint8_t> empty;
  const Fingerprint sha = ComputeFingerprint(ChecksumKind::kSha256, empty);
  // SHA-256("") = e3b0c442 98fc1c14 9afbf4c8 996fb924 ...; first 8 bytes little-endian.
  EXPECT_EQ(sha.lo, 0x141cfc9842c4b0e3ull);
  EXPECT_EQ(sha.hi, 0x24b96f99c8f4fb9aull);
  const Fingerprint xxh = ComputeFingerprint(ChecksumKind::kXxh128, empty);
  // XXH3_128bits("") from the xxHash reference: 99aa06d3014798d86001c324468d497f.
  EXPECT_EQ(xxh.hi, 0x99aa06d3014798d8ull);
  EXPECT_EQ(xxh.lo, 0x6001c324468d497full);
}

TEST(DedupTableTest, CountsReferencesAndKeepsCodes) {
  DedupTable table(2);
  std::map<uint64_t, uint32_t> expected;
  for (uint64_t i = 0; i < 5000; ++i) {
    const uint64_t k = i % 1700;  // keys 0..1699, some seen 3 times, some twice
    const bool first = table.Insert(Key(k), 4096) == InsertOutcome::kFirst;
    EXPECT_EQ(first, expected.count(k) == 0);
    if (first) {
      const PsizeCode codes[2] = {EncodeAllocated(4096),
                                  EncodeEmbedded(static_cast<uint64_t>(k % 112) + 1)};
      table.SetCodes(Key(k), codes);
    }
    ++expected[k];
  }
  EXPECT_EQ(table.entries(), 1700u);
  uint64_t refs = 0, seen = 0;
  table.ForEach([&](const EntryView& e) {
    ++seen;
    refs += e.refcount;
    EXPECT_EQ(e.lsize, 4096u);
    ASSERT_EQ(e.codes.size(), 2u);
    EXPECT_EQ(AllocatedPsize(e.codes[0]), 4096u);
    EXPECT_TRUE(IsEmbeddedCode(e.codes[1]));
  });
  EXPECT_EQ(seen, 1700u);
  EXPECT_EQ(refs, 5000u);
  EXPECT_GT(table.memory_bytes(), 1700u * 24);
}

TEST(DedupTableTest, ConcurrentInsertsGiveTheSameCounts) {
  for (int threads : {1, 2, 4, 3}) {
    SCOPED_TRACE(threads);
    DedupTable table(1);
    std::atomic<uint64_t> firsts{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (uint64_t i = static_cast<uint64_t>(t); i < 20000;
             i += static_cast<uint64_t>(threads)) {
          if (table.Insert(Key(i % 7000), 512) == InsertOutcome::kFirst) {
            ++firsts;
            const PsizeCode c[1] = {EncodeAllocated(512)};
            table.SetCodes(Key(i % 7000), c);
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(firsts.load(), 7000u);
    uint64_t refs = 0;
    table.ForEach([&](const EntryView& e) {
      refs += e.refcount;
      EXPECT_EQ(e.codes[0], EncodeAllocated(512));
    });
    EXPECT_EQ(refs, 20000u);
  }
}

TEST(DedupTableTest, RaisingTheSampleShiftKeepsExactlyTheKeysOfTheSmallerSpace) {
  DedupTable table(1);
  const PsizeCode c[1] = {EncodeAllocated(4096)};
  for (uint64_t i = 0; i < 4000; ++i) {
    if (table.Insert(Key(i % 1000), 4096) == InsertOutcome::kFirst)
      table.SetCodes(Key(i % 1000), c);
    if (i == 1500) table.RaiseSampleShift(2);  // keep 1/4 from here on
    if (i == 2500) table.RaiseSampleShift(1);  // lowering is ignored
  }
  EXPECT_EQ(table.sample_shift(), 2u);
  uint64_t expected_entries = 0;
  for (uint64_t k = 0; k < 1000; ++k) expected_entries += SampledOut(Key(k), 2) ? 0 : 1;
  EXPECT_EQ(table.entries(), expected_entries);
  EXPECT_GT(expected_entries, 150u);  // about a quarter of 1000
  EXPECT_LT(expected_entries, 350u);
  table.ForEach([&](const EntryView& e) {
    EXPECT_FALSE(SampledOut(e.key, 2));
    EXPECT_EQ(e.refcount, 4u);  // kept since their first sighting: exact refcounts
    EXPECT_EQ(e.codes[0], c[0]);
  });
  EXPECT_EQ(table.Insert(Key(7), 4096) == InsertOutcome::kSampledOut, SampledOut(Key(7), 2));
}

// A key says kBecameHeavy once, at its kHeavyRefcount-th reference; coding it again then (the
// scan's census of heavy entries: the side codes only, kPendingCode for the inline ones) must
// keep its inline codes and not shift any other entry's side codes.
TEST(DedupTableTest, HeavyKeysAreSignalledOnceAndCanBeCodedAgain) {
  using Kind = SettingStorage::Kind;
  DedupTable table({{Kind::kInline, true}, {Kind::kSide, true}});
  std::map<uint64_t, int> heavy;
  std::map<uint64_t, uint64_t> key_of;  // Key(k).lo -> k
  auto side_code = [](uint64_t k) { return EncodeAllocated(512 * (1 + k % 7)); };
  // Side codes at the first sighting for key 3 and every fifth other key, as a sampled codec
  // gives them; the heavy keys (0..6) get theirs when they become heavy.
  auto coded_first = [](uint64_t k) { return k == 3 || (k >= 7 && k % 5 == 0); };
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t k = i % 13 == 0 ? i % 7 : 100 + i;  // keys 0..6 referenced ~220 times each
    key_of[Key(k).lo] = k;
    const InsertOutcome o = table.Insert(Key(k), 4096);
    if (o == InsertOutcome::kFirst) {
      const PsizeCode first[2] = {EncodeAllocated(4096),
                                  coded_first(k) ? side_code(k) : kPendingCode};
      table.SetCodes(Key(k), first);
    } else if (o == InsertOutcome::kBecameHeavy) {
      ++heavy[k];
      const PsizeCode census[2] = {kPendingCode, side_code(k)};
      table.SetCodes(Key(k), census);  // key 3 now has two equal side records
    }
  }
  ASSERT_EQ(heavy.size(), 7u);
  for (const auto& [k, n] : heavy) EXPECT_EQ(n, 1) << k;
  uint64_t entries = 0;
  table.ForEach([&](const EntryView& e) {
    ++entries;
    const uint64_t k = key_of.at(e.key.lo);
    EXPECT_EQ(e.codes[0], EncodeAllocated(4096));
    // Every entry reads its own side code (none shifted by key 3's second record).
    EXPECT_EQ(e.codes[1], k < 7 || coded_first(k) ? side_code(k) : kPendingCode) << k;
    EXPECT_EQ(e.refcount >= kHeavyRefcount, k < 7) << k;
  });
  EXPECT_EQ(entries, table.entries());
}

// Two sampled codecs at different levels: a key's first sighting may code the one whose level
// it is above and leave the other pending; when it turns heavy the census codes both. The entry
// must then read both codes (a heavy key's codes are exact), and a Merge into a table whose entry
// holds such a partial record must fill what it lacks. Before, the first record was the one read
// and the census's code was lost (a debug build's assert that the two records are equal fired).
TEST(DedupTableTest, AHeavyKeyCodedPartlyAtItsFirstSightingReadsEveryCensusCode) {
  using Kind = SettingStorage::Kind;
  const std::vector<SettingStorage> layout = {
      {Kind::kInline, true}, {Kind::kSide, true}, {Kind::kSide, true}};
  const PsizeCode a = EncodeAllocated(1024), b = EncodeAllocated(2048);
  DedupTable table(layout);
  ASSERT_EQ(table.Insert(Key(1), 4096), InsertOutcome::kFirst);
  const PsizeCode first[3] = {EncodeAllocated(4096), a, kPendingCode};
  table.SetCodes(Key(1), first);
  for (uint32_t r = 2; r < kHeavyRefcount; ++r) table.Insert(Key(1), 4096);
  ASSERT_EQ(table.Insert(Key(1), 4096), InsertOutcome::kBecameHeavy);
  const PsizeCode census[3] = {kPendingCode, a, b};
  table.SetCodes(Key(1), census);
  auto expect_all = [&](const DedupTable& t) {
    int seen = 0;
    t.ForEach([&](const EntryView& e) {
      ++seen;
      EXPECT_EQ(e.codes[0], EncodeAllocated(4096));
      EXPECT_EQ(e.codes[1], a);
      EXPECT_EQ(e.codes[2], b);
    });
    EXPECT_EQ(seen, 1);
  };
  expect_all(table);

  // The same entry split over two tables: the partial one merges the census's codes in.
  DedupTable partial(layout), coded(layout);
  partial.Insert(Key(1), 4096);
  partial.SetCodes(Key(1), first);
  coded.Insert(Key(1), 4096);
  coded.SetCodes(Key(1), census);
  partial.Merge(coded);
  expect_all(partial);
}

TEST(DedupTableTest, DerivedAndSideStoredCodesReadBackAsStored) {
  using Kind = SettingStorage::Kind;
  // off derived from lsize (zeros written as data, as in v23), lz4 inline, gzip on a sample.
  DedupTable table({{Kind::kFromLsize, false}, {Kind::kInline, true}, {Kind::kSide, true}});
  DedupTable all_inline(3);
  const Fingerprint zero = Key(999999);
  for (uint64_t i = 0; i < 3000; ++i) {
    const bool first = table.Insert(Key(i), 8192) == InsertOutcome::kFirst;
    EXPECT_EQ(first, all_inline.Insert(Key(i), 8192) == InsertOutcome::kFirst);
    if (!first) continue;
    // gzip ran on every tenth block only.
    const PsizeCode c[3] = {EncodeAllocated(8192), EncodeAllocated(4096),
                            i % 10 == 0 ? EncodeAllocated(2048) : kPendingCode};
    table.SetCodes(Key(i), c);
    all_inline.SetCodes(Key(i), c);
  }
  ASSERT_EQ(table.Insert(zero, 8192, /*is_zero=*/true), InsertOutcome::kFirst);
  const PsizeCode zc[3] = {EncodeAllocated(8192), kHoleCode, kHoleCode};
  table.SetCodes(zero, zc);
  EXPECT_LT(table.memory_bytes(), all_inline.memory_bytes());
  uint64_t sampled = 0, entries = 0;
  table.ForEach([&](const EntryView& e) {
    ++entries;
    if (e.is_zero) {
      EXPECT_EQ(e.codes[0], EncodeAllocated(8192));  // off: zeros are data here
      EXPECT_EQ(e.codes[1], kHoleCode);
      EXPECT_EQ(e.codes[2], kHoleCode);  // derived, nothing stored
      return;
    }
    EXPECT_EQ(e.lsize, 8192u);
    EXPECT_EQ(e.codes[0], EncodeAllocated(8192));
    EXPECT_EQ(e.codes[1], EncodeAllocated(4096));
    if (e.codes[2] != kPendingCode) {
      EXPECT_EQ(e.codes[2], EncodeAllocated(2048));
      ++sampled;
    }
  });
  EXPECT_EQ(entries, 3001u);
  EXPECT_EQ(sampled, 300u);
  // Compaction keeps side codes with their entries.
  table.RaiseSampleShift(1);
  uint64_t kept = 0, kept_sampled = 0;
  table.ForEach([&](const EntryView& e) {
    ++kept;
    if (e.codes[2] != kPendingCode && !e.is_zero) {
      EXPECT_EQ(e.codes[2], EncodeAllocated(2048));
      ++kept_sampled;
    }
  });
  EXPECT_EQ(kept, table.entries());
  EXPECT_GT(kept_sampled, 100u);
  EXPECT_LT(kept_sampled, 200u);
}

// Entry references (what --since keeps per block): Insert names the entry, KeyOf reads its key
// back, Release takes references out, DropUnreferenced removes the entries left without any
// (their side codes with them) and renumbers the others, which MapRef follows; a table copied
// entry by entry in ForEach order (a state saved and loaded) keeps every reference.
TEST(DedupTableTest, EntryReferencesSurviveReleaseDropAndACopy) {
  using Kind = SettingStorage::Kind;
  const std::vector<SettingStorage> layout = {{Kind::kInline, true}, {Kind::kSide, true}};
  DedupTable table(layout);
  std::vector<uint32_t> refs;  // one per reference inserted, key i % 900
  for (uint64_t i = 0; i < 3000; ++i) {
    uint32_t ref = 0;
    const InsertOutcome o = table.Insert(Key(i % 900), 4096, false, &ref);
    if (o == InsertOutcome::kFirst) {
      const uint64_t k = i % 900;
      const PsizeCode c[2] = {EncodeAllocated(512 * (1 + k % 8)),
                              k % 3 == 0 ? EncodeAllocated(1024) : kPendingCode};
      table.SetCodes(Key(k), c);
    }
    refs.push_back(ref);
    ASSERT_TRUE(table.HasRef(ref));
    const Fingerprint back = table.KeyOf(ref);
    EXPECT_EQ(back.lo, Key(i % 900).lo);
    EXPECT_EQ(static_cast<uint32_t>(back.hi), static_cast<uint32_t>(Key(i % 900).hi));
    if (i >= 900) {
      EXPECT_EQ(ref, refs[i - 900]) << "one entry, one reference";
    }
  }
  // Take out every reference of the keys below 300 and one of each of the others.
  std::map<uint64_t, uint32_t> left;
  for (uint64_t i = 0; i < 3000; ++i) {
    const uint64_t k = i % 900;
    if (k < 300 || i < 900) {
      table.Release(refs[i]);
    } else {
      ++left[k];
    }
  }
  const DedupTable::RefMap map = table.DropUnreferenced();
  EXPECT_EQ(table.entries(), 600u);
  std::map<uint64_t, uint32_t> counted;  // by key lo: refcount
  table.ForEach([&](const EntryView& e) {
    counted[e.key.lo] = e.refcount;
    // Side codes moved with their entries.
    const bool coded = e.codes[1] != kPendingCode;
    EXPECT_TRUE(!coded || e.codes[1] == EncodeAllocated(1024));
  });
  for (uint64_t i = 900; i < 3000; ++i) {
    const uint64_t k = i % 900;
    const uint32_t now = DedupTable::MapRef(map, refs[i]);
    if (k < 300) {
      EXPECT_EQ(now, DedupTable::kDroppedRef);
      continue;
    }
    ASSERT_NE(now, DedupTable::kDroppedRef);
    EXPECT_EQ(table.KeyOf(now).lo, Key(k).lo);
    EXPECT_EQ(counted[Key(k).lo], left[k]);
    refs[i] = now;
  }
  // A copy in ForEach order names its entries alike.
  DedupTable copy(layout);
  table.ForEach([&](const EntryView& e) { copy.AddEntry(e); });
  for (uint64_t i = 900; i < 3000; ++i) {
    if (i % 900 < 300) continue;
    ASSERT_TRUE(copy.HasRef(refs[i]));
    EXPECT_EQ(copy.KeyOf(refs[i]).lo, Key(i % 900).lo);
  }
  EXPECT_FALSE(copy.HasRef(uint32_t{0xFF} << 24 | 0xFFFFFF));
}

// Two tables filled from two halves of a stream of references merge into the table of the whole
// stream: refcounts add, codes known to either side are kept (a sampled codec that ran on a key
// in one half only), side codes are not read twice, and a sampled table keeps its space.
TEST(DedupTableTest, MergedTablesEqualTheTableOfAllReferences) {
  using Kind = SettingStorage::Kind;
  const std::vector<SettingStorage> layout = {
      {Kind::kFromLsize, true}, {Kind::kInline, true}, {Kind::kSide, true}};
  auto code = [](uint64_t i, size_t c, bool sampled_ran) -> PsizeCode {
    if (c == 1) return EncodeAllocated(512 * (1 + i % 15));
    return sampled_ran ? EncodeAllocated(512 * (1 + i % 7)) : kPendingCode;
  };
  // Reference r of the stream is key r % 700; the first half (r < 1500) goes to `a`, the rest
  // to `b`. The sampled codec runs on a key in `a` when i % 3 == 0, in `b` when i % 5 == 0.
  auto fill = [&](DedupTable& t, uint64_t begin, uint64_t end, int ran_mod) {
    for (uint64_t r = begin; r < end; ++r) {
      const uint64_t i = r % 700;
      if (t.Insert(Key(i), 8192) != InsertOutcome::kFirst) continue;
      const PsizeCode c[3] = {0, code(i, 1, false), code(i, 2, i % ran_mod == 0)};
      t.SetCodes(Key(i), c);
    }
  };
  for (uint32_t shift : {0u, 2u}) {
    DedupTable a(layout), b(layout), whole(layout);
    a.RaiseSampleShift(shift);
    b.RaiseSampleShift(shift);
    whole.RaiseSampleShift(shift);
    fill(a, 0, 1500, 3);
    fill(b, 1500, 3000, 5);
    fill(whole, 0, 3000, 1);
    a.Merge(b);
    std::map<uint64_t, std::pair<uint32_t, std::vector<PsizeCode>>> got, want;
    a.ForEach([&](const EntryView& e) {
      got[e.key.lo] = {e.refcount, {e.codes.begin(), e.codes.end()}};
    });
    whole.ForEach([&](const EntryView& e) {
      want[e.key.lo] = {e.refcount, {e.codes.begin(), e.codes.end()}};
    });
    ASSERT_EQ(got.size(), want.size()) << shift;
    EXPECT_EQ(a.entries(), whole.entries());
    size_t coded = 0;
    for (uint64_t i = 0; i < 700; ++i) {
      const auto g = got.find(Key(i).lo);
      if (g == got.end()) {
        EXPECT_EQ(want.count(Key(i).lo), 0u);
        continue;
      }
      const auto& [refs, codes] = g->second;
      EXPECT_EQ(refs, want[Key(i).lo].first) << i;
      EXPECT_EQ(codes[1], want[Key(i).lo].second[1]) << i;
      // Known to the merge where either half ran the sampled codec.
      const bool ran = i % 3 == 0 || i % 5 == 0;
      EXPECT_EQ(codes[2] != kPendingCode, ran) << i;
      if (ran) {
        EXPECT_EQ(codes[2], code(i, 2, true)) << i;
        ++coded;
      }
    }
    EXPECT_GT(coded, 0u);
  }
}

// A table split by shards (the distributed scan's partition, engine/mpi/partition.h): one part
// keeps shards 0..99, the other gets the rest entry by entry and the first drops them; with the
// second attached as a RemotePart, the first reads as the whole table in ForEach, entries() and
// memory_bytes().
class TablePart : public RemotePart {
 public:
  explicit TablePart(const DedupTable* t) : t_(t) {}
  void ForEach(const std::function<void(const EntryView&)>& fn) const override { t_->ForEach(fn); }
  uint64_t entries() const override { return t_->entries(); }
  uint64_t memory_bytes() const override { return t_->memory_bytes(); }

 private:
  const DedupTable* t_;
};

TEST(DedupTableTest, ATableSplitByShardsReadsAsTheWholeWithItsRemotePart) {
  using Kind = SettingStorage::Kind;
  const std::vector<SettingStorage> layout = {{Kind::kInline, true}, {Kind::kSide, true}};
  DedupTable whole(layout), mine(layout);
  for (DedupTable* t : {&whole, &mine}) {
    for (uint64_t r = 0; r < 6000; ++r) {
      const uint64_t i = r % 2500;
      if (t->Insert(Key(i), 4096) != InsertOutcome::kFirst) continue;
      const PsizeCode c[2] = {EncodeAllocated(512 * (1 + i % 8)),
                              i % 4 == 0 ? EncodeAllocated(512 * (1 + i % 5)) : kPendingCode};
      t->SetCodes(Key(i), c);
    }
  }
  constexpr size_t kMine = 100;
  auto other = std::make_unique<DedupTable>(layout);
  uint64_t moved = 0;
  for (size_t s = 0; s < DedupTable::kShards; ++s) {
    mine.ForEachInShard(s, [&](const EntryView& e) {
      EXPECT_EQ(DedupTable::ShardOf(e.key), s);
      if (s >= kMine) {
        other->AddEntry(e);
        ++moved;
      }
    });
    if (s >= kMine) mine.DropShard(s);
  }
  ASSERT_GT(moved, 1000u);
  EXPECT_EQ(mine.local_entries() + other->entries(), whole.entries());
  EXPECT_EQ(mine.local_memory_bytes() + other->memory_bytes(), whole.memory_bytes());
  uint64_t dropped_seen = 0;
  mine.ForEach([&](const EntryView& e) { dropped_seen += DedupTable::ShardOf(e.key) >= kMine; });
  EXPECT_EQ(dropped_seen, 0u);

  mine.AttachRemote(std::make_shared<TablePart>(other.get()));
  EXPECT_EQ(mine.entries(), whole.entries());
  EXPECT_EQ(mine.memory_bytes(), whole.memory_bytes());
  std::map<uint64_t, std::pair<uint32_t, std::vector<PsizeCode>>> got, want;
  mine.ForEach([&](const EntryView& e) {
    EXPECT_TRUE(got.emplace(e.key.lo,
                            std::make_pair(e.refcount,
                                           std::vector<PsizeCode>(e.codes.begin(), e.codes.end())))
                    .second);
  });
  whole.ForEach([&](const EntryView& e) {
    want[e.key.lo] = {e.refcount, {e.codes.begin(), e.codes.end()}};
  });
  EXPECT_EQ(got, want);
}

TEST(DedupTableTest, DroppedShardsStayFreeWhenTheSampleShiftRises) {
  // A partitioned table (mpi/partition.h) raises its sample shift after DropShard: the parts'
  // memory must still add up to the whole's, a dropped shard costing nothing (no new index).
  DedupTable whole(1), mine(1), other(1);
  for (uint64_t i = 0; i < 20000; ++i) whole.Insert(Key(i), 4096);
  constexpr size_t kMine = 100;
  for (size_t s = 0; s < DedupTable::kShards; ++s) {
    DedupTable& to = s < kMine ? mine : other;
    whole.ForEachInShard(s, [&](const EntryView& e) { to.AddEntry(e); });
  }
  for (size_t s = 0; s < DedupTable::kShards; ++s) (s < kMine ? other : mine).DropShard(s);
  for (uint32_t shift = 1; shift <= 3; ++shift) {
    for (DedupTable* t : {&whole, &mine, &other}) t->RaiseSampleShift(shift);
    EXPECT_EQ(mine.local_entries() + other.local_entries(), whole.entries()) << shift;
    EXPECT_EQ(mine.local_memory_bytes() + other.local_memory_bytes(), whole.memory_bytes())
        << shift;
  }
}

TEST(DedupTableTest, AShardRefilledAfterDropShardSamplesAsAnyOther) {
  // A distributed scan ships the shards other ranks own and goes on inserting into them: a raised
  // sample shift must drop their keys outside the new space too (else --max-memory, which
  // raises the shift until the table fits, would raise it once more than one process).
  DedupTable table(1);
  for (uint64_t i = 0; i < 20000; ++i) table.Insert(Key(i), 4096);
  for (size_t s = 0; s < DedupTable::kShards; ++s) table.DropShard(s);
  EXPECT_EQ(table.local_entries(), 0u);
  for (uint64_t i = 20000; i < 40000; ++i) table.Insert(Key(i), 4096);
  const uint64_t before = table.local_memory_bytes();
  table.RaiseSampleShift(2);
  uint64_t kept = 0;
  for (uint64_t i = 20000; i < 40000; ++i) kept += !SampledOut(Key(i), 2);
  EXPECT_EQ(table.local_entries(), kept);
  table.ForEach([](const EntryView& e) { EXPECT_FALSE(SampledOut(e.key, 2)); });
  EXPECT_LT(table.local_memory_bytes() * 2, before);
}

TEST(DedupTableTest, ASampledTableTakesAboutItsShareOfMemory) {
  // --sample 1/64 must keep about 1/64 of the exact table, not a fixed floor per shard.
  DedupTable exact(2), sampled(2);
  sampled.RaiseSampleShift(6);
  for (uint64_t i = 0; i < 400000; ++i) {
    const Fingerprint k = Key(i);
    exact.Insert(k, 4096);
    sampled.Insert(k, 4096);
  }
  EXPECT_NEAR(double(sampled.entries()) * 64, double(exact.entries()), 0.1 * exact.entries());
  EXPECT_LT(sampled.memory_bytes() * 20, exact.memory_bytes());
  // Entries spanning every chunk size read back (ids across the 64/128/.../1024 boundaries).
  uint64_t refs = 0;
  exact.ForEach([&](const EntryView& e) { refs += e.refcount; });
  EXPECT_EQ(refs, 400000u);
  // The running count covers every entry and index slot, and gives back what a raise drops.
  // At least 22 bytes per entry (12 key, 4 refcount, 2 lsize, 2 x 2 codes) plus 4 of index.
  EXPECT_GE(exact.memory_bytes(), exact.entries() * (22 + 4));
  EXPECT_LT(exact.memory_bytes(), exact.entries() * 64);
  const uint64_t before = exact.memory_bytes();
  exact.RaiseSampleShift(1);
  EXPECT_LT(exact.memory_bytes(), before * 6 / 10);
  EXPECT_GT(exact.memory_bytes(), before * 4 / 10);
  exact.RaiseSampleShift(0);  // not a raise: nothing changes
  EXPECT_LT(exact.memory_bytes(), before * 6 / 10);
  exact.ForEach([&](const EntryView& e) { EXPECT_EQ(e.key.hi & 1, 0u); });
  DedupTable empty(2);
  EXPECT_EQ(empty.memory_bytes(), 0u);
}

TEST(DedupTableTest, OriginsStayWithTheirEntryThroughMergeAndSamplingAndCostNoBudget) {
  // A distributed scan's census (mpi/heavy_census.h) finds a heavy key's block by its entry's
  // origin: the first one given stays through Merge and a raised sample shift, the entries read
  // as before, and memory_bytes() is a table's without origins (budgets sample alike).
  DedupTable plain(2), a(2), b(2);
  a.KeepOrigins();
  b.KeepOrigins();
  EXPECT_TRUE(a.keeps_origins());
  EXPECT_FALSE(plain.keeps_origins());
  const PsizeCode codes[2] = {7, 9};
  for (uint64_t i = 0; i < 5000; ++i) {
    plain.Insert(Key(i), 4096);
    plain.SetCodes(Key(i), codes);
    a.Insert(Key(i), 4096, false, nullptr, 1000 + i);
    a.Insert(Key(i), 4096, false, nullptr, 999999);  // a later sighting keeps the first origin
    a.SetCodes(Key(i), codes);
  }
  for (uint64_t i = 2500; i < 7500; ++i) b.Insert(Key(i), 4096, false, nullptr, 50000 + i);
  EXPECT_EQ(a.memory_bytes(), plain.memory_bytes());
  EXPECT_GE(a.origin_bytes(), 5000u * 8);
  a.Merge(b);
  std::map<uint64_t, uint64_t> origin_of;  // key.lo -> origin
  a.ForEach([&](const EntryView& e) { origin_of[e.key.lo] = e.origin; });
  ASSERT_EQ(origin_of.size(), 7500u);
  for (uint64_t i = 0; i < 7500; ++i) {
    EXPECT_EQ(origin_of[Key(i).lo], i < 5000 ? 1000 + i : 50000 + i) << i;
  }
  std::map<uint64_t, uint64_t> index_of;  // key.lo -> i
  for (uint64_t i = 0; i < 7500; ++i) index_of[Key(i).lo] = i;
  a.RaiseSampleShift(1);
  uint64_t seen = 0;
  a.ForEach([&](const EntryView& e) {
    ++seen;
    const uint64_t i = index_of[e.key.lo];
    EXPECT_EQ(e.origin, i < 5000 ? 1000 + i : 50000 + i) << i;
    EXPECT_EQ(e.refcount, i < 2500 ? 2u : i < 5000 ? 3u : 1u) << i;
    EXPECT_EQ(e.codes[0], i < 5000 ? 7 : kPendingCode) << i;
  });
  EXPECT_GT(seen, 2000u);
  plain.ForEach([](const EntryView& e) { EXPECT_EQ(e.origin, 0u); });
}

// Entries in key order (shard, hi, lo), as a state file holds them, with refcounts and codes.
std::vector<EntryView> InKeyOrder(const DedupTable& table, std::vector<PsizeCode>* codes) {
  std::vector<EntryView> views;
  table.ForEach([&](const EntryView& e) {
    views.push_back(e);
    codes->insert(codes->end(), e.codes.begin(), e.codes.end());
  });
  const size_t n = table.settings();
  for (size_t i = 0; i < views.size(); ++i) {
    views[i].codes = std::span<const PsizeCode>(*codes).subspan(i * n, n);
  }
  std::sort(views.begin(), views.end(), [](const EntryView& a, const EntryView& b) {
    return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
  });
  return views;
}

// Everything a table's ForEach gives, in its order.
std::vector<std::tuple<uint64_t, uint64_t, uint32_t, uint64_t, std::vector<PsizeCode>>> Dump(
    const DedupTable& table) {
  std::vector<std::tuple<uint64_t, uint64_t, uint32_t, uint64_t, std::vector<PsizeCode>>> out;
  table.ForEach([&](const EntryView& e) {
    out.emplace_back(e.key.hi, e.key.lo, e.refcount, e.lsize,
                     std::vector<PsizeCode>(e.codes.begin(), e.codes.end()));
  });
  return out;
}

// The loader of saved tables: in key order it appends without probing and builds each shard's
// index at once; the table it gives is LoadNewEntry's, entry for entry and byte for byte, and
// every key is found. Keys whose homes lie at the end of their shard's index wrap to its start;
// a large shard's index is built while the next shards load.
TEST(DedupTableTest, AnOrderedLoadGivesTheTableOfEntryByEntryLoading) {
  using Kind = SettingStorage::Kind;
  const std::vector<SettingStorage> layout = {{Kind::kInline, true}, {Kind::kSide, true}};
  DedupTable source(layout);
  for (uint64_t i = 0; i < 40000; ++i) {
    const Fingerprint k = Key(i % 30000);
    if (source.Insert(k, 4096) == InsertOutcome::kFirst) {
      const PsizeCode c[2] = {EncodeAllocated(512 * (1 + i % 8)),
                              i % 5 == 0 ? EncodeAllocated(1024) : kPendingCode};
      source.SetCodes(k, c);
    }
  }
  // Shard 7: 300 keys whose home is the last slot of any index (Home takes lo's low 32 bits
  // first), so most of them wrap to slot 0 and on.
  for (uint64_t i = 0; i < 300; ++i) {
    const Fingerprint k{(i << 32) | 0xFFFFFFFFu | ((i * 0x9E37) << 48), (uint64_t{7} << 56) | i};
    source.Insert(k, 8192);
  }
  // Shard 3: 6,000 keys more, enough for its index to be built on a thread of its own while
  // the next shards load.
  for (uint64_t i = 0; i < 6000; ++i) {
    Fingerprint k = Key(100000 + i);
    k.hi = (uint64_t{3} << 56) | (k.hi & 0xFFFFFFFFu);
    source.Insert(k, 4096);
  }
  std::vector<PsizeCode> codes;
  const std::vector<EntryView> views = InKeyOrder(source, &codes);
  ASSERT_EQ(views.size(), 36300u);

  DedupTable probed(layout), ordered(layout);
  probed.Reserve(views.size());
  ordered.Reserve(views.size());
  for (const EntryView& e : views) ASSERT_TRUE(probed.LoadNewEntry(e));
  {
    DedupTable::OrderedLoader loader(ordered);
    for (const EntryView& e : views) ASSERT_TRUE(loader.Add(e));
  }
  EXPECT_EQ(Dump(ordered), Dump(probed));
  EXPECT_EQ(ordered.memory_bytes(), probed.memory_bytes());
  for (const EntryView& e : views) {
    const uint32_t ref = ordered.Find(e.key);
    ASSERT_NE(ref, DedupTable::kDroppedRef);
    EXPECT_EQ(ref, probed.Find(e.key));
  }
  // The index takes more keys afterwards, and knows the loaded ones.
  EXPECT_EQ(ordered.Insert(views[123].key, 4096), InsertOutcome::kDuplicate);
  EXPECT_EQ(ordered.Insert(Key(999999), 4096), InsertOutcome::kFirst);
  EXPECT_EQ(ordered.entries(), views.size() + 1);
}

// A key given twice is refused in order and out of it; keys out of key order (a file written
// before the order) still load, by probing, to the same table; a sampled-out key is refused.
TEST(DedupTableTest, AnOrderedLoadRefusesRepeatsAndTakesKeysOutOfOrder) {
  DedupTable source(1);
  for (uint64_t i = 0; i < 5000; ++i) source.Insert(Key(i), 4096);
  std::vector<PsizeCode> codes;
  std::vector<EntryView> views = InKeyOrder(source, &codes);
  {
    DedupTable t(1);
    DedupTable::OrderedLoader loader(t);
    ASSERT_TRUE(loader.Add(views[0]));
    EXPECT_FALSE(loader.Add(views[0]));
    ASSERT_TRUE(loader.Add(views[1]));
    EXPECT_FALSE(loader.Add(views[0])) << "an earlier key again, once probing";
  }
  // Shards in reverse, and within them the keys in reverse from the middle on.
  std::reverse(views.begin(), views.end());
  std::reverse(views.begin(), views.begin() + views.size() / 2);
  DedupTable probed(1), ordered(1);
  for (const EntryView& e : views) ASSERT_TRUE(probed.LoadNewEntry(e));
  {
    DedupTable::OrderedLoader loader(ordered);
    for (const EntryView& e : views) ASSERT_TRUE(loader.Add(e));
    EXPECT_FALSE(loader.Add(views[17]));
  }
  EXPECT_EQ(Dump(ordered), Dump(probed));
  for (const EntryView& e : views) EXPECT_NE(ordered.Find(e.key), DedupTable::kDroppedRef);

  DedupTable sampled(1);
  sampled.RaiseSampleShift(1);
  DedupTable::OrderedLoader loader(sampled);
  size_t kept = 0;
  for (const EntryView& e : InKeyOrder(source, &codes)) kept += loader.Add(e);
  loader.Finish();
  EXPECT_GT(kept, 2000u);
  EXPECT_LT(kept, 3000u);
  EXPECT_EQ(sampled.entries(), kept);
}

TEST(DedupTableTest, CodesRoundTrip) {
  EXPECT_EQ(AllocatedPsize(EncodeAllocated(512)), 512u);
  EXPECT_EQ(AllocatedPsize(EncodeAllocated(16u << 20)), 16u << 20);
  EXPECT_EQ(EmbeddedPayload(EncodeEmbedded(1)), 1u);
  EXPECT_EQ(EmbeddedPayload(EncodeEmbedded(112)), 112u);
  EXPECT_FALSE(IsEmbeddedCode(EncodeAllocated(16u << 20)));
  EXPECT_TRUE(IsHoleCode(kHoleCode));
}

}  // namespace
}  // namespace zsim::ddt
