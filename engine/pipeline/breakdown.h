// engine/pipeline/breakdown.h
//
// BreakdownCollector: collects, during the scan, where the space goes by directory and by file
// type for every setting (lsize per (row, setting), references of every row), and the dedup that
// needs no DDT (whole-file duplicates, all-zero blocks), into a state::BreakdownState
// (finish/breakdown_report.h reports it).
//
// lsize and file counts per row are exact. psize and duplicate bytes per row come from sampled
// references: a reference is kept when its fingerprint falls in 1/M of the key space (bits of
// the key, state/breakdown_sample.h). M starts at 1 and doubles once more than
// state::kBreakdownMaxRefs references have been counted under the current M, dropping the half a
// doubled M would not keep; the count only ever holds references actually kept, so M never
// passes the M the whole input settles on, and MoveInto settles it exactly. The kept references
// are therefore the same whatever the thread count, the order or the timing. At the end each
// kept reference is looked up in the dedup table and lends M x psize, and M x lsize x
// (refcount - 1) / refcount as duplicate bytes, to its rows.
//
// Whole-file contents are kept alike, by their hash (state::SettleContentSample): all of them up
// to state::kBreakdownMaxContents distinct ones under state::kWholeContentBytes; past that the
// shift rises and the contents it no longer keeps are dropped, so memory stays bounded on a tree
// of billions of files. Larger contents are all kept.
//
// Thread safety: Group/AddFile from the serial stages; Sample from any thread through a
// per-thread Local; MoveInto after the pipeline has drained.

#ifndef ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_
#define ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/breakdown_sample.h"
#include "engine/state/scan_state.h"
#include "zsim/scan_result.h"

namespace zsim::pipeline {

struct FileGroups {
  uint32_t directory = 0;
  uint32_t extension = 0;
};

class BreakdownCollector {
 public:
  explicit BreakdownCollector(size_t max_sampled_refs = state::kBreakdownMaxRefs,
                              size_t max_contents = state::kBreakdownMaxContents);

  // Group ids of a file (path under `root`, the input path it was found under).
  FileGroups Groups(const std::string& root, const std::string& path);

  // One reference to a block of row `row` (every row is sampled: each setting gets its
  // breakdown). Any thread; `local` is the caller's own.
  struct Sampled {
    ddt::Fingerprint key;
    FileGroups groups;
    uint32_t row = 0;
  };
  struct Local {
    std::vector<Sampled> refs;
    uint32_t shift = 0;  // the shift `refs` were last filtered for
    size_t counted = 0;  // how many of `refs` the shared count holds under `shift`
  };
  void Sample(const ddt::Fingerprint& key, FileGroups groups, uint32_t row, Local* local);

  // A finished file: its bytes in the figures (st_size; for a file read in part, `whole` false,
  // the bytes of its chunks that were, and it is not counted in `files`), the featured setting's
  // lsize per row (non-hole blocks x block size; the first is the breakdown rows'), the lsize of
  // every (row, setting) (row major) and the all-zero records each stores as holes
  // (state::BreakdownRowSums::setting_zero_lsize), whole content hash (for whole-file duplicates)
  // and whether any record holds non-zero bytes (all-zero files are never counted as whole-file
  // duplicates: compression makes them holes).
  void AddFile(FileGroups groups, uint64_t bytes, const std::vector<uint64_t>& lsize,
               const std::vector<uint64_t>& setting_lsize,
               const std::vector<uint64_t>& setting_zero_lsize, ddt::Fingerprint content,
               bool has_data, bool whole);
  // All-zero data blocks of row `row`.
  void AddZeroBlocks(size_t row, uint64_t blocks, uint64_t bytes);

  // Hands what was collected to the state (rows by name, the kept references, contents).
  // REQUIRES: no Sample is running; `locals` holds every thread's list.
  void MoveInto(const std::vector<const Local*>& locals, state::BreakdownState* out);

 private:
  bool Kept(const ddt::Fingerprint& key, uint32_t shift) const {
    return (key.hi & ((uint64_t{1} << shift) - 1)) == 0;
  }

  // The shift (M = 1 << shift) in the top 16 bits; below, how many kept references the lists
  // have counted under it (never more than they hold: see Sample).
  static constexpr int kShiftBits = 48;
  static constexpr uint64_t kCountMask = (uint64_t{1} << kShiftBits) - 1;
  size_t max_sampled_refs_;
  size_t max_contents_;
  std::atomic<uint64_t> shift_and_count_{0};
  std::mutex rows_mu_;  // guards directories_, extensions_ and contents_

  struct Row {
    uint64_t files = 0, bytes = 0, lsize = 0;
    std::vector<uint64_t> setting_lsize;       // per (row, setting)
    std::vector<uint64_t> setting_zero_lsize;  // per (row, setting)
  };
  std::vector<std::string> directory_names_, extension_names_;  // id -> name
  std::unordered_map<std::string, uint32_t> directory_ids_, extension_ids_;
  std::vector<Row> directories_, extensions_;
  std::map<state::BreakdownState::Content, uint64_t> contents_;  // whole-file content -> copies
  uint32_t content_shift_ = 0;   // contents_ keeps those state::ContentKept under it
  size_t sampled_contents_ = 0;  // those of contents_ under state::kWholeContentBytes
  std::vector<uint64_t> zero_blocks_, zero_bytes_;  // per row
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_BREAKDOWN_H_
