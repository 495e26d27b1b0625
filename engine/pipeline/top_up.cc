#include "engine/pipeline/top_up.h"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/sample_level.h"
#include "engine/pipeline/block_recode.h"

namespace zsim::pipeline {

namespace {

// A thread's share of RecodeBlocks.
struct Local {
  Local(const ScanOptions& options, io::FileSystem* fs, const RecodeSpec& spec)
      : recoder(options, fs, spec),
        code(options.compressions.size()),
        ns(options.compressions.size(), 0),
        bytes(options.compressions.size(), 0) {}
  BlockRecoder recoder;
  std::vector<bool> code;
  std::vector<uint64_t> ns, bytes;  // per setting
  std::vector<uint32_t> part;       // SettingSplit::Parts of the block at hand
  uint64_t reread = 0, reread_bytes = 0;
};

}  // namespace

std::vector<int> RowTopUpLevels(const ScanOptions& options, const state::SamplingState& sampling,
                                const std::vector<int>& planned, size_t r, ddt::UniqueBlocks unique,
                                const std::vector<estimate::IntervalCell>& cells) {
  const uint64_t unique_bytes = unique.bytes;
  const size_t settings = options.compressions.size();
  const std::vector<uint64_t> rows = estimate::RowBlockSizes(options);
  if (unique_bytes == 0 || r >= rows.size() ||
      sampling.setting_levels.size() < (r + 1) * settings || planned.size() < (r + 1) * settings) {
    return std::vector<int>(settings, -1);
  }
  const std::vector<int> lower = estimate::UniqueBytesLevels(
      options, sampling.sampled, sampling.plan(), rows.size(), r, unique_bytes);
  const size_t at = r * settings;
  const auto slice = [&](const std::vector<int>& v) {
    return std::vector<int>(v.begin() + at, v.begin() + at + settings);
  };
  const std::vector<int> levels = slice(sampling.setting_levels);
  std::vector<int> to =
      estimate::TopUpLevels(sampling.sampled, levels, slice(planned), lower, unique.blocks);
  if (!sampling.adaptive) return to;
  return estimate::IntervalTopUpLevels(options, sampling.sampled, sampling.anchors, sampling.plan(),
                                       r, levels, std::move(to), cells, unique_bytes);
}

std::vector<estimate::IntervalCell> IntervalCells(const ScanOptions& options,
                                                  const state::SamplingState& sampling, size_t r,
                                                  const ddt::DedupTable& table) {
  const size_t settings = options.compressions.size();
  if (!sampling.adaptive || sampling.setting_levels.size() < (r + 1) * settings ||
      sampling.sampled.size() < settings) {
    return {};
  }
  const std::vector<int> row_levels(
      sampling.setting_levels.begin() + ptrdiff_t(r * settings),
      sampling.setting_levels.begin() + ptrdiff_t((r + 1) * settings));
  const std::vector<bool> candidate = estimate::IntervalTopUpCandidates(
      options, sampling.sampled, sampling.anchors, sampling.plan(), r, row_levels);
  // The default list (every codec anchored on lz4) has none: no pass over the table.
  if (std::none_of(candidate.begin(), candidate.end(), [](bool b) { return b; })) return {};
  std::vector<estimate::IntervalCell> cells(settings);
  const int* levels = row_levels.data();
  // Which blocks below a level were coded depends on timing (the first chunks, the pilot's
  // foresight, the ranks, a --since base): what is taken of them is their bytes, coded or not.
  table.ForEach([&](const ddt::EntryView& e) {
    if (e.is_zero) return;  // a hole under every codec that compresses
    const int lv = estimate::SampleLevel(e.key.lo);
    const double refs = double(e.refcount), lsize = double(e.lsize);
    for (size_t c = 0; c < settings && c < e.codes.size(); ++c) {
      const ddt::PsizeCode code = e.codes[c];
      if (!candidate[c] || ddt::IsHoleCode(code)) continue;
      // The census's entries, as the tally takes them (finish/tally.cc): exact, out of the sample.
      if (code != ddt::kPendingCode && e.refcount >= ddt::kHeavyRefcount) continue;
      estimate::IntervalCell& cell = cells[c];
      cell.units += 1;
      if (lv < levels[c]) {
        cell.below_bytes += lsize;
      } else if (code != ddt::kPendingCode) {
        const double psize = ddt::IsEmbeddedCode(code) ? 0.0 : double(ddt::AllocatedPsize(code));
        cell.per_level[size_t(lv)].Add(refs * lsize, refs * psize);
      }
    }
  });
  return cells;
}

std::vector<TopUpBlock> WantedBlocks(const ddt::DedupTable& table, const std::vector<int>& to) {
  std::vector<TopUpBlock> out;
  table.ForEach([&](const ddt::EntryView& e) {
    if (e.is_zero) return;
    const int level = estimate::SampleLevel(e.key.lo);
    for (size_t c = 0; c < to.size() && c < e.codes.size(); ++c) {
      if (TopUpCodes(to, c, level) && e.codes[c] == ddt::kPendingCode) {
        out.push_back(TopUpBlock{e.key, e.lsize, SkippedBlocks::kNoItem, 0});
        return;
      }
    }
  });
  return out;
}

size_t PlaceBlocks(const std::vector<SkippedBlock>& listed, std::vector<TopUpBlock>* blocks) {
  std::unordered_map<ddt::TableKey, size_t, ddt::TableKeyHash> index;
  index.reserve(blocks->size());
  for (size_t i = 0; i < blocks->size(); ++i) index.emplace(ddt::TableKey((*blocks)[i].key), i);
  size_t placed = 0;
  for (const SkippedBlock& b : listed) {
    const auto it = index.find(ddt::TableKey(b.key));
    if (it == index.end()) continue;
    TopUpBlock& t = (*blocks)[it->second];
    if (t.item != SkippedBlocks::kNoItem) continue;
    t.item = b.item;
    t.offset = b.offset;
    ++placed;
  }
  return placed;
}

SettingSplit::SettingSplit(const ScanOptions& options) {
  for (const Compression& c : options.compressions) {
    const double speed = estimate::NominalCodecBytesPerSecond(c);
    per_byte_.push_back(speed > 0 ? 1.0 / speed : 0);
    by_cost_.push_back(by_cost_.size());
  }
  std::stable_sort(by_cost_.begin(), by_cost_.end(),
                   [&](size_t a, size_t b) { return per_byte_[a] > per_byte_[b]; });
}

uint32_t SettingSplit::Parts(const std::vector<int>& to, int level, uint64_t lsize,
                             std::vector<uint32_t>* part_out) const {
  std::vector<uint32_t>& part = *part_out;
  part.assign(per_byte_.size(), 0);
  double seconds = 0;
  size_t coded = 0;
  for (size_t c = 0; c < per_byte_.size(); ++c) {
    if (!TopUpCodes(to, c, level)) continue;
    ++coded;
    seconds += per_byte_[c] * double(lsize);
  }
  const uint32_t parts =
      uint32_t(std::clamp(std::ceil(seconds / kTaskSeconds), 1.0, std::max(1.0, double(coded))));
  if (parts == 1) return 1;
  std::vector<double> load(parts, 0);  // a costly block's only: a few per row
  for (size_t c : by_cost_) {
    if (!TopUpCodes(to, c, level)) continue;
    const uint32_t least = uint32_t(std::min_element(load.begin(), load.end()) - load.begin());
    part[c] = least;
    load[least] += per_byte_[c];
  }
  return parts;
}

bool RecodeBlocks(const ScanOptions& options, io::FileSystem* fs,
                  const std::vector<SkippedBlocks::Item>& items,
                  const std::vector<TopUpBlock>& blocks, const std::vector<int>& to,
                  const RecodeSpec& spec, const RecodeControl& control,
                  std::vector<ddt::PsizeCode>* codes, std::span<uint64_t> codec_ns,
                  std::span<uint64_t> codec_bytes, state::TopUpRecord* record) {
  const size_t settings = options.compressions.size();
  const size_t columns = spec.columns;
  codes->assign(blocks.size() * columns, ddt::kPendingCode);
  // In the order of the files and their offsets: the reads of one file follow each other (a disk
  // that seeks reads them as a sequence, not at random), each thread taking a run of them.
  std::vector<size_t> order;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].item != SkippedBlocks::kNoItem) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(blocks[a].item, blocks[a].offset) <
           std::pair(blocks[b].item, blocks[b].offset);
  });
  // A task: a block, and the part of its settings it codes (SettingSplit, computed again by the
  // task: it depends on the block's level and size only).
  struct Task {
    size_t block;
    uint32_t part;
  };
  std::vector<Task> tasks;
  const SettingSplit split(options);
  // Per block: whether a part of it has started (the first to start takes the read throttle's
  // bytes: the later parts' reads come from the page cache), and the parts still to finish (the
  // last one counts the block read again), in whatever order the threads take them.
  std::unique_ptr<std::atomic<bool>[]> started(new std::atomic<bool>[order.size()]);
  std::unique_ptr<std::atomic<uint32_t>[]> unfinished(new std::atomic<uint32_t>[order.size()]);
  {
    std::vector<uint32_t> part;
    for (size_t k = 0; k < order.size(); ++k) {
      const TopUpBlock& b = blocks[order[k]];
      const uint32_t parts = split.Parts(to, estimate::SampleLevel(b.key.lo), b.lsize, &part);
      started[k].store(false, std::memory_order_relaxed);
      unfinished[k].store(parts, std::memory_order_relaxed);
      for (uint32_t p = 0; p < parts; ++p) tasks.push_back(Task{k, p});
    }
  }
  std::atomic<bool> failed{false};
  // The first failure's reason (the record's `left`).
  std::mutex left_mu;
  std::string left;
  const auto fail = [&](std::string why) {
    failed.store(true);
    std::lock_guard<std::mutex> lock(left_mu);
    if (left.empty()) left = std::move(why);
  };
  tbb::enumerable_thread_specific<Local> locals([&] { return Local(options, fs, spec); });
  const auto recode = [&](const tbb::blocked_range<size_t>& range) {
    Local& l = locals.local();
    for (size_t t = range.begin(); t != range.end(); ++t) {
      const Task& task = tasks[t];
      const size_t i = order[task.block];
      const TopUpBlock& b = blocks[i];
      if (failed.load(std::memory_order_relaxed)) return;
      if (control.cancel && control.cancel->load()) return fail(kTopUpInterrupted);
      if (control.throttle && !started[task.block].exchange(true)) {
        control.throttle->Acquire(b.lsize, control.cancel);
      }
      const int level = estimate::SampleLevel(b.key.lo);
      split.Parts(to, level, b.lsize, &l.part);
      for (size_t c = 0; c < settings; ++c) {
        l.code[c] = TopUpCodes(to, c, level) && l.part[c] == task.part;
      }
      const SkippedBlocks::Item& item = items[b.item];
      const std::span<ddt::PsizeCode> out(codes->data() + i * columns, columns);
      const Status recoded =
          l.recoder.Recode(item.path, item.follow, b.offset, b.lsize, b.key, l.code, out, l.ns);
      if (!recoded.ok()) return fail(item.path + ": " + recoded.ToString());
      for (size_t c = 0; c < settings; ++c) l.bytes[c] += l.code[c] ? b.lsize : 0;
      if (unfinished[task.block].fetch_sub(1) != 1) continue;
      ++l.reread;
      l.reread_bytes += b.lsize;
      if (control.blocks_done) control.blocks_done->fetch_add(1, std::memory_order_relaxed);
    }
  };
  // One task at a time: a block costs up to a second even split, and a run of 16 of them on one
  // thread left the other idle at the end of a row (the file-server sample's 1M row under
  // --compression all: its top-up took 5.05 s, 3 of them on one core; 2.0 s with one block, or
  // part of one, per task). The halves the partitioner splits keep each thread's blocks in file
  // order, as before.
  // --threads may ask for more threads than the process's cores (slow or remote storage), as the
  // scan's pipeline does.
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(std::max(1, options.threads)));
  tbb::task_arena arena(std::max(1, options.threads));
  arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, tasks.size(), 1), recode,
                      tbb::simple_partitioner());
  });
  for (const Local& l : locals) {
    record->blocks += l.reread;
    record->bytes += l.reread_bytes;
    for (size_t c = 0; c < settings && c < codec_ns.size() && c < codec_bytes.size(); ++c) {
      codec_ns[c] += l.ns[c];
      codec_bytes[c] += l.bytes[c];
    }
  }
  if (record->left.empty()) record->left = std::move(left);
  return !failed.load();
}

