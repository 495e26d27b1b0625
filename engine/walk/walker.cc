#include "engine/walk/walker.h"

#include <fnmatch.h>
#include <linux/magic.h>

#include <algorithm>
#include <filesystem>

#include "engine/walk/block_devices.h"
#include "engine/walk/walk_common.h"

namespace zsim::walk {

std::string_view SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kHardLink:
      return "hard_link";
    case SkipReason::kSymlink:
      return "symlink";
    case SkipReason::kFifo:
      return "fifo";
    case SkipReason::kSocket:
      return "socket";
    case SkipReason::kCharDevice:
      return "char_device";
    case SkipReason::kBlockDevice:
      return "block_device";
    case SkipReason::kExcluded:
      return "excluded";
    case SkipReason::kOtherFileSystem:
      return "other_file_system";
    case SkipReason::kUnknownType:
      return "unknown_type";
    case SkipReason::kOverlap:
      return "overlap";
    case SkipReason::kPseudoFileSystem:
      return "pseudo_file_system";
  }
  return "unknown";
}

namespace internal {

WalkItem Skipped(std::string path, SkipReason reason) {
  WalkItem item;
  item.kind = WalkItem::Kind::kSkipped;
  item.path = std::move(path);
  item.skip_reason = reason;
  return item;
}

WalkItem Failed(std::string path, Status status) {
  WalkItem item;
  item.kind = WalkItem::Kind::kError;
  item.path = std::move(path);
  item.error = std::move(status);
  return item;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// A path and its base name, as an --exclude glob is tried on them.
struct MatchedNames {
  explicit MatchedNames(std::string_view path) : full(path) {
    const size_t slash = full.find_last_of('/');
    base = slash == std::string::npos ? full : full.substr(slash + 1);
  }
  bool MatchedBy(const std::string& glob) const {
    return fnmatch(glob.c_str(), base.c_str(), 0) == 0 ||
           fnmatch(glob.c_str(), full.c_str(), 0) == 0;
  }
  std::string full, base;
};

bool Excluded(const std::vector<std::string>& excludes, std::string_view path) {
  if (excludes.empty()) return false;
  const MatchedNames names(path);
  for (const std::string& glob : excludes) {
    if (names.MatchedBy(glob)) return true;
  }
  return false;
}

std::optional<SkipReason> SkipReasonOfType(io::FileType type) {
  switch (type) {
    case io::FileType::kRegular:
    case io::FileType::kBlockDevice:
    case io::FileType::kDirectory:
      return std::nullopt;
    case io::FileType::kSymlink:
      return SkipReason::kSymlink;
    case io::FileType::kFifo:
      return SkipReason::kFifo;
    case io::FileType::kSocket:
      return SkipReason::kSocket;
    case io::FileType::kCharDevice:
      return SkipReason::kCharDevice;
    case io::FileType::kUnknown:
      break;
  }
  return SkipReason::kUnknownType;
}

std::vector<std::optional<FileKey>> RootIdentities(io::FileSystem* fs,
                                                   const std::vector<std::string>& roots) {
  std::vector<std::optional<FileKey>> ids;
  ids.reserve(roots.size());
  for (const std::string& root : roots) {
    Result<io::FileInfo> info = fs->Stat(root, /*follow=*/true);
    if (info.ok() && info->type == io::FileType::kBlockDevice) {
      // A block device is the device its node stands for, whatever node names it (/dev/loop0
      // and a mknod'ed twin were two devices, counted twice). No directory entry has this dev.
      ids.emplace_back(FileKey{kDeviceNodeDev, info->rdev});
    } else if (info.ok()) {
      ids.emplace_back(FileKey{info->dev, info->ino});
    } else {
      ids.emplace_back(std::nullopt);
    }
  }
  return ids;
}

std::vector<bool> RootsCoveredByOthers(const std::vector<std::optional<FileKey>>& ids,
                                       const std::string& sysfs_root) {
  std::vector<bool> covered(ids.size(), false);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!ids[i]) continue;
    const auto earlier = ids.begin() + static_cast<std::ptrdiff_t>(i);
    if (std::find(ids.begin(), earlier, ids[i]) != earlier) {
      covered[i] = true;
    } else if (ids[i]->first == kDeviceNodeDev) {
      const std::optional<uint64_t> disk = DiskOfPartition(sysfs_root, ids[i]->second);
      covered[i] = disk && IsARoot(ids, FileKey{kDeviceNodeDev, *disk});
    }
  }
  return covered;
}

bool IsARoot(const std::vector<std::optional<FileKey>>& ids, const FileKey& key) {
  return std::find(ids.begin(), ids.end(), std::optional<FileKey>(key)) != ids.end();
}

