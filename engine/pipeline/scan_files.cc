// engine/pipeline/scan_files.cc: the scan's serial output stage (scan_internal.h): what a finished
// file adds (shapes, breakdown rows, its record, a linked file), files left open by an interrupt,
// pieces.

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/estimate/occurrence_sample.h"
#include "engine/pipeline/scan_internal.h"
#include "engine/state/linked_files.h"
#include "engine/state/scan_state.h"
#include "engine/state/since.h"

namespace zsim::pipeline::internal {

using estimate::OccurrenceSums;

void Scan::FinishFile(FileJob& job) {
  {
    std::lock_guard<std::mutex> lock(open_mu_);
    open_jobs_.erase(&job);  // the caller holds the job
  }
  // Every chunk is done (or, after an interrupt, the job is closed and not ok): a file of several
  // chunks that changed since it was opened is reported (its chunks stay in the figures). A file
  // of one chunk was checked before its blocks reached the tables (Process).
  if (job.status.ok() && (job.piece || job.size > chunk_bytes_)) {
    job.status = job.input->CheckUnchanged();
  }
  if (job.piece) {
    if (control_.piece_done) control_.piece_done(SumsOf(job));
    return;
  }
  ++files_done_;
  const uint64_t modelled = job.modelled.load();
  bytes_read_ += job.modelled_read.load();
  modelled_bytes_ += modelled;
  data_bytes_ += job.modelled_read.load();
  const bool whole = job.status.ok();
  const bool linked = job.linked && whole;
  const state::FileIndirects indirects = IndirectsOf(job);
  if (record_ || linked) {
    // Also for a file that failed: the blocks of every chunk it could read are in the tables.
    state::FileRecord rec;
    rec.path = job.path;
    rec.root = job.root;
    rec.dev = job.info.dev;
    rec.ino = job.info.ino;
    rec.size = job.size;
    rec.data_bytes = job.modelled_read.load();
    rec.mtime_ns = job.info.mtime_ns;
    rec.ctime_ns = job.info.ctime_ns;
    rec.is_zvol = job.is_zvol;
    rec.failed = !whole;
    rec.has_data = job.has_data.load();
    rec.content_lo = job.content_lo.load();
    rec.content_hi = job.content_hi.load();
    for (size_t r = 0; r < rows_.size(); ++r) {
      rec.zero_blocks.push_back(job.zero_blocks[r].load());
      rec.holes.push_back(job.holes[r].load());
    }
    rec.indirects = indirects;
    {
      std::lock_guard<std::mutex> lock(job.mu);
      rec.refs = std::move(job.refs);
      rec.keys = std::move(job.keys);
    }
    if (linked) {
      // Its block references move to the link unless the record goes into the state too.
      const uint64_t bytes_read = job.modelled_read.load();
      if (record_) {
        KeepLink(rec, job.groups, job.info, bytes_read, job.occurrences);
      } else {
        KeepLink(std::move(rec), job.groups, job.info, bytes_read, job.occurrences);
      }
    }
    if (record_) {
      if (!state::StampsVouch(rec.mtime_ns, rec.ctime_ns, stamp_floor_ns_)) {
        rec.ctime_ns = state::kUntrustedStamp;
      }
      state_.records.push_back(std::move(rec));
    }
  }
  if (whole) {
    ++whole_files_;
  } else {
    // Listed with what of it is and is not in the figures. Not counted as a file; the chunks
    // that reached the tables stay in them, and count as logical (and read) bytes, in the
    // breakdown and the metadata model, so that every figure covers the same data
    // (docs/inputs.md).
    const uint64_t in_figures = std::min(job.size, modelled);
    file_errors_.push_back(
        PathError{job.path, job.status.ToString(), job.size - in_figures, in_figures});
    if (modelled == 0) return;
  }
  std::vector<uint64_t> non_hole(job.non_hole.size()), zero_blocks(rows_.size());
  for (size_t i = 0; i < non_hole.size(); ++i) non_hole[i] = job.non_hole[i].load();
  for (size_t r = 0; r < rows_.size(); ++r) zero_blocks[r] = job.zero_blocks[r].load();
  // A file in part is never a whole-file duplicate of another.
  AddFileFigures(job.layouts, modelled, non_hole, zero_blocks, indirects, job.groups,
                 ddt::Fingerprint{job.content_lo.load(), job.content_hi.load()},
                 whole && job.has_data.load(), job.identity, whole);
}

// After the pipeline, drained or abandoned (no stage touches the state again): the files an
// interrupt left part-read. A worker whose read returns later changes none of them (closed).
void Scan::FinishOpenJobs() {
  std::vector<std::shared_ptr<FileJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(open_mu_);
    for (auto& [raw, job] : open_jobs_) jobs.push_back(std::move(job));
    open_jobs_.clear();
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const auto& a, const auto& b) { return a->path < b->path; });
  for (const std::shared_ptr<FileJob>& job : jobs) {
    const bool abandoned = std::find(abandoned_files_.begin(), abandoned_files_.end(), job->path) !=
                           abandoned_files_.end();
    // A file of one chunk whose blocks all reached the tables, checked unchanged then (Process),
    // and whose output stage an abandon cut off: it is whole.
    const bool whole =
        !job->piece && job->size <= chunk_bytes_ && job->modelled.load() == job->end - job->begin;
    {
      std::lock_guard<std::mutex> lock(job->mu);
      job->closed = true;
      if (!whole && abandoned) {
        job->status =
            Status::Cancelled("abandoned: a read had not returned " +
                              std::to_string(kAbandonAfter.count()) + " ms after the interrupt");
      } else if (!whole && job->status.ok()) {
        job->status = Status::Cancelled("interrupted while it was read");
      }
    }
    FinishFile(*job);
  }
}

