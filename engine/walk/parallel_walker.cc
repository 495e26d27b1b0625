#include "engine/walk/parallel_walker.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <thread>
#include <utility>

#include "engine/base/mix.h"
#include "engine/walk/walk_common.h"

namespace zsim::walk {
namespace internal {

// A set of FileKeys in one flat array (open addressing, linear probing, at most 3/4 full):
// 16-byte slots, 21 to 43 bytes per key, where a std::set node takes about 64. Inode 0 is
// never a file's, so {any, 0} marks an empty slot.
class FileKeySet {
 public:
  bool Contains(const FileKey& k) const {
    if (slots_.empty() || k.second == 0) return false;
    for (size_t i = Home(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return true;
      if (slots_[i].second == 0) return false;
    }
  }
  // A key with inode 0 (no file system gives one) is not kept. True if the key is new.
  bool Insert(const FileKey& k) {
    if (k.second == 0) return true;
    if (4 * (size_ + 1) > 3 * slots_.size()) Grow();
    for (size_t i = Home(k);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == k) return false;
      if (slots_[i].second == 0) {
        slots_[i] = k;
        ++size_;
        return true;
      }
    }
  }

 private:
  size_t Home(const FileKey& k) const {
    return static_cast<size_t>(Mix64(k.first * kGoldenGamma ^ k.second)) & (slots_.size() - 1);
  }
  void Grow() {
    std::vector<FileKey> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : 2 * old.size(), FileKey{0, 0});
    size_ = 0;
    for (const FileKey& k : old) {
      if (k.second != 0) Insert(k);
    }
  }

  std::vector<FileKey> slots_;  // size: 0 or a power of two
  size_t size_ = 0;
};

// The walk itself: threads, the pool of directories waiting to be listed, the registry of files
// with several names. Items go to `visit` in batches (a directory's items at a time, from any
// walking thread, concurrently: one hand-over per directory, not per item); `done` is called
// once, by the last thread to finish, after every item.
class ParallelWalk {
 public:
  using Visit = std::function<bool(std::vector<WalkItem>&)>;  // may move the items; false: stop

  ParallelWalk(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options, int threads,
               Visit visit, std::function<void()> done)
      : fs_(fs),
        options_(std::move(options)),
        visit_(std::move(visit)),
        done_(std::move(done)),
        root_ids_(RootIdentities(fs_, roots)),
        root_names_(RootNames(roots)),
        root_covered_(RootsCoveredByOthers(root_ids_, options_.sysfs_root)) {
    assert(!options_.follow_symlinks);
    assert(threads >= 1);
    for (size_t i = 0; i < roots.size(); ++i) {
      pending_.push_back(Task{std::move(roots[i]), i, 0, /*is_root=*/true, {}});
    }
    alive_ = threads;
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { Work(); });
  }

