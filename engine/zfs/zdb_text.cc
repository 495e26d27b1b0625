#include "engine/zfs/zdb_text.h"

#include <cstdio>
#include <string_view>

#include "engine/zfs/nicenum.h"

namespace zsim::zfs {
namespace {

// The row layout of zpool_dump_ddt: "%6s   %6s   %5s   %5s   %5s   %6s   %5s   %5s   %5s\n".
std::string Row(const std::string (&f)[9]) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%6s   %6s   %5s   %5s   %5s   %6s   %5s   %5s   %5s\n",
                f[0].c_str(), f[1].c_str(), f[2].c_str(), f[3].c_str(), f[4].c_str(), f[5].c_str(),
                f[6].c_str(), f[7].c_str(), f[8].c_str());
  return buf;
}

std::string StatRow(const std::string& label, const DdtHistogramRow& row, Profile profile) {
  const std::string f[9] = {label,
                            NiceNumber(row.allocated.blocks),
                            NiceSize(row.allocated.lsize, profile),
                            NiceSize(row.allocated.psize, profile),
                            NiceSize(row.allocated.dsize, profile),
                            NiceNumber(row.referenced.blocks),
                            NiceSize(row.referenced.lsize, profile),
                            NiceSize(row.referenced.psize, profile),
                            NiceSize(row.referenced.dsize, profile)};
  return Row(f);
}

}  // namespace

std::string DdtObjectName(std::string_view checksum, bool duplicate_class) {
  return "DDT-" + std::string(checksum) + "-zap-" + (duplicate_class ? "duplicate" : "unique");
}

std::string ZdbObjectLine(const ZdbDdtObject& o, Profile profile) {
  if (o.entries == 0) return "";
  char buf[256];
  const bool totals = profile == Profile::kZfs23 || profile == Profile::kZfs24;
  if (totals) {
    std::snprintf(buf, sizeof buf, "%s: dspace=%llu; mspace=%llu; entries=%llu\n", o.name.c_str(),
                  static_cast<unsigned long long>(o.dspace_bytes),
                  static_cast<unsigned long long>(o.mspace_bytes),
                  static_cast<unsigned long long>(o.entries));
  } else {
    std::snprintf(buf, sizeof buf, "%s: %llu entries, size %llu on disk, %llu in core\n",
                  o.name.c_str(), static_cast<unsigned long long>(o.entries),
                  static_cast<unsigned long long>(o.dspace_bytes / o.entries),
                  static_cast<unsigned long long>(o.mspace_bytes / o.entries));
  }
  return buf;
}

std::string ZdbHistogramTable(const std::vector<DdtHistogramRow>& histogram,
                              const DdtHistogramRow& total, Profile profile) {
  std::string out = "\n";
  out += "bucket              allocated                       referenced          \n";
  out += "______   ______________________________   ______________________________\n";
  const std::string names[9] = {"refcnt", "blocks", "LSIZE", "PSIZE", "DSIZE",
                                "blocks", "LSIZE",  "PSIZE", "DSIZE"};
  out += Row(names);
  const std::string dashes[9] = {"------", "------", "-----", "-----", "-----",
                                 "------", "-----",  "-----", "-----"};
  out += Row(dashes);
  for (const DdtHistogramRow& row : histogram) {
    if (row.allocated.blocks == 0) continue;
    out += StatRow(NiceNumber(row.refcnt), row, profile);
  }
  if (total.allocated.blocks != 0) out += StatRow("Total", total, profile);
  out += "\n";
  return out;
}

std::string ZdbRatioLine(const DdtHistogramRow& total) {
  const DdtStat& a = total.allocated;
  const DdtStat& r = total.referenced;
  if (a.blocks == 0) return "";
  const double dedup = static_cast<double>(r.dsize) / static_cast<double>(a.dsize);
  const double compress = static_cast<double>(r.lsize) / static_cast<double>(r.psize);
  const double copies = static_cast<double>(r.dsize) / static_cast<double>(r.psize);
  char buf[200];
  std::snprintf(
      buf, sizeof buf,
      "dedup = %.2f, compress = %.2f, copies = %.2f, dedup * compress / copies = %.2f\n\n", dedup,
      compress, copies, dedup * compress / copies);
  return buf;
}

std::string ZdbDedupText(const DedupResult& dedup, const std::vector<ZdbDdtObject>& objects,
                         Profile profile) {
  std::string out;
  for (const ZdbDdtObject& o : objects) out += ZdbObjectLine(o, profile);
  if (dedup.total.allocated.blocks == 0) {
    out += "All DDTs are empty\n";
    return out;
  }
  out += "\nDDT histogram (aggregated over all DDTs):\n";
  out += ZdbHistogramTable(dedup.histogram, dedup.total, profile);
  out += ZdbRatioLine(dedup.total);
  return out;
}

}  // namespace zsim::zfs
