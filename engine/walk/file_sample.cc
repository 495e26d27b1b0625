#include "engine/walk/file_sample.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/base/mix.h"

namespace zsim::walk {
namespace {
constexpr uint64_t kPathSeed = 0x5A1E5C0DE0F11E5Dull;
}  // namespace

int FileLevel(std::string_view path) {
  // splitmix64's finaliser over the path's 8-byte words (the walk module has no xxhash).
  uint64_t h = kPathSeed ^ path.size();
  for (size_t i = 0; i < path.size(); i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, path.data() + i, std::min<size_t>(8, path.size() - i));
    h = Mix64(h ^ word) + kGoldenGamma;
  }
  h = Mix64(h);
  return h == 0 ? 64 : std::countr_zero(h);
}

void FileSample::Offer(std::vector<SampledFile> files) {
  std::lock_guard<std::mutex> lock(mu_);
  int level = level_.load(std::memory_order_relaxed);
  for (SampledFile& f : files) {
    if (FileLevel(f.path) >= level) kept_.push_back(std::move(f));
  }
  while (kept_.size() > capacity_) {
    ++level;
    std::erase_if(kept_, [level](const SampledFile& f) { return FileLevel(f.path) < level; });
  }
  level_.store(level, std::memory_order_relaxed);
}

std::vector<SampledFile> FileSample::Take() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SampledFile> out = std::move(kept_);
  kept_.clear();
  std::sort(out.begin(), out.end(),
            [](const SampledFile& a, const SampledFile& b) { return a.path < b.path; });
  return out;
}

}  // namespace zsim::walk
