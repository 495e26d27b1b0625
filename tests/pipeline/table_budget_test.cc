// state::FitTablesToShards: a dedup table whose fullest shard nears the limit of its 24-bit
// entry ids samples the key space (every row alike) instead of leaving keys out silently, as a
// scan checks after every chunk and a merge before it adds a table; the counts it follows
// (DedupTable::fullest_shard) drop with the entries a raised sample drops.

#include "engine/state/table_budget.h"

#include <gtest/gtest.h>

#include "engine/ddt/dedup_table.h"

namespace zsim::state {
namespace {

// A row whose table holds `n` keys, all of shard 0 (the top 8 bits of hi zero).
RowState RowOf(uint64_t n, uint64_t seed) {
  RowState r;
  r.block_bytes = 4096;
  r.table = std::make_unique<ddt::DedupTable>(1);
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t x = (i + seed) * 0x9E3779B97F4A7C15ull;
    r.table->Insert(ddt::Fingerprint{x ^ 0x5555, (x >> 8) | 1}, 4096);
    // hi's low bit is 1 for half the keys and 0 for the other half (i's parity).
    if (i % 2 == 0) r.table->Insert(ddt::Fingerprint{x ^ 0xAAAA, (x >> 8) & ~uint64_t{1}}, 4096);
  }
  return r;
}

TEST(TableBudgetTest, AShardNearItsLimitSamplesTheTable) {
  std::vector<RowState> rows;
  rows.push_back(RowOf(20000, 1));
  rows.push_back(RowOf(100, 2));
  const uint64_t entries = rows[0].table->entries();
  ASSERT_EQ(entries, 30000u);
  EXPECT_GE(rows[0].table->fullest_shard(), 28672u);  // rounded down to 4096s
  FitTablesToShards(rows, nullptr, 40000);            // below the limit: nothing changes
  EXPECT_EQ(rows[0].table->sample_shift(), 0u);
  FitTablesToShards(rows, nullptr, 20000);
  // Half the key space kept (the keys whose hi ends in a zero bit), in every row alike.
  EXPECT_EQ(rows[0].table->sample_shift(), 1u);
  EXPECT_EQ(rows[1].table->sample_shift(), 1u);
  EXPECT_EQ(rows[0].table->entries(), 10000u);
  EXPECT_LE(rows[0].table->fullest_shard() + 4096u, 20000u);
  EXPECT_FALSE(rows[0].table->overflowed());
  // A table about to be merged in counts too (the keys the raised sample leaves of it).
  std::vector<RowState> other;
  other.push_back(RowOf(20000, 3));
  other.push_back(RowOf(10, 4));
  FitTablesToShards(rows, &other, 20000);
  EXPECT_EQ(rows[0].table->sample_shift(), 2u);
}

// The same over bare tables (engine/mpi's stream holds its received tables outside a state): the
// tables about to be merged are given per table, null where none is.
TEST(TableBudgetTest, BareTablesSampleAsRowsDo) {
  std::vector<RowState> rows;
  rows.push_back(RowOf(20000, 1));
  rows.push_back(RowOf(100, 2));
  const std::vector<ddt::DedupTable*> tables = {rows[0].table.get(), rows[1].table.get()};
  FitTablesToShards(tables, {}, 40000);
  EXPECT_EQ(tables[0]->sample_shift(), 0u);
  FitTablesToShards(tables, {}, 20000);
  EXPECT_EQ(tables[0]->sample_shift(), 1u);
  EXPECT_EQ(tables[1]->sample_shift(), 1u);
  EXPECT_EQ(tables[0]->entries(), 10000u);
  std::vector<RowState> other;
  other.push_back(RowOf(20000, 3));
  FitTablesToShards(tables, {other[0].table.get(), nullptr}, 20000);
  EXPECT_EQ(tables[0]->sample_shift(), 2u);
  EXPECT_EQ(tables[1]->sample_shift(), 2u);
}

}  // namespace
}  // namespace zsim::state
