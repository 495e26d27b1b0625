// engine/pipeline/top_up.h
//
// The top-up of a scan's sampled codecs (the rule: estimate/top_up.h). While the scan reads, its
// workers list each first sighting a sampled codec skipped (skipped_blocks.h), up to
// estimate::kTopUpMaxBlocks per row; after the reading, TopUpRows lowers the levels of each row
// whose table ends with at most that many entries to the budget of its unique bytes, reading the
// listed blocks of the lower levels again and coding them (block_recode.h). A distributed scan
// takes the same steps across its ranks (engine/mpi/distributed_top_up.h).
//
// Thread safety: TopUpRows once, after the reading, with no other use of the tables.

#ifndef ZSIM_ENGINE_PIPELINE_TOP_UP_H_
#define ZSIM_ENGINE_PIPELINE_TOP_UP_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/estimate/interval_top_up.h"
#include "engine/estimate/top_up.h"
#include "engine/io/file_system.h"
#include "engine/pipeline/block_recode.h"
#include "engine/pipeline/read_throttle.h"
#include "engine/pipeline/skipped_blocks.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_options.h"

namespace zsim::pipeline {

// The steps of a row's top-up, which a scan of one process (TopUpRows) and a distributed scan
// (engine/mpi/distributed_top_up.h) both take.

// Per setting of row `r`: the level its top-up brings it to, -1 for none (estimate::TopUpLevels
// of sampling.setting_levels, `planned` (per (row, setting), BudgetLevels of
// sampling.planned_bytes), the budget of the unique bytes, and the unique blocks), and 0 where
// the interval top-up takes a setting to every block (estimate/interval_top_up.h, of `cells`:
// IntervalCells of the row's table, summed over the ranks of a distributed scan).
std::vector<int> RowTopUpLevels(const ScanOptions& options, const state::SamplingState& sampling,
                                const std::vector<int>& planned, size_t r, ddt::UniqueBlocks unique,
                                const std::vector<estimate::IntervalCell>& cells);

// Per setting: what row `r`'s `table` says of it at the level the scan ended at
// (sampling.setting_levels; estimate::IntervalCell), for the interval top-up; empty where no
// setting is its candidate (estimate::IntervalTopUpCandidates), alike on every rank.
std::vector<estimate::IntervalCell> IntervalCells(const ScanOptions& options,
                                                  const state::SamplingState& sampling, size_t r,
                                                  const ddt::DedupTable& table);

// A block to code: its entry (key as the table gives it, lsize) and, once placed, where it lies.
struct TopUpBlock {
  ddt::Fingerprint key;
  uint64_t lsize = 0;
  uint32_t item = SkippedBlocks::kNoItem;
  uint64_t offset = 0;
};

// Whether setting c of a block of `level` is coded for levels `to`.
inline bool TopUpCodes(const std::vector<int>& to, size_t c, int level) {
  return to[c] >= 0 && level >= to[c];
}

// The entries of `table` a top-up to `to` codes: not all zero, with some setting c TopUpCodes
// and whose code for it is pending.
std::vector<TopUpBlock> WantedBlocks(const ddt::DedupTable& table, const std::vector<int>& to);

// Places `blocks` where `listed` has them (item and offset); returns how many it placed.
size_t PlaceBlocks(const std::vector<SkippedBlock>& listed, std::vector<TopUpBlock>* blocks);

// A block whose codecs cost more than kTaskSeconds (nominal, estimate/codec_cost.h) is coded in
// parts of at most about that, each a task of its own that reads the block: a 1M block under
// zstd-16..19, gzip-7..9 and zstd-13..15 costs a second or more, and the few such blocks of a row
// left one thread coding them while the other waited (the file-server sample's 1M row under
// --compression all: its top-up took 5.05 s, 3 of them on one core; 2.0 s split).
inline constexpr double kTaskSeconds = 0.05;

// How a block's settings are split into tasks: the settings' nominal costs, taken once per
// top-up, not once per block.
class SettingSplit {
 public:
  explicit SettingSplit(const ScanOptions& options);

  // The parts of a block of `lsize` bytes at `level`, whose settings c are coded where
  // TopUpCodes(to, c, level): sets `part` per setting (0 for the others) and returns how many
  // (1: the block is one task). The costliest settings go first, each to the part that costs
  // least so far; at most one part per setting coded.
  uint32_t Parts(const std::vector<int>& to, int level, uint64_t lsize,
                 std::vector<uint32_t>* part) const;

