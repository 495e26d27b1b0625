// tests/util/forwarding_file_system.h
//
// ForwardingFileSystem and ForwardingFile: a file system and an open file that pass every call
// to another (the real file system by default), for the tests that watch, count or hold back
// some of a scan's calls: a subclass overrides those only.
//
// Thread safety: as the file system forwarded to; a subclass guards its own state.

#ifndef ZSIM_TESTS_UTIL_FORWARDING_FILE_SYSTEM_H_
#define ZSIM_TESTS_UTIL_FORWARDING_FILE_SYSTEM_H_

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/io/file_system.h"

namespace zsim::testing {

class ForwardingFileSystem : public io::FileSystem {
 public:
  explicit ForwardingFileSystem(std::shared_ptr<io::FileSystem> real = io::PosixFileSystem())
      : real_(std::move(real)) {}
  Result<io::FileInfo> Stat(const std::string& path, bool follow) override {
    return real_->Stat(path, follow);
  }
  Result<std::vector<io::DirEntry>> ListDirectory(const std::string& path, bool follow) override {
    return real_->ListDirectory(path, follow);
  }
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    return real_->Open(path, follow);
  }

 private:
  std::shared_ptr<io::FileSystem> real_;
};

class ForwardingFile : public io::File {
 public:
  explicit ForwardingFile(std::unique_ptr<io::File> file) : file_(std::move(file)) {}
  uint64_t size() const override { return file_->size(); }
  Result<io::FileInfo> Stat() override { return file_->Stat(); }
  Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
    return file_->ReadAt(offset, dst);
  }
  Result<std::optional<uint64_t>> NextData(uint64_t offset) override {
    return file_->NextData(offset);
  }
  Result<uint64_t> NextHole(uint64_t offset) override { return file_->NextHole(offset); }
  void WillNeed(uint64_t offset, uint64_t length) override { file_->WillNeed(offset, length); }

 private:
  std::unique_ptr<io::File> file_;
};

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_FORWARDING_FILE_SYSTEM_H_
