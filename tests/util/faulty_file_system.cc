#include "tests/util/faulty_file_system.h"

namespace zsim::testing {
namespace {

class FaultyFile : public io::File {
 public:
  FaultyFile(std::unique_ptr<io::File> real, uint64_t size,
             std::optional<std::pair<uint64_t, int>> fail, size_t max_read)
      : real_(std::move(real)), size_(size), fail_(fail), max_read_(max_read) {}
  uint64_t size() const override { return size_; }
  Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
    if (max_read_ > 0 && dst.size() > max_read_) dst = dst.first(max_read_);
    if (fail_ && offset <= fail_->first && fail_->first < offset + dst.size()) {
      return Status::FromErrno("read at offset " + std::to_string(offset), fail_->second);
    }
    return real_->ReadAt(offset, dst);
  }
  Result<std::optional<uint64_t>> NextData(uint64_t offset) override {
    return real_->NextData(offset);
  }
  Result<uint64_t> NextHole(uint64_t offset) override { return real_->NextHole(offset); }

 private:
  std::unique_ptr<io::File> real_;
  uint64_t size_;
  std::optional<std::pair<uint64_t, int>> fail_;
  size_t max_read_;
};

}  // namespace

Result<io::FileInfo> FaultyFileSystem::Stat(const std::string& path, bool follow) {
  if (auto it = stat_errors_.find(path); it != stat_errors_.end()) {
    return Status::FromErrno("lstat", it->second);
  }
  return real_->Stat(path, follow);
}

Result<std::vector<io::DirEntry>> FaultyFileSystem::ListDirectory(const std::string& path) {
  if (auto it = list_errors_.find(path); it != list_errors_.end()) {
    return Status::FromErrno("open directory", it->second);
  }
  return real_->ListDirectory(path);
}

Result<std::unique_ptr<io::File>> FaultyFileSystem::Open(const std::string& path, bool follow) {
  ++opens_;
  if (auto it = open_errors_.find(path); it != open_errors_.end()) {
    return Status::FromErrno("open", it->second);
  }
  Result<std::unique_ptr<io::File>> real = real_->Open(path, follow);
  if (!real.ok()) return real.status();
  uint64_t size = (*real)->size();
  if (auto it = sizes_.find(path); it != sizes_.end()) size = it->second;
  std::optional<std::pair<uint64_t, int>> fail;
  if (auto it = read_errors_.find(path); it != read_errors_.end()) fail = it->second;
  size_t max_read = 0;
  if (auto it = short_reads_.find(path); it != short_reads_.end()) max_read = it->second;
  return std::unique_ptr<io::File>(new FaultyFile(std::move(*real), size, fail, max_read));
}

}  // namespace zsim::testing
