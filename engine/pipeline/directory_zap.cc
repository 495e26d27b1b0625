#include "engine/pipeline/directory_zap.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "engine/codec/lz4_zfs.h"
#include "engine/zfs/microzap.h"

namespace zsim::pipeline {
namespace {

zfs::DirentType DirentTypeOf(io::FileType type) {
  switch (type) {
    case io::FileType::kDirectory:
      return zfs::DirentType::kDirectory;
    case io::FileType::kSymlink:
      return zfs::DirentType::kSymlink;
    case io::FileType::kBlockDevice:
      return zfs::DirentType::kBlockDevice;
    case io::FileType::kCharDevice:
      return zfs::DirentType::kCharDevice;
    case io::FileType::kFifo:
      return zfs::DirentType::kFifo;
    case io::FileType::kSocket:
      return zfs::DirentType::kSocket;
    case io::FileType::kRegular:
    case io::FileType::kUnknown:  // the directory did not say: the common case
      break;
  }
  return zfs::DirentType::kRegular;
}

}  // namespace

uint64_t MicrozapLz4Bytes(std::span<const io::DirEntry> entries) {
  uint64_t longest = 0;
  for (const io::DirEntry& e : entries) longest = std::max<uint64_t>(longest, e.name.size());
  if (!zfs::IsMicrozap(entries.size(), longest)) return 0;
  std::vector<zfs::MicrozapEntry> names;
  names.reserve(entries.size());
  for (const io::DirEntry& e : entries) names.push_back({e.name, DirentTypeOf(e.type)});
  const std::vector<uint8_t> block = zfs::MicrozapImage(std::move(names));
  // The compressor's whole output, whatever budget a pool would give it: the metadata model
  // decides from its length what the pool keeps (zfs::AcceptCompressed, with the profile's d_len).
  std::vector<uint8_t> out(block.size());
  codec::Lz4ZfsCompressor lz4;
  const std::optional<size_t> n =
      lz4.Compress(ByteView(block.data(), block.size()), MutableByteView(out.data(), out.size()));
  return n ? *n : block.size();
}

}  // namespace zsim::pipeline
