#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "engine/io/file_system.h"

namespace zsim::io {
namespace {

FileType TypeFromMode(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  if (S_ISBLK(mode)) return FileType::kBlockDevice;
  if (S_ISCHR(mode)) return FileType::kCharDevice;
  if (S_ISFIFO(mode)) return FileType::kFifo;
  if (S_ISSOCK(mode)) return FileType::kSocket;
  return FileType::kUnknown;
}

FileType TypeFromDirent(unsigned char d_type) {
  switch (d_type) {
    case DT_REG:
      return FileType::kRegular;
    case DT_DIR:
      return FileType::kDirectory;
    case DT_LNK:
      return FileType::kSymlink;
    case DT_BLK:
      return FileType::kBlockDevice;
    case DT_CHR:
      return FileType::kCharDevice;
    case DT_FIFO:
      return FileType::kFifo;
    case DT_SOCK:
      return FileType::kSocket;
    default:
      return FileType::kUnknown;
  }
}

FileInfo InfoFromStat(const struct stat& st) {
  FileInfo info;
  info.type = TypeFromMode(st.st_mode);
  info.dev = static_cast<uint64_t>(st.st_dev);
  info.ino = static_cast<uint64_t>(st.st_ino);
  info.size = static_cast<uint64_t>(st.st_size);
  info.nlink = static_cast<uint64_t>(st.st_nlink);
  info.allocated = static_cast<uint64_t>(st.st_blocks) * 512;
  info.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  info.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) info.rdev = static_cast<uint64_t>(st.st_rdev);
  return info;
}

class PosixFile final : public File {
 public:
  PosixFile(int fd, uint64_t size) : fd_(fd), size_(size) {}
  ~PosixFile() override { ::close(fd_); }  // read-only: close cannot lose data

  uint64_t size() const override { return size_; }

  Result<FileInfo> Stat() override {
    struct stat st;
    if (::fstat(fd_, &st) != 0) return Status::FromErrno("fstat", errno);
    return InfoFromStat(st);
  }

  Result<size_t> ReadAt(uint64_t offset, MutableByteView dst) override {
    for (;;) {
      const ssize_t n = ::pread(fd_, dst.data(), dst.size(), static_cast<off_t>(offset));
      if (n >= 0) return static_cast<size_t>(n);
      if (errno == EINTR) continue;
      return Status::FromErrno("read at offset " + std::to_string(offset), errno);
    }
  }

  Result<std::optional<uint64_t>> NextData(uint64_t offset) override {
    if (!seek_holes_.load(std::memory_order_relaxed)) return std::optional<uint64_t>(offset);
    const off_t r = ::lseek(fd_, static_cast<off_t>(offset), SEEK_DATA);
    if (r >= 0) return std::optional<uint64_t>(static_cast<uint64_t>(r));
    if (errno == ENXIO) {
      // Only a hole follows, or `offset` is past the end of a file that was cut since it was
      // opened: then what it held there was never read, and is not a hole (a 30 MiB file cut
      // to 10 MiB while read showed 20 MiB of holes "in the figures").
      struct stat st;
      if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) < size_) {
        return Status::Changed("size changed while read: " + std::to_string(size_) +
                               " bytes when opened, " + std::to_string(st.st_size) + " after");
      }
      return std::optional<uint64_t>();
    }
    if (errno == EINVAL || errno == EOPNOTSUPP) {
      seek_holes_.store(
          false, std::memory_order_relaxed);  // no hole support here: treat everything as data
      return std::optional<uint64_t>(offset);
    }
    return Status::FromErrno("lseek(SEEK_DATA)", errno);
  }

  Result<uint64_t> NextHole(uint64_t offset) override {
    if (!seek_holes_.load(std::memory_order_relaxed)) return size_;
    const off_t r = ::lseek(fd_, static_cast<off_t>(offset), SEEK_HOLE);
    if (r >= 0) return static_cast<uint64_t>(r);
    if (errno == ENXIO) return size_;
    if (errno == EINVAL || errno == EOPNOTSUPP) {
      seek_holes_.store(false, std::memory_order_relaxed);
      return size_;
    }
    return Status::FromErrno("lseek(SEEK_HOLE)", errno);
  }

  void WillNeed(uint64_t offset, uint64_t length) override {
    // Starts the reads and returns; an error (a file system without readahead) loses the hint.
    (void)::posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                          POSIX_FADV_WILLNEED);
  }

 private:
  int fd_;
  uint64_t size_;
  std::atomic<bool> seek_holes_{true};  // chunks of one file may be read by several threads
};

