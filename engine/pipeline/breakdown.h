// engine/pipeline/breakdown.h
//
// BreakdownCollector: where the space goes by directory and by file type, for every evaluated
// setting (block size x compression: accumulated per (row, setting), so two collectors' figures
// add up per key), and the dedup that needs no DDT (whole-file duplicates, all-zero blocks, of
// the first block size).
//
// lsize and file counts per row are exact. psize and duplicate bytes per row come from sampled
// references: a reference is kept when its fingerprint falls in 1/M of the key space (bits of
// the key, so the choice is the same whatever the thread count); M starts at 1 and doubles
// whenever more than `max_sampled_refs` references are kept, dropping the half a doubled M
// would not keep. At the end each kept reference is looked up in its row's dedup table and lends
// M x psize (per setting), and M x lsize x (refcount - 1) / refcount as duplicate bytes, to its
// rows. A sampled codec (estimate/) has no code for some blocks: a row's psize for it is the
// psize of the references it has codes for, scaled by their share of the row's lsize.
// Below the cap (262144 references, 4 MiB of lists: 32 GiB at 128K records) every figure is
// exact and independent of scheduling; above it, M depends on when the cap was crossed.
//
// Thread safety: Group/AddFile from the serial stages; Sample from any thread through a
// per-thread Sampler; Finish after the pipeline has drained.

#ifndef ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_
#define ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "zsim/scan_result.h"

namespace zsim::pipeline {

struct FileGroups {
  uint32_t directory = 0;
  uint32_t extension = 0;
};

class BreakdownCollector {
 public:
  // `rows` block sizes x `settings` compressions; whole-file duplicates are sized by the first
  // row's lsize in setting `content_setting` (the first that compresses: zero records are holes).
  BreakdownCollector(size_t rows, size_t settings, size_t content_setting,
                     size_t max_sampled_refs = size_t{1} << 18);

  // Group ids of a file (path under `root`, the input path it was found under).
  FileGroups Groups(const std::string& root, const std::string& path);

  // One reference to a block of row `row`. Any thread; `local` is the caller's own list.
  struct Sampled {
    ddt::Fingerprint key;
    FileGroups groups;
    uint32_t row = 0;
  };
  void Sample(const ddt::Fingerprint& key, FileGroups groups, uint32_t row,
              std::vector<Sampled>* local);

  // A finished file: its st_size, lsize per (row, setting) (non-hole blocks x block size, row
  // major), whole content hash of the first row (for whole-file duplicates) and whether any
  // record holds non-zero bytes (all-zero files are never counted as whole-file duplicates:
  // compression makes them holes).
  void AddFile(FileGroups groups, uint64_t bytes, const std::vector<uint64_t>& lsize,
               ddt::Fingerprint content, bool has_data);
  // All-zero data blocks of the first row.
  void AddZeroBlocks(uint64_t blocks, uint64_t bytes);

  // Fills result->breakdowns (one per (row, setting), in ScanResult::results order: row major)
  // and the dedup sources. `tables[r]` and `block_bytes[r]` are row r's; `compressions` the
  // settings. REQUIRES: no Sample is running; `locals` holds every thread's list.
  void Finish(const std::vector<const ddt::DedupTable*>& tables,
              const std::vector<uint64_t>& block_bytes,
              const std::vector<Compression>& compressions,
              const std::vector<const std::vector<Sampled>*>& locals, ScanResult* result) const;

 private:
  bool Kept(const ddt::Fingerprint& key, uint32_t shift) const {
    return (key.hi & ((uint64_t{1} << shift) - 1)) == 0;
  }

  size_t rows_, settings_, content_setting_;
  size_t max_sampled_refs_;
  std::atomic<uint32_t> shift_{0};  // M = 1 << shift
  std::atomic<uint64_t> kept_{0};   // references kept under the current shift (approximate)

  struct Row {
    uint64_t files = 0, bytes = 0;
    std::vector<uint64_t> lsize;  // per (row, setting)
  };
  std::vector<std::string> directory_names_, extension_names_;  // id -> name
  std::unordered_map<std::string, uint32_t> directory_ids_, extension_ids_;
  std::vector<Row> directories_, extensions_;
  struct ContentKey {
    uint64_t lo, hi, lsize;
    bool operator<(const ContentKey& o) const {
      return std::tie(lo, hi, lsize) < std::tie(o.lo, o.hi, o.lsize);
    }
  };
  std::map<ContentKey, uint64_t> contents_;  // whole-file content -> copies
  uint64_t zero_blocks_ = 0, zero_bytes_ = 0;
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_
