// tests/util/test_util.h
//
// Helpers shared by every test binary (STYLE.md §6): status assertions, data generators, temp
// trees, and where the golden data and the built binary are.

#ifndef ZSIM_TESTS_UTIL_TEST_UTIL_H_
#define ZSIM_TESTS_UTIL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "zsim/scan_options.h"
#include "zsim/status.h"

#define EXPECT_OK(expr) EXPECT_TRUE((expr).ok()) << (expr).ToString()
#define ASSERT_OK(expr) ASSERT_TRUE((expr).ok()) << (expr).ToString()

namespace zsim::testing {

// The xorshift64 stream of shared/golden/README.md (Marsaglia 13/7/17, words little-endian).
std::vector<uint8_t> Xorshift64Bytes(uint64_t seed, size_t n);

// splitmix64 of (seed, i): a uniformly spread 64-bit word, the stand-in for a fingerprint word in
// tests of what zsim samples or counts by key bits.
uint64_t SplitMix64(uint64_t seed, uint64_t i);

// Bytes with a compressibility dial: runs copied from earlier output with probability
// `match_fraction`, random bytes otherwise. Deterministic for a seed.
std::vector<uint8_t> GenerateBlock(size_t n, double match_fraction, uint64_t seed);

// Bytes drawn from `alphabet` values (entropy coding, which zstd has and lz4 lacks), with short
// copies (8 to 24 bytes) from anywhere before, started at each byte with probability
// `copy_fraction` (zstd-1's match finder misses more of them than zstd-3's). zstd's early abort
// (lz4, then zstd-1) decides such blocks near every budget. Deterministic for a seed.
std::vector<uint8_t> AlphabetBlock(size_t n, uint64_t alphabet, double copy_fraction,
                                   uint64_t seed);

// A fresh empty directory under the system temp dir, removed (recursively) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Writes `bytes` to path()/relative (parents created) and returns the full path.
  std::filesystem::path WriteFile(const std::string& relative, const std::vector<uint8_t>& bytes);

 private:
  std::filesystem::path path_;
};

// Runs the rest of a scope from `dir` and goes back where it was. A scan samples occurrences by
// the path below its input hashed with the input path as given, so a test that scans a
// temporary directory by its absolute (randomly named) path draws a new sample on every run;
// scanning a relative path from inside the directory draws the same one every time.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const std::filesystem::path& dir)
      : previous_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~ScopedWorkingDirectory() { std::filesystem::current_path(previous_); }
  ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
  ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;

 private:
  std::filesystem::path previous_;
};

// prefix followed by i ("f3"); built without operator+ on a literal, on which GCC 12's
// -Wrestrict misfires.
std::string NumberedName(const char* prefix, int i);

// Writes records `first` to `last` - 1, record(i) each, into `files` files under `tmp` named
// `prefix`0, `prefix`1, ..., each holding the next run of them (a tree of unique records, one
// per block).
void WriteRecordFiles(TempDir& tmp, const std::string& prefix, int first, int last, int files,
                      const std::function<std::vector<uint8_t>(int)>& record);

// A sample dataset's directory (samples/README.md): the one the environment variable
// `variable` (ZSIM_SAMPLE_<NAME>) names, else the one ctest's sample fixtures built under the
// build tree (samples-data/<name>, complete when its stamp file exists), else empty (skip).
std::filesystem::path SampleDir(const char* variable);

// Reads a whole file; fails the current test if it cannot.
std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path);

// a followed by b (command lines built from parts).
std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b);

// A file's contents as text; empty when it cannot be read (a test may check that it was not
// written).
std::string ReadText(const std::filesystem::path& path);

// tests/golden (data copied from shared/golden, see tests/golden/README.md).
std::filesystem::path GoldenDir();

// Where a state file's frames begin (state/state_file.h): after the magic, the format version,
// the text header and its checksum, and from format 23 the version's checksum. `size` if the
// bytes are too short to hold a header.
size_t StateFramesBegin(const uint8_t* bytes, size_t size);

}  // namespace zsim::testing

namespace zsim {

// Sizes and codecs many test files name, defined once: tests/CMakeLists.txt compiles the test
// files of a module together in batches, where two files' own definitions would collide.
inline constexpr uint64_t K = 1024, M = 1024 * K, G = 1024 * M;
inline constexpr Compression kLz4{CompressionAlgorithm::kLz4, 0};
inline constexpr Compression kLzjb{CompressionAlgorithm::kLzjb, 0};
inline constexpr Compression kZle{CompressionAlgorithm::kZle, 0};
inline constexpr Compression kGzip1{CompressionAlgorithm::kGzip, 1};

}  // namespace zsim

#endif  // ZSIM_TESTS_UTIL_TEST_UTIL_H_
