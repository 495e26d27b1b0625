#include "engine/report/diff_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "engine/base/size_suffix.h"
#include "engine/report/decision.h"
#include "engine/zfs/nicenum.h"

namespace zsim::report {
namespace {

using nlohmann::json;

// One figure of one setting, old and new.
struct Figure {
  const char* name;
  double old_value, new_value;
  bool is_bytes;  // printed as a size, else as a ratio or count
  bool is_ratio;
  bool is_saved = false;  // a saved fraction of the reports' base (decision.h SettingSpace)
};

// The DDT's RAM as the report gives it (its decision's ddt_ram_bytes): the format in force, its
// cached blocks or in-core size and the fast format's log.
uint64_t DdtRam(const SettingResult& s, const ScanOptions& o) {
  const DdtFootprint* fp = FootprintFor(s, DdtFormatInForce(o));
  return fp != nullptr ? DdtRamBytes(*fp) : 0;
}

std::string FormatName(const ScanOptions& o) {
  return DdtFormatInForce(o) == DdtFormat::kFast ? "fast" : "legacy";
}

// The pool a scan is reported for, and its inputs: a change of pool reads as a change of data
// unless it is said.
json PoolJson(const ScanResult& r) {
  const ScanOptions& o = r.options;
  return {{"paths", r.input.paths},   {"profile", ProfileName(o.profile)},
          {"vdev", VdevName(o.vdev)}, {"ashift", o.ashift},
          {"copies", o.copies},       {"ddt_format", FormatName(o)},
          {"ram_bytes", o.ram_bytes}};
}

std::string PoolText(const ScanOptions& o) {
  return fmt::format("ZFS {}, vdev {}, ashift {}, copies {}, {} DDT, RAM {}",
                     ProfileName(o.profile), VdevName(o.vdev), o.ashift, o.copies, FormatName(o),
                     FormatBytes(o.ram_bytes));
}

std::string PathsText(const ScanResult& r) {
  std::string paths;
  for (const std::string& p : r.input.paths) paths += (paths.empty() ? "" : " ") + p;
  return paths;
}

std::string SettingName(const SettingResult& s) {
  return zfs::NiceBytes(s.recordsize) + " " + CompressionName(s.compression);
}

std::vector<Figure> Figures(const ScanResult& ra, const SettingResult& a, const ScanResult& rb,
                            const SettingResult& b) {
  const ScanOptions& ao = ra.options;
  const ScanOptions& bo = rb.options;
  auto entries = [](const SettingResult& s) {
    return double(s.dedup.unique_entries + s.dedup.duplicate_entries);
  };
  // The logical size (decision.h LogicalOf: the all-zero records a codec makes holes are in it)
  // and the savings on the base of every report's saved figure (decision.h SpaceOf).
  const SettingSpace sa = SpaceOf(a, ao, ra.input), sb = SpaceOf(b, bo, rb.input);
  return {
      {"logical", double(sa.logical_bytes), double(sb.logical_bytes), true, false},
      // The all-zero records of `logical` the setting stores as holes: psize is of the rest, and
      // "logical 10.3 MiB, psize 8.26 MiB, compressratio 1.00x" under off read as a contradiction.
      {"zero_lsize", double(a.zero_lsize), double(b.zero_lsize), true, false},
      {"psize", double(a.psize), double(b.psize), true, false},
      {"compressratio", a.compressratio, b.compressratio, false, true},
      {"dedup_ratio", a.dedup.ratio, b.dedup.ratio, false, true},
      {"ddt_entries", entries(a), entries(b), false, false},
      {"ddt_ram_bytes", double(DdtRam(a, ao)), double(DdtRam(b, bo)), true, false},
      {"used", double(a.used), double(b.used), true, false},
      {"pool_alloc", double(a.pool_alloc), double(b.pool_alloc), true, false},
      {"saved", sa.saved, sb.saved, false, false, true},
      {"saved_dedup", sa.saved_dedup, sb.saved_dedup, false, false, true},
  };
}

// The settings both scans hold, as pairs of indices.
std::vector<std::pair<size_t, size_t>> Common(const ScanResult& a, const ScanResult& b) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t i = 0; i < a.results.size(); ++i) {
    for (size_t j = 0; j < b.results.size(); ++j) {
      if (a.results[i].recordsize == b.results[j].recordsize &&
          a.results[i].compression == b.results[j].compression) {
        out.emplace_back(i, j);
      }
    }
  }
  return out;
}

