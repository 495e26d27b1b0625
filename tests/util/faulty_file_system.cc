#include "tests/util/faulty_file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <new>
#include <optional>
#include <thread>
#include <vector>

namespace zsim::testing {
namespace {

struct FileFaults {
  std::vector<std::pair<uint64_t, int>> fail;
  size_t max_read = 0;
  std::optional<uint64_t> bad_alloc_at;
  double slow_seconds = 0;
  std::optional<std::pair<uint64_t, double>> slow_at;
};

bool Covers(uint64_t offset, size_t length, uint64_t byte) {
  return offset <= byte && byte < offset + length;
}

class FaultyFile : public io::File {
 public:
  FaultyFile(std::unique_ptr<io::File> real, std::string path, uint64_t size, FileFaults faults,
             std::shared_ptr<FaultyFileSystem::Actions> actions)
      : real_(std::move(real)),
        path_(std::move(path)),
        size_(size),
        faults_(std::move(faults)),
        actions_(std::move(actions)) {}
  uint64_t size() const override { return size_; }
  Result<io::FileInfo> Stat() override { return real_->Stat(); }
  Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
    if (faults_.max_read > 0 && dst.size() > faults_.max_read) dst = dst.first(faults_.max_read);
    if (faults_.slow_at && Covers(offset, dst.size(), faults_.slow_at->first)) {
      std::this_thread::sleep_for(std::chrono::duration<double>(faults_.slow_at->second));
    }
    for (const auto& [byte, err] : faults_.fail) {
      if (Covers(offset, dst.size(), byte)) {
        return Status::FromErrno("read at offset " + std::to_string(offset), err);
      }
    }
    if (faults_.bad_alloc_at && Covers(offset, dst.size(), *faults_.bad_alloc_at)) {
      throw std::bad_alloc();
    }
    if (faults_.slow_seconds > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(faults_.slow_seconds));
    }

    ApplyOneShot(offset, dst.size());
    return real_->ReadAt(offset, dst);
  }
  Result<std::optional<uint64_t>> NextData(uint64_t offset) override {
    return real_->NextData(offset);
  }
  Result<uint64_t> NextHole(uint64_t offset) override { return real_->NextHole(offset); }

 private:
  void ApplyOneShot(uint64_t offset, size_t length) {
    std::lock_guard<std::mutex> lock(actions_->mu);
    if (auto it = actions_->truncate_at_read.find(path_);
        it != actions_->truncate_at_read.end() && Covers(offset, length, it->second.first)) {
      if (::truncate(path_.c_str(), static_cast<off_t>(it->second.second)) != 0) std::abort();
      actions_->truncate_at_read.erase(it);
    }
    if (auto it = actions_->append_at_read.find(path_);
        it != actions_->append_at_read.end() && Covers(offset, length, it->second.first)) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      if (fd < 0) std::abort();
      const std::vector<uint8_t> extra(it->second.second, 0x5A);
      if (::write(fd, extra.data(), extra.size()) != static_cast<ssize_t>(extra.size())) {
        std::abort();
      }
      ::close(fd);
      actions_->append_at_read.erase(it);
    }
    if (auto it = actions_->replace_at_read.find(path_);
        it != actions_->replace_at_read.end() && Covers(offset, length, it->second.first)) {
      const std::string temp = path_ + ".replacement";
      const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0) std::abort();
      const std::vector<uint8_t>& bytes = it->second.second;
      if (::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
        std::abort();
      }
      ::close(fd);
      if (::rename(temp.c_str(), path_.c_str()) != 0) std::abort();
      actions_->replace_at_read.erase(it);
    }
    if (auto it = actions_->rewrite_at_read.find(path_);
        it != actions_->rewrite_at_read.end() && Covers(offset, length, it->second)) {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) std::abort();
      // A different mtime even on a file system with coarse timestamps.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::vector<uint8_t> bytes(4096, 0xA5);
      if (::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) !=
          static_cast<ssize_t>(bytes.size())) {
        std::abort();
      }
      ::close(fd);
      actions_->rewrite_at_read.erase(it);
    }
  }

  std::unique_ptr<io::File> real_;
  std::string path_;
  uint64_t size_;
  FileFaults faults_;
  std::shared_ptr<FaultyFileSystem::Actions> actions_;
};

}  // namespace

uint64_t FaultyFileSystem::opens(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = opens_by_path_.find(path);
  return it == opens_by_path_.end() ? 0 : it->second;
}

Result<io::FileInfo> FaultyFileSystem::Stat(const std::string& path, bool follow) {
  if (auto it = stat_errors_.find(path); it != stat_errors_.end()) {
    return Status::FromErrno("lstat", it->second);
  }
  return real_->Stat(path, follow);
}

Result<std::vector<io::DirEntry>> FaultyFileSystem::ListDirectory(const std::string& path,
                                                                  bool follow) {
  if (auto it = list_errors_.find(path); it != list_errors_.end()) {
    return Status::FromErrno("open directory", it->second);
  }
  return real_->ListDirectory(path, follow);
}

Result<std::unique_ptr<io::File>> FaultyFileSystem::Open(const std::string& path, bool follow) {
  ++opens_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++opens_by_path_[path];
    if (!actions_) {
      // Created on first use so that configuration (single-threaded) can fill the maps.
      actions_ = std::make_shared<Actions>();
      actions_->truncate_at_read = truncate_at_read_;
      actions_->append_at_read = append_at_read_;
      actions_->replace_at_read = replace_at_read_;
      actions_->rewrite_at_read = rewrite_at_read_;
    }
    if (vanish_.erase(path) > 0) ::unlink(path.c_str());
    if (auto it = symlink_at_open_.find(path); it != symlink_at_open_.end()) {
      ::unlink(path.c_str());
      if (::symlink(it->second.c_str(), path.c_str()) != 0) std::abort();
      symlink_at_open_.erase(it);
    }
  }
  if (auto it = open_errors_.find(path); it != open_errors_.end()) {
    return Status::FromErrno("open", it->second);
  }
  Result<std::unique_ptr<io::File>> real = real_->Open(path, follow);
  if (!real.ok()) return real.status();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = truncate_after_open_.find(path); it != truncate_after_open_.end()) {
      if (::truncate(path.c_str(), static_cast<off_t>(it->second)) != 0) std::abort();
      truncate_after_open_.erase(it);
    }
  }
  uint64_t size = (*real)->size();
  if (auto it = sizes_.find(path); it != sizes_.end()) size = it->second;
  FileFaults faults;
  if (auto it = read_errors_.find(path); it != read_errors_.end()) faults.fail = it->second;
  if (auto it = short_reads_.find(path); it != short_reads_.end()) faults.max_read = it->second;
  if (auto it = bad_alloc_.find(path); it != bad_alloc_.end()) faults.bad_alloc_at = it->second;
  if (auto it = slow_reads_.find(path); it != slow_reads_.end()) faults.slow_seconds = it->second;
  if (auto it = slow_read_at_.find(path); it != slow_read_at_.end()) faults.slow_at = it->second;
  std::shared_ptr<Actions> actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    actions = actions_;
  }
  return std::unique_ptr<io::File>(
      new FaultyFile(std::move(*real), path, size, faults, std::move(actions)));
}

}  // namespace zsim::testing
