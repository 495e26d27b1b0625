#include "engine/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/base/size_suffix.h"
#include "engine/report/name_encoding.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/zdb_text.h"

namespace zsim::report {
namespace {

constexpr size_t kBreakdownRows = 10;

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

std::string Section(const char* title) { return fmt::format("\n== {} ==\n", title); }

// Savings against the logical size, or "-" when there is nothing.
std::string Saved(uint64_t stored, uint64_t lsize) {
  if (lsize == 0) return "-";
  // Rounded first, so a saving of -0.3 % prints "0%", not "-0%".
  const double percent = std::round((1.0 - double(stored) / double(lsize)) * 100.0);
  return fmt::format("{:.0f}%", percent == 0 ? 0.0 : percent);
}

// A file name on one line: control characters (C0, DEL, C1) become '?' (name_encoding.h).
std::string Printable(const std::string& name) { return TerminalName(name); }

const char* FormatName(DdtFormat f) { return f == DdtFormat::kFast ? "fast" : "legacy"; }

void Scanned(const ScanResult& r, std::string& out) {
  out += Section(kSectionScanned);
  out += fmt::format(
      "{} file{} in {} director{}: {} logical, {} read (holes are not read), {:.1f} s\n",
      r.input.files, r.input.files == 1 ? "" : "s", r.input.directories,
      r.input.directories == 1 ? "y" : "ies", FormatBytes(r.input.bytes_logical),
      FormatBytes(r.input.bytes_read), r.seconds);
  if (r.input.skipped.empty()) {
    out += "Skipped: nothing\n";
  } else {
    std::string list;
    for (const auto& [reason, n] : r.input.skipped) {
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, reason);
    }
    out += "Skipped: " + list + "\n";
  }
  if (!r.input.errors.empty()) {
    out += fmt::format("Could not read {} path{}:\n", r.input.errors.size(),
                       r.input.errors.size() == 1 ? "" : "s");
    for (const PathError& e : r.input.errors) {
      out += fmt::format("  {}: {}\n", Printable(e.path), e.error);
    }
  }
}

void Settings(const ScanResult& r, const Advice& a, std::string& out) {
  out += Section(kSectionSettings);
  constexpr const char* kRow =
      "{:<1}{:<10} {:<13} {:>8} {:>8} {:>9} {:>8} {:>6} {:>8} {:>8} {:>10} {:>6} {:>10}\n";
  out += fmt::format(kRow, "", r.options.volblocksize ? "volblock" : "recordsize", "compression",
                     "logical", "physical", "allocated", "compress", "dedup", "combined", "used",
                     "with dedup", "saved", "with dedup");
  std::string estimates;  // one line per setting with a sampled figure
  for (size_t i = 0; i < r.results.size(); ++i) {
    const SettingResult& s = r.results[i];
    const bool sampled_compress = s.ci95.has_value();
    const bool sampled_dedup = s.dedup.ratio_ci95.has_value();
    out +=
        fmt::format(kRow, int(i) == a.featured ? "*" : "", zfs::NiceBytes(s.recordsize),
                    CompressionName(s.compression), zfs::NiceBytes(s.lsize),
                    zfs::NiceBytes(s.psize), zfs::NiceBytes(s.asize),
                    fmt::format("{}{}", sampled_compress ? "~" : "", Ratio(s.compressratio)),
                    fmt::format("{}{}", sampled_dedup ? "~" : "", Ratio(s.dedup.ratio)),
                    Ratio(s.dedup.zdb_total), zfs::NiceBytes(s.used), zfs::NiceBytes(s.pool_alloc),
                    Saved(s.used, s.lsize), Saved(s.pool_alloc, s.lsize));
    if (!sampled_compress && !sampled_dedup) continue;
    estimates +=
        fmt::format("  {} {}:", zfs::NiceBytes(s.recordsize), CompressionName(s.compression));
    if (sampled_compress) {
      estimates += " compress " + RatioWithInterval(s.compressratio, *s.ci95);
    }
    if (sampled_dedup) {
      estimates += fmt::format(
          "{} dedup {} (the dedup table kept 1/{} of the blocks)", sampled_compress ? ";" : "",
          RatioWithInterval(s.dedup.ratio, *s.dedup.ratio_ci95), s.dedup.sample_modulus);
    }
    estimates += "\n";
  }
  out +=
      "(used: what `zfs get used` shows, no dedup; with dedup: `zpool list` ALLOC, DDT included;"
      " saved: against the logical size; * the setting featured below)\n";
  if (!estimates.empty()) {
    out +=
        "~ estimates from a sample (`--exact` computes every block), with their 95% intervals:\n" +
        estimates;
  }
}

void Histogram(const ScanResult& r, const SettingResult& f, const Advice& a, std::string& out) {
  out += Section(kSectionHistogram);
  out += fmt::format("recordsize {}, compression {}, as `zdb -DD` prints it:\n",
                     zfs::NiceBytes(f.recordsize), CompressionName(f.compression));
  out += ZdbBlock(f, a.ddt_format, r.options.profile);
}

void DdtSize(const SettingResult& f, const Advice& a, std::string& out) {
  out += Section(kSectionDdtSize);
  const uint64_t entries = f.dedup.unique_entries + f.dedup.duplicate_entries;
  out += fmt::format("{} entries ({} unique, {} duplicate)\n", entries, f.dedup.unique_entries,
                     f.dedup.duplicate_entries);
  for (const DdtFootprint& fp : f.dedup.footprints) {
    out += fmt::format("{:<6} format{}: {} in core, {} on disk", FormatName(fp.format),
                       fp.format == a.ddt_format ? " (in force)" : "",
                       FormatBytes(fp.in_core_bytes), FormatBytes(fp.on_disk_bytes));
    if (fp.log_bytes > 0) out += fmt::format(", log up to {}", FormatBytes(fp.log_bytes));
    if (entries > 0) {
      out += fmt::format(", {} per entry in core", FormatBytes(fp.in_core_bytes / entries));
    }
    out += fmt::format("; L2ARC headers {}\n", FormatBytes(fp.l2arc_header_bytes));
  }
  if (f.dedup.footprints.empty()) out += "(the engine computed no DDT size for this setting)\n";
  if (entries > 0) {
    out += fmt::format(
        "For comparison: 320 B per entry (rule of thumb) = {}; 1.25 GiB per TiB (zfsconcepts) "
        "= {}\n",
        FormatBytes(entries * 320), FormatBytes(zfs::ManPageDedupRam(f.lsize)));
  }
  if (const AdviceItem* m = a.Find(AdviceKind::kDdtMemory)) {
    out += fmt::format("Against {} of RAM: {}\n", FormatBytes(a.ram_bytes), m->sentence);
  }
}

void BreakdownTable(const char* title, std::vector<BreakdownRow> rows, bool by_compression,
                    std::string& out) {
  if (by_compression) {
    std::stable_sort(rows.begin(), rows.end(), [](const BreakdownRow& x, const BreakdownRow& y) {
      const uint64_t sx = x.lsize > x.psize ? x.lsize - x.psize : 0;
      const uint64_t sy = y.lsize > y.psize ? y.lsize - y.psize : 0;
      return sx > sy;
    });
  }
  out += fmt::format("{}:\n", title);
  out += fmt::format("  {:>8} {:>10} {:>10} {:>10} {:>8}  {}\n", "files", "bytes", "duplicate",
                     "saved", "compress", "name");
  for (size_t i = 0; i < rows.size() && i < kBreakdownRows; ++i) {
    const BreakdownRow& row = rows[i];
    const uint64_t saved = row.lsize > row.psize ? row.lsize - row.psize : 0;
    out += fmt::format("  {:>8} {:>10} {:>10} {:>10} {:>8}  {}\n", row.files,
                       FormatBytes(row.bytes), FormatBytes(row.duplicate_bytes), FormatBytes(saved),
                       row.psize > 0 ? Ratio(double(row.lsize) / double(row.psize)) : "-",
                       Printable(row.name));
  }
}

void Breakdown(const ScanResult& r, std::string& out) {
  out += Section(kSectionBreakdown);
  const Breakdowns& b = r.breakdown;
  if (b.directories.empty() && b.extensions.empty()) {
    out += "(no breakdown by directory or file type was collected by this scan)\n";
    return;
  }
  out += fmt::format(
      "recordsize {}, compression {}{}\n", zfs::NiceBytes(b.recordsize),
      CompressionName(b.compression),
      b.sample_modulus > 1
          ? fmt::format("; duplicate bytes estimated from 1/{} of the blocks", b.sample_modulus)
          : "");
  BreakdownTable("Top directories by duplicate bytes", b.directories, false, out);
  BreakdownTable("Top file types by duplicate bytes", b.extensions, false, out);
  BreakdownTable("Top directories by compression savings", b.directories, true, out);
  BreakdownTable("Top file types by compression savings", b.extensions, true, out);
}

}  // namespace

