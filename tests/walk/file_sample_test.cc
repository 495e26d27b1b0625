// walk/file_sample.h: a bounded sample of files, chosen by the hash level of their sizes.

#include "engine/walk/file_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace zsim::walk {
namespace {

std::vector<SampledFile> Files(int n, uint64_t first_size) {
  std::vector<SampledFile> files;
  for (int i = 0; i < n; ++i) {
    files.push_back(SampledFile{"d/" + std::to_string(i), first_size + uint64_t(i)});
  }
  return files;
}

// Under the capacity every file is kept, sorted by path, at level 0.
TEST(FileSampleTest, KeepsEveryFileUnderTheCapacity) {
  FileSample sample(100);
  sample.Offer(Files(60, 1000));
  sample.Offer(Files(40, 5000));
  EXPECT_EQ(sample.level(), 0);
  const std::vector<SampledFile> kept = sample.Take();
  ASSERT_EQ(kept.size(), 100u);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));
}

// Over it the level rises: exactly the files at the final level or above are kept, whatever
// order and batches they came in; files of one size are not kept or left all together.
TEST(FileSampleTest, OverTheCapacityTheSameFilesInAnyOrder) {
  std::vector<SampledFile> all = Files(5000, 1);
  for (int i = 0; i < 500; ++i) all.push_back(SampledFile{"copy/" + std::to_string(i), 7});
  FileSample forward(256), backward(256);
  for (size_t i = 0; i < all.size(); i += 100) {
    forward.Offer(std::vector<SampledFile>(all.begin() + i, all.begin() + i + 100));
  }
  std::vector<SampledFile> reversed(all.rbegin(), all.rend());
  backward.Offer(reversed);
  ASSERT_GT(forward.level(), 0);
  EXPECT_EQ(forward.level(), backward.level());
  const std::vector<SampledFile> a = forward.Take(), b = backward.Take();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LE(a.size(), 256u);
  size_t expected = 0;
  for (const SampledFile& f : all) expected += FileLevel(f.path) >= forward.level();
  EXPECT_EQ(a.size(), expected);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].path, b[i].path);
  const size_t copies = std::count_if(
      a.begin(), a.end(), [](const SampledFile& f) { return f.path.starts_with("copy/"); });
  EXPECT_GT(copies, 0u);
  EXPECT_LT(copies, 500u);
}

}  // namespace
}  // namespace zsim::walk