// A path as the *at calls take it: `name` relative to `dir` (AT_FDCWD for a path the kernel
// takes whole). A path of PATH_MAX bytes or more (ENAMETOOLONG: ZFS has no such limit, and a
// tree 3,000 directories deep lost all but its first 21 to one "File name too long") is opened
// a part at a time, each below the limit, following links in the parts as the whole path would.
class AtPath {
 public:
  // Below this, a path goes to the kernel whole (PATH_MAX is 4096 with its NUL).
  static constexpr size_t kMaxWhole = 4000;

  static Result<AtPath> Of(const std::string& path) {
    AtPath at;
    size_t begin = 0;
    while (path.size() - begin >= kMaxWhole) {
      // The last '/' that leaves the part below the limit (a name is at most 255 bytes), past
      // the part's first byte (an absolute path's first part keeps its leading '/').
      const size_t cut = path.rfind('/', begin + kMaxWhole - 1);
      if (cut == std::string::npos || cut <= begin) {
        return Status::FromErrno("open", ENAMETOOLONG);
      }
      const std::string part = path.substr(begin, cut - begin);
      const int fd = ::openat(at.dir_, part.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) {
        const std::string what = "open " + std::to_string(cut) + "-byte path";
        // A loop of links in a part is a loop, as stat names it (the parts always follow links).
        if (errno == ELOOP) return Status(StatusCode::kLoop, what + ": " + std::strerror(ELOOP));
        return Status::FromErrno(what, errno);
      }
      at.Hold(fd);
      // The rest is relative to the part just opened: past every '/' of the cut ("a//b" cut at
      // its first '/' left "/b", which openat takes from the root, whatever the directory).
      begin = path.find_first_not_of('/', cut);
      if (begin == std::string::npos) begin = path.size();
    }
    // The rest of `path` itself, not a copy: a Stat or Open of a short path (every file of the
    // walk) allocates nothing. `path` outlives the AtPath (both live in the caller's call).
    at.name_ = begin < path.size() ? path.c_str() + begin : ".";
    return at;
  }

  AtPath() = default;
  AtPath(AtPath&& o) noexcept : dir_(o.dir_), name_(o.name_) { o.dir_ = AT_FDCWD; }
  AtPath& operator=(AtPath&&) = delete;
  ~AtPath() {
    if (dir_ != AT_FDCWD) ::close(dir_);
  }
  int dir() const { return dir_; }
  const char* name() const { return name_; }

 private:
  void Hold(int fd) {
    if (dir_ != AT_FDCWD) ::close(dir_);
    dir_ = fd;
  }
  int dir_ = AT_FDCWD;
  const char* name_ = ".";  // within the path Of was given
};

