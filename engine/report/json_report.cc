#include "engine/report/json_report.h"

#include <nlohmann/json.hpp>

namespace zsim::report {
namespace {

using nlohmann::json;

json Stat(const DdtStat& s) {
  return json{{"blocks", s.blocks}, {"lsize", s.lsize}, {"psize", s.psize}, {"dsize", s.dsize}};
}

const char* FormatName(DdtFormat f) { return f == DdtFormat::kFast ? "fast" : "legacy"; }

json ClassFootprint(const DdtClassFootprint& c) {
  return json{{"entries", c.entries},
              {"in_core", c.in_core_bytes},
              {"on_disk", c.on_disk_bytes},
              {"in_core_per_entry", c.in_core_per_entry},
              {"on_disk_per_entry", c.on_disk_per_entry}};
}

json Footprint(const DdtFootprint& f) {
  return json{{"format", FormatName(f.format)},
              {"leaf_bytes", f.leaf_bytes},
              {"in_core", f.in_core_bytes},
              {"on_disk", f.on_disk_bytes},
              {"in_core_per_entry", f.in_core_per_entry},
              {"on_disk_per_entry", f.on_disk_per_entry},
              {"log_bytes", f.log_bytes},
              {"l2arc_header_bytes", f.l2arc_header_bytes},
              {"rule_of_thumb_320", f.rule_of_thumb_320},
              {"asize", f.asize_bytes},
              {"unique", ClassFootprint(f.unique)},
              {"duplicate", ClassFootprint(f.duplicate)}};
}

json Setting(const SettingResult& s, DdtFormat chosen) {
  json histogram = json::array();
  for (const DdtHistogramRow& row : s.dedup.histogram) {
    histogram.push_back(json{{"refcnt", row.refcnt},
                             {"allocated", Stat(row.allocated)},
                             {"referenced", Stat(row.referenced)}});
  }
  json footprints = json::array();
  json ddt_bytes = {{"in_core", 0}, {"on_disk", 0}};
  json per_entry = json::object();
  for (const DdtFootprint& f : s.dedup.footprints) {
    footprints.push_back(Footprint(f));
    if (f.format == chosen) {
      ddt_bytes = {{"in_core", f.in_core_bytes}, {"on_disk", f.on_disk_bytes}};
      // zdb's per-object lines (v23 .. 2.2 print per-entry averages per class).
      per_entry = {
          {"unique",
           {{"in_core", f.unique.in_core_per_entry}, {"on_disk", f.unique.on_disk_per_entry}}},
          {"duplicate",
           {{"in_core", f.duplicate.in_core_per_entry},
            {"on_disk", f.duplicate.on_disk_per_entry}}}};
    }
  }
  json out = {
      {"recordsize", s.recordsize},
      {"compression", CompressionName(s.compression)},
      {"blocks",
       {{"data", s.blocks.data}, {"holes", s.blocks.holes}, {"embedded", s.blocks.embedded}}},
      {"lsize", s.lsize},
      {"psize", s.psize},
      {"asize", s.asize},
      {"embedded_bytes", s.embedded_bytes},
      {"compressratio", s.compressratio},
      {"exact", s.exact},
      {"dedup",
       {{"ratio", s.dedup.ratio},
        {"entries", {{"unique", s.dedup.unique_entries}, {"duplicate", s.dedup.duplicate_entries}}},
        {"histogram", histogram},
        {"total",
         {{"allocated", Stat(s.dedup.total.allocated)},
          {"referenced", Stat(s.dedup.total.referenced)}}},
        {"zdb",
         {{"dedup", s.dedup.zdb_dedup},
          {"compress", s.dedup.zdb_compress},
          {"copies", s.dedup.zdb_copies},
          {"total", s.dedup.zdb_total}}},
        {"ddt_bytes", ddt_bytes},
        {"ddt_per_entry", per_entry},
        {"ddt_formats", footprints}}},
      {"used", s.used},
      {"pool_alloc", s.pool_alloc},
      {"metadata_bytes", s.metadata_bytes},
  };
  if (s.ci95) out["ci95"] = json::array({(*s.ci95)[0], (*s.ci95)[1]});
  return out;
}

}  // namespace

std::string ToJson(const ScanResult& r) {
  const ScanOptions& o = r.options;
  json skipped = json::object();
  for (const auto& [reason, n] : r.input.skipped) skipped[reason] = n;
  json errors = json::array();
  for (const PathError& e : r.input.errors) {
    errors.push_back(json{{"path", e.path}, {"error", e.error}});
  }
  json recordsizes = json::array();
  for (uint64_t rs : o.recordsizes) recordsizes.push_back(rs);
  json compressions = json::array();
  for (const Compression& c : o.compressions) compressions.push_back(CompressionName(c));
  const DdtFormat format = o.ddt_format.value_or(DdtFormat::kLegacy);
  json settings = {
      {"recordsize", o.volblocksize ? *o.volblocksize : o.recordsizes.front()},
      {"recordsizes", recordsizes},
      {"volblocksize", o.volblocksize ? json(*o.volblocksize) : json(nullptr)},
      {"compressions", compressions},
      {"ashift", o.ashift},
      {"vdev", VdevName(o.vdev)},
      {"copies", o.copies},
      {"checksum", o.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128"},
      {"ddt_format", FormatName(format)},
      {"profile", ProfileName(o.profile)},
      {"ram_bytes", o.ram_bytes},
      {"threads", o.threads},
  };
  json results = json::array();
  for (const SettingResult& s : r.results) results.push_back(Setting(s, format));
  json out = {
      {"zsim_version", ZSIM_VERSION_STRING},
      {"partial", r.partial},
      {"input",
       {{"paths", r.input.paths},
        {"files", r.input.files},
        {"directories", r.input.directories},
        {"bytes_logical", r.input.bytes_logical},
        {"bytes_read", r.input.bytes_read},
        {"skipped", skipped},
        {"errors", errors}}},
      {"settings", settings},
      {"results", results},
      {"seconds", r.seconds},
  };
  // `replace` keeps invalid UTF-8 visible as U+FFFD instead of throwing mid-report.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace zsim::report
