#include "engine/finish/finish.h"

#include <algorithm>
#include <future>
#include <string>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/top_up.h"
#include "engine/finish/block_sizes.h"
#include "engine/finish/breakdown_report.h"
#include "engine/finish/known_codes.h"
#include "engine/finish/settled_codes.h"
#include "engine/finish/tally.h"
#include "engine/zfs/profile.h"
#include "engine/zfs/write_rules.h"

namespace zsim::finish {
namespace {

// The scan's options with the report's applied.
ScanOptions Effective(const ScanOptions& scanned, const ReportOptions& r) {
  ScanOptions o = scanned;
  o.vdev = r.vdev;
  o.ashift = r.ashift;
  o.copies = r.copies;
  o.profile = r.profile;
  if (r.ddt_format) {
    o.ddt_format = r.ddt_format;
  } else if (r.profile != scanned.profile) {
    // As a scan with this profile resolves it (pipeline/scan.h ResolveOptions).
    o.ddt_format = zfs::RulesFor(r.profile).has_fast_dedup ? DdtFormat::kFast : DdtFormat::kLegacy;
  }
  if (r.ram_bytes != 0) o.ram_bytes = r.ram_bytes;
  return o;
}

std::string Where(const ReportOptions& r) {
  return "profile " + std::string(ProfileName(r.profile)) + ", ashift " + std::to_string(r.ashift) +
         ", vdev " + VdevName(r.vdev);
}

// A state of rounded codes (format 6 and older): psize under the scan's profile and rounding
// unit, which the report must keep.
Status CheckRoundedCodes(const ScanOptions& o, const ReportOptions& r) {
  if (r.profile != o.profile) {
    return Status::InvalidArgument(
        "--profile " + std::string(ProfileName(r.profile)) + " differs from the scan's (" +
        std::string(ProfileName(o.profile)) +
        "): this state (format 6 or older) holds psize as the scan's profile stores it; scan "
        "again (states from this zsim keep what the compressors produced and answer any "
        "profile)");
  }
  if (!zfs::SameBlockWrites(zfs::DedupPolicyOf(o.profile, o.vdev, o.ashift),
                            zfs::DedupPolicyOf(r.profile, r.vdev, r.ashift))) {
    return Status::InvalidArgument(
        "--ashift " + std::to_string(r.ashift) + " with --vdev " + VdevName(r.vdev) +
        " changes the unit compressed blocks are rounded to in profile " +
        std::string(ProfileName(o.profile)) + " (the scan assumed ashift " +
        std::to_string(o.ashift) + ", vdev " + VdevName(o.vdev) +
        "): this state (format 6 or older) holds psize for that unit only; report with an "
        "allocation of the same sector size (disk, mirror or raidz at ashift " +
        std::to_string(o.ashift) + "), or scan again");
  }
  return Status::Ok();
}

// Whether the scan read any all-zero block: its tables keep every all-zero key, sampled or not,
// so a table holding an entry that is not a unique block holds one.
bool ReadZeroBlocks(const state::ScanState& s) {
  for (const state::RowState& row : s.rows) {
    if (row.table->entries() > ddt::UniqueBlocksOf(*row.table).blocks) return true;
  }
  return false;
}

// A state of raw or least-budget codes: what the compressors produced answers any profile and
// geometry, except where zfs::ZeroBlockMismatch and zfs::ZstdEarlyAbortMismatch say (zero blocks
// with compression=off; zstd early abort, tested at the lsizes the table holds), and for raw codes
// (zstd; every codec in format 7) under another budget where the output does not tell
// (CodeSettler::CountUnknown).
Status CheckRawCodes(const state::ScanState& s, const ReportOptions& r) {
  const ScanOptions& o = s.options;
  const zfs::WritePolicy scan = zfs::DedupPolicyOf(o.profile, o.vdev, o.ashift);
  const zfs::WritePolicy report = zfs::DedupPolicyOf(r.profile, r.vdev, r.ashift);
  const auto refuse = [&](Compression c, const char* why,
                          const char* instead = "the scan's profile and allocation unit") {
    return Status::InvalidArgument(Where(r) + " cannot be answered for " + CompressionName(c) +
                                   " from this state (scanned with " + Where(ReportOptionsOf(o)) +
                                   "): " + why + "; report with " + instead +
                                   ", or scan again with these");
  };
  // How all-zero blocks are written decides nothing where the scan read none (ReadZeroBlocks).
  // (A default scan's list holds off: its states were refused under another side of 2.3.3's
  // rule whatever they held.) Only off's rule differs between profiles: read once at most.
  bool zstd = false;
  for (const Compression& c : o.compressions) {
    if (const char* why = zfs::ZeroBlockMismatch(scan, report, c); why && ReadZeroBlocks(s)) {
      return refuse(c, why, "a profile that writes them as the scan's does");
    }
    zstd = zstd || c.algorithm == CompressionAlgorithm::kZstd;
  }
  // zstd early abort applies from 128K on: only the lsizes the tables hold there matter (a file
  // smaller than the recordsize has one block of its size rounded up to 512), whatever kind of
  // code their entries keep. States from format 10 keep its least budget (CodeKind::kEarlyAbort):
  // every profile and budget is answered.
  if (zstd && s.code_kind != state::CodeKind::kEarlyAbort) {
    constexpr uint64_t kFrom = 128u << 10;
    std::vector<bool> held;  // by lsize / 512
    for (const state::RowState& row : s.rows) {
      if (row.block_bytes < kFrom) continue;
      row.table->ForEach([&](const ddt::EntryView& e) {
        if (e.lsize < kFrom || e.is_zero) return;
        const size_t i = static_cast<size_t>(e.lsize / zfs::kMinBlockBytes);
        if (i >= held.size()) held.resize(i + 1, false);
        held[i] = true;
      });
    }
    for (size_t i = 0; i < held.size(); ++i) {
      if (!held[i]) continue;
      for (const Compression& c : o.compressions) {
        if (const char* why = zfs::ZstdEarlyAbortMismatch(scan, report, c, i * zfs::kMinBlockBytes))
          return refuse(c, why);
      }
    }
  }
  // Blocks whose outcome under the report's budget the state does not know.
  const ScanOptions effective = Effective(o, r);
  for (const state::RowState& row : s.rows) {
    const CodeSettler settler(s.code_kind, o, effective, row.block_bytes);
    if (!settler.may_be_unknown()) continue;
    const std::vector<uint64_t> unknown = settler.CountUnknown(*row.table);
    for (size_t c = 0; c < unknown.size(); ++c) {
      if (unknown[c] == 0) continue;
      return Status::InvalidArgument(
          Where(r) + " cannot be answered from this state (scanned with " +
          Where(ReportOptionsOf(o)) + "): " + std::to_string(unknown[c]) +
          " unique block(s) of recordsize " + std::to_string(row.block_bytes / 1024) + "K under " +
          CompressionName(o.compressions[c]) +
          " were compressed under another budget than these options give, and whether they "
          "fit it is not known (compressors give up short of a budget's end); report with the "
          "scan's profile and allocation unit, or scan again with these");
    }
  }
  return Status::Ok();
}

// The codec budget's levels follow the rounding unit (estimate::NearAnchorsLowerLevels): a scan
// at 512 bytes codes a near anchor's follower on half the blocks of a row that a scan at a
// coarser unit codes whole. A report's figures are those of a scan with its options where the
// state holds every code such a scan would: its levels at or above the scan's (the tally takes
// the report's levels, KnownCodeLevels). Else refused: those blocks were never coded.
Status CheckBudgetLevels(const state::ScanState& s, const ScanOptions& effective) {
  const state::SamplingState& sampling = s.sampling;
  if (!sampling.adaptive) return Status::Ok();
  const std::vector<int> scanned = estimate::RowBudgetLevels(
      s.options, sampling.sampled, sampling.plan(), sampling.topped_bytes);
  const std::vector<int> report = estimate::RowBudgetLevels(effective, sampling.sampled,
                                                            sampling.plan(), sampling.topped_bytes);
  const size_t settings = s.options.compressions.size();
  for (size_t i = 0; i < scanned.size() && i < report.size(); ++i) {
    if (report[i] >= scanned[i]) continue;
    const size_t row = settings ? i / settings : 0;
    const std::vector<uint64_t> rows = estimate::RowBlockSizes(s.options);
    return Status::InvalidArgument(
        Where(ReportOptionsOf(effective)) + " codes " +
        CompressionName(s.options.compressions[i % settings]) + " on every unique block of " +
        "recordsize " + std::to_string(row < rows.size() ? rows[row] / 1024 : 0) +
        "K, but this state (scanned with " + Where(ReportOptionsOf(s.options)) +
        ", where compressed blocks round to 512 bytes) coded it on a sample, estimated on a "
        "cheaper level of its codec; report with an allocation unit of 512 bytes (ashift 9) or "
        "profile v23, or scan again with these options");
  }
  return Status::Ok();
}

// A file's indirect blocks per level (state::FileShape::indirects) were counted over ranges of
// the scan's indirect block (zfs/indirect_ranges.h); a profile with another indirect block size
// (v23: 16K, 2.1 and later: 128K) needs them counted over its own ranges, which the counts do
// not tell. They decide nothing where the file is dense or holds one data block (zfs/metadata.h
// AddFile then needs no count): only files with holes between several blocks are refused.
Status CheckIndirectCounts(const state::ScanState& s, const ReportOptions& r) {
  const ScanOptions& o = s.options;
  const int scan_shift = zfs::RulesFor(o.profile).indirect_block_shift;
  const int report_shift = zfs::RulesFor(r.profile).indirect_block_shift;
  if (scan_shift == report_shift) return Status::Ok();
  for (const state::RowState& row : s.rows) {
    for (const auto& setting : row.files) {
      for (const auto& [shape, count] : setting) {
        // The counts over the non-hole blocks, and over those and the zero blocks the no-dedup
        // write path writes.
        const uint64_t blocks = shape.blocks;
        const auto holes_between = [blocks](const std::vector<uint64_t>& counts, uint64_t written) {
          return !counts.empty() && written > 1 && written < blocks;
        };
        if (!holes_between(shape.indirects, shape.non_hole) &&
            !holes_between(shape.written_indirects, shape.non_hole + shape.zero_blocks)) {
          continue;
        }
        return Status::InvalidArgument(
            Where(r) + " cannot be answered from this state (scanned with " +
            Where(ReportOptionsOf(o)) + "): it counted the indirect blocks of files with holes " +
            "over " + std::to_string((uint64_t{1} << scan_shift) >> 10) +
            "K indirect blocks, and profile " + std::string(ProfileName(r.profile)) + " uses " +
            std::to_string((uint64_t{1} << report_shift) >> 10) +
            "K ones; report with a profile of the scan's indirect block size, or scan again "
            "with this one");
      }
    }
  }
  return Status::Ok();
}

bool TableSampled(const state::ScanState& s) {
  for (const state::RowState& r : s.rows) {
    if (r.table->sample_shift() != 0) return true;
  }
  return s.options.sample_modulus > 1;
}

// Whether topped row r was topped for a codec's interval only (estimate/interval_top_up.h): some
// sampled cell is at level 0 where the budget of the row's unique bytes is not, and none is at
// that budget below the plan's (what the top-up of rows of few unique blocks leaves).
bool ForInterval(const state::ScanState& s, size_t r) {
  const state::SamplingState& sampling = s.sampling;
  if (!sampling.adaptive) return false;
  const size_t settings = s.options.compressions.size();
  const std::vector<int> planned =
      estimate::BudgetLevels(s.options, sampling.sampled, sampling.plan());
  const std::vector<int> unique = estimate::RowBudgetLevels(s.options, sampling.sampled,
                                                            sampling.plan(), sampling.topped_bytes);
  bool whole = false;
  for (size_t c = 0; c < settings && c < sampling.sampled.size(); ++c) {
    const size_t i = r * settings + c;
    if (!sampling.sampled[c] || i >= planned.size() || i >= unique.size()) continue;
    const int level = sampling.LevelOf(r, c);
    if (level < planned[i] && level == unique[i]) return false;  // few unique blocks
    whole = whole || (level == 0 && unique[i] > 0);
  }
  return whole;
}

// The rows that ended topped up (a --since rescan may top a row up reading nothing again, a merge
// by its parts' codes), with what the top-up read again, and those it left, with why.
std::vector<TopUpSummary> TopUpSummaries(const state::ScanState& s) {
  std::vector<TopUpSummary> out;
  for (size_t r = 0; r < s.rows.size(); ++r) {
    const state::TopUpRecord& t = s.rows[r].top_up;
    const bool topped = r < s.sampling.topped_bytes.size() && s.sampling.topped_bytes[r] != 0;
    if (!topped && t.left.empty()) continue;
    out.push_back(TopUpSummary{s.rows[r].block_bytes, topped, t.blocks, t.bytes, t.seconds,
                               topped ? std::string() : t.left, topped && ForInterval(s, r)});
  }
  return out;
}

}  // namespace

ReportOptions ReportOptionsOf(const ScanOptions& o) {
  ReportOptions r;
  r.vdev = o.vdev;
  r.ashift = o.ashift;
  r.copies = o.copies;
  r.profile = o.profile;
  r.ddt_format = o.ddt_format;
  r.ram_bytes = o.ram_bytes;
  return r;
}

Status CheckReportOptions(const state::ScanState& s, const ReportOptions& r) {
  const ScanOptions& o = s.options;
  ScanOptions effective = Effective(o, r);
  if (effective.paths.empty()) effective.paths.push_back(".");  // a state needs no path
  if (s.code_kind == state::CodeKind::kRounded) ZSIM_RETURN_IF_ERROR(CheckRoundedCodes(o, r));
  ZSIM_RETURN_IF_ERROR(ValidateScanOptions(effective));
  if (s.code_kind != state::CodeKind::kRounded) ZSIM_RETURN_IF_ERROR(CheckRawCodes(s, r));
  ZSIM_RETURN_IF_ERROR(CheckIndirectCounts(s, r));
  ZSIM_RETURN_IF_ERROR(CheckBudgetLevels(s, effective));
  const bool allocation_changed =
      r.vdev != o.vdev || r.ashift != o.ashift || r.copies != o.copies || r.profile != o.profile;
  if (allocation_changed && TableSampled(s)) {
    return Status::InvalidArgument(
        "this state's dedup table was sampled (--sample or --max-memory): its estimates were "
        "calibrated for profile " +
        std::string(ProfileName(o.profile)) + ", vdev " + VdevName(o.vdev) + ", ashift " +
        std::to_string(o.ashift) + ", copies " + std::to_string(o.copies) +
        "; report with those, or scan without sampling to change them later");
  }
  return Status::Ok();
}

ScanResult Finish(const state::ScanState& s, const ReportOptions& r) {
  const ScanOptions options = Effective(s.options, r);
  const size_t settings = options.compressions.size();
  Tally tally(options, s.rows.size());
  // The written keys are the report's DDT keys where its pool pads an output as the scan's did.
  if (zfs::SamePsizeRounding(
          zfs::DedupPolicyOf(s.options.profile, s.options.vdev, s.options.ashift),
          zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift))) {
    tally.set_written_keys(state::KeyColumns(s.options, s.code_kind, s.written_keys));
  }

