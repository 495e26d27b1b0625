// include/zsim/scan_options.h
//
// What a scan is asked to model: the inputs, the ZFS settings to evaluate (several recordsizes and
// compressions in one pass), the pool layout and the ZFS version whose rules apply. Filled by the
// CLI (engine/cli) or by any embedding program; validated by ValidateScanOptions before any I/O.
//
// Thread safety: a plain value.

#ifndef ZSIM_INCLUDE_ZSIM_SCAN_OPTIONS_H_
#define ZSIM_INCLUDE_ZSIM_SCAN_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zsim/status.h"

namespace zsim {

// The ZFS release whose rules apply (docs/zfs_model.md, version legend).
// Values appear in --json output (as ProfileName): append only, never rename.
enum class Profile : uint8_t { kV23, kZfs21, kZfs22, kZfs23, kZfs24 };
std::string_view ProfileName(Profile profile);  // "v23", "2.1", "2.2", "2.3", "2.4"
std::optional<Profile> ParseProfile(std::string_view name);

enum class CompressionAlgorithm : uint8_t { kOff, kLzjb, kZle, kLz4, kGzip, kZstd };

// One value of the `compression` property. level: gzip 1..9; zstd 1..19 for zstd-N and -N for
// zstd-fast-N (N in 1..10, 20..100 step 10, 500, 1000); 0 for the others.
struct Compression {
  CompressionAlgorithm algorithm = CompressionAlgorithm::kOff;
  int level = 0;
  friend bool operator==(const Compression&, const Compression&) = default;
};

// Canonical name as ZFS spells it with the level written out: "off", "lzjb", "zle", "lz4",
// "gzip-6", "zstd-3", "zstd-fast-10". Values appear in --json output: never rename.
std::string CompressionName(Compression c);

// Parses a ZFS compression name ("on", "gzip", "zstd-fast", "zstd-fast-20", ...). "on" and the
// unlevelled names resolve as `profile` would (on = lzjb in v23, lz4 from 2.1 on). Returns
// kInvalidArgument naming the accepted values when the name is unknown or not in that profile
// (lz4 and zstd do not exist in v23 pools: refused there).
Result<Compression> ParseCompression(std::string_view name, Profile profile);

// Every compression value `profile` supports, for `--compression all`.
std::vector<Compression> AllCompressions(Profile profile);
// The default list evaluated when none is given: off and what an admin of that version chooses
// between. From 2.1 on: lz4 (what `on` means) and zstd-3 (what `zstd` means), which stores
// within 2% of what gzip-6 stores, or far less (the bundled samples at their large size: 17.9x
// against 12.1x on the database, 2.61x against 2.66x on the VM store) at a fraction of its cost.
// v23, which has neither: gzip-6, lzjb (its `on`) and zle. Other codecs are listed or asked for
// with `all`.
std::vector<Compression> DefaultCompressions(Profile profile);

// Top-level vdev layout (docs/zfs_model.md §4). Values appear in --json output as VdevName().
enum class VdevKind : uint8_t { kDisk, kMirror, kRaidz, kDraid };
struct VdevLayout {
  VdevKind kind = VdevKind::kDisk;
  int parity = 0;    // raidz/draid: 1..3
  int children = 1;  // mirror: ways; raidz: disks; draid: disks per group (data + parity)
  int data = 0;      // draid: data disks per redundancy group
  friend bool operator==(const VdevLayout&, const VdevLayout&) = default;
};
std::string VdevName(const VdevLayout& v);  // "disk", "mirror:2", "raidz2:6", "draid1:4:5"
// Parses "disk", "mirror:N", "raidzP:C" (raidz = raidz1), "draidP:D:C".
Result<VdevLayout> ParseVdev(std::string_view text);

enum class ChecksumKind : uint8_t { kXxh128, kSha256 };
enum class DdtFormat : uint8_t { kLegacy, kFast };

struct ScanOptions {
  std::vector<std::string> paths;
  std::vector<uint64_t> recordsizes = {128 * 1024};
  // When set, every input is cut into fixed blocks of this size, as a zvol would store it. Block
  // devices named as inputs are always treated as zvols (with the profile's default when unset).
  std::optional<uint64_t> volblocksize;
  std::vector<Compression> compressions;  // empty: DefaultCompressions(profile)
  Profile profile = Profile::kZfs24;
  int ashift = 12;
  VdevLayout vdev;
  int copies = 1;
  ChecksumKind checksum = ChecksumKind::kXxh128;
  std::optional<DdtFormat> ddt_format;  // unset: fast for 2.3+, legacy before
  uint64_t ram_bytes = 0;               // 0: this machine's RAM
  bool exact = false;
  uint64_t sample_modulus = 1;  // --sample 1/M
  uint64_t max_memory_bytes = 0;
  // --max-rate: bytes read per second by all threads together; 0 for no cap.
  uint64_t max_read_bytes_per_second = 0;
  int threads = 0;  // 0: every core
  bool one_file_system = false;
  bool follow_symlinks = false;
  std::vector<std::string> excludes;  // glob patterns matched against base names and paths
};

// Checks every field against what the profile allows (recordsize power of two, 512 .. the
// profile's maximum; ashift 9..16; copies 1..3; ...). Returns kInvalidArgument with a message that
// says what would be right.
Status ValidateScanOptions(const ScanOptions& options);

}  // namespace zsim

#endif  // ZSIM_INCLUDE_ZSIM_SCAN_OPTIONS_H_
