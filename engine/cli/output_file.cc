#include "engine/cli/output_file.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace zsim::cli {
namespace {

using Identity = std::pair<uint64_t, uint64_t>;  // st_dev, st_ino

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status Refuse(std::string_view flag, const std::string& path, const std::string& why) {
  std::string msg(flag);
  msg += " " + path + ": " + why;
  return Status::InvalidArgument(std::move(msg));
}

// Where `path` lands: its directory's real path and its last component (the file itself need not
// exist); empty when the directory cannot be resolved.
std::string Landing(const std::string& path) {
  char* real = ::realpath(DirectoryOf(path).c_str(), nullptr);
  if (real == nullptr) return "";
  std::string dir = real;
  std::free(real);
  return (dir == "/" ? "" : dir) + "/" + BaseOf(path);
}

// The directory `dir` and every directory above it, by their real path (symlinks resolved), each
// with its (device, inode); nullopt with errno set when `dir` cannot be resolved.
struct Ancestor {
  std::string path;
  Identity id;
};
std::optional<std::vector<Ancestor>> RealAncestors(const std::string& dir) {
  char* real = ::realpath(dir.c_str(), nullptr);
  if (real == nullptr) return std::nullopt;
  std::string up = real;
  std::free(real);
  std::vector<Ancestor> out;
  for (;;) {
    struct stat st;
    if (::stat(up.c_str(), &st) == 0) out.push_back({up, {st.st_dev, st.st_ino}});
    if (up == "/") break;
    up = DirectoryOf(up);
  }
  return out;
}

// The inode attributes (chattr's, FS_IOC_GETFLAGS) of the file or directory at `path`; 0 when
// they cannot be read (a file system without them, a file this process may not open), where the
// rename at the end says what is wrong.
int Attributes(const std::string& path, bool directory) {
  // The directory as resolved (it may be named through a symlink); the file never followed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
                                          (directory ? O_DIRECTORY : O_NOFOLLOW));
  if (fd < 0) return 0;
  int flags = 0;
  if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) flags = 0;
  ::close(fd);
  return flags;
}

// Whether this process holds CAP_FOWNER, which lets it replace another user's file in a sticky
// directory.
bool HasCapFowner() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_TO_INDEX(CAP_FOWNER)].effective & CAP_TO_MASK(CAP_FOWNER)) != 0;
}

// Why the target cannot be replaced by a file renamed over it, or "" when it can so far as the
// inode attributes and the sticky bit tell: `dir_st` is its directory's, `st` the target's when
// it exists. Found before the scan, not at the rename after it (the report was then lost).
std::string CannotReplace(const std::string& dir, const struct stat& dir_st, const struct stat* st,
                          const std::string& path) {
  const int dir_flags = Attributes(dir, /*directory=*/true);
  if (dir_flags & FS_IMMUTABLE_FL) {
    return "its directory " + dir +
           " is immutable (chattr +i): no file can be created or replaced in it";
  }
  // A new entry may be made there, but none removed or renamed: the temporary file could never
  // become the target, nor be removed.
  if (dir_flags & FS_APPEND_FL) {
    return "its directory " + dir +
           " is append-only (chattr +a): zsim writes a temporary file beside the target and "
           "renames it over the target, which such a directory refuses";
  }
  if (st == nullptr) return "";
  const int flags = Attributes(path, /*directory=*/false);
  if (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL)) {
    return std::string("is ") +
           (flags & FS_IMMUTABLE_FL ? "immutable (chattr +i)" : "append-only (chattr +a)") +
           ": it cannot be replaced; lift that with chattr, or give another path";
  }
  // A sticky directory (/tmp) lets only the file's owner, the directory's or CAP_FOWNER remove
  // or replace a file in it.
  const uid_t me = ::geteuid();
  if ((dir_st.st_mode & S_ISVTX) && st->st_uid != me && dir_st.st_uid != me && !HasCapFowner()) {
    return "belongs to another user (uid " + std::to_string(st->st_uid) + ") in " + dir +
           ", a sticky directory (mode " + (dir_st.st_mode & 0002 ? "1777" : "+t") +
           "): only its owner, the directory's owner or root may replace it; give another path";
  }
  return "";
}

}  // namespace