class PosixFileSystemImpl final : public FileSystem {
 public:
  Result<FileInfo> Stat(const std::string& path, bool follow) override {
    Result<AtPath> at = AtPath::Of(path);
    if (!at.ok()) return at.status();
    struct stat st;
    const int r = ::fstatat(at->dir(), at->name(), &st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
    if (r != 0) {
      // Following links, ELOOP is a chain of links with no end (open with O_NOFOLLOW gives
      // ELOOP for any link, which is not a loop: that one stays an io_error).
      if (follow && errno == ELOOP) {
        return Status(StatusCode::kLoop, "stat: " + std::string(std::strerror(ELOOP)));
      }
      return Status::FromErrno(follow ? "stat" : "lstat", errno);
    }
    return InfoFromStat(st);
  }

  Result<std::vector<DirEntry>> ListDirectory(const std::string& path, bool follow) override {
    // O_NOATIME here too: reading a directory updates its atime like reading a file does.
    const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
    Result<AtPath> at = AtPath::Of(path);
    if (!at.ok()) return at.status();
    int fd = ::openat(at->dir(), at->name(), flags | O_NOATIME);
    if (fd < 0 && errno == EPERM) fd = ::openat(at->dir(), at->name(), flags);
    if (fd < 0) return Status::FromErrno("open directory", errno);
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
      const int err = errno;
      ::close(fd);
      return Status::FromErrno("fdopendir", err);
    }
    std::vector<DirEntry> entries;
    for (;;) {
      errno = 0;
      const struct dirent* d = ::readdir(dir);
      if (d == nullptr) {
        if (errno != 0) {
          const int err = errno;
          ::closedir(dir);
          return Status::FromErrno("readdir", err);
        }
        break;
      }
      if (std::strcmp(d->d_name, ".") == 0 || std::strcmp(d->d_name, "..") == 0) continue;
      entries.push_back(DirEntry{d->d_name, TypeFromDirent(d->d_type)});
    }
    ::closedir(dir);
    return entries;
  }

  uint64_t FileSystemType(const std::string& path) override {
    Result<AtPath> at = AtPath::Of(path);
    if (!at.ok()) return 0;
    // O_PATH: names the directory without opening it for reading (fstatfs takes it).
    const int fd = ::openat(at->dir(), at->name(), O_PATH | O_CLOEXEC);
    if (fd < 0) return 0;
    struct statfs st;
    const int rc = ::fstatfs(fd, &st);
    ::close(fd);
    return rc == 0 ? static_cast<uint64_t>(st.f_type) : 0;
  }

  Result<std::unique_ptr<File>> Open(const std::string& path, bool follow) override {
    int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    if (!follow) flags |= O_NOFOLLOW;
    // O_NOATIME keeps atimes untouched; only the owner or root may use it (EPERM otherwise).
    Result<AtPath> at = AtPath::Of(path);
    if (!at.ok()) return at.status();
    int fd = ::openat(at->dir(), at->name(), flags | O_NOATIME);
    if (fd < 0 && errno == EPERM) fd = ::openat(at->dir(), at->name(), flags);
    if (fd < 0) return Status::FromErrno("open", errno);
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return Status::FromErrno("fstat", err);
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    if (S_ISBLK(st.st_mode)) {
      uint64_t dev_bytes = 0;
      if (::ioctl(fd, BLKGETSIZE64, &dev_bytes) != 0) {
        const int err = errno;
        ::close(fd);
        return Status::FromErrno("ioctl(BLKGETSIZE64)", err);
      }
      size = dev_bytes;
    } else if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return Status(StatusCode::kInvalidArgument, "not a regular file or block device");
    }
    // Reads are positional (pread): the O_NONBLOCK that guards against opening a fifo that raced
    // in place of a file has no effect on regular files.
    return std::unique_ptr<File>(new PosixFile(fd, size));
  }
};

}  // namespace

std::shared_ptr<FileSystem> PosixFileSystem() {
  static const std::shared_ptr<FileSystem> kFs = std::make_shared<PosixFileSystemImpl>();
  return kFs;
}

Status ReadFully(File& file, uint64_t offset, MutableByteView dst) {
  size_t done = 0;
  while (done < dst.size()) {
    Result<size_t> n = file.ReadAt(offset + done, dst.subspan(done));
    if (!n.ok()) return n.status();
    if (*n == 0) {
      return Status::Changed("file shrank while read: end of file at offset " +
                             std::to_string(offset + done) + ", expected " +
                             std::to_string(offset + dst.size()));
    }
    done += *n;
  }
  return Status::Ok();
}

}  // namespace zsim::io
