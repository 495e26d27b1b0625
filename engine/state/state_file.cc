#include "engine/state/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/base/temp_files.h"
#include "engine/state/frame_stream.h"
#include "engine/state/state_frames.h"

namespace zsim::state {
namespace {

constexpr char kMagic[8] = {'Z', 'S', 'I', 'M', 'S', 'T', 'A', 'T'};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) {
    if (!s.empty()) s.push_back(',');
    s.append(x);
  }
  return s;
}

// The text header: what a person needs to know of the file.
std::string HeaderText(const ScanState& s) {
  const ScanOptions& o = s.options;
  std::vector<std::string> sizes, codecs;
  if (o.volblocksize) {
    sizes.push_back(std::to_string(*o.volblocksize));
  } else {
    for (uint64_t r : o.recordsizes) sizes.push_back(std::to_string(r));
  }
  for (const Compression& c : o.compressions) codecs.push_back(CompressionName(c));
  std::string t = "zsim " ZSIM_VERSION_STRING " scan state\n";
  t += (o.volblocksize ? "volblocksize " : "recordsizes ") + Join(sizes) + "\n";
  t += "compressions " + Join(codecs) + "\n";
  t += "profile " + std::string(ProfileName(o.profile)) + "\n";
  t +=
      std::string("checksum ") + (o.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128") + "\n";
  t += "sampling " + std::string(o.exact ? "exact" : "sampled-codecs") + " 1/" +
       std::to_string(o.sample_modulus) + "\n";
  t += "inputs " + Join(o.paths) + "\n";
  return t;
}

}  // namespace

Status CheckSavePath(const std::string& path) {
  if (path.empty())
    return Status::InvalidArgument("--save needs a file name, e.g. --save scan.zstate");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("--save " + path + " is a directory: give a file name");
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::InvalidArgument("--save " + path + ": the directory " + dir.string() +
                                   " does not exist");
  }
  // Whether a file can be created there is proven before a scan by the command line's check
  // (cli/output_file.h CheckCreatable), which creates one as --html's does; at the end, by the
  // write itself.
  return Status::Ok();
}

namespace {

// Magic, version and the text header: what precedes the frames.
// From format 23 a second checksum of the text header follows the first, seeded with the format
// version, so that a damaged version word fails it ("corrupt") instead of reading as a format
// another zsim wrote. The first stays of the text alone: a zsim of an older format checks it, then
// names the version it cannot read. Formats after 23 keep both.
uint64_t VersionSum(const std::string& text, uint32_t version) {
  return XXH3_64bits_withSeed(text.data(), text.size(), version);
}

std::string HeadBytes(const ScanState& state) {
  const std::string text = HeaderText(state);
  std::string head(kMagic, sizeof kMagic);
  const uint32_t version = kStateFormatVersion, len = static_cast<uint32_t>(text.size());
  const uint64_t sum = XXH3_64bits(text.data(), text.size());
  const uint64_t version_sum = VersionSum(text, version);
  head.append(reinterpret_cast<const char*>(&version), 4);
  head.append(reinterpret_cast<const char*>(&len), 4);
  head.append(text);
  head.append(reinterpret_cast<const char*>(&sum), 8);
  head.append(reinterpret_cast<const char*>(&version_sum), 8);
  return head;
}

}  // namespace

std::string EncodeState(const ScanState& state, bool keep_keys) {
  std::string bytes = HeadBytes(state);
  FrameWriter w(&bytes);
  internal::PutState(w, state, !keep_keys);
  w.Finish();  // appending to a string does not fail
  return bytes;
}

