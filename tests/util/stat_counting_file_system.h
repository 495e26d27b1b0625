// tests/util/stat_counting_file_system.h
//
// StatCountingFileSystem: the real file system, counting how often each regular file has been
// stat'ed. A scan stats every file twice (its walk and the sizing walk that plans the sampled
// codecs), so a subclass can hold an open, a listing or a read until a given walk has been
// somewhere: the tests that must place the sampling plan at a chosen moment of a scan.
//
// Thread safety: safe from any thread; subclasses guard their own state with mu_.

#ifndef ZSIM_TESTS_UTIL_STAT_COUNTING_FILE_SYSTEM_H_
#define ZSIM_TESTS_UTIL_STAT_COUNTING_FILE_SYSTEM_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/io/file_system.h"

namespace zsim::testing {

class StatCountingFileSystem : public io::FileSystem {
 public:
  Result<io::FileInfo> Stat(const std::string& path, bool follow) override {
    Result<io::FileInfo> r = real_->Stat(path, follow);
    if (r.ok() && r->type == io::FileType::kRegular) {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_[path];
      cv_.notify_all();
    }
    return r;
  }
  Result<std::vector<io::DirEntry>> ListDirectory(const std::string& path, bool follow) override {
    return real_->ListDirectory(path, follow);
  }
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    return real_->Open(path, follow);
  }

 protected:
  // Stats of regular files so far, all paths together. Call with mu_ held.
  int RegularStats() const {
    int n = 0;
    for (const auto& [path, count] : stats_) n += count;
    return n;
  }

  std::shared_ptr<io::FileSystem> real_ = io::PosixFileSystem();
  std::mutex mu_;  // guards stats_ and the subclass's state; cv_ is notified on every change
  std::condition_variable cv_;
  std::map<std::string, int> stats_;  // Guarded by mu_.
};

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_STAT_COUNTING_FILE_SYSTEM_H_
