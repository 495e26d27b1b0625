#include "engine/walk/file_sample.h"

#include <algorithm>
#include <bit>

#include "engine/base/mix.h"

namespace zsim::walk {
namespace {
constexpr uint64_t kSizeSeed = 0x5A1E5C0DE0F11E5Dull;
}  // namespace

int FileSizeLevel(uint64_t size) {
  const uint64_t h = Mix64(size ^ kSizeSeed);
  return h == 0 ? 64 : std::countr_zero(h);
}

void FileSample::Offer(std::vector<SampledFile> files) {
  std::lock_guard<std::mutex> lock(mu_);
  int level = level_.load(std::memory_order_relaxed);
  for (SampledFile& f : files) {
    if (FileSizeLevel(f.size) >= level) kept_.push_back(std::move(f));
  }
  while (kept_.size() > capacity_) {
    ++level;
    std::erase_if(kept_, [level](const SampledFile& f) { return FileSizeLevel(f.size) < level; });
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
