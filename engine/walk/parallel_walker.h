// engine/walk/parallel_walker.h
//
// ParallelWalker: the walk of walker.h by several threads at once, for trees of millions of files
// and for storage where every stat or readdir waits on a disk or the network. Each thread lists
// directories depth-first from its own stack and hands the shallowest ones to idle threads
// through a shared pool (per-thread visitors; a lock per directory handed over, none per entry).
// Items reach the caller through a bounded queue, so the walk runs ahead of the scan by at most
// `queue_items` items, and memory stays bounded by the queue plus the directories waiting to be
// listed.
//
// It yields the same items as Walker, in another order, with one rule made independent of
// timing: of a regular file's several names (hard links) the smallest path counts, the others
// are kHardLink skips. Such a file is yielded once st_nlink distinct names have been met, or
// after the rest of the tree when some lie outside the roots; until then its names are held
// (memory: the names of the hard-linked files whose other names the walk has not reached yet,
// plus 21-43 bytes per hard-linked file for the rest of the walk). A name met again (a root
// inside another root) is a kHardLink skip and does not count. If a tree shows a file under
// more distinct names than st_nlink (a bind mount inside it, a link made during the walk), the
// first st_nlink met decide, and which those are can depend on timing. --follow-symlinks is
// not supported (loop detection needs each path's ancestors): the scan walks serially then.
//
// WalkSizer: the same walk keeping only the number and bytes of the files, in background threads,
// so the progress line has a total (and an ETA) long before the scan's own walk has finished, and
// the sampled codecs a plan (estimate/sample_level.h PlanLevel). With --follow-symlinks it runs
// the serial walk in one thread, which holds its own set of the files and directories seen (as
// the scan's serial walk does): the walk's memory doubles.
//
// Thread safety: ParallelWalker::Next from one thread at a time; WalkSizer's getters from any
// thread. Destruction stops the walk and joins its threads.

#ifndef ZSIM_ENGINE_WALK_PARALLEL_WALKER_H_
#define ZSIM_ENGINE_WALK_PARALLEL_WALKER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/walk/file_sample.h"
#include "engine/walk/walker.h"

namespace zsim::walk {

namespace internal {
class ParallelWalk;
}

class ParallelWalker : public WalkSource {
 public:
  // `fs` must outlive the walker and be safe to call from several threads.
  // REQUIRES: !options.follow_symlinks, threads >= 1, queue_items >= 1.
  ParallelWalker(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options,
                 int threads, size_t queue_items = 4096);
  ~ParallelWalker() override;

  std::optional<WalkItem> Next() override;

 private:
  bool Push(std::vector<WalkItem>& batch);  // false once the walker is being destroyed
  void Done();

  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<WalkItem> queue_;  // filled by the walking threads (a batch may overshoot capacity_)
  size_t capacity_;
  bool done_ = false;
  bool closing_ = false;
  bool consumer_waiting_ = false;
  int producers_waiting_ = 0;
  std::deque<WalkItem> taken_;  // the consumer's: items already moved out of queue_
  std::unique_ptr<internal::ParallelWalk> walk_;
};

class WalkSizer {
 public:
  // Starts walking at once, with `threads` threads, or with one running the serial Walker when
  // options.follow_symlinks (which ParallelWalker does not support).
  WalkSizer(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options, int threads);
  ~WalkSizer();

  uint64_t files() const { return files_.load(std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
  // Bytes the files hold on their file system (holes excluded; a device: its size).
  uint64_t allocated_bytes() const { return allocated_.load(std::memory_order_relaxed); }
  // Files (and devices) holding any allocated bytes: each is a block at least in every row of a
  // scan (estimate/codec_budget.h PlannedBlocks).
  uint64_t allocated_files() const { return allocated_files_.load(std::memory_order_relaxed); }
  // Bytes a scan reads: each file's allocated bytes, at most its size (a small file's last block
  // is allocated in full, but only its size is read; a device: its size).
  uint64_t data_bytes() const { return data_.load(std::memory_order_relaxed); }
  // Waits until the walk has finished.
  void Wait() const;
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // A bounded sample of the files found (file_sample.h): Take it once finished() is true.
  FileSample& file_sample() { return sample_; }

 private:
  io::FileSystem* fs_;
  std::atomic<uint64_t> files_{0}, bytes_{0}, allocated_{0}, data_{0}, allocated_files_{0};
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_{false};
  FileSample sample_;
  std::thread serial_;  // --follow-symlinks: the serial walk
  std::unique_ptr<internal::ParallelWalk> walk_;
};

}  // namespace zsim::walk

#endif  // ZSIM_ENGINE_WALK_PARALLEL_WALKER_H_
