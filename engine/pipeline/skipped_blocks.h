// engine/pipeline/skipped_blocks.h
//
// The blocks a scan's sampled codecs skipped, listed while it reads, for the top-up after it
// (top_up.h, estimate/top_up.h): per row each distinct key a sampled codec skipped at its first
// sighting, with the file and offset of that block, up to estimate::kTopUpMaxBlocks distinct keys
// (then the row is overflowed, and never topped up). A key listed again (a distributed scan's
// rank that meets a key again after shipping its entry to the owner) is kept once, so that a row
// overflows only where more distinct keys than that were skipped: in one process, where its table
// ends with more entries; in a distributed scan, where the whole table does.
//
// Thread safety: Claim, ItemOf and Add from any thread; the accessors once the workers are done.

#ifndef ZSIM_ENGINE_PIPELINE_SKIPPED_BLOCKS_H_
#define ZSIM_ENGINE_PIPELINE_SKIPPED_BLOCKS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/top_up.h"

namespace zsim::pipeline {

// A first sighting a sampled codec skipped: its key, and where it lies (an item of
// SkippedBlocks, the offset of its block in that file).
struct SkippedBlock {
  ddt::Fingerprint key;
  uint64_t offset = 0;
  uint32_t item = 0;
};

class SkippedBlocks {
 public:
  static constexpr uint32_t kNoItem = UINT32_MAX;
  explicit SkippedBlocks(size_t rows);

  // False once row `r` has overflowed: no need to list more of it (a cheap check, per block).
  bool Claim(size_t r) const { return !overflowed_[r].load(std::memory_order_relaxed); }
  // True when row `r` skipped more distinct keys than it lists.
  bool overflowed(size_t r) const { return overflowed_[r].load(); }
  // The item number of the file `path` (opened following symlinks when `follow`), kept in
  // `*slot` (kNoItem until then): one entry per file that listed a block.
  uint32_t ItemOf(std::atomic<uint32_t>* slot, const std::string& path, bool follow);
  // Lists blocks of row `r` (a key listed before is kept once).
  void Add(size_t r, const std::vector<SkippedBlock>& blocks);

  struct Item {
    std::string path;
    bool follow = false;
  };
  const std::vector<Item>& items() const { return items_; }
  const std::vector<SkippedBlock>& row(size_t r) const { return rows_[r]; }
  size_t rows() const { return rows_.size(); }

 private:
  std::unique_ptr<std::atomic<bool>[]> overflowed_;  // per row
  std::mutex mu_;
  std::vector<Item> items_;  // Guarded by mu_.
  // Per row, the listed blocks and their keys. Guarded by mu_.
  std::vector<std::vector<SkippedBlock>> rows_;
  std::vector<std::unordered_set<ddt::TableKey, ddt::TableKeyHash>> keys_;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_SKIPPED_BLOCKS_H_
