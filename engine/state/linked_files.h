// engine/state/linked_files.h
//
// Files with several names (hard links) across the parts of a merge. One scan of A and B counts
// such a file once, under the smallest of its names (walk/parallel_walker.h), and the others are
// `hard_link` skips; scans of A and of B count it once each. So every scan keeps, for each file
// it counted with st_nlink > 1 (only those: the state stays compact), what identifies the file
// and what it added to the state (scan_state.h LinkedFile), and a merge that finds one file in
// both parts takes the contribution of the larger name back out: the merge then equals the one
// scan, table, shapes, breakdown rows and references, whole-file contents, occurrence sample and
// the sampling plan's bytes included.
//
// The file's identity: its inode, and its file system as LinkedFileSystem names it, a hash of
//   - the machine (/etc/machine-id) and the boot (/proc/sys/kernel/random/boot_id): st_dev is
//     the kernel's number for a mounted file system, given at mount time (device-mapper, NFS,
//     btrfs and overlay numbers change across reboots, and another machine numbers its mounts
//     its own way), so (st_dev, st_ino) names one file only within one boot of one machine,
//     which is also the scope in which one scan of both parts would have told the names apart;
//   - st_dev and statfs's f_fsid: f_fsid alone is 0 on some file systems (NFS) and equal on
//     clones (a copied ext4 image keeps its UUID), st_dev alone may be reused by another file
//     system mounted later on the same device (a loop device, a USB disk swapped).
// And a match counts as one file only when size, mtime and ctime agree too (a file changed
// between the two scans, or an inode number reused, is counted in each part, and said so). Parts
// scanned on other machines, or before and after a reboot, never match: a file hard-linked
// across them counts in each (Merge's `shared` count says how many of one host).
//
// Thread safety: pure functions of their arguments; those taking a state modify it and need it to
// themselves.

#ifndef ZSIM_ENGINE_STATE_LINKED_FILES_H_
#define ZSIM_ENGINE_STATE_LINKED_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/ddt/fingerprint.h"
#include "engine/state/scan_state.h"

namespace zsim::state {

// The input summary's name of a skipped name of a file counted under another (walk/walker.h
// SkipReasonName(SkipReason::kHardLink); the state module does not depend on the walk).
inline constexpr char kHardLinkSkip[] = "hard_link";

// The file-system identity of a file at `path` with st_dev `dev` (see above); 0 when this machine
// or boot cannot be named (no machine-id or boot id): such files never match.
uint64_t LinkedFileSystem(uint64_t dev, const std::string& path);

// Per link, per row: the keys of the entries its references name.
using LinkKeys = std::vector<std::vector<std::vector<ddt::Fingerprint>>>;

// The keys of every link's references, in `s`'s tables (before the tables change); a link that
// keeps keys (LinkedFile::keys), its keys.
LinkKeys KeysOfLinks(const ScanState& s);

// Sets every link's references from `keys`, in `s`'s tables; a key a table no longer holds
// (sampled out by a coarser merge) is left out. A link that keeps keys keeps them (`keys`'):
// its references are made when the state is saved (state_file.h).
void SetLinkRefs(ScanState& s, const LinkKeys& keys);

struct LinkMerge {
  uint64_t resolved = 0;  // files both parts held, now counted once
  uint64_t changed = 0;   // same file system and inode, other size or stamps: counted in each
};

// `s` holds two parts merged: links [0, first_other) of one, the rest of the other, with their
// keys. Each file both hold is counted once, under the smaller name (the other's contribution
// is taken out, a `hard_link` skip added, and its link dropped), and the links get their
// references in `s`'s tables. `plan_added`: the merge added the parts' planned bytes up
// (SamplingState::planned_bytes), so the other name's allocated bytes come out of it too.
LinkMerge ResolveLinks(ScanState& s, size_t first_other, LinkKeys keys, bool plan_added);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_LINKED_FILES_H_
