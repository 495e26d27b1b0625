// engine/zfs/microzap.h
//
// A directory's micro-ZAP block as OpenZFS lays it out, so that the metadata model can compress
// the block itself instead of fitting its size (metadata.h). From OpenZFS 2.3
// include/sys/zap_impl.h: the block is mzap_phys_t, 64 bytes (mz_block_type = ZBT_MICRO,
// mz_salt, mz_normflags, 5 words of pad), then one 64-byte mzap_ent_phys_t per entry (MZAP_ENT_LEN:
// mze_value, mze_cd, mze_pad, mze_name[MZAP_NAME_LEN = 50], the name NUL-padded), all words
// little-endian on the machines zsim models. A directory entry's value is ZFS_DIRENT_MAKE(type,
// object) = DT_* type << 60 | object number (include/sys/zfs_znode.h, zfs_dir.c zfs_link_create).
// An entry takes the next free chunk from zap_alloc_next (zap_micro.c mzap_addent), so in a
// directory only ever added to, entries lie in insertion order; a full block grows by
// SPA_MINBLOCKSIZE (zap_micro.c zap_lockdir_impl) up to zap_micro_max_size (128K by default in
// 2.3, SPA_OLD_MAXBLOCKSIZE; a tunable that can reach 1M with the large_microzap feature, which
// zsim does not model), past which zap_lockdir_impl upgrades it to a fat ZAP, as zap_add_impl does
// for a name of MZAP_NAME_LEN bytes or more (mzap_upgrade).
//
// What zsim cannot know and assumes (checked against OpenZFS 2.3.2 pools of the source and
// database samples, tests/accuracy/openzfs23: the directories' psize totals come out equal,
// 100,864 and 14,336 bytes at ashift 9, and 235 of their 241 directories take OpenZFS's psize
// each; the others lie near the 112-byte embedding line, where the salt and the object numbers
// decide whether a block is embedded):
// entries inserted in byte order of their names, one after the other, as the suite's harness
// copies a tree (zpool_harness.c, strcmp order; a copy that writes each file under a temporary
// name and renames it, as rsync does, frees a chunk per file and leaves gaps); object numbers
// consecutive in that order, from kMicrozapFirstObject (a subdirectory's own descendants are
// numbered before its next sibling in a real copy; a jump in the sequence changes an lz4 block
// by a few bytes); one fixed salt (OpenZFS derives it from kernel pointers and the object
// number, mzap_create_impl: 8 bytes that do not compress either way); mze_cd 0 (it counts
// 64-bit hash collisions in one directory).
//
// Thread safety: pure functions.

#ifndef ZSIM_ENGINE_ZFS_MICROZAP_H_
#define ZSIM_ENGINE_ZFS_MICROZAP_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace zsim::zfs {

inline constexpr uint64_t kMicrozapEntryBytes = 64;  // MZAP_ENT_LEN
inline constexpr uint64_t kMicrozapNameMax = 50;     // MZAP_NAME_LEN (the NUL included)
inline constexpr uint64_t kMicrozapMaxBytes = 128 << 10;
// The first entry's object number: two-byte numbers, as in a tree of up to 65,536 objects (a
// larger tree's three-byte numbers cost about 1 % more per directory, measured on the source
// sample with numbers from 100,000).
inline constexpr uint64_t kMicrozapFirstObject = 1024;

// The directory entry types OpenZFS stores in a value's top 4 bits (IFTODT of the mode: the
// DT_* values of dirent.h).
enum class DirentType : uint8_t {
  kFifo = 1,
  kCharDevice = 2,
  kDirectory = 4,
  kBlockDevice = 6,
  kRegular = 8,
  kSymlink = 10,
  kSocket = 12,
};

struct MicrozapEntry {
  std::string_view name;
  DirentType type = DirentType::kRegular;
};

// Bytes of the micro-ZAP block holding `entries` entries: the header and the entries in
// 512-byte steps, at least 512.
uint64_t MicrozapBlockBytes(uint64_t entries);

// Whether a directory of `entries` entries whose longest name is `longest_name` bytes stays a
// micro-ZAP (else OpenZFS upgrades it to a fat ZAP).
bool IsMicrozap(uint64_t entries, uint64_t longest_name);

// The directory's micro-ZAP block, MicrozapBlockBytes(entries.size()) bytes, entries sorted by
// name (bytewise) and numbered as the header says.
// REQUIRES: IsMicrozap(entries.size(), longest name).
std::vector<uint8_t> MicrozapImage(std::vector<MicrozapEntry> entries);

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_MICROZAP_H_