state::FileIndirects Scan::IndirectsOf(FileJob& job) {
  state::FileIndirects out;
  std::lock_guard<std::mutex> lock(job.mu);  // every chunk is done; the lock says who owns it
  for (size_t r = 0; r < rows_.size(); ++r) {
    out.read.push_back(job.ranges[2 * r].Counts());
    out.nonzero.push_back(job.ranges[2 * r + 1].Counts());
  }
  return out;
}

void Scan::KeepLink(state::FileRecord rec, FileGroups groups, const io::FileInfo& info,
                    uint64_t bytes_read, const std::vector<OccurrenceSample>& occurrences) {
  state::LinkedFile f;
  f.fs = state::LinkedFileSystem(rec.dev, rec.path);
  f.path = std::move(rec.path);
  f.ino = rec.ino;
  f.dev = rec.dev;
  f.size = rec.size;
  f.data_bytes = rec.data_bytes;
  f.allocated = info.allocated;
  f.mtime_ns = info.mtime_ns;
  f.ctime_ns = info.ctime_ns;
  f.directory = groups.directory;
  f.extension = groups.extension;
  f.bytes_read = bytes_read;
  f.has_data = rec.has_data;
  f.content_lo = rec.content_lo;
  f.content_hi = rec.content_hi;
  f.zero_blocks = std::move(rec.zero_blocks);
  f.holes = std::move(rec.holes);
  f.refs = std::move(rec.refs);
  f.keys = std::move(rec.keys);
  f.indirects = std::move(rec.indirects);
  for (const OccurrenceSample& sample : occurrences) {
    auto& cells = f.occurrences.emplace_back();
    for (size_t i = 0; i < sample.sums.size(); ++i) {
      if (sample.sums[i].n() != 0) cells.emplace_back(static_cast<uint32_t>(i), sample.sums[i]);
    }
  }
  f.occurrences.resize(rows_.size());
  state_.links.push_back(std::move(f));
}

void Scan::AddFileFigures(const std::vector<zfs::RecordLayout>& layouts, uint64_t size,
                          const std::vector<uint64_t>& non_hole,
                          const std::vector<uint64_t>& zero_blocks,
                          const state::FileIndirects& indirects, FileGroups groups,
                          ddt::Fingerprint content, bool has_data, uint64_t identity, bool whole) {
  state_.file_ids.push_back(identity);
  const size_t settings = options_.compressions.size();
  for (size_t r = 0; r < rows_.size(); ++r) {
    for (size_t c = 0; c < settings; ++c) {
      // All-zero blocks matter where the no-dedup write path writes them (state::FileShape).
      const uint64_t zeros = zero_written_without_dedup_[c] ? zero_blocks[r] : 0;
      ++rows_[r].files[c][state::ShapeOf(layouts[r].block_bytes, layouts[r].blocks,
                                         non_hole[r * settings + c], zeros, indirects, r,
                                         zero_is_hole_[c])];
    }
  }
  // lsize per (row, setting): its non-hole blocks x the row's block size; per row, the
  // featured setting's.
  std::vector<uint64_t> setting_lsize(non_hole.size(), 0), setting_zero_lsize(non_hole.size(), 0);
  for (size_t i = 0; i < setting_lsize.size() && i / settings < layouts.size(); ++i) {
    const uint64_t bs = layouts[i / settings].block_bytes;
    setting_lsize[i] = non_hole[i] * bs;
    // The all-zero records that are holes in this setting's table (SettingResult::zero_lsize).
    if (zero_is_hole_[i % settings] && i / settings < zero_blocks.size()) {
      setting_zero_lsize[i] = zero_blocks[i / settings] * bs;
    }
  }
  std::vector<uint64_t> featured_lsize(layouts.size(), 0);
  for (size_t r = 0; r < layouts.size() && r * settings + featured_ < setting_lsize.size(); ++r) {
    featured_lsize[r] = setting_lsize[r * settings + featured_];
  }
  breakdown_.AddFile(groups, size, featured_lsize, setting_lsize, setting_zero_lsize, content,
                     has_data, whole);
}

