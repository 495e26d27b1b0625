#include "engine/state/since.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "engine/base/path_spelling.h"
#include "engine/estimate/sample_level.h"
#include "engine/state/merge.h"
#include "engine/state/rare_classes.h"

namespace zsim::state {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) {
    if (!s.empty()) s.append(", ");
    s.append(x);
  }
  return s;
}

}  // namespace

Status CheckSince(const ScanState& base, const ScanOptions& options) {
  if (!base.has_records) {
    return Status::InvalidArgument(
        "--since: the state holds no file records (a scan whose dedup table was sampled by "
        "--sample or --max-memory, an interrupted or distributed scan, or a merge with such a "
        "state): scan in full with --save, then use --since on that state");
  }
  if (base.partial) {
    return Status::InvalidArgument("--since: the state is of an interrupted scan: scan in full");
  }
  if (options.sample_modulus > 1) {
    return Status::InvalidArgument(
        "--since needs exact dedup tables: --sample 1/M keeps a sample of the keys, from which a "
        "changed file's blocks cannot be taken back out; scan without --sample");
  }
  for (const RowState& r : base.rows) {
    if (r.table->sample_shift() != 0) {
      return Status::InvalidArgument("--since: the state's dedup table is sampled: scan in full");
    }
  }
  // Spelled alike (a state saved before input paths were kept so may end in '/').
  auto spelled = [](std::vector<std::string> paths) {
    for (std::string& p : paths) p = WithoutTrailingSlashes(std::move(p));
    return paths;
  };
  if (spelled(base.options.paths) != spelled(options.paths)) {
    // The records name files by the paths as typed ("m2/a"), so "./m2" or "/abs/m2" for "m2"
    // would find none of them: where the spellings name the same directories from here, say so.
    bool same_places = base.options.paths.size() == options.paths.size();
    for (size_t i = 0; same_places && i < options.paths.size(); ++i) {
      std::error_code e1, e2;
      const auto a = std::filesystem::canonical(base.options.paths[i], e1);
      const auto b = std::filesystem::canonical(options.paths[i], e2);
      same_places = !e1 && !e2 && a == b;
    }
    return Status::InvalidArgument(
        "--since: the state was scanned from " + Join(base.options.paths) + ", not " +
        Join(options.paths) +
        (same_places ? ": the same places spelled another way; the state's records name files "
                       "by the paths as typed, so give them as the state has them (" +
                           Join(base.options.paths) + "), in that order"
                     : ": give the same input paths, in the same order"));
  }
  // Another profile, recordsizes, --exact and the like: named as such first, as if the lists
  // agreed (a profile that also differs is named, not a list it would refuse).
  ScanOptions with_its_list = options;
  with_its_list.compressions = base.options.compressions;
  if (Status same = CheckSameContent(base.options, with_its_list, "serve --since"); !same.ok()) {
    return same;
  }
  // Then another compression list, named with the flag that rescans as the state was scanned (a
  // state of an earlier zsim, whose default list held gzip-6, lzjb and zle too, meets the new
  // default when no --compression is given).
  if (base.options.compressions != options.compressions) {
    const std::string scanned =
        CompressionListText(base.options.compressions, base.options.profile);
    const bool defaulted = options.compressions == DefaultCompressions(options.profile);
    return Status::InvalidArgument(
        "--since: the state was scanned with --compression " + scanned + ", this scan evaluates " +
        CompressionListText(options.compressions, base.options.profile) +
        (defaulted ? " (the default list)" : "") + ": give --compression " + scanned +
        " to rescan as the state was scanned");
  }
  // The same options, but a state saved by a zsim whose sampling plan differed (before lz4
  // became the exact auxiliary of the LZ77 codecs, lz4 was sampled; before lzjb became the
  // auxiliary of a list without lz4 holding gzip or zstd-4 and up, lzjb was): its codes would be
  // read as the new plan's.
  const estimate::SamplingPlan plan = estimate::PlanSampling(options.compressions, options.exact);
  if (base.sampling.sampled != plan.sampled || base.sampling.anchors != plan.anchors) {
    return Status::InvalidArgument(
        "--since: the state was saved by a zsim that sampled other codecs: scan in full");
  }
  return Status::Ok();
}

bool Unchanged(const FileRecord& record, uint32_t root, uint64_t dev, uint64_t ino, uint64_t size,
               int64_t mtime_ns, int64_t ctime_ns) {
  return !record.failed && record.root == root && record.dev == dev && record.ino == ino &&
         record.size == size && record.mtime_ns == mtime_ns && record.ctime_ns == ctime_ns;
}

bool StampsVouch(int64_t mtime_ns, int64_t ctime_ns, int64_t scan_start_ns) {
  return std::max(mtime_ns, ctime_ns) < scan_start_ns;
}

void ReleaseBlocks(const FileRecord& record, std::vector<RowState>& rows) {
  for (size_t r = 0; r < rows.size() && r < record.refs.size(); ++r) {
    for (uint32_t ref : record.refs[r]) rows[r].table->Release(ref);
  }
}

void DropUnreferenced(std::vector<RowState>& rows, std::vector<FileRecord>& records,
                      std::vector<LinkedFile>& links) {
  for (size_t r = 0; r < rows.size(); ++r) {
    const ddt::DedupTable::RefMap map = rows[r].table->DropUnreferenced();
    // Records and links kept reference live entries only: none maps to kDroppedRef.
    auto remap = [&](std::vector<std::vector<uint32_t>>& refs) {
      if (r >= refs.size()) return;
      for (uint32_t& ref : refs[r]) ref = ddt::DedupTable::MapRef(map, ref);
    };
    for (FileRecord& f : records) remap(f.refs);
    for (LinkedFile& f : links) remap(f.refs);
  }
}

void RebuildDistinct(RowState& row, const std::function<uint64_t(uint64_t)>& aux_units) {
  row.distinct = std::make_unique<estimate::DistinctBlocks>(row.block_bytes);
  row.table->ForEach([&](const ddt::EntryView& e) {
    row.distinct->Add(e.key.lo, e.lsize, aux_units(e.lsize), e.is_zero);
  });
}

bool CodesCover(const ScanState& state) {
  const size_t settings = state.options.compressions.size();
  bool cover = true;
  for (size_t r = 0; r < state.rows.size() && cover; ++r) {
    // The rare classes a full scan codes whole (a kept entry's old scan saw its class larger).
    const RareClasses rare(*state.rows[r].table, state.sampling, state.options, r);
    if (!rare.complete()) return false;
    state.rows[r].table->ForEach([&](const ddt::EntryView& e) {
      for (size_t c = 0; c < settings; ++c) {
        if (!state.sampling.sampled[c] || e.codes[c] != ddt::kPendingCode) continue;
        if (EstimateReadsCode(state.sampling, r, rare, e, c)) cover = false;
      }
    });
  }
  return cover;
}

}  // namespace zsim::state
