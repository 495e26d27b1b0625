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
// some of the file's data extents (SEEK_DATA / SEEK_HOLE): it writes data extents only, so a
// block wholly inside a sparse hole is never written. key_check.py compares these words with
// the keys `zdb -DDDDD` prints for the same tree written by OpenZFS 2.3.2: equal words mean
// zsim's compressor emitted OpenZFS's bytes, not only their count.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/byte_view.h"
#include "engine/base/size_suffix.h"
#include "engine/codec/zfs_block.h"
#include "engine/ddt/fingerprint.h"
#include "engine/zfs/record_layout.h"
#include "engine/zfs/write_rules.h"

namespace {

using namespace zsim;

int Usage(const char* why) {
  std::fprintf(stderr, "ddt_keys: %s\nusage: ddt_keys TREE COMPRESSION RECORDSIZE ASHIFT\n", why);
  return 2;
}

int Fail(const std::string& what, int error) {
  std::fprintf(stderr, "ddt_keys: %s: %s\n", what.c_str(), std::strerror(error));
  return 1;
}

// The file's data extents [begin, end), as the harness finds them; the whole file where the
// file system does not tell holes apart (every byte reads as data).
bool DataExtents(int fd, uint64_t size, std::vector<std::pair<uint64_t, uint64_t>>* extents) {
  extents->clear();
  off_t pos = 0;
  while (static_cast<uint64_t>(pos) < size) {
    const off_t data = lseek(fd, pos, SEEK_DATA);
    if (data < 0) return errno == ENXIO;  // no data past pos
    const off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return false;
    extents->emplace_back(data, hole);
    pos = hole;
  }
  return true;
}

bool Overlaps(const std::vector<std::pair<uint64_t, uint64_t>>& extents, uint64_t begin,
              uint64_t end) {
  return std::any_of(extents.begin(), extents.end(),
                     [&](const auto& e) { return e.first < end && begin < e.second; });
}

// Reads [offset, offset + out.size()) of the file, zeros past its end. False on a read error.
bool ReadBlock(int fd, uint64_t offset, uint64_t size, MutableByteView out) {
  std::fill(out.begin(), out.end(), uint8_t{0});
  const uint64_t want = std::min<uint64_t>(out.size(), size - offset);
  for (uint64_t done = 0; done < want;) {
    const ssize_t got = pread(fd, out.data() + done, want - done, offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0) errno = EIO;  // the file shrank under us
      return false;
    }
    done += static_cast<uint64_t>(got);
  }
  return true;
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
  if (error) return Fail(tree.string(), error.value());
  std::sort(files.begin(), files.end());

  const Compression c = *compression;
  const zfs::WritePolicy policy = zfs::DedupPolicyOf(Profile::kZfs23, VdevLayout{}, ashift);
  codec::Compressor compressor;
  std::vector<uint8_t> block_bytes, scratch;
  std::vector<std::pair<uint64_t, uint64_t>> extents;
  for (const std::filesystem::path& path : files) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail(path.string(), errno);
    struct stat st;
    if (fstat(fd, &st) != 0 || !DataExtents(fd, st.st_size, &extents)) {
      const int e = errno;
      close(fd);
      return Fail(path.string(), e);
    }
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    const zfs::RecordLayout layout = zfs::FileLayout(size, *recordsize);
    block_bytes.resize(layout.block_bytes);
    scratch.resize(layout.block_bytes);
    for (uint64_t i = 0; i < layout.blocks; ++i) {
      const uint64_t offset = i * layout.block_bytes;
      if (!Overlaps(extents, offset, offset + layout.block_bytes)) continue;  // never written
      if (!ReadBlock(fd, offset, size, block_bytes)) {
        const int e = errno;
        close(fd);
        return Fail(path.string(), e);
      }
      const codec::WrittenBlock w =
          codec::WriteZfsBlock(policy, c, block_bytes, IsAllZero(block_bytes), compressor, scratch);
      if (w.bytes.empty()) continue;  // a hole or an embedded block: no DDT entry
      const uint64_t word =
          ddt::ZfsChecksumWord0(ddt::ComputeFingerprint(ChecksumKind::kSha256, w.bytes));
      std::printf("%016" PRIx64 " %s %zu %s\n", word,
                  w.write.kind == zfs::BlockKind::kCompressed ? "compressed" : "stored",
                  w.bytes.size(), path.lexically_relative(tree).c_str());
    }
    close(fd);
  }
  return 0;
}
