// engine/walk/walker.h
//
// The walk module, overview. Walker turns the paths given on the command line into the stream of
// things to model: regular files (each (dev, ino) once, so hard links count once; each directory
// (dev, ino) listed once, so nested or repeated inputs and bind mounts count once), block devices
// named as inputs (scanned as zvols), and, for everything else, a skip reason or an error. It
// also reports each directory's entry count and name bytes for the metadata model.
// Depth-first with an explicit stack, so memory grows with depth x width of the current path only.
// Symlinks are not followed inside trees unless asked (roots given on the command line are).
// Overlaps are decided the same way by every walker, whatever the timing: an input whose
// (dev, ino) an earlier input has is skipped (kOverlap); inside a tree, a file or directory that
// is itself an input is skipped (its own input counts it), and a directory met a second time
// (a bind mount) is skipped.
//
// Thread safety: one thread at a time (the pipeline's serial input stage pulls from it).
// ParallelWalker (parallel_walker.h) yields the same items from several threads.

#ifndef ZSIM_ENGINE_WALK_WALKER_H_
#define ZSIM_ENGINE_WALK_WALKER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/io/file_system.h"
#include "zsim/status.h"

namespace zsim::walk {

// Why a path was not modelled. Values appear in --json output (SkipReasonName):
// append only, never rename.
enum class SkipReason : uint8_t {
  kHardLink,  // another name of a file already counted
  kSymlink,   // not followed (--follow-symlinks not given)
  kFifo,
  kSocket,
  kCharDevice,
  kBlockDevice,      // inside a tree; name it on the command line to scan it as a zvol
  kExcluded,         // matched --exclude
  kOtherFileSystem,  // --one-file-system
  kUnknownType,
  // Another route to a file or directory already counted: an input named twice (`D D`, `D D/.`,
  // `D ../x/D`), an input inside another (`D D/sub`: D's walk leaves D/sub to its own input), a
  // bind mount back into the tree. Each (dev, ino) is counted once, as du and zdb do.
  kOverlap,
  // A directory inside a tree that is the mount point of a kernel pseudo file system (/proc,
  // /sys, cgroup, devpts, debugfs...: IsKernelPseudoFileSystem below): files the kernel
  // makes up as they are read, not data a pool would be given (/proc/kcore's size is the address
  // space). Named as an input, it is walked as asked.
  kPseudoFileSystem,
};
std::string_view SkipReasonName(SkipReason reason);

// For a path the walk excluded: adds 1 to counts[i] for each glob excludes[i] that matches it
// (as the walk matches: its base name or the full path), `counts` grown to one per glob. What
// tells a user which of several --exclude globs matched nothing.
void CountExcludeMatches(const std::vector<std::string>& excludes, std::string_view path,
                         std::vector<uint64_t>* counts);

struct WalkOptions {
  bool follow_symlinks = false;
  bool one_file_system = false;
  std::vector<std::string> excludes;  // fnmatch globs, tried on the base name and the full path
  // Called for every directory listed, on the walking thread, with the entries `excludes`
  // leave, in the listing's order: what a scan measures of a listing beyond its counts (the
  // pipeline: the compressed size of the directory's micro-ZAP). Its result goes to
  // WalkItem::dir_zap_bytes; unset, that stays 0.
  std::function<uint64_t(std::span<const io::DirEntry>)> directory_zap_bytes;
  // Where sysfs is mounted: it says which block device named is a partition of another
  // (block_devices.h). Tests point it at a tree of their own.
  std::string sysfs_root = "/sys";
};

struct WalkItem {
  enum class Kind : uint8_t { kFile, kZvol, kDirectory, kSkipped, kError };
  Kind kind = Kind::kFile;
  std::string path;
  size_t root = 0;                // index of the input path this item was found under
  io::FileInfo info;              // kFile, kZvol, kDirectory
  SkipReason skip_reason{};       // kSkipped
  Status error;                   // kError
  uint64_t dir_entries = 0;       // kDirectory: entries listed
  uint64_t dir_name_bytes = 0;    // kDirectory: sum of entry name lengths
  uint64_t dir_longest_name = 0;  // kDirectory: longest entry name
  uint64_t dir_zap_bytes = 0;     // kDirectory: WalkOptions::directory_zap_bytes of its listing
  // kFile, never set by a walk: a piece of the file, the bytes [piece_begin, piece_end) at chunk
  // boundaries, and the file's number among the files split (a distributed scan hands large
  // files out in pieces: pipeline/file_pieces.h). piece_end == 0: the whole file.
  uint64_t piece_begin = 0, piece_end = 0, piece_file = 0;
};

// A stream of walk items (Walker here, ParallelWalker in parallel_walker.h).
class WalkSource {
 public:
  virtual ~WalkSource() = default;
  // The next item, or nullopt when the walk is done. Every path the walk meets yields exactly one
  // item (files once per (dev, ino); other names as kSkipped/kHardLink).
  virtual std::optional<WalkItem> Next() = 0;
};

// The serial walk: depth-first in directory order; of a file's several names the first met
// counts. The scan uses it with --follow-symlinks (ParallelWalker does not follow them).
class Walker : public WalkSource {
 public:
  // `fs` must outlive the Walker.
  Walker(io::FileSystem* fs, std::vector<std::string> roots, WalkOptions options);