// The settings of `a` that `b` does not hold.
std::vector<std::string> OnlyIn(const ScanResult& a, const ScanResult& b) {
  std::vector<std::string> out;
  for (const SettingResult& x : a.results) {
    bool found = false;
    for (const SettingResult& y : b.results) {
      found = found || (x.recordsize == y.recordsize && x.compression == y.compression);
    }
    if (!found) out.push_back(SettingName(x));
  }
  return out;
}

std::string Value(const Figure& f, double v) {
  if (f.is_saved) return SavedText(v);
  if (f.is_ratio) return fmt::format("{:.2f}x", v);
  if (f.is_bytes) return FormatBytes(static_cast<uint64_t>(v));
  return fmt::format("{:.0f}", v);
}

std::string Change(const Figure& f) {
  if (f.old_value == f.new_value) return "=";
  // A saved fraction changes by percentage points, as the reports round it ("=" where the
  // rounded figures are equal, as for any other figure).
  if (f.is_saved) {
    const int points = SavedPercentOf(f.new_value) - SavedPercentOf(f.old_value);
    return points == 0 ? "=" : fmt::format("{:+d} pts", points);
  }
  if (f.old_value == 0) return "new";
  return fmt::format("{:+.1f}%", (f.new_value / f.old_value - 1) * 100);
}

// The coarsest sample a scan's dedup tables kept (1: exact), and whether its compression figures
// are exact (no ~ in its report): a change against a sampled figure is partly the sample's.
uint64_t TableSampleModulus(const ScanResult& r) {
  uint64_t m = 1;
  for (const SettingResult& s : r.results) m = std::max(m, s.dedup.sample_modulus);
  return m;
}
bool CodecsExact(const ScanResult& r) {
  return std::all_of(r.results.begin(), r.results.end(),
                     [](const SettingResult& s) { return !EstimatedFiguresOf(s).without_dedup; });
}

}  // namespace

