#include "engine/finish/breakdown_report.h"

#include <algorithm>
#include <tuple>

namespace zsim::finish {
namespace {

constexpr size_t kMaxRows = 50;

bool Kept(const ddt::Fingerprint& key, uint32_t shift) {
  return (key.hi & ((uint64_t{1} << shift) - 1)) == 0;
}

}  // namespace

void FinishBreakdown(const state::BreakdownState& bd, const ddt::DedupTable& table, size_t setting,
                     ScanResult* result) {
  // Keys the table dropped (dedup sampling) cannot be looked up: sample at least as coarsely.
  const uint32_t shift = std::max(bd.shift, table.sample_shift());
  const uint64_t m = uint64_t{1} << shift;
  // Refcount, lsize and featured code of every sampled key, in a vector sorted by key.lo (a
  // few MB at the cap; hash maps of the same keys cost several times that).
  struct Info {
    uint64_t lo;
    uint64_t lsize;
    uint32_t refcount;
    ddt::PsizeCode code;
  };
  std::vector<Info> info;
  for (const state::BreakdownState::Reference& s : bd.references) {
    if (Kept(s.key, shift)) info.push_back(Info{s.key.lo, 0, 0, ddt::kPendingCode});
  }
  auto by_lo = [](const Info& a, const Info& b) { return a.lo < b.lo; };
  std::sort(info.begin(), info.end(), by_lo);
  info.erase(std::unique(info.begin(), info.end(),
                         [](const Info& a, const Info& b) { return a.lo == b.lo; }),
             info.end());
  if (!info.empty()) {
    table.ForEach([&](const ddt::EntryView& e) {
      if (!Kept(e.key, shift)) return;
      auto it = std::lower_bound(info.begin(), info.end(), Info{e.key.lo, 0, 0, 0}, by_lo);
      if (it == info.end() || it->lo != e.key.lo) return;
      it->lsize = e.lsize;
      it->refcount = e.refcount;
      it->code = e.codes[setting];
    });
  }
  auto rows_of = [](const std::vector<std::string>& names,
                    const std::vector<state::BreakdownRowSums>& sums) {
    std::vector<BreakdownRow> rows(names.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].name = names[i];
      rows[i].files = sums[i].files;
      rows[i].bytes = sums[i].bytes;
      rows[i].lsize = sums[i].lsize;
    }
    return rows;
  };
  std::vector<BreakdownRow> dirs = rows_of(bd.directory_names, bd.directories);
  std::vector<BreakdownRow> exts = rows_of(bd.extension_names, bd.extensions);
  for (const state::BreakdownState::Reference& s : bd.references) {
    if (!Kept(s.key, shift)) continue;
    const auto it = std::lower_bound(info.begin(), info.end(), Info{s.key.lo, 0, 0, 0}, by_lo);
    if (it == info.end() || it->lo != s.key.lo || it->refcount == 0) continue;
    const Info& in = *it;
    // Holes and embedded blocks never enter the DDT: no psize, nothing for dedup to remove.
    uint64_t psize = 0, dup = 0;
    if (!ddt::IsHoleCode(in.code) && !ddt::IsEmbeddedCode(in.code)) {
      psize = ddt::AllocatedPsize(in.code);
      dup = in.lsize * (in.refcount - 1) / in.refcount;
    }
    for (BreakdownRow* row : {&dirs[s.directory], &exts[s.extension]}) {
      row->psize += psize * m;
      row->duplicate_bytes += dup * m;
    }
  }
  auto finish = [](std::vector<BreakdownRow>* rows) {
    std::sort(rows->begin(), rows->end(), [](const BreakdownRow& a, const BreakdownRow& b) {
      return std::tie(b.duplicate_bytes, b.lsize, a.name) <
             std::tie(a.duplicate_bytes, a.lsize, b.name);
    });
    if (rows->size() > kMaxRows) rows->resize(kMaxRows);
  };
  finish(&dirs);
  finish(&exts);
  result->breakdown.directories = std::move(dirs);
  result->breakdown.extensions = std::move(exts);
  result->breakdown.sample_modulus = m;

  DedupSources& src = result->dedup_sources;
  for (const auto& [content, copies] : bd.contents) {
    if (copies < 2) continue;
    src.duplicate_files += copies - 1;
    src.duplicate_file_bytes += (copies - 1) * content.lsize;
  }
  src.zero_blocks = bd.zero_blocks;
  src.zero_block_bytes = bd.zero_bytes;
}

}  // namespace zsim::finish
