// engine/io/file_system.h
//
// The I/O module, overview. Everything zsim reads goes through the FileSystem seam, so tests can
// replace it (fault injection: EACCES, EIO at byte N, short reads, files that vanish or shrink).
// PosixFileSystem is the real one: read-only opens (O_RDONLY | O_NOATIME where permitted,
// O_NOFOLLOW unless asked), positional reads with EINTR retried, SEEK_DATA/SEEK_HOLE so holes are
// never read, block devices sized with BLKGETSIZE64. Nothing here ever opens for writing.
//
// Thread safety: FileSystem methods may be called from any thread concurrently, and so may a
// File's (reads are positional: the scan reads the chunks of one open file from several threads).

#ifndef ZSIM_ENGINE_IO_FILE_SYSTEM_H_
#define ZSIM_ENGINE_IO_FILE_SYSTEM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/byte_view.h"
#include "zsim/status.h"

namespace zsim::io {

enum class FileType : uint8_t {
  kRegular,
  kDirectory,
  kSymlink,
  kBlockDevice,
  kCharDevice,
  kFifo,
  kSocket,
  kUnknown,
};

struct FileInfo {
  FileType type = FileType::kUnknown;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t size = 0;  // st_size; for block devices, the device size
  uint64_t nlink = 1;
  uint64_t allocated = 0;  // st_blocks x 512: the bytes the file holds (holes excluded)
  int64_t mtime_ns = 0;    // st_mtim: the contents' last change
  int64_t ctime_ns = 0;    // st_ctim: the inode's last change (contents, size, links, mode)
  uint64_t rdev = 0;       // st_rdev: the device a device node stands for (0 for others)
};

struct DirEntry {
  std::string name;
  FileType type = FileType::kUnknown;  // kUnknown when the directory does not say (DT_UNKNOWN)
};

// An open, read-only file.
class File {
 public:
  virtual ~File() = default;
  // Size as seen when opened (fstat, or BLKGETSIZE64 for a block device).
  virtual uint64_t size() const = 0;
  // fstat of the open file now: its identity (dev, ino) and change stamps, whatever has happened
  // to its name since it was opened.
  virtual Result<FileInfo> Stat() = 0;
  // Reads up to dst.size() bytes at `offset`; returns the number read (0 only at or past EOF).
  // May return fewer bytes than asked (a short read): the caller reads again from there.
  virtual Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) = 0;
  // SEEK_DATA: the first offset >= `offset` holding data, or nullopt if only a hole follows.
  // A file system without hole support answers `offset` itself (all data). kChanged when the
  // file is shorter than it was when opened (what it held past its end now is not a hole).
  virtual Result<std::optional<uint64_t>> NextData(uint64_t offset) = 0;
  // SEEK_HOLE: the first offset >= `offset` inside a hole (EOF counts as a hole).
  virtual Result<uint64_t> NextHole(uint64_t offset) = 0;
  // A hint that [offset, offset + length) will be read soon: the kernel may start reading it in
  // the background (posix_fadvise WILLNEED), so that the disk works while the caller computes.
  // Reads nothing into the caller, changes nothing on disk, and cannot fail (a refused hint is
  // only a lost hint). The default ignores it.
  virtual void WillNeed(uint64_t offset, uint64_t length) {
    (void)offset;
    (void)length;
  }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // lstat (follow=false) or stat (follow=true). Errors: kNotFound, kPermissionDenied, kIoError.
  virtual Result<FileInfo> Stat(const std::string& path, bool follow) = 0;
  // Every entry of a directory except "." and "..", in the order the directory gives them. With
  // follow=false a symlink at `path` is refused (O_NOFOLLOW); with true it is listed as the
  // directory it points to (roots, --follow-symlinks).
  virtual Result<std::vector<DirEntry>> ListDirectory(const std::string& path, bool follow) = 0;
  // Opens read-only. With follow=false a symlink is refused (O_NOFOLLOW).
  virtual Result<std::unique_ptr<File>> Open(const std::string& path, bool follow) = 0;
  // The type of the file system `path` lies on (statfs's f_type: linux/magic.h), 0 where it
  // cannot be told. Reads nothing. The default cannot tell.
  virtual uint64_t FileSystemType(const std::string& path) {
    (void)path;
    return 0;
  }
};

// The real file system. Stateless; one instance may serve every thread.
std::shared_ptr<FileSystem> PosixFileSystem();

// Reads exactly dst.size() bytes at `offset`, looping over short reads. Returns kChanged if EOF
// comes first (the file shrank while read).
Status ReadFully(File& file, uint64_t offset, MutableByteView dst);

}  // namespace zsim::io

#endif  // ZSIM_ENGINE_IO_FILE_SYSTEM_H_