bool IsPseudoMount(io::FileSystem* fs, const std::string& path, uint64_t dev, uint64_t parent_dev) {
  return dev != parent_dev && IsKernelPseudoFileSystem(fs->FileSystemType(path));
}

std::vector<std::string> RootNames(const std::vector<std::string>& roots) {
  std::vector<std::string> out;
  out.reserve(roots.size());
  for (const std::string& root : roots) {
    out.push_back(std::filesystem::path(root).lexically_normal().string());
  }
  return out;
}

bool LeftToItsRoot(const std::vector<std::optional<FileKey>>& ids,
                   const std::vector<std::string>& names, const io::FileInfo& info,
                   std::string_view path) {
  if (info.type != io::FileType::kRegular || info.nlink <= 1) return true;
  const FileKey key{info.dev, info.ino};
  const std::string name = std::filesystem::path(path).lexically_normal().string();
  for (size_t i = 0; i < ids.size() && i < names.size(); ++i) {
    if (ids[i] == key && names[i] == name) return true;
  }
  return false;
}

size_t PartitionExcluded(const std::string& dir, const std::vector<std::string>& excludes,
                         std::vector<io::DirEntry>* entries) {
  if (excludes.empty()) return entries->size();
  const auto kept_end = std::stable_partition(
      entries->begin(), entries->end(),
      [&](const io::DirEntry& e) { return !Excluded(excludes, JoinPath(dir, e.name)); });
  return static_cast<size_t>(kept_end - entries->begin());
}

WalkItem DirectoryItem(std::string path, const io::FileInfo& info,
                       std::span<const io::DirEntry> kept, const WalkOptions& options) {
  WalkItem item;
  item.kind = WalkItem::Kind::kDirectory;
  item.path = std::move(path);
  item.info = info;
  item.dir_entries = kept.size();
  for (const io::DirEntry& e : kept) {
    item.dir_name_bytes += e.name.size();
    item.dir_longest_name = std::max<uint64_t>(item.dir_longest_name, e.name.size());
  }
  if (options.directory_zap_bytes) item.dir_zap_bytes = options.directory_zap_bytes(kept);
  return item;
}

}  // namespace internal

bool IsKernelPseudoFileSystem(uint64_t type) {
  switch (type) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case DEVPTS_SUPER_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case PSTOREFS_MAGIC:
    case BPF_FS_MAGIC:
    case EFIVARFS_MAGIC:
    case BINFMTFS_MAGIC:
    case NSFS_MAGIC:
    case SELINUX_MAGIC:
    case SMACK_MAGIC:
    case kMqueueMagic:
    case kConfigfsMagic:
    case kFuseControlMagic:
      return true;
    default:
      return false;
  }
}

void CountExcludeMatches(const std::vector<std::string>& excludes, std::string_view path,
                         std::vector<uint64_t>* counts) {
  if (counts->size() < excludes.size()) counts->resize(excludes.size(), 0);
  const internal::MatchedNames names(path);
  for (size_t i = 0; i < excludes.size(); ++i) {
    if (names.MatchedBy(excludes[i])) ++(*counts)[i];
  }
}

using internal::Failed;
using internal::JoinPath;
using internal::Skipped;

Walker::Walker(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options)
    : fs_(fs),
      roots_(std::move(roots)),
      options_(std::move(options)),
      root_ids_(internal::RootIdentities(fs_, roots_)),
      root_names_(internal::RootNames(roots_)),
      root_covered_(internal::RootsCoveredByOthers(root_ids_, options_.sysfs_root)) {}