 private:
  std::vector<double> per_byte_;  // nominal CPU seconds per byte, per setting
  std::vector<size_t> by_cost_;   // the settings, costliest first
};

// What RecodeBlocks did.
struct TopUpStats {
  uint64_t rows = 0;          // rows topped up
  uint64_t reread = 0;        // blocks read again
  uint64_t reread_bytes = 0;  // and their bytes
  uint64_t failed_rows = 0;   // rows left as they were: a block could not be read again or changed
  // Rows left as they were because a block to code was not listed: under --since, a kept file's
  // (a base scanned without the top-up, or at a lower level); a full scan would top them up.
  uint64_t unplaced_rows = 0;
};

// What steers a top-up's reads, each may be null: the read throttle (--max-rate), the interrupt,
// and a count of the blocks read again and coded so far (a progress line's).
struct RecodeControl {
  ReadThrottle* throttle = nullptr;
  const std::atomic<bool>* cancel = nullptr;
  std::atomic<uint64_t>* blocks_done = nullptr;
};

// TopUpRecord::left of a row whose top-up an interrupt stopped.
inline constexpr const char* kTopUpInterrupted = "the scan was interrupted";

// Reads the placed `blocks` (item != kNoItem) of `items` again and codes each with the settings
// TopUpCodes gives, as `spec` says (block_recode.h), on options.threads threads: codes[i *
// spec.columns ...] (pending where not coded) for block i. False, when a block could not be read
// again or had changed (or control.cancel was set): the codes are then not all there, and
// record->left says why, unless it already held a reason. The blocks read again and their bytes
// are added to `record`, the codecs' CPU nanoseconds and bytes per setting to codec_ns[c] and
// codec_bytes[c].
bool RecodeBlocks(const ScanOptions& options, io::FileSystem* fs,
                  const std::vector<SkippedBlocks::Item>& items,
                  const std::vector<TopUpBlock>& blocks, const std::vector<int>& to,
                  const RecodeSpec& spec, const RecodeControl& control,
                  std::vector<ddt::PsizeCode>* codes, std::span<uint64_t> codec_ns,
                  std::span<uint64_t> codec_bytes, state::TopUpRecord* record);

// What a top-up is about to do, known before it reads anything again: the blocks, their bytes,
// and per (row, setting) the bytes its codec is to code (lsize of each block it codes).
struct TopUpPlanned {
  uint64_t blocks = 0;
  uint64_t bytes = 0;
  std::vector<uint64_t> codec_bytes;
};

// The top-up of a scan of one process: each row of `rows` that qualifies (estimate/top_up.h) has
// its blocks coded in its table, its levels set in `sampling->setting_levels` (row-major, each
// sampled setting's level the scan ended at) and its unique bytes in `sampling->topped_bytes`;
// the codecs' CPU nanoseconds and bytes are added to `codec_ns` and `codec_bytes` (per (row,
// setting)), and what it read again, its seconds and why it was left, to the row's `top_up`.
// `planned`: per (row, setting), BudgetLevels of sampling->planned_bytes. A row whose blocks are
// not all listed (`skipped`), or one of which could not be read again or changed, is left as it
// was. The blocks are coded as `spec` says (its `columns` each table's), their reads as `control`
// says (the rows after an interrupt are not taken up). Every row is planned before any is read:
// `on_planned`, where set, is told what all of them will read and code (not called when none
// qualifies), so that the time they take can be told before it is spent. `interval`: the interval
// top-up's rule applies too (RowTopUpLevels).
TopUpStats TopUpRows(const ScanOptions& options, io::FileSystem* fs,
                     std::vector<state::RowState>* rows, const SkippedBlocks& skipped,
                     const std::vector<int>& planned, RecodeSpec spec, const RecodeControl& control,
                     state::SamplingState* sampling, std::vector<uint64_t>* codec_ns,
                     std::vector<uint64_t>* codec_bytes, bool interval,
                     const std::function<void(const TopUpPlanned&)>& on_planned = {});

// Row r of a topped-up state: its levels `to` (where >= 0), its unique bytes among
// sampling->topped_bytes (sized to `rows`), and the complete level again (LowestLevel).
void SetToppedRow(state::SamplingState* sampling, size_t rows, size_t r, const std::vector<int>& to,
                  uint64_t unique_bytes);

// The lowest level of the sampled settings, 0 without any (SamplingState::complete_level).
int LowestLevel(const state::SamplingState& sampling);

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_TOP_UP_H_