  ~ParallelWalk() {
    Stop();
    for (std::thread& t : threads_) t.join();
  }

  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true, std::memory_order_relaxed);
    cv_.notify_all();
  }

 private:
  // A root to classify, or a directory to list.
  struct Task {
    std::string path;
    size_t root = 0;
    uint64_t root_dev = 0;  // --one-file-system: the root's device
    bool is_root = false;
    io::FileInfo info;         // a directory's own stat
    bool list_follow = false;  // a root directory: listed through a symlink
  };

  // A regular file with several names: the smallest path counts.
  struct Linked {
    std::string path;
    size_t root = 0;
    io::FileInfo info;
    std::vector<std::string> others;
  };

  // Queues an item in this thread's batch; hands the batch over when it is large. False: stop.
  bool Emit(WalkItem&& item, size_t root) {
    if (stopped()) return false;
    item.root = root;
    batch_.push_back(std::move(item));
    return batch_.size() < kBatchItems || Flush();
  }

  // Hands this thread's batch to `visit`. False: stop.
  bool Flush() {
    if (batch_.empty()) return !stopped();
    const bool go_on = !stopped() && visit_(batch_);
    batch_.clear();
    if (!go_on) Stop();
    return go_on;
  }

  bool stopped() const { return stop_.load(std::memory_order_relaxed); }

  void Work() {
    std::vector<Task> local;  // depth-first: the back is the deepest
    bool holding = false;     // counted in busy_ (took work from the pool)
    for (;;) {
      if (stopped()) break;
      if (local.empty()) {
        std::unique_lock<std::mutex> lock(mu_);
        if (holding) {
          holding = false;
          if (--busy_ == 0 && pending_.empty()) cv_.notify_all();
        }
        ++idle_;
        cv_.wait(lock, [&] { return stop_ || !pending_.empty() || busy_ == 0; });
        --idle_;
        if (stop_ || pending_.empty()) break;  // nothing pending and nobody who could add any
        local.push_back(std::move(pending_.front()));
        pending_.pop_front();
        ++busy_;
        holding = true;
      }
      Task task = std::move(local.back());
      local.pop_back();
      if (task.is_root) {
        VisitRoot(task, &local);
      } else {
        ListDirectory(task, &local);
      }
      Flush();
      // Idle threads get the shallowest half of this thread's stack: the largest subtrees.
      if (local.size() > 1 && idle_.load(std::memory_order_relaxed) > 0) {
        std::lock_guard<std::mutex> lock(mu_);
        const size_t give = local.size() / 2;
        for (size_t i = 0; i < give; ++i) pending_.push_back(std::move(local[i]));
        local.erase(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(give));
        cv_.notify_all();
      }
    }
    if (alive_.fetch_sub(1) == 1) Finish();
  }

  void VisitRoot(const Task& task, std::vector<Task>* local) {
    // Roots are followed (as find -H does): naming a symlink to an image scans the image.
    Result<io::FileInfo> info = fs_->Stat(task.path, /*follow=*/true);
    if (!info.ok()) {
      Emit(Failed(task.path, info.status()), task.root);
      return;
    }
    if (root_covered_[task.root]) {
      Emit(Skipped(task.path, SkipReason::kOverlap), task.root);
      return;
    }
    if (info->type == io::FileType::kDirectory) {
      ListDirectory(Task{task.path, task.root, info->dev, false, *info, /*list_follow=*/true},
                    local);
      return;
    }
    if (info->type == io::FileType::kBlockDevice) {
      WalkItem item;
      item.kind = WalkItem::Kind::kZvol;
      item.path = task.path;
      item.info = *info;
      Emit(std::move(item), task.root);
      return;
    }
    Classify(task.path, *info, task, local);
  }

  void ListDirectory(const Task& dir, std::vector<Task>* local) {
    Result<std::vector<io::DirEntry>> entries = fs_->ListDirectory(dir.path, dir.list_follow);
    if (!entries.ok()) {
      Emit(Failed(dir.path, entries.status()), dir.root);
      return;
    }
    const size_t kept = PartitionExcluded(dir.path, options_.excludes, &*entries);
    if (!Emit(DirectoryItem(dir.path, dir.info, std::span(*entries).first(kept), options_),
              dir.root)) {
      return;
    }
    for (size_t i = 0; i < entries->size(); ++i) {
      const io::DirEntry& entry = (*entries)[i];
      std::string path = JoinPath(dir.path, entry.name);
      if (i >= kept) {
        if (!Emit(Skipped(std::move(path), SkipReason::kExcluded), dir.root)) return;
        continue;
      }
      // d_type spares an lstat for the common cases that need no stat at all.
      if (entry.type == io::FileType::kSymlink) {
        if (!Emit(Skipped(std::move(path), SkipReason::kSymlink), dir.root)) return;
        continue;
      }
      Result<io::FileInfo> info = fs_->Stat(path, /*follow=*/false);
      if (!info.ok()) {
        if (!Emit(Failed(std::move(path), info.status()), dir.root)) return;
        continue;
      }
      if (!Classify(std::move(path), *info, dir, local)) return;
    }
  }

  // An entry met inside a tree (or a root that is not a directory or device). False: stop.
  bool Classify(std::string path, const io::FileInfo& info, const Task& parent,
                std::vector<Task>* local) {
    // An input met inside a tree is left to its own root, whichever thread comes first; another
    // name of a root file with several is a hard link (walk_common.h LeftToItsRoot).
    if (!parent.is_root && IsARoot(root_ids_, {info.dev, info.ino}) &&
        LeftToItsRoot(root_ids_, root_names_, info, path)) {
      return Emit(Skipped(std::move(path), SkipReason::kOverlap), parent.root);
    }
    switch (info.type) {
      case io::FileType::kDirectory:
        if (options_.one_file_system && info.dev != parent.root_dev) {
          return Emit(Skipped(std::move(path), SkipReason::kOtherFileSystem), parent.root);
        }
        if (IsPseudoMount(fs_, path, info.dev, parent.info.dev)) {
          return Emit(Skipped(std::move(path), SkipReason::kPseudoFileSystem), parent.root);
        }
        if (!ClaimDirectory({info.dev, info.ino})) {
          // A bind mount (or another route) to a directory already listed or queued.
          return Emit(Skipped(std::move(path), SkipReason::kOverlap), parent.root);
        }
        local->push_back(Task{std::move(path), parent.root, parent.root_dev, false, info});
        return true;
      case io::FileType::kRegular: {
        if (info.nlink > 1) return Register(std::move(path), parent.root, info);
        WalkItem item;
        item.kind = WalkItem::Kind::kFile;
        item.path = std::move(path);
        item.info = info;
        return Emit(std::move(item), parent.root);
      }
      case io::FileType::kBlockDevice:
        return Emit(Skipped(std::move(path), SkipReason::kBlockDevice), parent.root);
      default:
        return Emit(Skipped(std::move(path), *SkipReasonOfType(info.type)), parent.root);
    }
  }

  // True for the first route to a directory: only that one is listed.
  bool ClaimDirectory(const FileKey& key) {
    std::lock_guard<std::mutex> lock(dirs_mu_);
    return seen_dirs_.Insert(key);
  }

  // One name of a file with several. Once st_nlink distinct names are met the smallest counts
  // and the file is yielded at once, so a tree of hard-linked backups holds only the files whose
  // names are still being found. A name met again (nested or repeated roots), before or after
  // that, is a kHardLink skip and does not count. False: stop.
  bool Register(std::string path, size_t root, const io::FileInfo& info) {
    const FileKey key{info.dev, info.ino};
    Linked done;
    bool again = false;
    {
      std::lock_guard<std::mutex> lock(linked_mu_);
      again = linked_done_.Contains(key);
      if (!again) {
        auto [it, fresh] = linked_.try_emplace(key);
        Linked& l = it->second;
        if (fresh) {
          l.path = std::move(path);
          l.root = root;
          l.info = info;
        } else if (path == l.path ||
                   std::find(l.others.begin(), l.others.end(), path) != l.others.end()) {
          again = true;
        } else if (path < l.path) {
          l.others.push_back(std::move(l.path));
          l.path = std::move(path);
          l.root = root;
        } else {
          l.others.push_back(std::move(path));
        }
        if (!again) {
          // A file that is also an input waits for the end of the walk: its names may be
          // spelled several ways (`t` and `/abs/t/rand`), more than st_nlink, and the first
          // st_nlink met would depend on the threads' timing. At the end the smallest counts.
          if (1 + l.others.size() < info.nlink || IsARoot(root_ids_, key)) return true;
          done = std::move(l);
          linked_.erase(it);
          linked_done_.Insert(key);
        }
      }
    }
    // Emitted outside the lock: Emit may wait on the bounded queue.
    if (again) return Emit(Skipped(std::move(path), SkipReason::kHardLink), root);
    return EmitLinked(std::move(done));
  }

  // A hard-linked file under its counting name, then its other names as skips. False: stop.
  bool EmitLinked(Linked&& l) {
    WalkItem item;
    item.kind = WalkItem::Kind::kFile;
    item.path = std::move(l.path);
    item.info = l.info;
    if (!Emit(std::move(item), l.root)) return false;
    for (std::string& other : l.others) {
      if (!Emit(Skipped(std::move(other), SkipReason::kHardLink), l.root)) return false;
    }
    return true;
  }

  // The last thread out: the files with several names not yielded yet (some of their names lie
  // outside the roots), then the end.
  void Finish() {
    for (auto& [key, l] : linked_) {
      if (!EmitLinked(std::move(l))) break;
    }
    Flush();
    linked_.clear();
    linked_done_ = FileKeySet();
    done_();
  }

  static constexpr size_t kBatchItems = 256;
  static thread_local std::vector<WalkItem> batch_;  // the items this thread has not handed over

  io::FileSystem* fs_;
  WalkOptions options_;
  Visit visit_;
  std::function<void()> done_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Task> pending_;
  int busy_ = 0;  // threads whose stack holds work taken from the pool
  std::atomic<int> idle_{0};
  std::atomic<bool> stop_{false};  // written under mu_ (the pool's waits read it)
  std::atomic<int> alive_{0};

  std::vector<std::optional<FileKey>> root_ids_;  // each root's (dev, ino), fixed
  std::vector<std::string> root_names_;           // each root's path, lexically normal
  std::vector<bool> root_covered_;                // per root: another root counts its data
  std::mutex dirs_mu_;
  FileKeySet seen_dirs_;  // Guarded by dirs_mu_. Directories inside the trees listed or queued.

  std::mutex linked_mu_;
  std::map<FileKey, Linked> linked_;  // names still being found
  FileKeySet linked_done_;            // all names met, file yielded

  std::vector<std::thread> threads_;  // last: started once everything above exists
};

