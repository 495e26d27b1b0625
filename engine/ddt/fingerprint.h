// engine/ddt/fingerprint.h
//
// The dedup module, overview. Fingerprint() gives each logical block a 128-bit key; DedupTable
// (dedup_table.h) counts references per key and keeps, per unique block, what every evaluated
// compression setting made of it. Identical logical blocks compress identically, so the key of
// the logical block groups exactly the blocks ZFS would deduplicate (docs/zfs_model.md §5.1: ZFS
// keys on the physical block plus lsize/psize/compression, which the logical bytes determine for
// one setting).
//
// Thread safety: Fingerprint is a pure function.
// Stability: a fingerprint of given bytes never changes between zsim versions.

#ifndef ZSIM_ENGINE_DDT_FINGERPRINT_H_
#define ZSIM_ENGINE_DDT_FINGERPRINT_H_

#include <bit>
#include <cstdint>
#include <functional>

#include "engine/base/byte_view.h"
#include "zsim/scan_options.h"

namespace zsim::ddt {

struct Fingerprint {
  uint64_t lo = 0;
  uint64_t hi = 0;
  friend bool operator==(const Fingerprint&, const Fingerprint&) = default;
};

// XXH3-128 (default) or the first 128 bits of SHA-256 (--checksum sha256, ZFS's dedup checksum)
// of the bytes.
Fingerprint ComputeFingerprint(ChecksumKind kind, ByteView bytes);

// Sets up the SHA-256 library (OpenSSL) on the calling thread; call it before scan threads
// fingerprint, from a thread that will outlive them (main; a scan calls it as it starts, on
// its caller's thread). Without it the first SHA256() on a
// scan thread loads OpenSSL's configuration there, and the error queue that leaves on that
// thread is freed only by the thread's exit, which the process's exit does not wait for
// (LeakSanitizer then reports it). Idempotent; never needed for correctness.
void InitFingerprinting();

// The first word of ZFS's SHA-256 checksum of the same bytes, given their kSha256 fingerprint:
// the first word of a DDT key, and the DDT ZAP's hash of it (zap_micro.c: zap_hash with
// ZAP_FLAG_PRE_HASHED_KEY). ZFS reads the digest's first 8 bytes big-endian (sha2_zfs.c:
// abd_checksum_sha256, BE_64); `lo` holds them as a little-endian load left them (memcpy).
static_assert(std::endian::native == std::endian::little,
              "Fingerprint::lo is a little-endian load");
inline uint64_t ZfsChecksumWord0(const Fingerprint& sha256) { return __builtin_bswap64(sha256.lo); }

}  // namespace zsim::ddt

#endif  // ZSIM_ENGINE_DDT_FINGERPRINT_H_
