#include "engine/cli/version.h"

#include <fmt/format.h>
#include <lz4.h>
#include <oneapi/tbb/version.h>
#include <openssl/crypto.h>
#include <xxhash.h>
#include <zlib.h>
#include <zstd.h>

#include "zsim_git_revision.h"

namespace zsim::cli {

std::string VersionText() {
  const unsigned xxh = XXH_versionNumber();
  return fmt::format(
      "zsim {} (git {})\n"
      "libraries: zstd {}, lz4 {}, zlib {}, xxhash {}.{}.{}, {}, oneTBB {}\n",
      ZSIM_VERSION_STRING, ZSIM_GIT_REVISION, ZSTD_versionString(), LZ4_versionString(),
      zlibVersion(), xxh / 10000, xxh / 100 % 100, xxh % 100, OpenSSL_version(OPENSSL_VERSION),
      TBB_runtime_version());
}

}  // namespace zsim::cli
