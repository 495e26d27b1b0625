// tests/accuracy/openzfs23/ddt_keys.cc
//
// ddt_keys TREE COMPRESSION RECORDSIZE ASHIFT
//
// Prints, for every block of every regular file under TREE, the first word of the checksum in the
// DDT key that OpenZFS 2.3 with dedup=on and checksum=sha256 gives it on a single-disk pool of
// that ashift, computed from zsim's own codecs and write rules: the SHA-256 of what ZFS writes
// (codec::WriteZfsBlock: the compressor's output padded with zeros to its rounded psize when the
// block compresses, else the block itself), read as ZFS reads it (ddt::ZfsChecksumWord0). One
// line per block, files in path order: the word in hex, "compressed" or "stored", the bytes
// hashed, and the file's path relative to TREE. Holes and embedded blocks have no DDT entry and
// are not printed.
//
// The blocks are the harness's (zpool_harness.c): zfs::FileLayout's, and only those that hold
// some of the file's data (io::File::NextData, SEEK_DATA): it writes data extents only, so a
// block wholly inside a sparse hole is never written. key_check.py compares these words with
// the keys `zdb -DDDDD` prints for the same tree written by OpenZFS 2.3.2: equal words mean
// zsim's compressor emitted OpenZFS's bytes, not only their count.

#include <algorithm>
#include <bit>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/base/size_suffix.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/io/file_system.h"
#include "engine/zfs/record_layout.h"
#include "engine/zfs/write_rules.h"

namespace {

using namespace zsim;

int Usage(const char* why) {
  std::fprintf(stderr, "ddt_keys: %s\nusage: ddt_keys TREE COMPRESSION RECORDSIZE ASHIFT\n", why);
  return 2;
}

int Fail(const std::string& what, const std::string& why) {
  std::fprintf(stderr, "ddt_keys: %s: %s\n", what.c_str(), why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return Usage("four arguments expected");
  const std::filesystem::path tree = argv[1];
  const Result<Compression> compression = ParseCompression(argv[2], Profile::kZfs23);
  if (!compression.ok()) return Usage("unknown compression");
  const Result<uint64_t> recordsize = ParseSize(argv[3]);
  if (!recordsize.ok() || *recordsize < 512 || *recordsize > (16u << 20) ||
      !std::has_single_bit(*recordsize))
    return Usage("RECORDSIZE is a power of two from 512 to 16M (e.g. 128k)");
  int ashift = 0;
  const std::string_view ashift_text = argv[4];
  const auto [end, parse_error] =
      std::from_chars(ashift_text.data(), ashift_text.data() + ashift_text.size(), ashift);
  if (parse_error != std::errc() || end != ashift_text.data() + ashift_text.size() || ashift < 9 ||
      ashift > 16)
    return Usage("ASHIFT is 9..16");

  std::error_code error;
  std::vector<std::filesystem::path> files;
  auto it = std::filesystem::recursive_directory_iterator(tree, error);
  for (; !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    if (!it->is_symlink() && it->is_regular_file()) files.push_back(it->path());
  }
  if (error) return Fail(tree.string(), error.message());
  std::sort(files.begin(), files.end());

  const Compression c = *compression;
  const zfs::WritePolicy policy = zfs::DedupPolicyOf(Profile::kZfs23, VdevLayout{}, ashift);
  const std::shared_ptr<io::FileSystem> fs = io::PosixFileSystem();
  codec::Compressor compressor;
  std::vector<uint8_t> block_bytes, scratch;
  for (const std::filesystem::path& path : files) {
    Result<std::unique_ptr<io::File>> file = fs->Open(path, /*follow=*/false);
    if (!file.ok()) return Fail(path.string(), file.status().ToString());
    const uint64_t size = (*file)->size();
    const zfs::RecordLayout layout = zfs::FileLayout(size, *recordsize);
    block_bytes.resize(layout.block_bytes);
    scratch.resize(layout.block_bytes);
    for (uint64_t i = 0; i < layout.blocks; ++i) {
      const uint64_t offset = i * layout.block_bytes;
      // The harness writes data extents only: a block wholly inside a hole is never written.
      const Result<std::optional<uint64_t>> data = (*file)->NextData(offset);
      if (!data.ok()) return Fail(path.string(), data.status().ToString());
      if (!*data || **data >= offset + layout.block_bytes) continue;
      const uint64_t in_file = std::min<uint64_t>(layout.block_bytes, size - offset);
      std::fill(block_bytes.begin() + static_cast<ptrdiff_t>(in_file), block_bytes.end(), 0);
      const Status read =
          io::ReadFully(**file, offset, MutableByteView(block_bytes).first(in_file));
      if (!read.ok()) return Fail(path.string(), read.ToString());
      const codec::WrittenBlock w =
          codec::WriteZfsBlock(policy, c, block_bytes, IsAllZero(block_bytes), compressor, scratch);
      if (w.bytes.empty()) continue;  // a hole or an embedded block: no DDT entry
      const uint64_t word =
          ddt::ZfsChecksumWord0(ddt::ComputeFingerprint(ChecksumKind::kSha256, w.bytes));
      std::printf("%016" PRIx64 " %s %zu %s\n", word,
                  w.write.kind == zfs::BlockKind::kCompressed ? "compressed" : "stored",
                  w.bytes.size(), path.lexically_relative(tree).c_str());
    }
  }
  return 0;
}
