// The scan's tables changed wholesale while it runs (pipeline/table_gate.h, ScanControl's
// table_gate, tables_started and chunk_done): what a distributed scan's table stream does
// (engine/mpi/table_stream.h), without MPI. The gate's promises, and a scan whose tables lose
// half their shards after every chunk, to a table merged back at the end, reporting as the
// plain scan.

#include "engine/pipeline/table_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/finish/finish.h"
#include "engine/pipeline/scan.h"
#include "tests/util/result_compare.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

// Waits (yielding) until `done`, for at most 30 s: a gate that breaks its promise fails the
// test rather than hanging it. The bound is no timing of the gate: a correct one gets there at
// once.
template <typename Done>
bool WaitUntil(Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(TableGateTest, AWaitingWriterComesBeforeNewReaders) {
  TableGate gate;
  std::mutex mu;
  std::vector<std::string> order;
  auto note = [&](const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(what);
  };
  auto entered = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return order;
  };
  gate.lock_shared();  // a worker inside a chunk
  std::thread writer([&] {
    std::lock_guard<TableGate> lock(gate);
    note("writer");
  });
  // The writer waits for the reader inside; only then does a new reader come.
  ASSERT_TRUE(WaitUntil([&] { return gate.waiting_writers() == 1 || !entered().empty(); }));
  EXPECT_TRUE(entered().empty()) << "entered while a reader held the gate: " << entered()[0];
  std::thread reader([&] {
    std::shared_lock<TableGate> lock(gate);
    note("reader");
  });
  // The new reader must wait behind the writer: it is seen waiting, never inside.
  const bool waited = WaitUntil([&] { return gate.waiting_readers() == 1 || !entered().empty(); });
  EXPECT_TRUE(waited);
  EXPECT_TRUE(entered().empty()) << "entered past a waiting writer: " << entered()[0];
  gate.unlock_shared();
  writer.join();
  reader.join();
  EXPECT_EQ(order, (std::vector<std::string>{"writer", "reader"}));
}

TEST(TableGateTest, ReadersShareTheGate) {
  // Three readers each stay inside until all three are: a gate that let in one at a time would
  // never get there.
  TableGate gate;
  std::atomic<int> inside{0};
  std::atomic<int> met{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      std::shared_lock<TableGate> lock(gate);
      inside.fetch_add(1);
      if (WaitUntil([&] { return inside.load() == 3; })) met.fetch_add(1);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(met.load(), 3);
}

TEST(TableGateTest, AWriterIsAloneWhileReadersHoldTheGateAWhile) {
  // Readers hold the gate for a while (a few yields) and look for a writer inside, before and
  // after; the writer holds it a while too and looks for readers. Neither ever sees the other.
  TableGate gate;
  std::atomic<int> inside{0};
  std::atomic<bool> writing{false};
  std::atomic<bool> overlap{false};
  std::atomic<int> writes{0};
  auto hold = [] {
    for (int k = 0; k < 20; ++k) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1500; ++i) {
        std::shared_lock<TableGate> lock(gate);
        inside.fetch_add(1);
        if (writing.load()) overlap = true;
        hold();
        if (writing.load()) overlap = true;
        inside.fetch_sub(1);
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 150; ++i) {
      std::lock_guard<TableGate> lock(gate);
      writing = true;
      if (inside.load() != 0) overlap = true;
      hold();
      if (inside.load() != 0) overlap = true;
      writing = false;
      writes.fetch_add(1);
    }
  });
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(writes.load(), 150);
}

// Every chunk, the odd shards of every table leave for `away` (as a rank ships the shards other
// ranks own) and are merged back after the scan: the report is the plain scan's, codes included
// (a key met again after its shard left is a first sighting again; its codes agree).
TEST(TableGateTest, ShardsTakenOutDuringTheScanAndMergedBackGiveThePlainScan) {
  testing::TempDir tmp;
  const std::vector<uint8_t> image = testing::Xorshift64Bytes(5, 3 * 1024 * K);
  for (int i = 0; i < 4; ++i) tmp.WriteFile("img" + std::to_string(i), image);
  for (int i = 0; i < 6; ++i) {
    tmp.WriteFile("doc" + std::to_string(i), testing::GenerateBlock(2048 * K, 0.3 * i, 7 + i));
  }
  ScanOptions o;
  o.paths = {tmp.path().string()};
  o.recordsizes = {16 * K, 128 * K};
  o.compressions = {{CompressionAlgorithm::kLz4, 0}, {CompressionAlgorithm::kZstd, 3}};
  o.threads = 3;
  auto fs = io::PosixFileSystem();
  Result<state::ScanState> plain = ScanToState(o, fs.get());
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();

  TableGate gate;
  std::vector<ddt::DedupTable*> tables;
  std::vector<std::unique_ptr<ddt::DedupTable>> away;
  int moves = 0;
  ScanControl control;
  control.table_gate = &gate;
  control.tables_started = [&](const std::vector<ddt::DedupTable*>& t) {
    tables = t;
    for (ddt::DedupTable* table : t)
      away.push_back(std::make_unique<ddt::DedupTable>(table->layout()));
  };
  control.chunk_done = [&] {
    std::lock_guard<TableGate> lock(gate);
    for (size_t r = 0; r < tables.size(); ++r) {
      ddt::DedupTable part(tables[r]->layout());
      for (size_t k = 1; k < ddt::DedupTable::kShards; k += 2) {
        tables[r]->ForEachInShard(k, [&](const ddt::EntryView& e) { part.LoadEntry(e); });
        tables[r]->DropShard(k);
      }
      away[r]->Merge(part);
    }
    ++moves;
  };
  Result<state::ScanState> moved = ScanToState(o, fs.get(), control);
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_GT(moves, 5);
  uint64_t away_entries = 0;
  for (size_t r = 0; r < away.size(); ++r) {
    away_entries += away[r]->entries();
    moved->rows[r].table->Merge(*away[r]);
  }
  EXPECT_GT(away_entries, 0u);
  testing::ExpectSameFigures(finish::Finish(*plain, finish::ReportOptionsOf(plain->options)),
                             finish::Finish(*moved, finish::ReportOptionsOf(moved->options)));
}

}  // namespace
}  // namespace zsim::pipeline
