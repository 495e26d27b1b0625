#include "engine/report/text_report.h"

#include <fmt/format.h>

#include "engine/base/size_suffix.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/zdb_text.h"

namespace zsim::report {
namespace {

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

// The setting whose DDT is shown in full: the first one that compresses (what a pool would use),
// else the first.
const SettingResult* Featured(const ScanResult& r) {
  for (const SettingResult& s : r.results) {
    if (s.compression.algorithm != CompressionAlgorithm::kOff) return &s;
  }
  return r.results.empty() ? nullptr : &r.results.front();
}

}  // namespace

std::string ToText(const ScanResult& r) {
  const ScanOptions& o = r.options;
  std::string out;
  out += fmt::format("zsim {}: what ZFS {} would store (ashift {}, vdev {}, copies {})\n",
                     ZSIM_VERSION_STRING, ProfileName(o.profile), o.ashift, VdevName(o.vdev),
                     o.copies);
  if (r.partial) out += "PARTIAL: the scan was interrupted; figures cover what was read.\n";
  out += fmt::format(
      "Scanned {} files in {} directories: {} logical, {} read (holes are not read), "
      "{:.1f} s\n",
      r.input.files, r.input.directories, FormatBytes(r.input.bytes_logical),
      FormatBytes(r.input.bytes_read), r.seconds);
  if (!r.input.skipped.empty()) {
    std::string list;
    for (const auto& [reason, n] : r.input.skipped) {
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, reason);
    }
    out += "Skipped: " + list + "\n";
  }
  if (!r.input.errors.empty()) {
    out += fmt::format("Could not read {} path{}:\n", r.input.errors.size(),
                       r.input.errors.size() == 1 ? "" : "s");
    for (const PathError& e : r.input.errors) out += fmt::format("  {}: {}\n", e.path, e.error);
  }
  out += "\n";
  out +=
      fmt::format("{:<11} {:<13} {:>10} {:>10} {:>10} {:>8} {:>7} {:>8} {:>10} {:>10}\n",
                  o.volblocksize ? "volblock" : "recordsize", "compression", "logical", "physical",
                  "allocated", "compress", "dedup", "combined", "used", "with dedup");
  for (const SettingResult& s : r.results) {
    out += fmt::format("{:<11} {:<13} {:>10} {:>10} {:>10} {:>8} {:>7} {:>8} {:>10} {:>10}\n",
                       zfs::NiceBytes(s.recordsize), CompressionName(s.compression),
                       zfs::NiceBytes(s.lsize), zfs::NiceBytes(s.psize), zfs::NiceBytes(s.asize),
                       Ratio(s.compressratio), Ratio(s.dedup.ratio), Ratio(s.dedup.zdb_total),
                       zfs::NiceBytes(s.used), zfs::NiceBytes(s.pool_alloc));
  }
  const SettingResult* f = Featured(r);
  if (f != nullptr) {
    out += fmt::format("\nDDT with recordsize {}, compression {} (as zdb -DD prints it):\n",
                       zfs::NiceBytes(f->recordsize), CompressionName(f->compression));
    out += fmt::format("DDT entries: {} unique, {} duplicate\n\n", f->dedup.unique_entries,
                       f->dedup.duplicate_entries);
    // The DDT objects zdb would list, sized with the table format in force.
    std::vector<zfs::ZdbDdtObject> objects;
    const DdtFormat chosen = o.ddt_format.value_or(DdtFormat::kLegacy);
    for (const DdtFootprint& fp : f->dedup.footprints) {
      if (fp.format != chosen) continue;
      for (const bool dup : {true, false}) {
        const DdtClassFootprint& c = dup ? fp.duplicate : fp.unique;
        if (c.entries == 0) continue;
        objects.push_back(zfs::ZdbDdtObject{zfs::DdtObjectName("sha256", dup), c.entries,
                                            c.on_disk_bytes, c.in_core_bytes});
      }
    }
    out += zfs::ZdbDedupText(f->dedup, objects, o.profile);
    for (const DdtFootprint& fp : f->dedup.footprints) {
      out += fmt::format("DDT size ({} format): {} in core, {} on disk\n",
                         fp.format == DdtFormat::kFast ? "fast" : "legacy",
                         FormatBytes(fp.in_core_bytes), FormatBytes(fp.on_disk_bytes));
    }
  }
  return out;
}

}  // namespace zsim::report
