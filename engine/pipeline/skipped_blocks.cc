#include "engine/pipeline/skipped_blocks.h"

namespace zsim::pipeline {

SkippedBlocks::SkippedBlocks(size_t rows)
    : overflowed_(std::make_unique<std::atomic<bool>[]>(rows)), rows_(rows), keys_(rows) {
  for (size_t r = 0; r < rows; ++r) overflowed_[r].store(false);
}

uint32_t SkippedBlocks::ItemOf(std::atomic<uint32_t>* slot, const std::string& path, bool follow) {
  uint32_t id = slot->load(std::memory_order_acquire);
  if (id != kNoItem) return id;
  std::lock_guard<std::mutex> lock(mu_);
  id = slot->load(std::memory_order_relaxed);
  if (id == kNoItem) {
    id = static_cast<uint32_t>(items_.size());
    items_.push_back(Item{path, follow});
    slot->store(id, std::memory_order_release);
  }
  return id;
}

void SkippedBlocks::Add(size_t r, const std::vector<SkippedBlock>& blocks) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const SkippedBlock& b : blocks) {
    if (overflowed_[r].load(std::memory_order_relaxed)) return;
    if (!keys_[r].insert(ddt::TableKey(b.key)).second) continue;
    if (keys_[r].size() > estimate::kTopUpMaxBlocks) {
      // More distinct keys than a top-up takes: the row is never topped up, its list freed.
      overflowed_[r].store(true);
      std::vector<SkippedBlock>().swap(rows_[r]);
      std::unordered_set<ddt::TableKey, ddt::TableKeyHash>().swap(keys_[r]);
      return;
    }
    rows_[r].push_back(b);
  }
}

}  // namespace zsim::pipeline
