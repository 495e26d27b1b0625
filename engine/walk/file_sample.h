// engine/walk/file_sample.h
//
// A bounded, deterministic sample of a walk's files, for the cost probe
// (pipeline/cost_probe.h): a file is kept when the level of its path's hash is at or above the
// sample's level, which rises (dropping the files below it) whenever more than `capacity` files
// are kept. Each file of the walk is kept with probability 2^-level, whatever order the walk's
// threads offered them in: the sample is a function of the tree only (its order aside: Take
// sorts it by path). By path, not by size: a database's many files of one size (8 KiB pages,
// 1 GiB segments) would be kept or left all together. So above the capacity a copy is kept
// without its twin (the probe then takes both for unique).
//
// Thread safety: Offer and level may be called from several threads at once (level is then a
// hint: a file below it is not kept); Take once no Offer runs.

#ifndef ZSIM_ENGINE_WALK_FILE_SAMPLE_H_
#define ZSIM_ENGINE_WALK_FILE_SAMPLE_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace zsim::walk {

struct SampledFile {
  std::string path;
  uint64_t size = 0;
};

// The files a sample keeps at most before raising its level.
inline constexpr size_t kFileSampleCapacity = 16384;

// The level of a file: the trailing zero bits of its path's hash (half of all paths are at level
// 0, a quarter at level 1, ...).
int FileLevel(std::string_view path);

class FileSample {
 public:
  explicit FileSample(size_t capacity = kFileSampleCapacity) : capacity_(capacity) {}

  // Offers a batch of files (one lock per batch).
  void Offer(std::vector<SampledFile> files);

  // The files kept, sorted by path.
  std::vector<SampledFile> Take();
  // Every file of the walk at this level or above is kept: each with probability 2^-level.
  int level() const { return level_.load(std::memory_order_relaxed); }

 private:
  size_t capacity_;
  std::mutex mu_;
  std::atomic<int> level_{0};  // written under mu_; read without it as a hint
  std::vector<SampledFile> kept_;
};

}  // namespace zsim::walk

#endif  // ZSIM_ENGINE_WALK_FILE_SAMPLE_H_