  ScanResult result;
  result.partial = s.partial;
  result.options = options;
  result.input = s.input;
  result.input.top_up = TopUpSummaries(s);
  // The sampled codecs' codes the histograms and breakdowns use (the same in every run), and
  // the block-size histograms, on a thread of their own: they only read the tables, as the
  // tally does meanwhile (a report of 10 million entries spends about a third of its time
  // there).
  // Every row's codes as the report's pool stores them.
  std::vector<CodeSettler> settlers;
  for (const state::RowState& rs : s.rows) {
    settlers.emplace_back(s.code_kind, s.options, options, rs.block_bytes);
  }
  std::vector<std::vector<int>> known_levels(s.rows.size());
  std::vector<std::vector<SettingResult>> sizes(s.rows.size(),
                                                std::vector<SettingResult>(settings));
  // std::async, not std::thread: if the tally throws (out of memory on a huge table) the
  // future's destructor waits for the histograms and the exception goes on, where a joinable
  // std::thread would end the process; an exception in the histograms reaches get().
  std::future<void> histograms = std::async(std::launch::async, [&] {
    for (size_t row = 0; row < s.rows.size(); ++row) {
      const state::RowState& rs = s.rows[row];
      known_levels[row] = KnownCodeLevels(options, s.sampling, row);
      FillBlockSizes(*rs.table, settlers[row], rs.block_bytes,
                     zfs::AllocationModel::For(options.vdev, options.ashift), options.copies,
                     known_levels[row], &sizes[row]);
    }
  });
  // The files' and directories' metadata meanwhile.
  for (size_t row = 0; row < s.rows.size(); ++row) {
    for (size_t c = 0; c < settings; ++c) {
      for (const auto& [shape, count] : s.rows[row].files[c]) tally.AddFiles(row, c, shape, count);
    }
  }
  for (const auto& [dir, count] : s.directories) tally.AddDirectories(dir, count);
  std::vector<std::vector<SettingResult>> outs;
  for (size_t row = 0; row < s.rows.size(); ++row) {
    const state::RowState& rs = s.rows[row];
    const bool occurrences = !rs.occurrences.sums.empty();
    outs.push_back(tally.Finish(row, rs.block_bytes, *rs.table, settlers[row], rs.sparse_holes,
                                s.sampling, *rs.distinct, occurrences ? &rs.occurrences : nullptr));
    if (settlers[row].differs_without_dedup()) {
      // 2.1 and 2.2 embed a block of 112 compressed bytes or less without dedup but never with
      // it (zfs/write_rules.h EmbedsOnlyWithoutDedup): the dataset's figures are a second
      // tally of the same table with its codes as dedup=off stores them, every estimate and
      // interval of its own; the DDT, pool_alloc and the dedup=on `used` stay the first's. The
      // occurrence sample (--sample 1/M) holds sizes as dedup=on stores them: the second tally
      // takes the kept entries' ratios instead, an estimate.
      std::vector<SettingResult> bare =
          tally.Finish(row, rs.block_bytes, *rs.table, settlers[row].WithoutDedup(),
                       rs.sparse_holes, s.sampling, *rs.distinct, nullptr);
      for (size_t c = 0; c < bare.size(); ++c) {
        SettingResult& with = outs.back()[c];
        bare[c].embedding_lost_with_dedup = with.used - std::min(with.used, bare[c].used);
        bare[c].compressratio_with_dedup = with.compressratio;
        bare[c].dedup = std::move(with.dedup);
        bare[c].pool_alloc = with.pool_alloc;
      }
      outs.back() = std::move(bare);
    }
  }
  histograms.get();
  for (size_t row = 0; row < s.rows.size(); ++row) {
    const state::RowState& rs = s.rows[row];
    std::vector<SettingResult>& out = outs[row];
    for (size_t c = 0; c < out.size(); ++c) {
      out[c].block_sizes = std::move(sizes[row][c].block_sizes);
      out[c].small_blocks = std::move(sizes[row][c].small_blocks);
      CalibrateBlockSizes(&out[c]);
    }
    for (size_t c = 0; c < out.size(); ++c) {
      out[c].codec_seconds = rs.codec_seconds[c];
      out[c].codec_bytes = rs.codec_bytes[c];
      result.results.push_back(std::move(out[c]));
    }
  }
  if (!s.rows.empty()) {
    std::vector<const ddt::DedupTable*> tables;
    std::vector<uint64_t> block_bytes;
    for (const state::RowState& rs : s.rows) {
      tables.push_back(rs.table.get());
      block_bytes.push_back(rs.block_bytes);
    }
    FinishBreakdowns(s.breakdown, tables, settlers, known_levels, block_bytes, options.compressions,
                     s.featured, &result);
    const zfs::WritePolicy policy =
        zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift);
    for (Breakdowns& b : result.breakdowns) {
      b.zero_written_without_dedup = zfs::ZeroBlockWrittenOnlyWithoutDedup(policy, b.compression);
    }
  }
  result.memory = state::StateMemory(s);
  result.seconds = s.seconds;
  return result;
}

}  // namespace zsim::finish
