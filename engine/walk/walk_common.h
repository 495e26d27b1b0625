// engine/walk/walk_common.h
//
// Pieces the serial Walker and the ParallelWalker share: item constructors, path joining,
// --exclude matching, and the skip reason of a file type that is never modelled.
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_WALK_WALK_COMMON_H_
#define ZSIM_ENGINE_WALK_WALK_COMMON_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/walk/walker.h"

namespace zsim::walk::internal {

// A file's identity.
using FileKey = std::pair<uint64_t, uint64_t>;  // st_dev, st_ino

// The st_dev of a block device root's identity, {kDeviceNodeDev, st_rdev}: the device, not its
// node (no file's st_dev is all ones).
inline constexpr uint64_t kDeviceNodeDev = ~uint64_t{0};

// The identity of each root (stat, following a symlink), nullopt where the stat fails (the walk
// reports that error when it visits the root).
std::vector<std::optional<FileKey>> RootIdentities(io::FileSystem* fs,
                                                   const std::vector<std::string>& roots);
// For each root, whether another root counts its data already: it has the identity of an earlier
// root (the same input named twice), or it is a partition of a block device also named, in
// either order (the disk's read holds the partition's bytes; `sysfs_root` says which device is a
// partition of which). Such a root is skipped as an overlap.
std::vector<bool> RootsCoveredByOthers(const std::vector<std::optional<FileKey>>& ids,
                                       const std::string& sysfs_root);
// True when `key` is the identity of some root.
bool IsARoot(const std::vector<std::optional<FileKey>>& ids, const FileKey& key);

// Whether a directory met inside a tree, on device `dev` under a directory on `parent_dev`, is a
// kernel pseudo file system's mount point (asked of `fs` only where the device changes).
bool IsPseudoMount(io::FileSystem* fs, const std::string& path, uint64_t dev, uint64_t parent_dev);

// Per root, its path as a name to compare (std::filesystem's lexically_normal: `./D//x` is
// `D/x`). Lexical, not stat'ed: the walk may not stat the directories above an input (those
// above an output are guarded), and a spelling this misses only names the skip (`overlap` for
// `hard_link`), never counts a file twice.
std::vector<std::string> RootNames(const std::vector<std::string>& roots);
// Whether a file met inside a tree at `path` (`info`) with the identity of a root is left to that
// root, as an overlap: anything but a regular file of several names (st_nlink > 1), and such a
// file met under the root's own name (nested or repeated inputs). Another name of a root file with
// several is a hard link like any other: the walk counts the file once under its smallest name and
// skips the others as `hard_link`, as a merge of scans of the parts does (state/linked_files.h);
// it was skipped as `overlap` here and as `hard_link` in the merge.
bool LeftToItsRoot(const std::vector<std::optional<FileKey>>& ids,
                   const std::vector<std::string>& names, const io::FileInfo& info,
                   std::string_view path);

WalkItem Skipped(std::string path, SkipReason reason);
WalkItem Failed(std::string path, Status status);
std::string JoinPath(const std::string& dir, const std::string& name);
// True if a glob of `excludes` matches the path's base name or the full path (fnmatch).
bool Excluded(const std::vector<std::string>& excludes, std::string_view path);
// The skip reason of a type that is neither a regular file, a block device nor a directory
// (nullopt for those three).
std::optional<SkipReason> SkipReasonOfType(io::FileType type);
// Moves the entries of the listing of `dir` that a glob of `excludes` matches to its end, each
// part in listing order; returns how many are kept (those before). Each entry is matched once:
// the walk skips the rest as excluded without matching again.
size_t PartitionExcluded(const std::string& dir, const std::vector<std::string>& excludes,
                         std::vector<io::DirEntry>* entries);
// A directory listing as a kDirectory item: entry count, name bytes, longest name and
// options.directory_zap_bytes over `kept`, the entries PartitionExcluded keeps (a copy of the
// tree would not hold the others).
WalkItem DirectoryItem(std::string path, const io::FileInfo& info,
                       std::span<const io::DirEntry> kept, const WalkOptions& options);

}  // namespace zsim::walk::internal

#endif  // ZSIM_ENGINE_WALK_WALK_COMMON_H_