std::string RatioWithInterval(double ratio, const std::array<double, 2>& ci95) {
  auto floor2 = [](double x) { return std::floor(x * 100 + 1e-9) / 100; };  // 2.3 is 229.99..
  const double lo = floor2(ci95[0]), hi = floor2(ci95[1]);
  const double half = std::max({0.0, ratio - lo, hi - ratio});
  return fmt::format("{:.2f}x ±{:.2f} ({:.2f}x-{:.2f}x)", ratio, half, lo, hi);
}

std::string ToText(const ScanResult& r) { return ToText(r, ComputeAdvice(r)); }

std::string ToText(const ScanResult& r, const Advice& a) {
  const ScanOptions& o = r.options;
  std::string out;
  out += fmt::format("zsim {}: what ZFS {} would store (ashift {}, vdev {}, copies {})\n",
                     ZSIM_VERSION_STRING, ProfileName(o.profile), o.ashift, VdevName(o.vdev),
                     o.copies);
  if (r.partial) out += "PARTIAL: the scan was interrupted; figures cover what was read.\n";
  if (const AdviceItem* s = a.Find(AdviceKind::kSummary)) out += "Verdict: " + s->sentence + "\n";
  Scanned(r, out);
  Settings(r, a, out);
  if (a.featured >= 0) {
    const SettingResult& f = r.results[size_t(a.featured)];
    Histogram(r, f, a, out);
    DdtSize(f, a, out);
  }
  Breakdown(r, out);
  out += Section(kSectionAdvice);
  for (const AdviceItem& item : a.items) out += "- " + item.sentence + "\n";
  return out;
}

}  // namespace zsim::report
