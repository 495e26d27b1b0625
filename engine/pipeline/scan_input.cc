// engine/pipeline/scan_input.cc: the scan's serial input stage (scan_internal.h): the walk's files
// made into jobs and cut into chunks, holes jumped over, data asked of the kernel ahead of the
// reads.

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/pipeline/scan_internal.h"
#include "engine/state/scan_state.h"
#include "engine/walk/walker.h"
#include "engine/zfs/record_layout.h"

namespace zsim::pipeline::internal {

// Jumps over the current file's chunks that hold no data at all (SEEK_DATA), never past its
// last chunk (which finishes the file in the output stage): their records are holes in every
// row, counted here without a worker opening the file for each. A 1 TiB file with 1 MiB of
// data is then a handful of chunks, not 131072.
void Scan::SkipHoleChunks() {
  FileJob& job = *current_;
  if (!current_file_ || job.end - job.begin <= chunk_bytes_) return;
  // A piece begins at a chunk boundary: its chunks are the whole file's.
  const uint64_t last_chunk = (job.end - 1) / chunk_bytes_ * chunk_bytes_;
  if (current_offset_ >= last_chunk) return;
  Result<std::optional<uint64_t>> data = current_file_->NextData(current_offset_);
  if (!data.ok()) return;  // the worker reading the chunk will meet and report the error
  WorkScope scope(this);
  if (!scope) return;
  const uint64_t target =
      std::min(data->has_value() ? **data / chunk_bytes_ * chunk_bytes_ : last_chunk, last_chunk);
  if (target <= current_offset_) return;
  for (size_t r = 0; r < rows_.size(); ++r) {
    const zfs::RecordLayout& l = job.layouts[r];
    const uint64_t first = current_offset_ / l.block_bytes;
    const uint64_t last = std::min(l.blocks, target / l.block_bytes);
    if (last > first) {
      skipped_holes_[r] += last - first;
      job.holes[r].fetch_add(last - first, std::memory_order_relaxed);
    }
  }
  job.chunks_left.fetch_sub((target - current_offset_) / chunk_bytes_);
  job.modelled.fetch_add(target - current_offset_, std::memory_order_relaxed);
  skipped_bytes_.fetch_add(target - current_offset_, std::memory_order_relaxed);
  current_offset_ = target;
}

namespace {

// Calls fn(begin, end) for each data extent of `file` in [from, to) (SEEK_DATA / SEEK_HOLE), at
// most `most` of them, and returns where it stopped: `to` when every extent was met, else the
// end of the last one (the rest not yet looked at).
template <typename Fn>
Result<uint64_t> ForEachDataExtent(io::File& file, uint64_t from, uint64_t to, size_t most, Fn fn) {
  uint64_t pos = from;
  for (size_t met = 0; pos < to && met < most; ++met) {
    Result<std::optional<uint64_t>> data = file.NextData(pos);
    if (!data.ok()) return data.status();
    if (!data->has_value() || **data >= to) return to;
    Result<uint64_t> hole = file.NextHole(**data);
    if (!hole.ok()) return hole.status();
    const uint64_t data_end = std::min(*hole, to);
    if (data_end <= **data) return to;
    fn(**data, data_end);
    pos = data_end;
  }
  return pos < to ? pos : to;
}

}  // namespace

// Asks the kernel (io::File::WillNeed) for `job`'s data from job.hinted_to up to `to`, so that
// the disk reads while the workers code: a scan of a cold tree is then limited by the slower of
// the two, not their sum (a worker's read is otherwise a few synchronous readaheads of the
// kernel's window, every core idle meanwhile; and a small file's, one request with nothing
// else in flight). Only data is asked for (SEEK_DATA): the pages of a hole would be zeros in
// the page cache. A sparse file's extents are followed a few at a time; past that, the next
// chunk's call goes on.
void Scan::HintData(FileJob& job, io::File& file, uint64_t to) {
  uint64_t pos = job.hinted_to;
  if (job.info.allocated >= job.size || job.end - job.begin <= chunk_bytes_) {
    // Every byte is allocated (st_blocks): no hole to look for. Or a file of one chunk, whose
    // holes cost little (it is read in one request anyway) and whose extents would cost the
    // input stage two lseeks where files compress (ZFS, btrfs: st_blocks below the size).
    if (to > pos) file.WillNeed(pos, to - pos);
    job.hinted_to = std::max(pos, to);
    return;
  }
  // An error is the worker's to meet and report when it reads: the rest is not hinted.
  const Result<uint64_t> reached = ForEachDataExtent(
      file, pos, to, 16, [&](uint64_t b, uint64_t e) { file.WillNeed(b, e - b); });
  job.hinted_to = std::max(job.hinted_to, reached.ok() ? *reached : to);
}

// The current file's data up to read_ahead_bytes_ past the chunk just handed out, then the files
// after it (FillAhead). A file of one chunk is hinted only when made ahead of its turn.
void Scan::ReadAhead() {
  if (read_ahead_bytes_ == 0) return;
  if (current_file_) {
    FileJob& job = *current_;
    job.hinted_to =
        std::max(job.hinted_to, current_offset_ - std::min(current_offset_, chunk_bytes_));
    const uint64_t to = std::min(job.end, current_offset_ + read_ahead_bytes_);
    if (to > job.hinted_to) HintData(job, *current_file_, to);
  }
  FillAhead();
}

// Makes the walk's next files into jobs ahead of their turn while what is asked for past the
// chunk handed out is under read_ahead_bytes_: each opened (the workers read through that
// descriptor) and its first bytes hinted. At most 64 files ahead (a directory of empty files).
void Scan::FillAhead() {
  const uint64_t current_left = current_ ? current_->end - current_offset_ : 0;
  // At most 8 files per chunk handed out: the chunk waits for them (a tree of small files fills
  // the 64 over its first chunks, then takes one per chunk).
  for (int pulled = 0;
       pulled < 8 && read_ahead_bytes_ != 0 && ahead_bytes_ + current_left < read_ahead_bytes_ &&
       ahead_.size() < 64 && !walk_finished_ && !cancelled_;
       ++pulled) {
    std::shared_ptr<FileJob> job = PullJob();
    if (!job) return;
    if (job->end > job->begin) {
      Reading reading(this, job->path);             // an open that hangs is listed when abandoned
      Result<io::File*> f = job->input->Open(fs_);  // a failure is the workers' to report
      if (f.ok()) {
        HintData(
            *job, **f,
            std::min(job->end, job->begin + (read_ahead_bytes_ - ahead_bytes_ - current_left)));
      }
    }
    ahead_bytes_ += job->hinted_to - job->begin;
    ahead_.push_back(std::move(job));
  }
}

void Scan::StartJob(const std::shared_ptr<FileJob>& job) {
  job->handed_out = true;
  if (job->replaces >= 0) {
    WorkScope scope(this);  // FinishSince reads the fates once the scan is over or abandoned
    if (scope) base_fate_[size_t(job->replaces)] = Fate::kReplaced;
  }
  std::lock_guard<std::mutex> lock(open_mu_);
  open_jobs_.emplace(job.get(), job);
}

bool Scan::NextChunk(Chunk* out) {
  for (;;) {
    // Checked before every chunk, so Ctrl-C stops a multi-terabyte image within a chunk.
    if (Cancelled()) {
      cancelled_ = true;
      return false;
    }
    if (current_ && current_offset_ < current_->end) {
      // Registered before its hole chunks are counted: an abandon between the two finishes it
      // with what it holds (SkipHoleChunks counts inside a WorkScope, which then refuses).
      if (!current_->handed_out) StartJob(current_);
      SkipHoleChunks();
      out->file = current_;
      out->offset = current_offset_;
      out->length = std::min(chunk_bytes_, current_->end - current_offset_);
      current_offset_ += out->length;
      ReadAhead();
      return true;
    }
    current_.reset();
    current_file_ = nullptr;
    std::shared_ptr<FileJob> job;
    if (!ahead_.empty()) {
      job = std::move(ahead_.front());
      ahead_.pop_front();
      ahead_bytes_ -= job->hinted_to - job->begin;
    } else {
      job = PullJob();
      if (!job) return false;
    }
    const uint64_t chunks = (job->end - job->begin + chunk_bytes_ - 1) / chunk_bytes_;
    if (chunks == 0) {
      // An empty file: no block, but a dnode. Hand it on as a zero-length chunk.
      StartJob(job);
      job->chunks_left = 1;
      out->file = std::move(job);
      out->offset = 0;
      out->length = 0;
      return true;
    }
    job->chunks_left = chunks;
    if (chunks > 1) {
      // Opened here, to find holes (SkipHoleChunks); the workers read the chunks through the same
      // descriptor. A failure here is the workers' to report for the file.
      Result<io::File*> f = job->input->Open(fs_);
      if (f.ok()) current_file_ = *f;
    }
    current_offset_ = job->begin;
    current_ = std::move(job);
  }
}

std::shared_ptr<FileJob> Scan::PullJob() {
  for (;;) {
    if (Cancelled()) {  // before each entry: a walk of a million directories stops at once
      cancelled_ = true;
      return nullptr;
    }
    std::optional<walk::WalkItem> item = walker_->Next();  // may wait on the storage
    if (!item) {
      walk_finished_ = true;
      return nullptr;
    }
    const bool is_file =
        item->kind == walk::WalkItem::Kind::kFile || item->kind == walk::WalkItem::Kind::kZvol;
    // I/O first, outside the WorkScope: a zvol's size comes from the device itself (lstat of a
    // block device says 0).
    uint64_t size = item->info.size;
    Status size_error;
    if (item->kind == walk::WalkItem::Kind::kZvol && !item->info.size) {
      Result<std::unique_ptr<io::File>> f = fs_->Open(item->path, /*follow=*/true);
      if (f.ok()) {
        size = (*f)->size();
      } else {
        size_error = f.status();
      }
    }
    {
      WorkScope scope(this);
      if (!scope) {
        cancelled_ = true;
        return nullptr;
      }
      if (!is_file) {
        switch (item->kind) {
          case walk::WalkItem::Kind::kDirectory:
            ++input_.directories;
            ++state_
                  .directories[state::DirectoryShape{item->dir_entries, item->dir_name_bytes,
                                                     item->dir_longest_name, item->dir_zap_bytes}];
            break;
          case walk::WalkItem::Kind::kSkipped:
            ++input_.skipped[std::string(walk::SkipReasonName(item->skip_reason))];
            if (item->skip_reason == walk::SkipReason::kExcluded && control_.exclude_matches) {
              walk::CountExcludeMatches(options_.excludes, item->path, control_.exclude_matches);
            }
            break;
          default:
            input_.errors.push_back(PathError{item->path, item->error.ToString()});
            break;
        }
        continue;
      }
      if (!size_error.ok()) {
        input_.errors.push_back(PathError{item->path, size_error.ToString()});
        continue;
      }
      int64_t replaced = -1;
      if (since_ && Reuse(*item, &replaced)) continue;
      std::shared_ptr<FileJob> job = MakeJob(std::move(*item), size);
      job->replaces = replaced;
      if (control_.origin_of_item) {
        job->origin = control_.origin_of_item(
            job->path, job->begin, job->end - job->begin,
            options_.follow_symlinks || job->path == options_.paths[job->root]);
      }
      return job;
    }
  }
}

std::shared_ptr<FileJob> Scan::MakeJob(walk::WalkItem item, uint64_t size) {
  auto job = std::make_shared<FileJob>();
  job->path = std::move(item.path);
  {
    // The path below its input path, seeded with the input path as given (not its position
    // among the inputs): two inputs holding the same names (two copies of one tree) are
    // sampled apart, not block for block alike, and a scan of one input samples it as a scan
    // of several does, so the states of separate scans merge into the state of one
    // (state/merge.h).
    const std::string& root = options_.paths[item.root];
    const size_t skip = job->path.compare(0, root.size(), root) == 0 ? root.size() : 0;
    job->path_hash = XXH3_64bits_withSeed(job->path.data() + skip, job->path.size() - skip,
                                          XXH3_64bits(root.data(), root.size()));
  }
  job->is_zvol = item.kind == walk::WalkItem::Kind::kZvol || options_.volblocksize.has_value();
  job->size = size;
  job->identity = state::FileIdentity(item.info.dev, item.info.ino);
  job->root = static_cast<uint32_t>(item.root);
  job->info = item.info;
  job->piece = item.piece_end != 0;
  job->begin = job->piece ? std::min(item.piece_begin, size) : 0;
  job->end = job->piece ? std::min(item.piece_end, size) : size;
  job->hinted_to = job->begin;
  job->piece_file = item.piece_file;
  // Symlinks are followed only where the walk follows them: an input path, --follow-symlinks.
  const bool follow = options_.follow_symlinks || job->path == options_.paths[item.root];
  // Pieces read apart in time must all read the version the walk listed.
  job->input = std::make_unique<InputFile>(job->path, item.info, job->size, follow,
                                           /*as_listed=*/job->piece);
  job->layouts = Layouts(job->size, job->is_zvol);
  job->non_hole = std::vector<std::atomic<uint64_t>>(rows_.size() * options_.compressions.size());
  job->zero_blocks = std::vector<std::atomic<uint64_t>>(rows_.size());
  job->holes = std::vector<std::atomic<uint64_t>>(rows_.size());
  job->ranges.resize(2 * rows_.size());
  job->linked = !job->piece && item.kind == walk::WalkItem::Kind::kFile && item.info.nlink > 1;
  if ((record_ || job->linked) && control_.record_keys) {
    job->keys.resize(rows_.size());
  } else if (record_ || job->linked) {
    job->refs.resize(rows_.size());
  }
  const bool link_piece = job->piece && item.kind == walk::WalkItem::Kind::kFile &&
                          item.info.nlink > 1 && control_.record_keys;
  if ((job->linked || link_piece) && occurrences_) {
    job->occurrences.assign(rows_.size(), OccurrenceSample(options_.compressions.size()));
  }
  job->groups = breakdown_.Groups(options_.paths[item.root], job->path);
  if (job->piece) return job;  // the file is counted once, from its pieces
  files_found_.fetch_add(1, std::memory_order_relaxed);
  bytes_found_.fetch_add(job->size, std::memory_order_relaxed);
  return job;
}

// Reads the data of [chunk.offset, chunk.offset + chunk.length) into w.buffer, holes as zeros and
// never read, and zeroes the buffer up to fill_end (the end of the chunk's last record).
Status Scan::ReadChunk(Chunk& chunk, Worker& w, io::File& file, uint64_t fill_end) {
  w.extents.clear();
  const uint64_t begin = chunk.offset;
  const uint64_t end = chunk.offset + chunk.length;
  const Result<uint64_t> listed = ForEachDataExtent(
      file, begin, end, SIZE_MAX, [&](uint64_t b, uint64_t e) { w.extents.emplace_back(b, e); });
  if (!listed.ok()) return listed.status();
  uint8_t* base = w.buffer.get();
  uint64_t cursor = begin;
  for (const auto& [b, e] : w.extents) {
    if (b > cursor) std::fill(base + (cursor - begin), base + (b - begin), uint8_t{0});
    if (throttle_) throttle_->Acquire(e - b, control_.cancel);
    ZSIM_RETURN_IF_ERROR(io::ReadFully(file, b, MutableByteView(base + (b - begin), e - b)));
    chunk.read += e - b;
    cursor = e;
  }
  if (fill_end > cursor) std::fill(base + (cursor - begin), base + (fill_end - begin), uint8_t{0});
  return Status::Ok();
}

std::vector<zfs::RecordLayout> Scan::Layouts(uint64_t size, bool is_zvol) const {
  std::vector<zfs::RecordLayout> layouts;
  for (const state::RowState& r : rows_) {
    layouts.push_back(is_zvol ? zfs::ZvolLayout(size, zvol_block_)
                              : zfs::FileLayout(size, r.block_bytes));
  }
  return layouts;
}

}  // namespace zsim::pipeline::internal
