// engine/pipeline/scan_since.cc: --since (scan_internal.h, state/since.h): a base's files kept,
// replaced or gone, and whether its tables give what a full scan would.

#include <utility>
#include <vector>

#include "engine/estimate/sample_level.h"
#include "engine/finish/tally.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/state/scan_state.h"
#include "engine/state/since.h"
#include "engine/state/table_budget.h"

namespace zsim::pipeline::internal {

using finish::AuxiliarySize;

void Scan::StartFrom(state::ScanState base) {
  since_ = record_ = true;
  state_.code_kind = base.code_kind;  // new entries' codes as the base's
  state_.written_keys = base.written_keys;
  probe_columns_ = state::ProbeColumns(state_.code_kind, options_.compressions);
  key_columns_ = state::KeyColumns(options_, state_.code_kind, state_.written_keys);
  for (size_t r = 0; r < rows_.size(); ++r) {
    rows_[r].table = std::move(base.rows[r].table);
    base_codec_seconds_.push_back(std::move(base.rows[r].codec_seconds));
    base_codec_bytes_.push_back(std::move(base.rows[r].codec_bytes));
    // A key that becomes heavy goes through the sampled codecs whatever its level: a base
    // entry may have skipped them at a level the rescan never reaches.
    skip_bound_[r].store(estimate::kMaxSampleLevel + 1);
  }
  // A base of format 21 or older kept no file's data bytes: its kept files' are not known.
  data_known_ = base.input.bytes_data_known;
  base_records_ = std::move(base.records);
  base_fate_.assign(base_records_.size(), Fate::kGone);
  base_index_.reserve(base_records_.size());
  for (size_t i = 0; i < base_records_.size(); ++i) base_index_.emplace(base_records_[i].path, i);
}

bool Scan::Reuse(const walk::WalkItem& item, int64_t* replaced) {
  // A block device's contents change without its stamps: a zvol is always read.
  if (item.kind != walk::WalkItem::Kind::kFile) return false;
  const auto it = base_index_.find(item.path);
  if (it == base_index_.end()) return false;
  const state::FileRecord& rec = base_records_[it->second];
  const io::FileInfo& info = item.info;
  if (!state::Unchanged(rec, static_cast<uint32_t>(item.root), info.dev, info.ino, info.size,
                        info.mtime_ns, info.ctime_ns)) {
    *replaced = static_cast<int64_t>(it->second);  // its fate: when handed out (StartJob)
    return false;
  }
  base_fate_[it->second] = Fate::kKept;
  if (info.nlink > 1) base_linked_.emplace(it->second, info);
  input_.bytes_logical += rec.size;
  input_.bytes_data += rec.data_bytes;
  ++input_.files;
  files_found_.fetch_add(1, std::memory_order_relaxed);
  bytes_found_.fetch_add(rec.size, std::memory_order_relaxed);
  return true;
}

void Scan::FinishSince() {
  const size_t settings = options_.compressions.size();
  // Under --max-memory the tables may have been sampled during the scan, which renumbered their
  // entries: the base's references no longer name them. The caller reads everything again.
  for (const state::RowState& row : rows_) {
    if (row.table->sample_shift() != 0) {
      since_complete_ = false;
      return;
    }
  }
  std::vector<state::FileRecord> records;
  std::vector<uint64_t> non_hole(rows_.size() * settings);
  bool released = false;
  for (size_t i = 0; i < base_records_.size(); ++i) {
    state::FileRecord& rec = base_records_[i];
    if (base_fate_[i] != Fate::kKept) {
      state::ReleaseBlocks(rec, rows_);
      released = true;
      // Not listed by an interrupted walk: gone, or not reached yet.
      if (base_fate_[i] == Fate::kGone && cancelled_) {
        ++since_summary_.not_reached;
      } else {
        ++since_summary_.dropped;
      }
      continue;
    }
    ++since_summary_.kept;
    // What FinishFile and the workers added for it when it was read.
    for (size_t r = 0; r < rows_.size(); ++r) {
      for (size_t c = 0; c < settings; ++c) {
        non_hole[r * settings + c] =
            rec.refs[r].size() - (zero_is_hole_[c] ? rec.zero_blocks[r] : 0);
      }
    }
    const FileGroups groups = breakdown_.Groups(options_.paths[rec.root], rec.path);
    if (const auto linked = base_linked_.find(i); linked != base_linked_.end()) {
      // Not read by this run; no occurrences (--since does not sample the table).
      KeepLink(rec, groups, linked->second, 0, {});
    }
    const std::vector<zfs::RecordLayout> layouts = Layouts(rec.size, rec.is_zvol);
    AddFileFigures(layouts, rec.size, non_hole, rec.zero_blocks, rec.indirects, groups,
                   ddt::Fingerprint{rec.content_lo, rec.content_hi}, rec.has_data,
                   state::FileIdentity(rec.dev, rec.ino), /*whole=*/true);
    for (size_t r = 0; r < layouts.size() && r < rec.zero_blocks.size(); ++r) {
      breakdown_.AddZeroBlocks(r, rec.zero_blocks[r], rec.zero_blocks[r] * layouts[r].block_bytes);
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      skipped_holes_[r] += rec.holes[r];
      for (uint32_t ref : rec.refs[r]) {
        breakdown_.Sample(rows_[r].table->KeyOf(ref), groups, static_cast<uint32_t>(r), &replayed_);
      }
    }
    records.push_back(std::move(rec));
  }
  base_records_.clear();
  since_summary_.read = state_.records.size();
  for (state::FileRecord& rec : state_.records) records.push_back(std::move(rec));
  state_.records = std::move(records);
  if (released) state::DropUnreferenced(rows_, state_.records, state_.links);
}

bool Scan::BaseFitsBudget() const {
  return table_budget_bytes_ == 0 || state::TablesBytes(rows_) <= table_budget_bytes_;
}

void Scan::CheckSinceTables() {
  for (size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].table->sample_shift() != 0) since_complete_ = false;  // --max-memory
    state::RebuildDistinct(rows_[r], [&](uint64_t lsize) {
      return AuxiliarySize(alloc_, lsize, options_.copies) / 512;
    });
    for (size_t c = 0; c < options_.compressions.size(); ++c) {
      rows_[r].codec_seconds[c] += base_codec_seconds_[r][c];
      rows_[r].codec_bytes[c] += base_codec_bytes_[r][c];
    }
  }
  if (since_complete_) since_complete_ = state::CodesCover(state_);
}

}  // namespace zsim::pipeline::internal
