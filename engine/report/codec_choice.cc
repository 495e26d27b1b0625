#include "engine/report/codec_choice.h"

#include <algorithm>

#include "engine/report/advice.h"
#include "engine/report/codec_speed.h"

namespace zsim::report {
namespace {

bool IsOff(const SettingResult& s) { return s.compression.algorithm == CompressionAlgorithm::kOff; }

// A sampled codec whose sample is too small to rest a choice on: its compressratio's interval
// wider than +-kUnsettledHalfWidth (a costly codec under --compression all's shared cap coded
// none or a few of a row's blocks: 1M zstd-18 read "194.44x (1.00x-194.45x)" on a 25 MB tree
// and was recommended). Shown in the table with its interval, never chosen over a settled one.
constexpr double kUnsettledHalfWidth = 0.10;
bool Unsettled(const SettingResult& s) {
  if (!s.ci95) return false;
  const auto [lo, hi] = *s.ci95;
  return hi + lo <= 0 || (hi - lo) / (hi + lo) > kUnsettledHalfWidth;
}

// Whether setting i at `block_bytes` may be chosen: compressing, and settled unless no setting
// of the block size is.
bool Candidate(const std::vector<SettingResult>& rs, size_t i, uint64_t block_bytes) {
  if (rs[i].recordsize != block_bytes || IsOff(rs[i])) return false;
  if (!Unsettled(rs[i])) return true;
  for (const SettingResult& s : rs) {
    if (s.recordsize == block_bytes && !IsOff(s) && !Unsettled(s)) return false;
  }
  return true;
}

// The compressing setting at `block_bytes` that stores least, -1 when none compresses.
int SmallestCompressedIndex(const std::vector<SettingResult>& rs, uint64_t block_bytes) {
  int best = -1;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (!Candidate(rs, i, block_bytes)) continue;
    if (best < 0 || rs[i].used < rs[size_t(best)].used) best = int(i);
  }
  return best;
}

// A measured speed decides between two codecs only where one is at least this many times the
// other's (FastestIndex).
constexpr double kClearlySlower = 2.0;

// Cost rank when speed was not measured: lz4 and zle are cheapest, zstd decompresses far faster
// than gzip at similar ratios.
int CostRank(CompressionAlgorithm a) {
  switch (a) {
    case CompressionAlgorithm::kLz4:
      return 0;
    case CompressionAlgorithm::kZle:
      return 1;
    case CompressionAlgorithm::kLzjb:
      return 2;
    case CompressionAlgorithm::kZstd:
      return 3;
    case CompressionAlgorithm::kGzip:
      return 4;
    default:
      return 5;
  }
}

}  // namespace

bool IsCheapCodec(CompressionAlgorithm a) {
  return a != CompressionAlgorithm::kOff && CostRank(a) <= CostRank(CompressionAlgorithm::kLzjb);
}

int CheapIndex(const std::vector<SettingResult>& rs, uint64_t block_bytes) {
  for (CompressionAlgorithm a : {CompressionAlgorithm::kLz4, CompressionAlgorithm::kLzjb}) {
    for (size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].recordsize == block_bytes && rs[i].compression.algorithm == a) return int(i);
    }
  }
  return -1;
}

int FastestIndex(const std::vector<SettingResult>& rs, const std::vector<int>& candidates) {
  auto by_rank = [&](int x, int y) {
    const SettingResult& a = rs[size_t(x)];
    const SettingResult& b = rs[size_t(y)];
    const int ra = CostRank(a.compression.algorithm), rb = CostRank(b.compression.algorithm);
    return ra != rb ? ra < rb : a.compression.level < b.compression.level;
  };
  double fastest = 0;
  bool timed = true;
  for (int i : candidates) {
    const double speed = CodecBytesPerSecond(rs[size_t(i)]);
    timed &= speed > 0;
    fastest = std::max(fastest, speed);
  }
  if (!timed) return *std::min_element(candidates.begin(), candidates.end(), by_rank);
  // Measured speeds vary from run to run by some 10-20%: the ranking decides between codecs
  // within kClearlySlower of the fastest. (By speed alone zstd-14 and zstd-15, as fast as each
  // other, were advised in turn by two scans of the same tree: the MPI suite's one-process and
  // two-rank reports differed in one run of seven.)
  std::vector<int> quick;
  for (int i : candidates) {
    if (CodecBytesPerSecond(rs[size_t(i)]) * kClearlySlower >= fastest) quick.push_back(i);
  }
  return *std::min_element(quick.begin(), quick.end(), by_rank);
}

int StrongestWorthwhileIndex(const std::vector<SettingResult>& rs, uint64_t block_bytes) {
  const int smallest = SmallestCompressedIndex(rs, block_bytes);
  if (smallest < 0) return -1;
  const double limit = double(rs[size_t(smallest)].used) * (1.0 + kCodecTie);
  std::vector<int> near;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (Candidate(rs, i, block_bytes) && double(rs[i].used) <= limit) near.push_back(int(i));
  }
  return FastestIndex(rs, near);
}

int PickCompression(const std::vector<SettingResult>& rs, uint64_t block_bytes) {
  const int strong = StrongestWorthwhileIndex(rs, block_bytes);
  if (strong < 0) {  // only "off" evaluated
    for (size_t i = 0; i < rs.size(); ++i) {
      if (rs[i].recordsize == block_bytes) return int(i);
    }
    return -1;
  }
  const int cheap = CheapIndex(rs, block_bytes);
  if (cheap < 0) return strong;
  const double cheap_used = double(rs[size_t(cheap)].used);
  return double(rs[size_t(strong)].used) <= cheap_used * (1.0 - kStrongerCodecGain) ? strong
                                                                                    : cheap;
}

}  // namespace zsim::report