std::string DiffText(const ScanResult& a, const ScanResult& b, const std::string& old_name,
                     const std::string& new_name) {
  std::string out = fmt::format("zsim diff: {} -> {}\n", old_name, new_name);
  // A state saved by an interrupted scan covers part of its tree: its figures are not the tree's,
  // and a change against it is mostly what it did not read.
  for (const auto& [scan, name] :
       {std::pair<const ScanResult*, const std::string*>{&a, &old_name}, {&b, &new_name}}) {
    if (scan->partial) {
      out += fmt::format("PARTIAL: {} is of an interrupted scan: its figures cover what it read\n",
                         *name);
    }
    // What its own report says beside its verdict: a change against it is partly that.
    if (const uint64_t unread = UnreadBytes(scan->input.errors); unread != 0) {
      out += fmt::format("NOT READ: {} of {} was not read, or could not be\n", FormatBytes(unread),
                         *name);
    }
    if (const uint64_t m = TableSampleModulus(*scan); m > 1) {
      out += fmt::format(
          "SAMPLED: {}'s dedup tables kept 1/{} of the blocks: its dedup ratio, DDT entries and "
          "RAM, and saved with dedup are estimates (its report gives their intervals), so a "
          "change within them is the sample's\n",
          *name, m);
    }
    if (CodecsExact(*scan) != CodecsExact(scan == &a ? b : a) && !CodecsExact(*scan)) {
      out += fmt::format(
          "SAMPLED: {}'s compression figures are estimates (its report marks them ~) where the "
          "other scan's are exact: a small change in psize, compressratio, used or saved is the "
          "sample's\n",
          *name);
    }
    if (!scan->input.bytes_data_known && (scan == &a ? b : a).input.bytes_data_known) {
      out += fmt::format(
          "BASE: {} is of a state before format 22, which did not keep the files' data: its "
          "savings rest on each row's logical size, the other's on the data, so part of a "
          "change in saved is the change of base\n",
          *name);
    }
    if (scan->input.files_counted_twice != 0) {
      out += fmt::format(
          "COUNTED TWICE: {} counts files in more than one of its merged states ({} counts too "
          "many): its dedup figures are too high\n",
          *name, scan->input.files_counted_twice);
    }
  }
  // Each side's pool: the figures below are each scan's under its own.
  for (const auto& [what, old_text, new_text] :
       {std::tuple{"pool", PoolText(a.options), PoolText(b.options)},
        std::tuple{"paths", PathsText(a), PathsText(b)}}) {
    out += old_text == new_text ? fmt::format("{}: {} (both)\n", what, old_text)
                                : fmt::format("{}: {} -> {}\n", what, old_text, new_text);
  }
  // Size (st_size) and data (holes not counted: the base of the saved figures), as the reports'
  // "What was scanned" says them; "logical" is the rows' word for the data in records. A state
  // that does not know its data (format 21 or older) shows "?".
  auto data = [](const InputSummary& in) {
    return in.bytes_data_known ? FormatBytes(in.bytes_data) : std::string("?");
  };
  out += fmt::format("files {} -> {}, size {} -> {}, data {} -> {}\n", a.input.files, b.input.files,
                     FormatBytes(a.input.bytes_logical), FormatBytes(b.input.bytes_logical),
                     data(a.input), data(b.input));
  for (const auto& [only, side] :
       {std::pair{OnlyIn(a, b), "old"}, std::pair{OnlyIn(b, a), "new"}}) {
    if (only.empty()) continue;
    std::string list;
    for (const std::string& s : only) list += (list.empty() ? "" : ", ") + s;
    out += fmt::format("only in the {} scan (not compared): {}\n", side, list);
  }
  const auto common = Common(a, b);
  if (common.empty()) return out + "no (recordsize, compression) is in both scans\n";
  out += fmt::format("{:<18} {:<14} {:>12} {:>12} {:>9}\n", "setting", "figure", "old", "new",
                     "change");
  for (const auto& [i, j] : common) {
    const SettingResult& x = a.results[i];
    const std::string setting = SettingName(x);
    for (const Figure& f : Figures(a, x, b, b.results[j])) {
      out += fmt::format("{:<18} {:<14} {:>12} {:>12} {:>9}\n", setting, f.name,
                         Value(f, f.old_value), Value(f, f.new_value), Change(f));
    }
  }
  return out;
}

std::string DiffJson(const ScanResult& a, const ScanResult& b, const std::string& old_name,
                     const std::string& new_name) {
  json results = json::array();
  for (const auto& [i, j] : Common(a, b)) {
    const SettingResult& x = a.results[i];
    json r = {{"recordsize", x.recordsize}, {"compression", CompressionName(x.compression)}};
    for (const Figure& f : Figures(a, x, b, b.results[j])) {
      r[f.name] = f.is_ratio || f.is_saved ? json::array({f.old_value, f.new_value})
                                           : json::array({static_cast<uint64_t>(f.old_value),
                                                          static_cast<uint64_t>(f.new_value)});
    }
    results.push_back(std::move(r));
  }
  const json out = {
      {"old", old_name},
      {"new", new_name},
      {"partial", {a.partial, b.partial}},
      {"settings", {PoolJson(a), PoolJson(b)}},
      {"only_old", OnlyIn(a, b)},
      {"only_new", OnlyIn(b, a)},
      {"input",
       {{"files", {a.input.files, b.input.files}},
        {"bytes_logical", {a.input.bytes_logical, b.input.bytes_logical}},
        {"bytes_data",
         {a.input.bytes_data_known ? json(a.input.bytes_data) : json(nullptr),
          b.input.bytes_data_known ? json(b.input.bytes_data) : json(nullptr)}},
        {"bytes_unread", {UnreadBytes(a.input.errors), UnreadBytes(b.input.errors)}},
        {"files_counted_twice", {a.input.files_counted_twice, b.input.files_counted_twice}}}},
      {"dedup_sample_modulus", {TableSampleModulus(a), TableSampleModulus(b)}},
      {"codecs_exact", {CodecsExact(a), CodecsExact(b)}},
      {"results", results}};
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace zsim::report
