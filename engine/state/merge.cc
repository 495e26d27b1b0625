#include "engine/state/merge.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <string>
#include <unordered_map>

#include "engine/estimate/codec_budget.h"
#include "engine/estimate/top_up.h"
#include "engine/state/breakdown_sample.h"
#include "engine/state/linked_files.h"
#include "engine/state/table_budget.h"
#include "engine/zfs/write_rules.h"

namespace zsim::state {
namespace {

std::string List(const std::vector<uint64_t>& v) {
  std::string s;
  for (uint64_t x : v) {
    if (!s.empty()) s.push_back(',');
    s.append(std::to_string(x));
  }
  return s;
}

bool Sampled(const ScanState& s) {
  if (s.options.sample_modulus > 1) return true;
  for (const RowState& r : s.rows) {
    if (r.table->sample_shift() != 0) return true;
  }
  return false;
}

Status Differ(const std::string& what, const std::string& a, const std::string& b,
              const std::string& use = "merge") {
  return Status::InvalidArgument("the scans differ in " + what + " (" + a + " and " + b +
                                 "): only scans made with the same " + what + " " + use);
}

// `from`'s breakdown rows and references into `into`'s, matched by name. Returns where `from`'s
// directory and extension rows went.
}  // namespace

bool ZeroLsizeKept(const BreakdownState& b) {
  for (const auto* rows : {&b.directories, &b.extensions}) {
    for (const BreakdownRowSums& r : *rows) {
      if (r.setting_zero_lsize.size() != r.setting_lsize.size()) return false;
    }
  }
  return true;
}

void KeepFirstRowOnly(BreakdownState* b) {
  std::map<BreakdownState::Content, uint64_t> contents;
  for (const auto& [content, copies] : b->contents) {
    BreakdownState::Content c = content;
    KeepFirst(&c.lsize);
    contents[c] += copies;
  }
  b->contents = std::move(contents);
  KeepFirst(&b->zero_blocks);
  KeepFirst(&b->zero_bytes);
  b->first_row_only = true;
}

namespace {

std::pair<std::vector<uint32_t>, std::vector<uint32_t>> MergeBreakdown(BreakdownState& into,
                                                                       const BreakdownState& from) {
  auto remap = [](std::vector<std::string>& names, std::vector<BreakdownRowSums>& rows,
                  const std::vector<std::string>& from_names,
                  const std::vector<BreakdownRowSums>& from_rows) {
    std::unordered_map<std::string, uint32_t> index;
    for (size_t i = 0; i < names.size(); ++i) index.emplace(names[i], static_cast<uint32_t>(i));
    std::vector<uint32_t> map(from_names.size());
    for (size_t i = 0; i < from_names.size(); ++i) {
      auto [it, inserted] = index.emplace(from_names[i], static_cast<uint32_t>(names.size()));
      if (inserted) {
        names.push_back(from_names[i]);
        rows.emplace_back();
      }
      map[i] = it->second;
      BreakdownRowSums& r = rows[it->second];
      r.files += from_rows[i].files;
      r.bytes += from_rows[i].bytes;
      r.lsize += from_rows[i].lsize;
      AddSums(&r.setting_lsize, from_rows[i].setting_lsize);
      AddSums(&r.setting_zero_lsize, from_rows[i].setting_zero_lsize);
    }
    return map;
  };
  // A part of format 18 or older kept no zero records per row: the union's are not known either.
  const bool zeros_kept = ZeroLsizeKept(into) && ZeroLsizeKept(from);
  const std::vector<uint32_t> dirs =
      remap(into.directory_names, into.directories, from.directory_names, from.directories);
  const std::vector<uint32_t> exts =
      remap(into.extension_names, into.extensions, from.extension_names, from.extensions);
  if (!zeros_kept) {
    for (auto* rows : {&into.directories, &into.extensions}) {
      for (BreakdownRowSums& r : *rows) r.setting_zero_lsize.clear();
    }
  }
  into.shift = std::max(into.shift, from.shift);
  const uint64_t mask = (uint64_t{1} << into.shift) - 1;
  std::erase_if(into.references,
                [&](const BreakdownState::Reference& r) { return (r.key.hi & mask) != 0; });
  for (const BreakdownState::Reference& r : from.references) {
    if ((r.key.hi & mask) != 0) continue;
    into.references.push_back(
        BreakdownState::Reference{r.key, dirs[r.directory], exts[r.extension], r.row});
  }
  // A state of format < 14 (or a merge with one) knows the first row only: both sides are taken
  // to that, or a file's content would not meet its copy's under the other's key.
  if (from.first_row_only && !into.first_row_only) KeepFirstRowOnly(&into);
  // At the coarser shift, settled below as the references are (which drops what it no longer
  // keeps of `into`'s; `from`'s are not even added).
  into.content_shift = std::max(into.content_shift, from.content_shift);
  for (const auto& [content, copies] : from.contents) {
    if (!ContentKept(content, into.content_shift)) continue;
    BreakdownState::Content c = content;
    if (into.first_row_only) KeepFirst(&c.lsize);
    into.contents[c] += copies;
  }
  // Per row; into the first row only when `into` holds no other.
  const auto add = [&](std::vector<uint64_t>& to, const std::vector<uint64_t>& v) {
    const size_t rows = into.first_row_only ? std::min<size_t>(v.size(), 1) : v.size();
    if (to.size() < rows) to.resize(rows, 0);
    for (size_t r = 0; r < rows; ++r) to[r] += v[r];
  };
  add(into.zero_blocks, from.zero_blocks);
  add(into.zero_bytes, from.zero_bytes);
  return {dirs, exts};
}

// Which rows of a merge are topped up (estimate/top_up.h), once `into` holds the union's tables,
// plan and levels. A row is, where a top-up takes its table (TopUpTakes) and both parts coded its
// blocks down to the budget of the union's unique bytes T: every sampled setting's level (the
// higher of the parts') is at most T, or at least the plan's P (its base is its own level either
// way), some level is at most T, and either T < P there (the merge lowers the base) or a part had
// the row topped (two parts topped where T = P). Its base is then T, as for one scan of both
// trees that tops the row up: a topped part and a part coded whole merge exact, as each was. It
// may rest on more blocks than that scan, which tops up only where the plan's level leaves fewer
// than kTopUpMinSample. Where a part had the row topped and the union does not, its record says
// why (its figures, no longer resting on its unique blocks, may be sampled again).
void MergeToppedRows(ScanState& into, const ScanState& from) {
  const ScanOptions& o = into.options;
  SamplingState& sampling = into.sampling;
  std::vector<uint64_t>& topped = sampling.topped_bytes;
  std::vector<uint64_t> other = from.sampling.topped_bytes;
  const size_t rows = into.rows.size(), settings = o.compressions.size();
  topped.resize(rows, 0);
  other.resize(rows, 0);
  const bool levels = sampling.adaptive && sampling.setting_levels.size() == rows * settings;
  const std::vector<int> plan =
      levels ? estimate::BudgetLevels(o, sampling.sampled, sampling.plan()) : std::vector<int>();
  for (size_t r = 0; r < rows; ++r) {
    const bool either = topped[r] != 0 || other[r] != 0;
    topped[r] = 0;
    const ddt::DedupTable& t = *into.rows[r].table;
    const char* why = nullptr;  // a part's topped row left
    if (!levels) {
      why = "merged: a part is not an adaptive scan";
    } else if (t.sample_shift() != 0 || t.overflowed()) {
      why = "merged: the union's dedup table is sampled (--sample or --max-memory)";
    } else if (!TopUpTakes(t)) {
      why = "merged: the union's table has more entries than a top-up takes (65,536)";
    } else {
      const uint64_t unique_bytes = ddt::UniqueBlocksOf(t).bytes;
      const std::vector<int> budget =
          estimate::UniqueBytesLevels(o, sampling.sampled, sampling.plan(), rows, r, unique_bytes);
      bool holds = true, rests = false, gains = false;
      for (size_t c = 0; c < settings; ++c) {
        if (!sampling.sampled[c]) continue;
        const size_t i = r * settings + c;
        const int level = sampling.setting_levels[i];
        if (level <= budget[c]) {
          rests = true;
          gains = gains || budget[c] < plan[i];
        } else if (level < plan[i]) {
          holds = false;
        }
      }
      if (holds && rests && (gains || either) && unique_bytes != 0) {
        topped[r] = unique_bytes;
      } else {
        why =
            "merged: a part's blocks were not coded down to the budget of the union's unique "
            "blocks";
      }
    }
    TopUpRecord& record = into.rows[r].top_up;
    if (either && topped[r] == 0 && record.left.empty()) record.left = why;
  }
  if (std::all_of(topped.begin(), topped.end(), [](uint64_t b) { return b == 0; })) {
    topped.clear();
  }
}

}  // namespace

std::string CompressionListText(const std::vector<Compression>& list, Profile profile) {
  if (list == AllCompressions(profile)) return "all";
  std::string s;
  for (const Compression& c : list) {
    if (!s.empty()) s.push_back(',');
    s.append(CompressionName(c));
  }
  return s;
}

Status CheckSameContent(const ScanOptions& x, const ScanOptions& y, const std::string& use) {
  if (x.volblocksize != y.volblocksize) {
    return Differ("volblocksize", x.volblocksize ? std::to_string(*x.volblocksize) : "none",
                  y.volblocksize ? std::to_string(*y.volblocksize) : "none", use);
  }
  if (!x.volblocksize && x.recordsizes != y.recordsizes) {
    return Differ("recordsizes", List(x.recordsizes), List(y.recordsizes), use);
  }
  if (x.compressions != y.compressions) {
    return Differ("compression lists", CompressionListText(x.compressions, x.profile),
                  CompressionListText(y.compressions, y.profile), use);
  }
  if (x.profile != y.profile) {
    return Differ("profile", std::string(ProfileName(x.profile)),
                  std::string(ProfileName(y.profile)), use);
  }
  if (x.checksum != y.checksum) {
    return Differ("checksum", x.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128",
                  y.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128", use);
  }
  if (x.exact != y.exact)
    return Differ("--exact", x.exact ? "on" : "off", y.exact ? "on" : "off", use);
  if (!zfs::SameBlockWrites(zfs::DedupPolicyOf(x.profile, x.vdev, x.ashift),
                            zfs::DedupPolicyOf(y.profile, y.vdev, y.ashift))) {
    // "the scans differ in compression rounding unit (ashift 12 disk and ashift 9 disk)": the
    // unit is the sector, or a dRAID's data width; the layouts say which.
    return Differ("compression rounding unit",
                  "ashift " + std::to_string(x.ashift) + " " + VdevName(x.vdev),
                  "ashift " + std::to_string(y.ashift) + " " + VdevName(y.vdev), use);
  }
  return Status::Ok();
}

Status CheckMergeable(const ScanState& a, const ScanState& b) {
  const ScanOptions& x = a.options;
  const ScanOptions& y = b.options;
  ZSIM_RETURN_IF_ERROR(CheckSameContent(x, y, "merge"));
  if (a.code_kind != b.code_kind) {
    // Five kinds since format 10: name both, the older first.
    const auto what = [](CodeKind k) -> std::string {
      switch (k) {
        case CodeKind::kRounded:
          return "psize rounded for its pool (state format 6 or older)";
        case CodeKind::kRaw:
          return "the compressors' output under the scan's budget (format 7, or a --since scan "
                 "from one)";
        case CodeKind::kLeastBudget:
          return "the compressors' output with the least budget it fits but for zstd (format 8)";
        case CodeKind::kLeastBudgetZstd:
          return "the compressors' output with the least budget it fits, zstd's too where early "
                 "abort does not apply (format 9)";
        case CodeKind::kEarlyAbort:
          break;
      }
      return "the compressors' output with the least budget it fits, and zstd early abort's "
             "(format 10 or later)";
    };
    const CodeKind older = std::min(a.code_kind, b.code_kind);
    const CodeKind newer = std::max(a.code_kind, b.code_kind);
    return Status::InvalidArgument("one state holds " + what(older) + " and the other " +
                                   what(newer) + ": they do not merge; scan the older part again");
  }
  if (KeyColumns(x, a.code_kind, a.written_keys) != KeyColumns(y, b.code_kind, b.written_keys)) {
    return Status::InvalidArgument(
        std::string("one state keeps the DDT keys of compressed blocks (state format 12) and the "
                    "other does not (") +
        (a.written_keys ? "the second" : "the first") +
        ", format 11 or older, or a --since scan from one): they do not merge; scan the older "
        "part again");
  }
  if ((Sampled(a) || Sampled(b)) &&
      (x.vdev != y.vdev || x.ashift != y.ashift || x.copies != y.copies)) {
    return Differ("allocation of a sampled table (--sample, --max-memory)",
                  VdevName(x.vdev) + " copies " + std::to_string(x.copies),
                  VdevName(y.vdev) + " copies " + std::to_string(y.copies));
  }
  if ((x.sample_modulus > 1) != (y.sample_modulus > 1)) {
    // The codecs' samples are of two kinds (state/scan_state.h SamplingState::adaptive).
    return Status::InvalidArgument(
        std::string("the ") + (x.sample_modulus > 1 ? "first" : "second") +
        " state was scanned with --sample 1/" +
        std::to_string(std::max(x.sample_modulus, y.sample_modulus)) +
        " and the other without: "
        "under --sample the costlier codecs run on the table's sample of the blocks, without it "
        "on a sample sized by the tree, and neither holds the other's codes; scan the other part "
        "again with --sample");
  }
  if (a.sampling.sampled != b.sampling.sampled || a.sampling.anchors != b.sampling.anchors) {
    // The same options (checked above), another plan: one part was saved by a zsim that sampled
    // other codecs (lz4 alone was sampled before session 55).
    return Status::InvalidArgument(
        "one state was saved by a zsim that sampled other codecs (lz4 alone, say, before it was "
        "always coded whole, or lzjb beside gzip before it anchored them): its codes would be "
        "read as the other's plan; scan that part again");
  }
  if (a.rows.size() != b.rows.size() || a.sampling.adaptive != b.sampling.adaptive ||
      a.sampling.setting_levels.size() != b.sampling.setting_levels.size()) {
    return Status::InvalidArgument("the scans' sampling plans differ: they do not merge");
  }
  return Status::Ok();
}

MergeCounts Merge(ScanState& into, const ScanState& from) {
  // The links' blocks by key: the tables change (a coarser sample renumbers entries).
  LinkKeys keys = KeysOfLinks(into);
  LinkKeys from_keys = KeysOfLinks(from);
  const bool plan_added = into.sampling.plan_scope != from.sampling.plan_scope;
  // Files both states hold, each once (a merged state may hold one several times, already in
  // its own files_counted_twice): only meaningful when one host scanned both.
  uint64_t shared = 0;
  if (!into.host.empty() && into.host == from.host) {
    auto a = into.file_ids.cbegin();
    auto b = from.file_ids.cbegin();
    while (a != into.file_ids.end() && b != from.file_ids.end()) {
      if (*a < *b) {
        ++a;
      } else if (*b < *a) {
        ++b;
      } else {
        ++shared;
        const uint64_t id = *a;
        while (a != into.file_ids.end() && *a == id) ++a;
        while (b != from.file_ids.end() && *b == id) ++b;
      }
    }
  }
  if (into.host != from.host) into.host = into.host + "+" + from.host;
  std::vector<uint64_t> ids;
  ids.reserve(into.file_ids.size() + from.file_ids.size());
  std::merge(into.file_ids.begin(), into.file_ids.end(), from.file_ids.begin(), from.file_ids.end(),
             std::back_inserter(ids));
  into.file_ids = std::move(ids);
  ScanOptions& o = into.options;
  const uint32_t paths_before = static_cast<uint32_t>(o.paths.size());
  o.paths.insert(o.paths.end(), from.options.paths.begin(), from.options.paths.end());
  o.sample_modulus = std::max(o.sample_modulus, from.options.sample_modulus);
  // Every block at the coarser level went through the sampled codecs in both parts.
  into.sampling.complete_level =
      std::max(into.sampling.complete_level, from.sampling.complete_level);
  into.sampling.occurrence_level =
      std::max(into.sampling.occurrence_level, from.sampling.occurrence_level);
  // The budget's plan covers both trees (estimate/codec_budget.h), unless both parts sized the
  // same paths (SamplingState::plan_scope).
  if (into.sampling.plan_scope != from.sampling.plan_scope) {
    into.sampling.planned_bytes += from.sampling.planned_bytes;
    into.sampling.planned_files += from.sampling.planned_files;
    into.sampling.plan_scope ^= from.sampling.plan_scope;
  } else {
    into.sampling.planned_bytes =
        std::max(into.sampling.planned_bytes, from.sampling.planned_bytes);
    into.sampling.planned_files =
        std::max(into.sampling.planned_files, from.sampling.planned_files);
  }
  // A class of at most the smaller count of blocks in the union is whole in both parts.
  into.sampling.rare_class_blocks =
      std::min(into.sampling.rare_class_blocks, from.sampling.rare_class_blocks);
  // And per (row, setting): the higher of the two levels is complete in both.
  for (size_t i = 0; i < into.sampling.setting_levels.size(); ++i) {
    into.sampling.setting_levels[i] =
        std::max(into.sampling.setting_levels[i], from.sampling.setting_levels[i]);
  }
  const size_t settings = o.compressions.size();
  // A table nearing its shards' limit keeps a coarser sample, never a truncated one.
  FitTablesToShards(into.rows, &from.rows);
  for (size_t r = 0; r < into.rows.size(); ++r) {
    RowState& a = into.rows[r];
    const RowState& b = from.rows[r];
    a.table->RaiseSampleShift(
        std::max({a.table->sample_shift(), b.table->sample_shift(),
                  static_cast<uint32_t>(std::countr_zero(o.sample_modulus))}));
    a.table->Merge(*b.table);
    a.distinct->Merge(*b.distinct);
    a.sparse_holes += b.sparse_holes;
    a.occurrences.Merge(b.occurrences);
    for (size_t c = 0; c < settings; ++c) {
      for (const auto& [shape, count] : b.files[c]) a.files[c][shape] += count;
      a.codec_seconds[c] += b.codec_seconds[c];
      a.codec_bytes[c] += b.codec_bytes[c];
    }
    a.top_up.blocks += b.top_up.blocks;
    a.top_up.bytes += b.top_up.bytes;
    a.top_up.seconds += b.top_up.seconds;
    if (a.top_up.left.empty()) a.top_up.left = b.top_up.left;
  }
  MergeToppedRows(into, from);
  for (const auto& [dir, count] : from.directories) into.directories[dir] += count;
  const auto [dirs, exts] = MergeBreakdown(into.breakdown, from.breakdown);

  // What each part's paths hold: a partial part's as its sizing walk counted it, a complete one's
  // its files (those it could not read, or read in part, included) and their bytes.
  const auto named = [](const ScanState& s, bool bytes) {
    if (s.partial) return bytes ? s.input.bytes_named : s.input.files_named;
    return bytes ? s.input.bytes_logical + UnreadBytes(s.input.errors)
                 : s.input.files + FilesOfKnownSize(s.input.errors);
  };
  const uint64_t named_files = named(into, false) + named(from, false);
  const uint64_t named_bytes = named(into, true) + named(from, true);
  InputSummary& in = into.input;
  const InputSummary& fin = from.input;
  in.paths.insert(in.paths.end(), fin.paths.begin(), fin.paths.end());
  in.files += fin.files;
  in.directories += fin.directories;
  in.bytes_logical += fin.bytes_logical;
  in.bytes_data += fin.bytes_data;
  in.bytes_data_known = in.bytes_data_known && fin.bytes_data_known;
  in.bytes_read += fin.bytes_read;
  for (const auto& [reason, count] : fin.skipped) in.skipped[reason] += count;
  in.errors.insert(in.errors.end(), fin.errors.begin(), fin.errors.end());
  in.files_counted_twice += fin.files_counted_twice;
  for (const std::string& note : fin.notes) {
    if (std::find(in.notes.begin(), in.notes.end(), note) == in.notes.end()) {
      in.notes.push_back(note);
    }
  }
  std::stable_sort(in.errors.begin(), in.errors.end(),
                   [](const PathError& p, const PathError& q) { return p.path < q.path; });
  // File records (the base of --since) merge when both parts kept them: `from`'s references
  // are looked up in the merged table by key; `into`'s name the same entries still (an exact
  // table only grows, unless it had to be sampled).
  bool records = into.has_records && from.has_records;
  for (const RowState& r : into.rows) records = records && r.table->sample_shift() == 0;
  if (records) {
    into.records.reserve(into.records.size() + from.records.size());
    // A part without inputs of its own (a distributed scan's rank: engine/mpi/reduce.h) scanned
    // `into`'s: its records name those.
    const uint32_t root_offset = from.options.paths.empty() ? 0 : paths_before;
    for (const FileRecord& f : from.records) {
      FileRecord& g = into.records.emplace_back(f);
      g.root += root_offset;
      // Records that keep keys (FileRecord::keys) need no lookup.
      for (size_t r = 0; r < g.refs.size(); ++r) {
        for (uint32_t& ref : g.refs[r]) {
          ref = into.rows[r].table->Find(from.rows[r].table->KeyOf(ref));
        }
      }
    }
  } else {
    into.records.clear();
  }
  into.has_records = records;
  // What the paths of a partial merge hold: a complete part's whole, a partial one's as its
  // sizing walk counted it.
  if (into.partial || from.partial) {
    into.input.named_complete = (!into.partial || into.input.named_complete) &&
                                (!from.partial || from.input.named_complete);
    into.input.files_named = named_files;
    into.input.bytes_named = named_bytes;
  }
  into.partial = into.partial || from.partial;
  into.seconds += from.seconds;
  // Files with several names both held count once (state/linked_files.h).
  const size_t first_other = into.links.size();
  for (const LinkedFile& f : from.links) {
    LinkedFile& g = into.links.emplace_back(f);
    g.directory = dirs[f.directory];
    g.extension = exts[f.extension];
  }
  keys.insert(keys.end(), std::make_move_iterator(from_keys.begin()),
              std::make_move_iterator(from_keys.end()));
  const LinkMerge links = ResolveLinks(into, first_other, std::move(keys), plan_added);
  // The union may keep more breakdown references and contents than one scan of it would: settle
  // as that scan does, once the linked files counted twice are out.
  SettleBreakdownSample(&into.breakdown);
  SettleContentSample(&into.breakdown);
  MergeCounts counts;
  counts.linked = links.resolved;
  counts.changed = links.changed;
  // A linked file changed between the scans is among the shared ones too: counted once, as
  // changed.
  counts.shared = shared - std::min(shared, links.resolved + links.changed);
  // Kept in the state, so that every report of it says so (not only this merge's stderr): each
  // count beyond a file's first, so that any grouping of the same merges gives the same figure.
  into.input.files_counted_twice += counts.shared + counts.changed;
  return counts;
}

}  // namespace zsim::state