thread_local std::vector<WalkItem> ParallelWalk::batch_;

}  // namespace internal

ParallelWalker::ParallelWalker(io::FileSystem* fs, std::vector<std::string> roots,
                               WalkOptions options, int threads, size_t queue_items)
    : capacity_(queue_items) {
  walk_ = std::make_unique<internal::ParallelWalk>(
      fs, std::move(roots), std::move(options), threads,
      [this](std::vector<WalkItem>& batch) { return Push(batch); }, [this] { Done(); });
}

ParallelWalker::~ParallelWalker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    not_full_.notify_all();
  }
  walk_.reset();  // stops and joins the threads
}

bool ParallelWalker::Push(std::vector<WalkItem>& batch) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!closing_ && queue_.size() >= capacity_) {
    ++producers_waiting_;
    not_full_.wait(lock, [&] { return closing_ || queue_.size() < capacity_; });
    --producers_waiting_;
  }
  if (closing_) return false;
  for (WalkItem& item : batch) queue_.push_back(std::move(item));
  if (consumer_waiting_) not_empty_.notify_one();
  return true;
}

void ParallelWalker::Done() {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  not_empty_.notify_all();
}

std::optional<WalkItem> ParallelWalker::Next() {
  if (taken_.empty()) {
    // Take everything queued at once: one lock (and at most one wake-up) per batch, not per item.
    std::unique_lock<std::mutex> lock(mu_);
    if (!done_ && queue_.empty()) {
      consumer_waiting_ = true;
      not_empty_.wait(lock, [&] { return done_ || !queue_.empty(); });
      consumer_waiting_ = false;
    }
    taken_.swap(queue_);
    if (producers_waiting_ > 0) not_full_.notify_all();
    if (taken_.empty()) return std::nullopt;
  }
  WalkItem item = std::move(taken_.front());
  taken_.pop_front();
  return item;
}

