#include "engine/zfs/indirect_ranges.h"

#include <algorithm>
#include <iterator>

namespace zsim::zfs {
namespace {

constexpr int kBlockPointerBytesShift = 7;  // SPA_BLKPTRSHIFT: a block pointer is 128 bytes
constexpr int kLevelKeyShift = 56;          // edge keys: level << 56 | range index
constexpr int kMaxLevels = 8;               // 2^55 L0 blocks of 512 B at 128 pointers per level

// The L0 blocks a range of level `level` covers, clipped to the file's `blocks`.
void RangeBlocks(uint64_t index, int level, int bp_shift, uint64_t blocks, uint64_t* lo,
                 uint64_t* hi) {
  const int shift = level * bp_shift;
  if (shift >= 64) {
    *lo = 0;
    *hi = blocks;
    return;
  }
  *lo = std::min(blocks, index << shift);
  const uint64_t span = uint64_t{1} << shift;
  *hi = blocks - *lo <= span ? blocks : *lo + span;
}

}  // namespace

int BlockPointerShift(Profile profile) {
  return RulesFor(profile).indirect_block_shift - kBlockPointerBytesShift;
}

int IndirectLevels(uint64_t blocks, int bp_shift) {
  int levels = 0;
  while (blocks > 1) {
    blocks = (blocks >> bp_shift) + ((blocks & ((uint64_t{1} << bp_shift) - 1)) != 0);
    ++levels;
  }
  return levels;
}

void IndirectRanges::StartPart(uint64_t first, uint64_t end, uint64_t blocks, int bp_shift) {
  bp_shift_ = bp_shift;
  levels_ = std::min(IndirectLevels(blocks, bp_shift), kMaxLevels);
  first_ = first;
  end_ = end;
  blocks_ = blocks;
  std::fill(std::begin(last_), std::end(last_), ~uint64_t{0});
  if (inside_.size() < static_cast<size_t>(levels_)) inside_.resize(levels_, 0);
}

void IndirectRanges::AddNewL1(uint64_t blkid) {
  for (int level = 1; level <= levels_; ++level) {
    const int shift = level * bp_shift_;
    const uint64_t index = shift >= 64 ? 0 : blkid >> shift;
    if (index == last_[level - 1]) return;  // and so are the levels above
    last_[level - 1] = index;
    uint64_t lo = 0, hi = 0;
    RangeBlocks(index, level, bp_shift_, blocks_, &lo, &hi);
    if (lo >= first_ && hi <= end_) {
      ++inside_[level - 1];  // no other part holds a block of it
      continue;
    }
    const uint64_t key = static_cast<uint64_t>(level) << kLevelKeyShift | index;
    const auto at = std::lower_bound(edges_.begin(), edges_.end(), key);
    if (at == edges_.end() || *at != key) edges_.insert(at, key);
  }
}

void IndirectRanges::Merge(const IndirectRanges& other) {
  if (inside_.size() < other.inside_.size()) inside_.resize(other.inside_.size(), 0);
  for (size_t l = 0; l < other.inside_.size(); ++l) inside_[l] += other.inside_[l];
  if (other.edges_.empty()) return;
  std::vector<uint64_t> merged;
  merged.reserve(edges_.size() + other.edges_.size());
  std::set_union(edges_.begin(), edges_.end(), other.edges_.begin(), other.edges_.end(),
                 std::back_inserter(merged));
  edges_ = std::move(merged);
}

std::vector<uint64_t> IndirectRanges::Counts() const {
  std::vector<uint64_t> counts = inside_;
  for (const uint64_t key : edges_) {
    const size_t level = static_cast<size_t>(key >> kLevelKeyShift);
    if (counts.size() < level) counts.resize(level, 0);
    ++counts[level - 1];
  }
  return counts;
}

bool IndirectRanges::empty() const {
  return edges_.empty() &&
         std::all_of(inside_.begin(), inside_.end(), [](uint64_t n) { return n == 0; });
}

void IndirectRanges::Clear() {
  inside_.clear();
  edges_.clear();
  levels_ = 0;
}

bool IndirectRanges::Assign(std::vector<uint64_t> inside, std::vector<uint64_t> edges) {
  Clear();
  bool ok = inside.size() <= kMaxLevels;
  for (size_t i = 0; ok && i < edges.size(); ++i) {
    const uint64_t level = edges[i] >> kLevelKeyShift;
    ok = level >= 1 && level <= inside.size() && (i == 0 || edges[i - 1] < edges[i]);
  }
  if (!ok) return false;
  inside_ = std::move(inside);
  edges_ = std::move(edges);
  return true;
}

}  // namespace zsim::zfs
