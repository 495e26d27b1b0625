// WorkPool (engine/mpi/work.h): rank 0 hands the walk out in batches. With several ranks, items of
// the same size and offset (copies of a file, clones of an image at their common offsets) go to
// one rank while it keeps up, so that their blocks meet in one rank's table and are coded once;
// every item is handed out exactly once; a rank that does not ask holds back at most its queue,
// and one that left (Forget) nothing.

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/mpi/work.h"

namespace zsim::mpi {
namespace {

constexpr uint64_t MiB = uint64_t{1} << 20;

class ListWalk : public walk::WalkSource {
 public:
  explicit ListWalk(std::vector<walk::WalkItem> items) : items_(std::move(items)) {}
  std::optional<walk::WalkItem> Next() override {
    if (next_ == items_.size()) return std::nullopt;
    return items_[next_++];
  }

 private:
  std::vector<walk::WalkItem> items_;
  size_t next_ = 0;
};

// Joins `parts` (GCC 12 warns of a false overlap in chains of std::string operator+ at -O3).
std::string Join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const std::string& p : parts) out.append(p);
  return out;
}

walk::WalkItem File(const std::string& path, uint64_t size) {
  walk::WalkItem item;
  item.kind = walk::WalkItem::Kind::kFile;
  item.path = path;
  item.info.type = io::FileType::kRegular;
  item.info.size = size;
  return item;
}

// `n` files of n sizes, f0 to f<n-1>; their "path@0" appended to `expected`.
std::vector<walk::WalkItem> FilesOfSizes(int n, std::vector<std::string>* expected) {
  std::vector<walk::WalkItem> items;
  for (int f = 0; f < n; ++f) {
    const std::string path = Join({"f", std::to_string(f)});
    items.push_back(File(path, 1000 + static_cast<uint64_t>(f)));
    expected->push_back(Join({path, "@0"}));
  }
  return items;
}

walk::WalkItem Directory(const std::string& path) {
  walk::WalkItem item;
  item.kind = walk::WalkItem::Kind::kDirectory;
  item.path = path;
  item.info.type = io::FileType::kDirectory;
  return item;
}

// "path@begin" for each item a rank took, until every rank's batch came back empty; ranks take
// turns (a rank listed in `idle` never asks until the others are done).
std::map<int, std::vector<std::string>> TakeAll(WorkPool& pool, int ranks, int idle = -1) {
  std::map<int, std::vector<std::string>> taken;
  std::vector<bool> done(static_cast<size_t>(ranks), false);
  for (int left = ranks; left > 0;) {
    for (int r = 0; r < ranks; ++r) {
      if (done[static_cast<size_t>(r)]) continue;
      if (r == idle && left > 1) continue;
      const std::vector<walk::WalkItem> batch = pool.Take(r);
      if (batch.empty()) {
        done[static_cast<size_t>(r)] = true;
        --left;
      }
      for (const walk::WalkItem& item : batch) {
        taken[r].push_back(Join({item.path, "@", std::to_string(item.piece_begin)}));
      }
    }
  }
  return taken;
}

// Every item taken once, by anyone.
void ExpectEachOnce(const std::map<int, std::vector<std::string>>& taken,
                    const std::vector<std::string>& expected) {
  std::map<std::string, int> count;
  for (const auto& [rank, items] : taken) {
    for (const std::string& item : items) ++count[item];
  }
  ASSERT_EQ(count.size(), expected.size());
  for (const std::string& item : expected) EXPECT_EQ(count[item], 1) << item;
}

int RankOf(const std::map<int, std::vector<std::string>>& taken, const std::string& item) {
  for (const auto& [rank, items] : taken) {
    for (const std::string& i : items) {
      if (i == item) return rank;
    }
  }
  return -1;
}

TEST(WorkPoolTest, OneRankTakesTheWalkInItsOrder) {
  std::vector<walk::WalkItem> items = {Directory("d"), File("a", 10), File("b", 20)};
  WorkPool pool(std::make_unique<ListWalk>(items), 0, 8 * MiB);
  const std::vector<walk::WalkItem> batch = pool.Take();
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[0].path, "d");
  EXPECT_EQ(batch[1].path, "a");
  EXPECT_EQ(batch[2].path, "b");
  EXPECT_TRUE(pool.Take().empty());
}

// Copies and clones meet on one rank while the walk lasts; once it is done a rank that has no
// more of its own takes from a queue longer than a batch, so the last items may go elsewhere.
// Handed out without regard to size and offset, 1 in ranks^(copies - 1) would.