WalkItem Walker::Classify(std::string path, const io::FileInfo& info, bool is_root,
                          uint64_t root_dev, bool via_symlink, uint64_t parent_dev) {
  using io::FileType;
  const bool is_dir = info.type == FileType::kDirectory;
  // Inside a tree, an input is left to its own root (a symlink loop is reported as such below),
  // but for another name of a root file with several: a hard link (walk_common.h LeftToItsRoot).
  // Before the file-system checks, as the parallel walker makes them: an input on another or a
  // pseudo file system is walked as its own root, so it is an overlap here, not left out.
  if (!is_root && !(is_dir && via_symlink) && internal::IsARoot(root_ids_, {info.dev, info.ino}) &&
      internal::LeftToItsRoot(root_ids_, root_names_, info, path)) {
    return Skipped(std::move(path), SkipReason::kOverlap);
  }
  if (!is_root && options_.one_file_system && info.dev != root_dev && is_dir) {
    return Skipped(std::move(path), SkipReason::kOtherFileSystem);
  }
  if (!is_root && is_dir && internal::IsPseudoMount(fs_, path, info.dev, parent_dev)) {
    return Skipped(std::move(path), SkipReason::kPseudoFileSystem);
  }
  switch (info.type) {
    case FileType::kRegular: {
      // Hard links, and with --follow-symlinks any file (a symlink is a second route to it).
      const bool may_repeat = info.nlink > 1 || options_.follow_symlinks;
      if (may_repeat && !seen_files_.insert({info.dev, info.ino}).second) {
        return Skipped(std::move(path), SkipReason::kHardLink);
      }
      WalkItem item;
      item.kind = WalkItem::Kind::kFile;
      item.path = std::move(path);
      item.info = info;
      return item;
    }
    case FileType::kBlockDevice: {
      if (!is_root) return Skipped(std::move(path), SkipReason::kBlockDevice);
      WalkItem item;
      item.kind = WalkItem::Kind::kZvol;
      item.path = std::move(path);
      item.info = info;
      return item;
    }
    case FileType::kDirectory: {
      if (via_symlink) {
        // A directory on the current path reached again through a symlink is a loop.
        for (const Frame& f : stack_) {
          if (f.dev == info.dev && f.ino == info.ino) {
            return Failed(std::move(path),
                          Status(StatusCode::kLoop, "leads to a directory already on its path"));
          }
        }
        if (!is_root && internal::IsARoot(root_ids_, {info.dev, info.ino})) {
          return Skipped(std::move(path), SkipReason::kOverlap);
        }
      }
      // A directory met by a second route (a bind mount, a followed symlink): once only.
      if (!seen_dirs_.insert({info.dev, info.ino}).second) {
        return Skipped(std::move(path), SkipReason::kOverlap);
      }
      // Roots and, with --follow-symlinks, every directory are listed through a symlink.
      Result<std::vector<io::DirEntry>> entries =
          fs_->ListDirectory(path, is_root || options_.follow_symlinks);
      if (!entries.ok()) return Failed(std::move(path), entries.status());
      const size_t kept = internal::PartitionExcluded(path, options_.excludes, &*entries);
      WalkItem item =
          internal::DirectoryItem(path, info, std::span(*entries).first(kept), options_);
      stack_.push_back(Frame{std::move(path), info.dev, info.ino, std::move(*entries), 0, kept});
      return item;
    }
    default:
      break;
  }
  return Skipped(std::move(path), *internal::SkipReasonOfType(info.type));
}

std::optional<WalkItem> Walker::VisitRoot(const std::string& path) {
  // Roots are followed (as find -H does): naming a symlink to an image scans the image.
  Result<io::FileInfo> info = fs_->Stat(path, /*follow=*/true);
  if (!info.ok()) return Failed(path, info.status());
  if (root_covered_[next_root_ - 1]) {
    return Skipped(path, SkipReason::kOverlap);
  }
  root_dev_ = info->dev;
  return Classify(path, *info, /*is_root=*/true, root_dev_);
}

std::optional<WalkItem> Walker::VisitEntry(const std::string& parent_path,
                                           const io::DirEntry& entry, bool excluded) {
  // parent_path lives in stack_, which Classify may grow: it is used only before that.
  std::string path = JoinPath(parent_path, entry.name);
  if (excluded) return Skipped(std::move(path), SkipReason::kExcluded);
  // d_type spares an lstat for the common cases that need no stat at all.
  if (entry.type == io::FileType::kSymlink && !options_.follow_symlinks) {
    return Skipped(std::move(path), SkipReason::kSymlink);
  }
  Result<io::FileInfo> info = fs_->Stat(path, options_.follow_symlinks);
  if (!info.ok()) return Failed(std::move(path), info.status());
  const uint64_t parent_dev = stack_.back().dev;
  return Classify(std::move(path), *info, /*is_root=*/false, root_dev_,
                  /*via_symlink=*/options_.follow_symlinks && entry.type == io::FileType::kSymlink,
                  parent_dev);
}

std::optional<WalkItem> Walker::Next() {
  for (;;) {
    if (stack_.empty()) {
      if (next_root_ >= roots_.size()) return std::nullopt;
      std::optional<WalkItem> item = VisitRoot(roots_[next_root_++]);
      if (item) item->root = next_root_ - 1;
      return item;
    }
    Frame& top = stack_.back();
    if (top.next >= top.entries.size()) {
      stack_.pop_back();
      continue;
    }
    const bool excluded = top.next >= top.kept;
    const io::DirEntry entry = std::move(top.entries[top.next++]);
    std::optional<WalkItem> item = VisitEntry(top.path, entry, excluded);
    if (item) item->root = next_root_ - 1;
    return item;
  }
}

}  // namespace zsim::walk
