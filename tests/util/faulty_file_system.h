// tests/util/faulty_file_system.h
//
// FaultyFileSystem: the real file system with faults injected per path (STYLE.md §6.4): a path
// whose stat, listing or open fails with an errno, a file whose reads fail with an errno at byte
// N, a file that returns short reads, or that reports another size when opened. Some faults act
// on the real file at the moment zsim touches it, so the real PosixFileSystem meets the result:
// a file removed between the walk and its first open (Vanish), a file truncated or extended
// while it is being read (TruncateAtRead, TruncateAfterOpen, AppendAtRead), an allocation failure
// thrown from a read (ThrowBadAllocAt: what an out-of-memory codec or buffer looks like to the
// pipeline), a file replaced by another (rename over it) or rewritten in place while read, a file
// replaced by a symlink between the walk and the open, and reads that take a long time (a slow or
// hung disk).
//
// Thread safety: configure before use; then safe from any thread.

#ifndef ZSIM_TESTS_UTIL_FAULTY_FILE_SYSTEM_H_
#define ZSIM_TESTS_UTIL_FAULTY_FILE_SYSTEM_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "engine/io/file_system.h"

namespace zsim::testing {

class FaultyFileSystem : public io::FileSystem {
 public:
  FaultyFileSystem() : real_(io::PosixFileSystem()) {}

  void FailStat(const std::string& path, int err) { stat_errors_[path] = err; }
  void FailList(const std::string& path, int err) { list_errors_[path] = err; }
  void FailOpen(const std::string& path, int err) { open_errors_[path] = err; }
  // Reads covering byte `offset` of `path` fail with `err` (several offsets per path may fail).
  void FailReadAt(const std::string& path, uint64_t offset, int err) {
    read_errors_[path].emplace_back(offset, err);
  }
  // Every read of `path` returns at most `max_bytes` bytes.
  void ShortReads(const std::string& path, size_t max_bytes) { short_reads_[path] = max_bytes; }
  // Open reports `size` instead of the real size (the file "changed" after the walk).
  void ReportSize(const std::string& path, uint64_t size) { sizes_[path] = size; }
  // The first Open of `path` unlinks the real file first: it vanished after the walk saw it.
  void Vanish(const std::string& path) { vanish_.insert(path); }
  // The first read covering byte `offset` truncates the real file to `new_size` first.
  void TruncateAtRead(const std::string& path, uint64_t offset, uint64_t new_size) {
    truncate_at_read_[path] = {offset, new_size};
  }
  // The first Open of `path` truncates the real file to `new_size` once it has opened it: the
  // open file is then shorter than the size it was opened at before its first read.
  void TruncateAfterOpen(const std::string& path, uint64_t new_size) {
    truncate_after_open_[path] = new_size;
  }
  // The first read covering byte `offset` appends `bytes` bytes to the real file first.
  void AppendAtRead(const std::string& path, uint64_t offset, uint64_t bytes) {
    append_at_read_[path] = {offset, bytes};
  }
  // Reads covering byte `offset` throw std::bad_alloc.
  void ThrowBadAllocAt(const std::string& path, uint64_t offset) { bad_alloc_[path] = offset; }
  // The first read covering byte `offset` first renames a new file holding `bytes` over `path`.
  void ReplaceAtRead(const std::string& path, uint64_t offset, std::vector<uint8_t> bytes) {
    replace_at_read_[path] = {offset, std::move(bytes)};
  }
  // The first read covering byte `offset` first overwrites the real file's bytes there in place
  // (same size, new contents, new mtime).
  void RewriteAtRead(const std::string& path, uint64_t offset) { rewrite_at_read_[path] = offset; }
  // The first Open of `path` first replaces it by a symlink to `target`.
  void SymlinkAtOpen(const std::string& path, const std::string& target) {
    symlink_at_open_[path] = target;
  }
  // Every read of `path` takes `seconds` first (a slow disk).
  void SlowReads(const std::string& path, double seconds) { slow_reads_[path] = seconds; }
  // Reads of `path` covering byte `offset` take `seconds` first, also one that then fails: that
  // part of the file is read (or fails) after the others (a slow region of a disk).
  void SlowReadAt(const std::string& path, uint64_t offset, double seconds) {
    slow_read_at_[path] = {offset, seconds};
  }

  uint64_t opens() const { return opens_.load(); }
  // Opens of one path (every chunk of a file opens it again).
  uint64_t opens(const std::string& path) const;

  Result<io::FileInfo> Stat(const std::string& path, bool follow) override;
  Result<std::vector<io::DirEntry>> ListDirectory(const std::string& path, bool follow) override;
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override;

  // One-shot actions on real files, shared with the files this opens.
  struct Actions {
    std::mutex mu;
    std::map<std::string, std::pair<uint64_t, uint64_t>> truncate_at_read, append_at_read;
    std::map<std::string, std::pair<uint64_t, std::vector<uint8_t>>> replace_at_read;
    std::map<std::string, uint64_t> rewrite_at_read;
  };

 private:
  std::shared_ptr<io::FileSystem> real_;
  std::map<std::string, int> stat_errors_, list_errors_, open_errors_;
  std::map<std::string, std::vector<std::pair<uint64_t, int>>> read_errors_;
  std::map<std::string, size_t> short_reads_;
  std::map<std::string, uint64_t> sizes_;
  std::map<std::string, uint64_t> bad_alloc_;
  std::set<std::string> vanish_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> truncate_at_read_, append_at_read_;
  std::map<std::string, uint64_t> truncate_after_open_;  // guarded by mu_ once in use
  std::map<std::string, std::pair<uint64_t, std::vector<uint8_t>>> replace_at_read_;
  std::map<std::string, uint64_t> rewrite_at_read_;
  std::map<std::string, std::string> symlink_at_open_;
  std::map<std::string, double> slow_reads_;
  std::map<std::string, std::pair<uint64_t, double>> slow_read_at_;
  std::shared_ptr<Actions> actions_;
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> opens_by_path_;
  std::atomic<uint64_t> opens_{0};
};

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_UTIL_FAULTY_FILE_SYSTEM_H_