  std::optional<WalkItem> Next() override;

 private:
  struct Frame {
    std::string path;
    uint64_t dev = 0;
    uint64_t ino = 0;
    std::vector<io::DirEntry> entries;  // the kept ones first (internal::PartitionExcluded)
    size_t next = 0;
    size_t kept = 0;  // entries from here on are excluded
  };

  std::optional<WalkItem> VisitRoot(const std::string& path);
  std::optional<WalkItem> VisitEntry(const std::string& parent_path, const io::DirEntry& entry,
                                     bool excluded);
  // Classifies a stat'ed path; pushes a frame for a directory. `via_symlink`: the entry is a
  // symlink followed (--follow-symlinks), so a directory already on the path is a loop.
  // `parent_dev`: the device of the directory holding the entry (inside a tree).
  WalkItem Classify(std::string path, const io::FileInfo& info, bool is_root, uint64_t root_dev,
                    bool via_symlink = false, uint64_t parent_dev = 0);

  io::FileSystem* fs_;
  std::vector<std::string> roots_;
  size_t next_root_ = 0;
  WalkOptions options_;
  std::vector<Frame> stack_;
  uint64_t root_dev_ = 0;
  std::set<std::pair<uint64_t, uint64_t>> seen_files_;  // (dev, ino) of multi-link files
  std::set<std::pair<uint64_t, uint64_t>> seen_dirs_;   // directories listed or queued
  std::vector<std::optional<std::pair<uint64_t, uint64_t>>> root_ids_;  // (dev, ino) per root
  std::vector<std::string> root_names_;  // per root, its path lexically normal
  std::vector<bool> root_covered_;       // per root: another root counts its data (skipped)
};

// True for the f_type (io::FileSystem::FileSystemType) of a kernel pseudo file system, whose
// files the kernel makes up when they are read (proc, sysfs, cgroup and cgroup2, devpts, debugfs,
// tracefs, securityfs, pstore, bpf, efivarfs, binfmt_misc, nsfs, selinuxfs, smackfs: the
// constants of linux/magic.h; mqueue, configfs, fusectl: the kernel's own, which that header
// does not export, kMqueueMagic and the next): a directory inside a tree on one is skipped
// (SkipReason::kPseudoFileSystem), and one named as an input is said to be on one
// (cli/named_inputs.h). tmpfs, devtmpfs and the like hold real files and are walked.
bool IsKernelPseudoFileSystem(uint64_t type);
inline constexpr uint64_t kMqueueMagic = 0x19800202;    // MQUEUE_MAGIC, ipc/mqueue.c
inline constexpr uint64_t kConfigfsMagic = 0x62656570;  // CONFIGFS_MAGIC, fs/configfs/mount.c
inline constexpr uint64_t kFuseControlMagic =
    0x65735543;  // FUSE_CTL_SUPER_MAGIC, fs/fuse/control.c

}  // namespace zsim::walk

#endif  // ZSIM_ENGINE_WALK_WALKER_H_