WalkSizer::WalkSizer(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options,
                     int threads)
    : fs_(fs) {
  auto add = [this](const std::vector<WalkItem>& batch) {
    uint64_t files = 0, bytes = 0, allocated = 0, data = 0, allocated_files = 0;
    std::vector<SampledFile> sampled;
    const int sample_level = sample_.level();
    for (const WalkItem& item : batch) {
      if (item.kind == WalkItem::Kind::kFile) {
        if (FileLevel(item.path) >= sample_level) {
          sampled.push_back(SampledFile{item.path, item.info.size});
        }
        ++files;
        bytes += item.info.size;
        allocated += item.info.allocated;
        allocated_files += item.info.allocated > 0;
        data += std::min(item.info.size, item.info.allocated);
      } else if (item.kind == WalkItem::Kind::kZvol) {
        uint64_t size = item.info.size;
        if (size == 0) {  // lstat of a block device says 0: ask the device
          Result<std::unique_ptr<io::File>> f = fs_->Open(item.path, /*follow=*/true);
          if (f.ok()) size = (*f)->size();
        }
        ++files;
        bytes += size;
        allocated += size;
        allocated_files += size > 0;
        data += size;
      }
    }
    files_.fetch_add(files, std::memory_order_relaxed);
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    allocated_.fetch_add(allocated, std::memory_order_relaxed);
    data_.fetch_add(data, std::memory_order_relaxed);
    allocated_files_.fetch_add(allocated_files, std::memory_order_relaxed);
    if (!sampled.empty()) sample_.Offer(std::move(sampled));
  };
  if (options.follow_symlinks) {
    // Loop detection needs each path's ancestors: the serial walk, in one background thread.
    serial_ = std::thread([this, add, roots = std::move(roots), options = std::move(options)] {
      Walker walker(fs_, roots, options);
      std::vector<WalkItem> batch(1);
      while (!stop_.load(std::memory_order_relaxed)) {
        std::optional<WalkItem> item = walker.Next();
        if (!item) break;
        batch[0] = std::move(*item);
        add(batch);
      }
      finished_.store(true, std::memory_order_release);
      finished_.notify_all();
    });
    return;
  }
  walk_ = std::make_unique<internal::ParallelWalk>(
      fs, std::move(roots), std::move(options), threads,
      [add](std::vector<WalkItem>& batch) {
        add(batch);
        return true;
      },
      [this] {
        finished_.store(true, std::memory_order_release);
        finished_.notify_all();
      });
}

WalkSizer::~WalkSizer() {
  stop_.store(true, std::memory_order_relaxed);
  if (serial_.joinable()) serial_.join();
  walk_.reset();
}

void WalkSizer::Wait() const { finished_.wait(false, std::memory_order_acquire); }

}  // namespace zsim::walk
