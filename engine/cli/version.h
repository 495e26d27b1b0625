// engine/cli/version.h
//
// What `zsim --version` prints: the release, the git revision the binary was built from, and the
// versions of the libraries that decide its figures (zstd, lz4, zlib for the codecs; xxHash and
// OpenSSL for the fingerprints; oneTBB for the pipeline), as each library reports itself at run
// time (the one actually linked, not the header's).
//
// Thread safety: pure function.

#ifndef ZSIM_ENGINE_CLI_VERSION_H_
#define ZSIM_ENGINE_CLI_VERSION_H_

#include <string>

namespace zsim::cli {

// "zsim 0.1.0 (git abd0126...)\nzstd 1.5.4, lz4 1.9.4, ...\n"
std::string VersionText();

}  // namespace zsim::cli

#endif  // ZSIM_ENGINE_CLI_VERSION_H_
