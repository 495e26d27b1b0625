// The scan's read-ahead hints (io::File::WillNeed): the data of a file of several chunks is asked
// for before the workers read it, never a hole (its pages would be zeros in the page cache), and
// nothing is asked for under --max-rate (the kernel's reads would pass the throttle).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "engine/pipeline/scan.h"
#include "tests/util/forwarding_file_system.h"
#include "tests/util/test_util.h"

namespace zsim::pipeline {
namespace {

using Ranges = std::map<uint64_t, uint64_t>;  // begin -> end, disjoint and not touching

void Add(Ranges& ranges, uint64_t begin, uint64_t end) {
  auto it = ranges.upper_bound(begin);
  if (it != ranges.begin() && std::prev(it)->second >= begin) {
    --it;
    begin = it->first;
    end = std::max(end, it->second);
    it = ranges.erase(it);
  }
  while (it != ranges.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = ranges.erase(it);
  }
  ranges.emplace(begin, end);
}

// Records every hint, per path.
class HintRecordingFileSystem : public testing::ForwardingFileSystem {
 public:
  Result<std::unique_ptr<io::File>> Open(const std::string& path, bool follow) override {
    Result<std::unique_ptr<io::File>> f = ForwardingFileSystem::Open(path, follow);
    if (!f.ok()) return f;
    return std::unique_ptr<io::File>(new Recorded(std::move(*f), this, path));
  }
  Ranges HintsOf(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return hints_[path];
  }
  uint64_t hints() {
    std::lock_guard<std::mutex> lock(mu_);
    return count_;
  }

 private:
  class Recorded : public testing::ForwardingFile {
   public:
    Recorded(std::unique_ptr<io::File> f, HintRecordingFileSystem* fs, std::string path)
        : ForwardingFile(std::move(f)), fs_(fs), path_(std::move(path)) {}
    void WillNeed(uint64_t offset, uint64_t length) override {
      {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        ++fs_->count_;
        Add(fs_->hints_[path_], offset, offset + length);
      }
      ForwardingFile::WillNeed(offset, length);
    }

   private:
    HintRecordingFileSystem* fs_;
    std::string path_;
  };
  std::mutex mu_;
  std::map<std::string, Ranges> hints_;
  uint64_t count_ = 0;
};

// The data extents of a file as the file system reports them (SEEK_DATA / SEEK_HOLE).
Ranges DataOf(const std::filesystem::path& path) {
  Ranges data;
  const int fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  off_t pos = 0;
  while (pos < size) {
    const off_t begin = ::lseek(fd, pos, SEEK_DATA);
    if (begin < 0) break;
    const off_t end = ::lseek(fd, begin, SEEK_HOLE);
    Add(data, static_cast<uint64_t>(begin), static_cast<uint64_t>(end));
    pos = end;
  }
  ::close(fd);
  return data;
}

std::filesystem::path WriteSparse(const std::filesystem::path& path, uint64_t size,
                                  const std::vector<std::pair<uint64_t, uint64_t>>& extents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  uint64_t seed = 1;
  for (const auto& [offset, length] : extents) {
    const std::vector<uint8_t> bytes = testing::Xorshift64Bytes(seed++, length);
    EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
  }
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0);
  ::close(fd);
  return path;
}

ScanOptions Options(const std::filesystem::path& root) {
  ScanOptions o;
  o.paths = {root.string()};
  o.compressions = {Compression{CompressionAlgorithm::kLz4, 0}};
  o.threads = 2;
  return o;
}

TEST(ReadAheadTest, EveryDataByteOfALargeFileIsAskedForAndNoHole) {
  testing::TempDir tmp;
  // Data in the first chunk, one inside the third and a run over the last three; holes between.
  const std::filesystem::path image = WriteSparse(
      tmp.path() / "image.raw", 41 * M + 4096, {{0, 3 * M}, {18 * M, M + 512}, {30 * M, 11 * M}});
  const std::filesystem::path dense =
      tmp.WriteFile("dense.bin", testing::Xorshift64Bytes(99, 20 * M + 100));
  const Ranges image_data = DataOf(image);
  ASSERT_FALSE(image_data.empty());

  HintRecordingFileSystem fs;
  Result<ScanResult> r = RunScan(Options(tmp.path()), &fs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Exactly the data: where the file system keeps no holes (all data), the whole file.
  EXPECT_EQ(fs.HintsOf(image.string()), image_data);
  EXPECT_EQ(fs.HintsOf(dense.string()), (Ranges{{0, 20 * M + 100}}));

  // The figures do not depend on the hints.
  auto posix = io::PosixFileSystem();
  Result<ScanResult> plain = RunScan(Options(tmp.path()), posix.get());
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(r->results.size(), plain->results.size());
  EXPECT_EQ(r->results[0].psize, plain->results[0].psize);
  EXPECT_EQ(r->input.bytes_read, plain->input.bytes_read);
}

// Small files are asked for ahead of their turn, whole: each is made into a job, opened and
// hinted while the workers code the files before it; only the first (nothing before it to
// overlap with) is read without a hint.
TEST(ReadAheadTest, SmallFilesAreAskedForAheadOfTheirTurn) {
  testing::TempDir tmp;
  std::vector<std::filesystem::path> files;
  for (int f = 0; f < 40; ++f) {
    files.push_back(tmp.WriteFile(testing::NumberedName("f", f),
                                  testing::Xorshift64Bytes(uint64_t(f) + 1, 64 * 1024 + 100 * f)));
  }
  tmp.WriteFile("empty", {});
  HintRecordingFileSystem fs;
  Result<ScanResult> r = RunScan(Options(tmp.path()), &fs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->input.files, 41u);
  int hinted = 0;
  for (int f = 0; f < 40; ++f) {
    const Ranges hints = fs.HintsOf(files[size_t(f)].string());
    if (hints.empty()) continue;
    ++hinted;
    EXPECT_EQ(hints, (Ranges{{0, 64 * 1024 + 100 * uint64_t(f)}})) << f;
  }
  EXPECT_GE(hinted, 39);
  EXPECT_TRUE(fs.HintsOf((tmp.path() / "empty").string()).empty());
}

TEST(ReadAheadTest, NothingIsAskedForUnderAReadRate) {
  testing::TempDir tmp;
  tmp.WriteFile("dense.bin", testing::Xorshift64Bytes(97, 20 * M));
  HintRecordingFileSystem fs;
  ScanOptions o = Options(tmp.path());
  o.max_read_bytes_per_second = uint64_t{1} << 40;  // never waits, but holds
  Result<ScanResult> r = RunScan(o, &fs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->input.bytes_read, 20 * M);
  EXPECT_EQ(fs.hints(), 0u);
}

}  // namespace
}  // namespace zsim::pipeline