TopUpStats TopUpRows(const ScanOptions& options, io::FileSystem* fs,
                     std::vector<state::RowState>* rows, const SkippedBlocks& skipped,
                     const std::vector<int>& planned, RecodeSpec spec, const RecodeControl& control,
                     state::SamplingState* sampling, std::vector<uint64_t>* codec_ns,
                     std::vector<uint64_t>* codec_bytes, bool interval,
                     const std::function<void(const TopUpPlanned&)>& on_planned) {
  TopUpStats stats;
  const size_t settings = options.compressions.size();
  // Every row's plan first (the tables do not change until they are coded), then the reads.
  struct RowPlan {
    size_t r;
    ddt::UniqueBlocks unique;
    std::vector<int> to;
    std::vector<TopUpBlock> blocks;
  };
  std::vector<RowPlan> plans;
  TopUpPlanned told;
  told.codec_bytes.assign(rows->size() * settings, 0);
  for (size_t r = 0; r < rows->size(); ++r) {
    const ddt::DedupTable& table = *(*rows)[r].table;
    if (!state::TopUpTakes(table) || skipped.overflowed(r)) continue;
    const ddt::UniqueBlocks unique = ddt::UniqueBlocksOf(table);
    std::vector<int> to = RowTopUpLevels(options, *sampling, planned, r, unique,
                                         interval ? IntervalCells(options, *sampling, r, table)
                                                  : std::vector<estimate::IntervalCell>());
    if (std::all_of(to.begin(), to.end(), [](int level) { return level < 0; })) continue;
    std::vector<TopUpBlock> blocks = WantedBlocks(table, to);
    if (PlaceBlocks(skipped.row(r), &blocks) != blocks.size()) {
      ++stats.unplaced_rows;
      continue;
    }
    for (const TopUpBlock& b : blocks) {
      told.blocks += 1;
      told.bytes += b.lsize;
      const int level = estimate::SampleLevel(b.key.lo);
      for (size_t c = 0; c < settings; ++c) {
        if (TopUpCodes(to, c, level)) told.codec_bytes[r * settings + c] += b.lsize;
      }
    }
    plans.push_back(RowPlan{r, unique, std::move(to), std::move(blocks)});
  }
  if (control.cancel && control.cancel->load()) return stats;  // nothing read again, nor told
  if (on_planned && !plans.empty()) on_planned(told);
  for (RowPlan& plan : plans) {
    if (control.cancel && control.cancel->load()) break;
    const size_t r = plan.r;
    ddt::DedupTable& table = *(*rows)[r].table;
    spec.columns = table.settings();
    const size_t columns = spec.columns;
    std::vector<ddt::PsizeCode> codes;
    const size_t at = r * settings;
    state::TopUpRecord& record = (*rows)[r].top_up;
    const auto start = std::chrono::steady_clock::now();
    const bool coded =
        RecodeBlocks(options, fs, skipped.items(), plan.blocks, plan.to, spec, control, &codes,
                     std::span<uint64_t>(codec_ns->data() + at, settings),
                     std::span<uint64_t>(codec_bytes->data() + at, settings), &record);
    record.seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    stats.reread += record.blocks;
    stats.reread_bytes += record.bytes;
    // A block that changed or could not be read again leaves the row at its levels, and the
    // table without the codes read so far.
    if (!coded) {
      ++stats.failed_rows;
      continue;
    }
    for (size_t i = 0; i < plan.blocks.size(); ++i) {
      table.SetCodes(plan.blocks[i].key,
                     std::span<const ddt::PsizeCode>(codes.data() + i * columns, columns));
    }
    SetToppedRow(sampling, rows->size(), r, plan.to, plan.unique.bytes);
    ++stats.rows;
  }
  return stats;
}

void SetToppedRow(state::SamplingState* sampling, size_t rows, size_t r, const std::vector<int>& to,
                  uint64_t unique_bytes) {
  const size_t settings = sampling->sampled.size();
  for (size_t c = 0; c < settings && c < to.size(); ++c) {
    if (to[c] >= 0 && (r + 1) * settings <= sampling->setting_levels.size()) {
      sampling->setting_levels[r * settings + c] = to[c];
    }
  }
  sampling->topped_bytes.resize(rows, 0);
  sampling->topped_bytes[r] = unique_bytes;
  sampling->complete_level = LowestLevel(*sampling);
}

int LowestLevel(const state::SamplingState& sampling) {
  const size_t settings = sampling.sampled.size();
  int lowest = -1;
  for (size_t i = 0; i < sampling.setting_levels.size() && settings != 0; ++i) {
    if (!sampling.sampled[i % settings]) continue;
    lowest = lowest < 0 ? sampling.setting_levels[i] : std::min(lowest, sampling.setting_levels[i]);
  }
  return std::max(lowest, 0);
}

}  // namespace zsim::pipeline