PieceSums Scan::SumsOf(FileJob& job) const {
  PieceSums p;
  p.file = job.piece_file;
  p.bytes = job.modelled.load();  // the piece's bytes in the figures
  p.pieces = 1;
  for (const std::atomic<uint64_t>& n : job.non_hole) p.non_hole.push_back(n.load());
  for (const std::atomic<uint64_t>& n : job.zero_blocks) p.zero_blocks.push_back(n.load());
  for (const std::atomic<uint64_t>& n : job.holes) p.holes.push_back(n.load());
  {
    std::lock_guard<std::mutex> lock(job.mu);  // every chunk is done; the lock says who owns it
    p.ranges = job.ranges;
    p.keys = std::move(job.keys);
    for (const OccurrenceSample& sample : job.occurrences) {
      auto& cells = p.occurrences.emplace_back();
      for (size_t i = 0; i < sample.sums.size(); ++i) {
        if (sample.sums[i].n() != 0) cells.emplace_back(static_cast<uint32_t>(i), sample.sums[i]);
      }
    }
  }
  p.stamp_floor_ns = stamp_floor_ns_;
  p.bytes_read = job.modelled_read.load();
  p.content_lo = job.content_lo.load();
  p.content_hi = job.content_hi.load();
  p.has_data = job.has_data.load();
  if (!job.status.ok()) {
    p.failed_at = job.begin;
    p.failure = job.status;
  }
  return p;
}

state::ScanState Scan::CountPiecedFiles(std::vector<PiecedFile>& files) {
  start_ = Clock::now();
  const size_t settings = options_.compressions.size();
  for (PiecedFile& f : files) {
    // No piece read (an interrupted scan): not found yet, as one scan counts a file once it
    // starts reading it.
    if (f.sums.pieces == 0) continue;
    walk::WalkItem item = f.item;
    item.piece_begin = item.piece_end = 0;  // the whole file
    const uint64_t size = item.info.size;
    std::shared_ptr<FileJob> job = MakeJob(std::move(item), size);
    PieceSums& p = f.sums;
    // Not every piece read whole (an interrupted scan): the file in part, as one scan counts
    // a file it was reading when interrupted (FinishOpenJobs).
    if (p.bytes != size && p.failure.ok()) {
      p.failure = Status::Cancelled("interrupted before every piece of it was read");
    }
    job->modelled.store(p.bytes);
    job->modelled_read.store(p.bytes_read);
    for (size_t i = 0; i < job->non_hole.size() && i < p.non_hole.size(); ++i) {
      job->non_hole[i].store(p.non_hole[i]);
    }
    for (size_t i = 0; i < job->zero_blocks.size() && i < p.zero_blocks.size(); ++i) {
      job->zero_blocks[i].store(p.zero_blocks[i]);
    }
    for (size_t i = 0; i < job->holes.size() && i < p.holes.size(); ++i) {
      job->holes[i].store(p.holes[i]);
    }
    // Its blocks' keys for its record or link (ScanControl::record_keys), as the pieces' scans
    // kept them, and their stamps vouch as far as the first of those scans began.
    for (size_t r = 0; r < job->keys.size() && r < p.keys.size(); ++r) {
      job->keys[r] = std::move(p.keys[r]);
    }
    stamp_floor_ns_ = p.stamp_floor_ns;
    for (size_t r = 0; r < job->occurrences.size() && r < p.occurrences.size(); ++r) {
      std::vector<OccurrenceSums>& sums = job->occurrences[r].sums;
      for (const auto& [index, cell] : p.occurrences[r]) {
        if (index < sums.size()) sums[index].Merge(cell);
      }
    }
    for (size_t i = 0; i < job->ranges.size() && i < p.ranges.size(); ++i) {
      job->ranges[i] = p.ranges[i];
    }
    job->content_lo.store(p.content_lo);
    job->content_hi.store(p.content_hi);
    job->has_data.store(p.has_data);
    job->status = p.failure;
    FinishFile(*job);  // never opened here: nothing to check again
  }
  sampling_.setting_levels.assign(rows_.size() * settings, 0);
  for (state::RowState& row : rows_) {
    if (occurrences_) row.occurrences = OccurrenceSample(settings);
  }
  CloseInput();
  breakdown_.MoveInto({}, &state_.breakdown);
  state_.has_records = record_;  // its tables are empty, so exact
  return std::move(state_);
}

}  // namespace zsim::pipeline::internal
