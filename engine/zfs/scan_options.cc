// ValidateScanOptions: every option checked before any I/O, with a message that says what would
// be right (STYLE.md §4, "bad arguments"). Here, beside the profile rules it checks against, so
// every module that takes options (the scan, a state file, a report) can check them.

#include "zsim/scan_options.h"

#include <string>

#include "engine/zfs/nicenum.h"
#include "engine/zfs/profile.h"

namespace zsim {
namespace {

// More worker threads than this only wastes memory (each holds an 8 MiB buffer); TBB itself
// fails on absurd counts.
constexpr int kMaxThreads = 1024;

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

Status CheckBlockSize(std::string_view what, uint64_t bytes, uint64_t max_bytes, Profile profile) {
  if (IsPowerOfTwo(bytes) && bytes >= zfs::kMinBlockBytes && bytes <= max_bytes) {
    return Status::Ok();
  }
  std::string msg(what);
  msg += ' ';
  // As zfs names sizes (4M, not 4194304); a size no suffix names exactly, in bytes.
  msg += (IsPowerOfTwo(bytes) ? zfs::NiceBytes(bytes) : std::to_string(bytes) + " bytes") +
         " is not allowed: use a power of two from 512 to " + zfs::NiceBytes(max_bytes) +
         " (the limit of profile " + std::string(ProfileName(profile)) + "), e.g. 4k, 16k, 128k";
  if (max_bytes >= (1u << 20)) msg += ", 1M";
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace

Status ValidateScanOptions(const ScanOptions& o) {
  const zfs::ProfileRules& rules = zfs::RulesFor(o.profile);
  if (o.paths.empty()) return Status::InvalidArgument("no path to scan: name at least one PATH");
  if (o.recordsizes.empty()) return Status::InvalidArgument("--recordsize needs at least one size");
  for (uint64_t rs : o.recordsizes) {
    ZSIM_RETURN_IF_ERROR(CheckBlockSize("recordsize", rs, rules.max_recordsize, o.profile));
  }
  if (o.volblocksize) {
    ZSIM_RETURN_IF_ERROR(
        CheckBlockSize("volblocksize", *o.volblocksize, rules.max_recordsize, o.profile));
  }
  if (o.ashift < 9 || o.ashift > 16) {
    return Status::InvalidArgument("ashift " + std::to_string(o.ashift) +
                                   " is not allowed: use 9 to 16 (12 for 4K-sector disks)");
  }
  if (o.copies < 1 || o.copies > 3) {
    return Status::InvalidArgument("copies " + std::to_string(o.copies) +
                                   " is not allowed: use 1, 2 or 3");
  }
  const VdevLayout& v = o.vdev;
  switch (v.kind) {
    case VdevKind::kDisk:
      break;
    case VdevKind::kMirror:
      if (v.children < 2)
        return Status::InvalidArgument("a mirror needs at least 2 disks: mirror:2");
      break;
    case VdevKind::kRaidz:
      if (v.parity < 1 || v.parity > 3) {
        return Status::InvalidArgument("raidz parity must be 1, 2 or 3 (raidz1:5, raidz2:6, ...)");
      }
      if (v.children <= v.parity) {
        return Status::InvalidArgument(
            "raidz" + std::to_string(v.parity) + " needs more than " + std::to_string(v.parity) +
            " disks, e.g. raidz" + std::to_string(v.parity) + ":" + std::to_string(v.parity + 3));
      }
      if (o.profile == Profile::kV23 && v.parity == 3) {
        // raidz3 arrived with pool version 17, so v23 has it; nothing to refuse.
      }
      break;
    case VdevKind::kDraid:
      if (o.profile == Profile::kV23) {
        return Status::InvalidArgument("dRAID does not exist in profile v23 (OpenZFS 2.1+)");
      }
      if (v.parity < 1 || v.parity > 3 || v.data < 1 || v.children < v.data + v.parity) {
        return Status::InvalidArgument(
            "draidP:D:C needs parity 1..3, at least 1 data disk and C >= D + P, e.g. draid2:4:6");
      }
      break;
  }
  if (o.ddt_format == DdtFormat::kFast && !rules.has_fast_dedup) {
    return Status::InvalidArgument("--ddt-format fast needs profile 2.3 or later");
  }
  if (o.threads < 0 || o.threads > kMaxThreads) {
    return Status::InvalidArgument("--threads must be 0 (all cores) or more, up to " +
                                   std::to_string(kMaxThreads));
  }
  if (o.sample_modulus == 0 || !IsPowerOfTwo(o.sample_modulus)) {
    return Status::InvalidArgument("--sample 1/M needs M to be a power of two (1/1, 1/64, ...)");
  }
  for (const Compression& c : o.compressions) {
    if ((c.algorithm == CompressionAlgorithm::kLz4 && !rules.has_lz4) ||
        (c.algorithm == CompressionAlgorithm::kZstd && !rules.has_zstd)) {
      return Status::InvalidArgument("compression " + CompressionName(c) +
                                     " does not exist in profile " +
                                     std::string(ProfileName(o.profile)));
    }
  }
  return Status::Ok();
}

}  // namespace zsim
