// tests/accuracy/openzfs23/ddt_keys.cc
//
// ddt_keys TREE COMPRESSION RECORDSIZE ASHIFT
//
// Prints, for every block of every regular file under TREE, the first word of the DDT key that
// OpenZFS 2.3 with dedup=on and checksum=sha256 gives it on a single-disk pool of that ashift,
// computed from zsim's own codecs and write rules: the SHA-256 of what ZFS writes
// (codec::WriteZfsBlock: the compressor's output padded with zeros to its rounded psize when the
// block compresses, else the block itself), read as ZFS reads the digest into zc_word[0]
// (big-endian, abd_checksum_sha256 in module/zfs/sha2_zfs.c). One line per block: the word in hex,
// "compressed" or "stored", the bytes hashed, and the file's path relative to TREE. Holes and
// embedded blocks have no DDT entry and are not printed.
//
// The blocks are cut as the harness writes a file (zpool_harness.c): one block of the file's
// size rounded up to 512 bytes up to RECORDSIZE, else RECORDSIZE blocks, the last one zero-padded.
// key_check.py compares these words with the keys `zdb -DDDDD` prints for the same tree written
// by OpenZFS 2.3.2: equal words mean zsim's compressor emitted OpenZFS's bytes, not only their
// count.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/zfs/write_rules.h"

namespace {

using namespace zsim;

// zsim's sha256 fingerprint keeps the digest's first 8 bytes in `lo` as they lie in memory
// (little-endian on this machine); ZFS reads them big-endian (finish/tally.cc ZapHashOf).
uint64_t KeyWord(ByteView written) {
  return __builtin_bswap64(ddt::ComputeFingerprint(ChecksumKind::kSha256, written).lo);
}

int Usage(const char* why) {
  std::fprintf(stderr, "ddt_keys: %s\nusage: ddt_keys TREE COMPRESSION RECORDSIZE ASHIFT\n", why);
  return 2;
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "ddt_keys: %s\n", why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return Usage("four arguments expected");
  const std::filesystem::path tree = argv[1];
  const Result<Compression> compression = ParseCompression(argv[2], Profile::kZfs23);
  if (!compression.ok()) return Usage("unknown compression");
  const uint64_t recordsize = std::strtoull(argv[3], nullptr, 10);
  const int ashift = std::atoi(argv[4]);
  if (recordsize < 512 || recordsize % 512 != 0 || recordsize > (16u << 20))
    return Usage("RECORDSIZE is a multiple of 512 up to 16M, in bytes");
  if (ashift < 9 || ashift > 16) return Usage("ASHIFT is 9..16");

  const Compression c = *compression;
  const zfs::WritePolicy policy = zfs::DedupPolicyOf(Profile::kZfs23, VdevLayout{}, ashift);
  codec::Compressor compressor;
  std::vector<uint8_t> scratch(recordsize);

  std::error_code error;
  auto it = std::filesystem::recursive_directory_iterator(tree, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_symlink() || !it->is_regular_file()) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), {});
    if (in.bad() || !in.is_open()) return Fail("cannot read " + it->path().string());
    if (data.empty()) continue;
    const uint64_t lsize = data.size() <= recordsize ? (data.size() + 511) / 512 * 512 : recordsize;
    data.resize((data.size() + lsize - 1) / lsize * lsize, 0);

    for (uint64_t offset = 0; offset < data.size(); offset += lsize) {
      const ByteView block(data.data() + offset, lsize);
      const codec::WrittenBlock w =
          codec::WriteZfsBlock(policy, c, block, IsAllZero(block), compressor, scratch);
      if (w.bytes.empty()) continue;  // a hole or an embedded block: no DDT entry
      std::printf("%016" PRIx64 " %s %zu %s\n", KeyWord(w.bytes),
                  w.write.kind == zfs::BlockKind::kCompressed ? "compressed" : "stored",
                  w.bytes.size(), it->path().lexically_relative(tree).c_str());
    }
  }
  if (error) return Fail(tree.string() + ": " + error.message());
  return 0;
}