TEST(WorkPoolTest, CopiesOfAFileGoToOneRank) {
  // 400 files of 400 sizes, then 3 copies of them, in 4 directories one after another.
  constexpr int kFiles = 400;
  std::vector<walk::WalkItem> items;
  std::vector<std::string> expected;
  for (int copy = 0; copy < 4; ++copy) {
    const std::string dir = Join({"dir", std::to_string(copy)});
    items.push_back(Directory(dir));
    expected.push_back(Join({dir, "@0"}));
    for (int f = 0; f < kFiles; ++f) {
      const std::string path = Join({dir, "/f", std::to_string(f)});
      items.push_back(File(path, 1000 + 17 * static_cast<uint64_t>(f)));
      expected.push_back(Join({path, "@0"}));
    }
  }
  // Batches of 16 KiB: about a dozen files each, so every rank takes many.
  WorkPool pool(std::make_unique<ListWalk>(items), 16384, 4096, 4);
  const auto taken = TakeAll(pool, 4);
  ExpectEachOnce(taken, expected);
  int together = 0;
  for (int f = 0; f < kFiles; ++f) {
    const std::string name = Join({"/f", std::to_string(f), "@0"});
    const int rank = RankOf(taken, Join({"dir0", name}));
    bool same = true;
    for (int copy = 1; copy < 4; ++copy) {
      same = same && RankOf(taken, Join({"dir", std::to_string(copy), name})) == rank;
    }
    together += same;
  }
  EXPECT_GE(together, kFiles * 9 / 10);  // 368: the rest went at the walk's end
  for (int r = 0; r < 4; ++r) EXPECT_GT(taken.count(r) ? taken.at(r).size() : 0, 200u) << r;
}

TEST(WorkPoolTest, ClonesOfAnImageGoToOneRankAtEachOffset) {
  // Three images of 4 GiB in pieces of 1 MiB: each offset's three pieces go to one rank.
  constexpr uint64_t kImage = 4096 * MiB;
  std::vector<walk::WalkItem> items = {File("a.img", kImage), File("b.img", kImage),
                                       File("c.img", kImage)};
  WorkPool pool(std::make_unique<ListWalk>(items), MiB, MiB, 3);
  const auto taken = TakeAll(pool, 3);
  std::vector<std::string> expected;
  for (const char* image : {"a.img", "b.img", "c.img"}) {
    for (uint64_t at = 0; at < kImage; at += MiB) {
      expected.push_back(Join({image, "@", std::to_string(at)}));
    }
  }
  ExpectEachOnce(taken, expected);
  int together = 0;
  for (uint64_t at = 0; at < kImage; at += MiB) {
    const std::string offset = Join({"@", std::to_string(at)});
    const int rank = RankOf(taken, Join({"a.img", offset}));
    together += RankOf(taken, Join({"b.img", offset})) == rank &&
                RankOf(taken, Join({"c.img", offset})) == rank;
  }
  EXPECT_GE(together, 4096 * 95 / 100);  // 3,987 (at 8 batches a rank: 3,757)
  for (int r = 0; r < 3; ++r) EXPECT_GT(taken.count(r) ? taken.at(r).size() : 0, 200u) << r;
}

TEST(WorkPoolTest, ARankThatDoesNotAskHoldsBackAtMostItsQueue) {
  // Rank 1 asks only once rank 0 has had all it could: rank 0 takes rank 1's items once
  // kParkedBatches batches' worth wait for it, so rank 1 is left at most that.
  std::vector<std::string> expected;
  const std::vector<walk::WalkItem> items = FilesOfSizes(400, &expected);
  WorkPool pool(std::make_unique<ListWalk>(items), 8192, 4096, 2);
  const auto taken = TakeAll(pool, 2, /*idle=*/1);
  ExpectEachOnce(taken, expected);
  uint64_t left_for_1 = 0;
  for (const walk::WalkItem& item : items) {
    if (RankOf(taken, Join({item.path, "@0"})) == 1) left_for_1 += item.info.size;
  }
  EXPECT_LE(left_for_1, kParkedBatches * 8192 + 1400);  // and the item that filled them
  EXPECT_GT(taken.at(0).size(), 300u);
}

// A rank that leaves early (Ctrl-C on it: it says goodbye instead of asking) is forgotten:
// what waited for it, and what the walk would have given it, goes to the others.
TEST(WorkPoolTest, WhatWaitsForARankThatLeftGoesToTheOthers) {
  std::vector<std::string> expected;
  const std::vector<walk::WalkItem> items = FilesOfSizes(400, &expected);
  WorkPool pool(std::make_unique<ListWalk>(items), 8192, 4096, 2);
  std::map<int, std::vector<std::string>> taken;
  for (const walk::WalkItem& item : pool.Take(1)) taken[1].push_back(Join({item.path, "@0"}));
  for (const walk::WalkItem& item : pool.Take(0)) taken[0].push_back(Join({item.path, "@0"}));
  pool.Forget(1);
  for (std::vector<walk::WalkItem> b = pool.Take(0); !b.empty(); b = pool.Take(0)) {
    for (const walk::WalkItem& item : b) taken[0].push_back(Join({item.path, "@0"}));
  }
  ExpectEachOnce(taken, expected);
}

}  // namespace
}  // namespace zsim::mpi
