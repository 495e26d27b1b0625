#include "engine/report/diff_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "engine/base/size_suffix.h"
#include "engine/report/decision.h"

namespace zsim::report {
namespace {

using nlohmann::json;

// One figure of one setting, old and new.
struct Figure {
  const char* name;
  double old_value, new_value;
  bool is_bytes;  // printed as a size, else as a ratio or count
  bool is_ratio;
  bool is_saved = false;  // a saved fraction of the logical size (decision.h SettingSpace)
};

uint64_t DdtRamBytes(const SettingResult& s, const ScanOptions& o) {
  const DdtFormat format = o.ddt_format.value_or(DdtFormat::kLegacy);
  for (const DdtFootprint& f : s.dedup.footprints) {
    if (f.format == format) return f.cached_bytes;
  }
  return 0;
}

std::vector<Figure> Figures(const SettingResult& a, const ScanOptions& ao, const SettingResult& b,
                            const ScanOptions& bo) {
  auto entries = [](const SettingResult& s) {
    return double(s.dedup.unique_entries + s.dedup.duplicate_entries);
  };
  // The logical size and the savings on the one base of every report's saved figure
  // (decision.h LogicalOf: the all-zero records a codec makes holes are in it).
  const SettingSpace sa = SpaceOf(a, ao), sb = SpaceOf(b, bo);
  return {
      {"logical", double(sa.logical_bytes), double(sb.logical_bytes), true, false},
      {"psize", double(a.psize), double(b.psize), true, false},
      {"compressratio", a.compressratio, b.compressratio, false, true},
      {"dedup_ratio", a.dedup.ratio, b.dedup.ratio, false, true},
      {"ddt_entries", entries(a), entries(b), false, false},
      {"ddt_ram_bytes", double(DdtRamBytes(a, ao)), double(DdtRamBytes(b, bo)), true, false},
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

std::string Value(const Figure& f, double v) {
  if (f.is_saved) return SavedText(v);
  if (f.is_ratio) return fmt::format("{:.2f}x", v);
  if (f.is_bytes) return FormatBytes(static_cast<uint64_t>(v));
  return fmt::format("{:.0f}", v);
}

std::string Change(const Figure& f) {
  if (f.old_value == f.new_value) return "=";
  // A saved fraction changes by percentage points, as the reports round it.
  if (f.is_saved)
    return fmt::format("{:+d} pts", SavedPercentOf(f.new_value) - SavedPercentOf(f.old_value));
  if (f.old_value == 0) return "new";
  return fmt::format("{:+.1f}%", (f.new_value / f.old_value - 1) * 100);
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
  }
  out += fmt::format("files {} -> {}, logical bytes {} -> {}\n", a.input.files, b.input.files,
                     FormatBytes(a.input.bytes_logical), FormatBytes(b.input.bytes_logical));
  const auto common = Common(a, b);
  if (common.empty()) return out + "no (recordsize, compression) is in both scans\n";
  out += fmt::format("{:<18} {:<14} {:>12} {:>12} {:>9}\n", "setting", "figure", "old", "new",
                     "change");
  for (const auto& [i, j] : common) {
    const SettingResult& x = a.results[i];
    const std::string setting = FormatBytes(x.recordsize) + " " + CompressionName(x.compression);
    for (const Figure& f : Figures(x, a.options, b.results[j], b.options)) {
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
    for (const Figure& f : Figures(x, a.options, b.results[j], b.options)) {
      r[f.name] = f.is_ratio || f.is_saved ? json::array({f.old_value, f.new_value})
                                           : json::array({static_cast<uint64_t>(f.old_value),
                                                          static_cast<uint64_t>(f.new_value)});
    }
    results.push_back(std::move(r));
  }
  const json out = {{"old", old_name},
                    {"new", new_name},
                    {"partial", {a.partial, b.partial}},
                    {"input",
                     {{"files", {a.input.files, b.input.files}},
                      {"bytes_logical", {a.input.bytes_logical, b.input.bytes_logical}}}},
                    {"results", results}};
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace zsim::report
