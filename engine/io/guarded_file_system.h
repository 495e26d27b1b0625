// engine/io/guarded_file_system.h
//
// A file system that refuses to lead the walk to where zsim writes. The --html and --save
// targets are checked before the scan (cli/output_file.h): not an input, not inside an input
// tree. What that check cannot see is a route the walk finds on its way: a symlink it follows
// (--follow-symlinks) or a bind mount inside a tree, leading to the directory the report is
// written in, to a directory above it, or to the target file itself. This wrapper knows those
// places by (device, inode); the first time a Stat answers with one of them it records the path
// that led there, calls `on_hit` (the command stops the scan, as a first Ctrl-C does) and
// answers with an error, so the walk does not go in. The command then refuses the output as bad
// usage and writes nothing (cli/main.cc).
//
// Thread safety: as the wrapped file system; the record of the hit is guarded by a mutex.

#ifndef ZSIM_ENGINE_IO_GUARDED_FILE_SYSTEM_H_
#define ZSIM_ENGINE_IO_GUARDED_FILE_SYSTEM_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/io/file_system.h"

namespace zsim::io {

class GuardedFileSystem : public FileSystem {
 public:
  // A place the walk must not reach, and what it is ("--html /srv/r.html is written in /srv").
  struct Place {
    uint64_t dev = 0;
    uint64_t ino = 0;
    std::string what;
  };
  // The first route found to a place: the path the walk stat'ed, and the place's `what`.
  struct Hit {
    std::string path;
    std::string what;
  };

  // `base` must outlive this. `on_hit` is called once, on the thread that found the first hit.
  // `devices`, when not empty: only places on these devices count (--one-file-system: the walk
  // does not enter another file system, whatever it holds, though it stats its mount point).
  GuardedFileSystem(FileSystem* base, const std::vector<Place>& places,
                    const std::vector<uint64_t>& devices, std::function<void()> on_hit);

  Result<FileInfo> Stat(const std::string& path, bool follow) override;
  Result<std::vector<DirEntry>> ListDirectory(const std::string& path, bool follow) override;
  Result<std::unique_ptr<File>> Open(const std::string& path, bool follow) override;
  // Forwarded: statfs reads nothing of what lies under `path`.
  uint64_t FileSystemType(const std::string& path) override { return base_->FileSystemType(path); }

  // The first hit, if any.
  std::optional<Hit> hit() const;

 private:
  FileSystem* base_;
  std::map<std::pair<uint64_t, uint64_t>, std::string> places_;
  std::function<void()> on_hit_;
  mutable std::mutex mu_;
  std::optional<Hit> hit_;
};

}  // namespace zsim::io

#endif  // ZSIM_ENGINE_IO_GUARDED_FILE_SYSTEM_H_
