#include "engine/estimate/codec_cost.h"

namespace zsim::estimate {

double NominalCodecBytesPerSecond(const Compression& c) {
  constexpr double M = 1e6;
  switch (c.algorithm) {
    case CompressionAlgorithm::kOff:
      return 0;
    case CompressionAlgorithm::kLz4:
      return 700 * M;
    case CompressionAlgorithm::kLzjb:
      return 500 * M;
    case CompressionAlgorithm::kZle:
      return 2000 * M;
    case CompressionAlgorithm::kGzip:
      return c.level <= 1 ? 90 * M : c.level <= 5 ? 60 * M : c.level == 6 ? 40 * M : 15 * M;
    case CompressionAlgorithm::kZstd:
      return c.level <= 0    ? 600 * M
             : c.level <= 1  ? 400 * M
             : c.level <= 3  ? 250 * M
             : c.level <= 6  ? 120 * M
             : c.level <= 9  ? 60 * M
             : c.level <= 15 ? 25 * M
                             : 6 * M;
  }
  return 100 * M;
}

double NominalSecondsPerByte(const std::vector<Compression>& settings,
                             const std::vector<bool>& which) {
  double seconds = 0;
  for (size_t c = 0; c < settings.size() && c < which.size(); ++c) {
    const double speed = NominalCodecBytesPerSecond(settings[c]);
    if (which[c] && speed > 0) seconds += 1 / speed;
  }
  return seconds;
}

}  // namespace zsim::estimate
