#include "engine/ddt/fingerprint.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <xxhash.h>

#include <cstring>

namespace zsim::ddt {

Fingerprint ComputeFingerprint(ChecksumKind kind, ByteView bytes) {
  Fingerprint fp;
  if (kind == ChecksumKind::kSha256) {
    uint8_t digest[SHA256_DIGEST_LENGTH];
    SHA256(bytes.data(), bytes.size(), digest);
    std::memcpy(&fp.lo, digest, 8);
    std::memcpy(&fp.hi, digest + 8, 8);
    return fp;
  }
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  fp.lo = h.low64;
  fp.hi = h.high64;
  return fp;
}

void InitFingerprinting() { OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr); }

}  // namespace zsim::ddt