Status SaveState(const ScanState& state, const std::string& path, uint64_t* bytes) {
  ZSIM_RETURN_IF_ERROR(CheckSavePath(path));
  const std::string tmp = TempPathBeside(path, ".tmp." + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("cannot create " + tmp, errno);
  // Removed by a second Ctrl-C's abrupt exit too, until renamed or removed here.
  const TempFileRegistration registered(tmp);
  auto fail = [&](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  const std::string head = HeadBytes(state);
  for (size_t done = 0; done < head.size();) {
    const ssize_t w = ::write(fd, head.data() + done, head.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return fail(Status::FromErrno("cannot write " + tmp, errno));
    done += static_cast<size_t>(w);
  }
  FrameWriter w(fd);
  internal::PutState(w, state, /*resolve_keys=*/true);
  const Status written = w.Finish();
  if (!written.ok()) return fail(written);
  if (::fsync(fd) != 0) return fail(Status::FromErrno("cannot sync " + tmp, errno));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Status::FromErrno("cannot close " + tmp, errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::FromErrno("cannot rename " + tmp + " to " + path, err);
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself made durable
    ::close(dfd);
  }
  if (bytes) *bytes = head.size() + w.bytes_written();
  return Status::Ok();
}

namespace {

// Reads magic, version and text header through `read` (n bytes into p, false when short), then
// the frames through `reader`. `name` prefixes every message.
template <typename ReadFn>
Result<ScanState> Parse(ReadFn read, FrameReader& reader, const std::string& name, bool verify,
                        bool keyed) {
  char magic[sizeof kMagic];
  uint32_t version = 0, len = 0;
  if (!read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    return Status::InvalidArgument(name +
                                   " is not a zsim state file (written by zsim scan --save)");
  }
  if (!read(&version, 4) || !read(&len, 4) || len > (1u << 20)) {
    return Status::Corruption(name + " is truncated or corrupt: its header is incomplete");
  }
  std::string text(len, '\0');
  uint64_t sum = 0;
  if (!read(text.data(), len) || !read(&sum, 8)) {
    return Status::Corruption(name + " is truncated: its header is incomplete");
  }
  if (verify && XXH3_64bits(text.data(), text.size()) != sum) {
    return Status::Corruption(name + " is corrupt: its header fails its checksum");
  }
  if (version >= 23) {
    uint64_t version_sum = 0;
    if (!read(&version_sum, 8)) {
      return Status::Corruption(name + " is truncated: its header is incomplete");
    }
    if (verify && VersionSum(text, version) != version_sum) {
      return Status::Corruption(name + " is corrupt: its format version fails its checksum");
    }
  }
  if (version > kStateFormatVersion || version < kOldestReadableVersion) {
    const std::string writer = text.substr(0, text.find('\n'));
    return Status::InvalidArgument(
        name + " has state format version " + std::to_string(version) + " (" + writer +
        "); this zsim (" ZSIM_VERSION_STRING ") reads versions " +
        std::to_string(kOldestReadableVersion) + " to " + std::to_string(kStateFormatVersion) +
        ": report it with the zsim that wrote it, or scan again");
  }
  ScanState s;
  internal::GetState(reader, s, version, keyed);
  const Status end = reader.End();
  if (!end.ok()) return Status::Corruption(name + " is " + end.message());
  return s;
}

}  // namespace

Result<ScanState> LoadState(const std::string& path) {
  // O_NONBLOCK: a fifo without a writer would block the open forever. Only a regular file is a
  // state file (a fifo, a device or a directory is refused at once); for it the flag changes
  // nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::FromErrno("cannot open the state file " + path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument("the state file " + path +
                                   " is not a regular file (a state is written by zsim scan "
                                   "--save)");
  }
  FrameReader reader(fd);
  auto read = [&](void* p, size_t n) {
    auto* b = static_cast<uint8_t*>(p);
    while (n > 0) {
      const ssize_t r = ::read(fd, b, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      b += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  Result<ScanState> s = Parse(read, reader, path, true, /*keyed=*/false);
  ::close(fd);
  return s;
}

Result<ScanState> ParseState(ByteView bytes, bool verify_checksums, bool keep_keys) {
  size_t pos = 0;
  auto read = [&](void* p, size_t n) {
    if (bytes.size() - pos < n) return false;
    std::memcpy(p, bytes.data() + pos, n);
    pos += n;
    return true;
  };
  // The header is read first; the frames start where it ends.
  char magic[sizeof kMagic];
  uint32_t version = 0, len = 0;
  size_t header_end = 0;
  // The text, its checksum and, from format 23, the version's (HeadBytes).
  if (read(magic, sizeof magic) && read(&version, 4) && read(&len, 4)) {
    const size_t sums = version >= 23 ? 16 : 8;
    if (bytes.size() - pos >= size_t{len} + sums) header_end = pos + len + sums;
  }
  pos = 0;
  FrameReader reader(bytes.subspan(std::min(header_end, bytes.size())), verify_checksums);
  return Parse(read, reader, "the state", verify_checksums, keep_keys);
}

}  // namespace zsim::state