bool OutputFile::SameTarget(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::lstat(a.c_str(), &sa) == 0 && ::lstat(b.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  const std::string la = Landing(a);
  return !la.empty() && la == Landing(b);
}

std::vector<io::GuardedFileSystem::Place> OutputFile::WrittenPlaces(std::string_view flag,
                                                                    const std::string& path,
                                                                    bool follow_symlinks) {
  std::vector<io::GuardedFileSystem::Place> places;
  const std::string named = std::string(flag) + " " + path;
  struct stat st;
  if (follow_symlinks && ::lstat(path.c_str(), &st) == 0) {
    places.push_back({uint64_t(st.st_dev), uint64_t(st.st_ino), named + " itself"});
  }
  for (const Ancestor& a : RealAncestors(DirectoryOf(path)).value_or(std::vector<Ancestor>{})) {
    places.push_back({a.id.first, a.id.second, named + ", written in " + a.path});
  }
  return places;
}

namespace {

// A new temporary file beside `path` (`*temp` its name, the descriptor returned): the proof that
// the directory takes new files, which access() cannot give (it tells root yes where /proc, /sys
// or a read-only mount refuse).
Result<int> CreateBeside(std::string_view flag, const std::string& path, std::string* temp) {
  const std::string dir = DirectoryOf(path);
  *temp = TempPathBeside(path, ".zsim-XXXXXX");
  const int fd = ::mkostemp(temp->data(), O_CLOEXEC);
  if (fd < 0) {
    return Refuse(flag, path, "cannot create a file in " + dir + ": " + std::strerror(errno));
  }
  return fd;
}

}  // namespace

Status OutputFile::CheckCreatable(std::string_view flag, const std::string& path,
                                  const std::vector<std::string>& inputs) {
  ZSIM_RETURN_IF_ERROR(CheckTarget(flag, path, inputs));
  std::string temp;
  Result<int> fd = CreateBeside(flag, path, &temp);
  if (!fd.ok()) return fd.status();
  ::close(*fd);
  ::unlink(temp.c_str());
  return Status::Ok();
}

Result<OutputFile> OutputFile::Prepare(std::string_view flag, const std::string& path,
                                       const std::vector<std::string>& inputs) {
  ZSIM_RETURN_IF_ERROR(CheckTarget(flag, path, inputs));
  // The temporary file beside the target, made when the report is written (CheckCreatable made
  // and removed one before any input was read).
  std::string temp;
  Result<int> created = CreateBeside(flag, path, &temp);
  if (!created.ok()) return created.status();
  const int fd = *created;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return Refuse(flag, path, std::string("cannot set its mode: ") + std::strerror(err));
  }
  return OutputFile(path, std::move(temp), fd);
}

namespace {

// The inputs' identities (device, inode), of those that exist.
std::set<Identity> InputIds(const std::vector<std::string>& inputs) {
  std::set<Identity> ids;
  for (const std::string& in : inputs) {
    struct stat st;
    if (::stat(in.c_str(), &st) == 0) ids.insert({st.st_dev, st.st_ino});
  }
  return ids;
}

}  // namespace

Status OutputFile::CheckTarget(std::string_view flag, const std::string& path,
                               const std::vector<std::string>& inputs) {
  struct stat st;
  bool exists = false;
  if (::lstat(path.c_str(), &st) == 0) {
    exists = true;
    if (S_ISLNK(st.st_mode)) {
      return Refuse(flag, path,
                    "is a symbolic link; zsim does not write through links: name the file itself");
    }
    if (S_ISDIR(st.st_mode)) {
      // A file in it is suggested only where that file could be written: not in a scanned tree.
      const std::set<Identity> input_ids = InputIds(inputs);
      bool scanned = false;
      if (const std::optional<std::vector<Ancestor>> up = RealAncestors(path)) {
        for (const Ancestor& a : *up) scanned = scanned || input_ids.count(a.id) > 0;
      }
      if (scanned) {
        return Refuse(flag, path,
                      "is a directory, and inside what is scanned; give a file name outside the "
                      "inputs");
      }
      return Refuse(flag, path,
                    "is a directory; give a file name, e.g. " + path +
                        (flag == "--save" ? "/scan.zstate" : "/report.html"));
    }
    if (!S_ISREG(st.st_mode)) return Refuse(flag, path, "exists and is not a regular file");
  } else if (errno != ENOENT) {
    return Refuse(flag, path, std::strerror(errno));
  }
  const std::string dir = DirectoryOf(path);
  struct stat dir_st;
  if (::stat(dir.c_str(), &dir_st) != 0) {
    return Refuse(flag, path, "its directory " + dir + " cannot be used: " + std::strerror(errno));
  }
  if (!S_ISDIR(dir_st.st_mode)) return Refuse(flag, path, dir + " is not a directory");

  // What the scan reads: every input, and (for a directory) everything below it.
  const std::set<Identity> input_ids = InputIds(inputs);
  if (exists && input_ids.count({st.st_dev, st.st_ino}) > 0) {
    return Refuse(flag, path, "is one of the inputs; zsim never writes over what it scans");
  }
  // The directory and every directory above it, by their real path (symlinks resolved): one of
  // them being an input means the report would land inside a scanned tree.
  const std::optional<std::vector<Ancestor>> ancestors = RealAncestors(dir);
  if (!ancestors) {
    return Refuse(flag, path,
                  "its directory " + dir + " cannot be resolved: " + std::strerror(errno));
  }
  for (const Ancestor& a : *ancestors) {
    if (input_ids.count(a.id) > 0) {
      return Refuse(flag, path,
                    "lies inside the input tree " + a.path +
                        "; zsim never writes inside what it scans: put the " +
                        (flag == "--save" ? "state" : "report") + " elsewhere");
    }
  }
  if (const std::string why = CannotReplace(dir, dir_st, exists ? &st : nullptr, path);
      !why.empty()) {
    return Refuse(flag, path, why);
  }
  return Status::Ok();
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(std::exchange(other.fd_, -1)),
      registered_(std::move(other.registered_)) {}

OutputFile::~OutputFile() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(temp_path_.c_str());
}

Status OutputFile::Commit(std::string_view contents) {
  auto fail = [&](const char* what) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(temp_path_.c_str());
    registered_.Release();
    return Status(StatusCode::kIoError,
                  "cannot write the report to " + path_ + ": " + what + ": " + std::strerror(err));
  };
  if (fd_ < 0) {
    errno = EBADF;
    return fail("already written");
  }
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd_, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd_) != 0) return fail("fsync");
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return fail("close");
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) return fail("rename");
  registered_.Release();
  return Status::Ok();
}

}  // namespace zsim::cli
