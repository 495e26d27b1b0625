// engine/zfs/microzap.h
//
// A directory's micro-ZAP block as OpenZFS lays it out, so that the metadata model can compress
// the block itself instead of fitting its size (metadata.h). From OpenZFS 2.3
// include/sys/zap_impl.h: the block is mzap_phys_t, 64 bytes (mz_block_type = ZBT_MICRO,
// mz_salt, mz_normflags, 5 words of pad), then one 64-byte mzap_ent_phys_t per entry (MZAP_ENT_LEN:
// mze_value, mze_cd, mze_pad, mze_name[MZAP_NAME_LEN = 50], the name NUL-padded), all words
// little-endian on the machines zsim models. A directory entry's value is ZFS_DIRENT_MAKE(type,
// object) = DT_* type << 60 | object number (include/sys/zfs_znode.h, zfs_dir.c zfs_link_create).
// Entries take the first free chunk (zap_micro.c mzap_addent), so they lie in insertion order;
// a full block grows by SPA_MINBLOCKSIZE (zap_micro.c zap_lockdir_impl) up to zap_micro_max_size
// (128K by default in 2.3), and a name of MZAP_NAME_LEN bytes or more, or a block past that size,
// turns the directory into a fat ZAP (zap_add_impl, mzap_upgrade).
//
// What zsim cannot know and assumes (checked in tests/accuracy/openzfs23: every stored micro-ZAP
// of the source and database samples rebuilt this way compresses to OpenZFS 2.3.2's psize):
// entries inserted in byte order of their names (as rsync and the suite's harness copy a tree);
// object numbers consecutive in that order, from kMicrozapFirstObject (a subdirectory's own
// descendants are numbered before its next sibling in a real copy; a jump in the sequence
// changes an lz4 block by a few bytes); one fixed salt (OpenZFS draws it at random, 8 bytes that
// do not compress either way); mze_cd 0 (it counts 64-bit hash collisions in one directory).
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
