#include "tests/util/test_util.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

namespace zsim::testing {

std::vector<uint8_t> Xorshift64Bytes(uint64_t seed, size_t n) {
  std::vector<uint8_t> out(n);
  uint64_t x = seed;
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    for (size_t b = 0; b < 8 && i + b < n; ++b) out[i + b] = static_cast<uint8_t>(x >> (8 * b));
  }
  return out;
}

std::vector<uint8_t> GenerateBlock(size_t n, double match_fraction, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<uint8_t> out;
  out.reserve(n);
  while (out.size() < n) {
    if (out.size() >= 64 && coin(rng) < match_fraction) {
      const size_t len = 4 + rng() % 60;
      const size_t dist = 1 + rng() % std::min<size_t>(out.size(), 4096);
      for (size_t i = 0; i < len && out.size() < n; ++i) out.push_back(out[out.size() - dist]);
    } else {
      out.push_back(static_cast<uint8_t>(rng()));
    }
  }
  return out;
}

std::vector<uint8_t> AlphabetBlock(size_t n, uint64_t alphabet, double copy_fraction,
                                   uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::vector<uint8_t> out;
  out.reserve(n);
  while (out.size() < n) {
    if (out.size() >= 64 && coin(rng) < copy_fraction) {
      const size_t from = rng() % (out.size() - 32);
      const size_t len = 8 + rng() % 17;
      for (size_t i = 0; i < len && out.size() < n; ++i) out.push_back(out[from + i]);
    } else {
      out.push_back(static_cast<uint8_t>(rng() % alphabet));
    }
  }
  return out;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "zsim-test-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp failed";
    std::abort();
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions a test may have removed, so removal cannot fail half way.
  for (auto it = std::filesystem::recursive_directory_iterator(
           path_, std::filesystem::directory_options::skip_permission_denied, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                   std::filesystem::perm_options::add, ec);
    }
  }
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::WriteFile(const std::string& relative,
                                         const std::vector<uint8_t>& bytes) {
  const std::filesystem::path full = path_ / relative;
  std::filesystem::create_directories(full.parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << full;
  return full;
}

std::vector<uint8_t> ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string NumberedName(const char* prefix, int i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

void WriteRecordFiles(TempDir& tmp, const std::string& prefix, int first, int last, int files,
                      const std::function<std::vector<uint8_t>(int)>& record) {
  for (int f = 0; f < files; ++f) {
    std::vector<uint8_t> data;
    for (int i = first + f * (last - first) / files; i < first + (f + 1) * (last - first) / files;
         ++i) {
      const std::vector<uint8_t> r = record(i);
      data.insert(data.end(), r.begin(), r.end());
    }
    std::string name = prefix;
    name += std::to_string(f);  // not prefix + ...: GCC 12's -Wrestrict misfires on it
    tmp.WriteFile(name, data);
  }
}

std::filesystem::path GoldenDir() { return ZSIM_GOLDEN_DIR; }

size_t StateFramesBegin(const uint8_t* bytes, size_t size) {
  if (size < 16) return size;
  uint32_t version = 0, text = 0;
  std::memcpy(&version, bytes + 8, 4);
  std::memcpy(&text, bytes + 12, 4);
  const size_t begin = 16 + size_t{text} + (version >= 23 ? 16 : 8);
  return std::min(begin, size);
}

uint64_t SplitMix64(uint64_t seed, uint64_t i) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + i;
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::filesystem::path SampleDir(const char* variable) {
  const char* dir = std::getenv(variable);
  if (dir != nullptr && *dir != '\0') return std::filesystem::path(dir);
  std::string name = std::string(variable).substr(std::string("ZSIM_SAMPLE_").size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::filesystem::path built = std::filesystem::path(ZSIM_SAMPLES_DATA_DIR) / name;
  return std::filesystem::exists(built / ".zsim-sample") ? built : std::filesystem::path();
}

}  // namespace zsim::testing
