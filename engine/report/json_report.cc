#include "engine/report/json_report.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/report/advice.h"
#include "engine/report/codec_speed.h"
#include "engine/report/name_encoding.h"
#include "engine/report/sizing.h"

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
              {"on_disk_per_entry", c.on_disk_per_entry},
              {"in_core_per_entry_max", c.in_core_per_entry_max},
              {"on_disk_per_entry_max", c.on_disk_per_entry_max}};
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
              {"cached", f.cached_bytes},
              {"leaves_from_keys", f.leaves_from_keys},
              {"unique", ClassFootprint(f.unique)},
              {"duplicate", ClassFootprint(f.duplicate)}};
}

// A saving as the reports round it, or null where its base is empty (nothing scanned: the text
// report shows "-").
json Saved(const SettingSpace& space, double saved) {
  return space.base_bytes > 0 ? json(SavedPercentOf(saved)) : json(nullptr);
}

json Setting(const SettingResult& s, const ScanOptions& o, const InputSummary& in,
             DdtFormat chosen) {
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
      per_entry = {{"unique",
                    {{"in_core", f.unique.in_core_per_entry},
                     {"on_disk", f.unique.on_disk_per_entry},
                     {"in_core_max", f.unique.in_core_per_entry_max},
                     {"on_disk_max", f.unique.on_disk_per_entry_max}}},
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
      {"zero_lsize", s.zero_lsize},
      {"compressratio", s.compressratio},
      {"compressratio_unrounded", s.compressratio_unrounded},
      {"compressratio_with_dedup", s.compressratio_with_dedup},
      {"exact", s.exact},
      {"dedup",
       {{"ratio", s.dedup.ratio},
        {"sample_modulus", s.dedup.sample_modulus},
        {"ci95", s.dedup.ratio_ci95
                     ? json::array({(*s.dedup.ratio_ci95)[0], (*s.dedup.ratio_ci95)[1]})
                     : json(nullptr)},
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
      {"embedding_lost_with_dedup", s.embedding_lost_with_dedup},
      {"pool_alloc", s.pool_alloc},
      {"metadata_bytes", s.metadata_bytes},
      {"timing",
       {{"codec_seconds", s.codec_seconds},
        {"codec_bytes", s.codec_bytes},
        {"cpu_seconds_per_gb", CodecCpuSecondsPerGb(s)}}},
  };
  out["compress_bytes_per_second"] = CodecBytesPerSecond(s);  // per core; 0: not timed
  json buckets = json::array();
  for (const BlockSizeBucket& b : s.block_sizes) {
    buckets.push_back(json{{"size", b.size},
                           {"blocks", b.blocks},
                           {"psize", b.psize},
                           {"asize", b.asize},
                           {"unique_blocks", b.unique_blocks},
                           {"unique_asize", b.unique_asize}});
  }
  out["block_sizes"] = buckets;
  json small = json::array();
  for (const SmallBlocks& b : s.small_blocks) {
    small.push_back(json{{"threshold", b.threshold},
                         {"blocks", b.blocks},
                         {"unique_blocks", b.unique_blocks},
                         {"asize", b.asize},
                         {"unique_asize", b.unique_asize}});
  }
  out["small_blocks"] = small;
  const SettingSpace space = SpaceOf(s, o, in);
  out["used_with_dedup"] = space.stored_dedup_bytes;
  out["saved_percent"] = Saved(space, space.saved);
  out["saved_with_dedup_percent"] = Saved(space, space.saved_dedup);
  if (s.ci95) out["ci95"] = json::array({(*s.ci95)[0], (*s.ci95)[1]});
  return out;
}

// Ratios stay fractional; every other figure is a count, a size or a whole percent: an integer.
json Figure(const AdviceFigure& f) {
  const std::string_view n = f.name;
  if (n.ends_with("ratio") || n.ends_with("_ratio")) return f.value;
  // A gain is the number its sentence says (advice.cc GainShown): whole, or with one or two
  // decimals near its threshold ("10.2% less" was printed as 10).
  if (n.find("gain") != std::string_view::npos && f.value != std::round(f.value)) return f.value;
  return static_cast<int64_t>(std::llround(f.value));
}

json DecisionJson(const ScanResult& r, const Decision& d) {
  if (d.featured < 0) return nullptr;
  const SettingResult& f = r.results[size_t(d.featured)];
  return json{{"index", d.featured},
              {"block_size_property", BlockSizeProperty(r.options)},
              {"recordsize", f.recordsize},
              {"compression", CompressionName(f.compression)},
              {"dedup", d.dedup_on ? "on" : "off"},
              {"dedup_with_ddt_hardware", d.dedup_with_hardware},
              {"verdict", VerdictName(d.verdict)},
              {"dedup_verdict", VerdictName(d.dedup_verdict)},
              {"logical_bytes", d.space.logical_bytes},
              {"stored_bytes", d.stored_bytes},
              {"base_bytes", d.space.base_bytes},
              {"saved_percent", Saved(d.space, d.saved)},
              {"saved_without_dedup_percent", Saved(d.space, d.space.saved)},
              {"saved_with_dedup_percent", Saved(d.space, d.space.saved_dedup)},
              {"ddt_ram_bytes", d.dedup.ram_need_bytes},
              {"ddt_ram_budget_bytes", d.dedup.budget_bytes},
              {"ddt_fits_in_ram", d.dedup.fits}};
}

json SizingJson(const ScanResult& r, const Advice& a) {
  const VdevSizing sizing = SizeVdevs(r, a);
  json special = json::array();
  for (const SpecialVdevSize& v : sizing.special) {
    special.push_back(json{{"special_small_blocks", v.threshold},
                           {"small_blocks", v.small_blocks},
                           {"small_block_bytes", v.small_block_bytes},
                           {"metadata_bytes", v.metadata_bytes},
                           {"ddt_bytes", v.ddt_bytes},
                           {"total_bytes", v.total_bytes}});
  }
  return json{{"special_vdev", special}, {"dedup_vdev_bytes", sizing.dedup_vdev_bytes}};
}

json DirectoriesJson(const ScanResult& r, const Advice& a) {
  json out = json::array();
  for (const DirectoryAdvice& d : a.directories) {
    const SettingResult& s = r.results[size_t(d.setting)];
    out.push_back(json{{"name", d.name},
                       {"setting_index", d.setting},
                       {"recordsize", s.recordsize},
                       {"compression", CompressionName(s.compression)},
                       {"lsize", d.lsize},
                       {"psize", d.psize},
                       {"recommended_psize", d.recommended_psize},
                       {"saved_bytes", d.saved_bytes}});
  }
  return out;
}

json AdviceJson(const ScanResult& r, const Advice& a) {
  json items = json::array();
  for (const AdviceItem& item : a.items) {
    json figures = json::object();
    for (const AdviceFigure& f : item.figures) figures[f.name] = Figure(f);
    items.push_back(json{{"kind", AdviceKindName(item.kind)},
                         {"verdict", VerdictName(item.verdict)},
                         {"sentence", item.sentence},
                         {"figures", figures}});
  }
  const AdviceItem* summary = a.Find(AdviceKind::kSummary);
  json featured = nullptr;  // a scan that found no data recommends nothing
  if (a.featured >= 0 && a.verdict != Verdict::kNothingScanned) {
    const SettingResult& f = r.results[size_t(a.featured)];
    featured = {{"index", a.featured},
                {"recordsize", f.recordsize},
                {"compression", CompressionName(f.compression)}};
  }
  return json{{"verdict", summary ? VerdictName(summary->verdict) : "nothing_scanned"},
              {"summary", summary ? summary->sentence : ""},
              {"featured", featured},
              {"decision", DecisionJson(r, a)},
              {"per_directory", DirectoriesJson(r, a)},
              {"vdev_sizing", SizingJson(r, a)},
              {"ram_bytes", a.ram_bytes},
              {"ddt_format", FormatName(a.ddt_format)},
              {"thresholds",
               {{"dedup_pays_ratio", kDedupPaysRatio},
                {"dedup_not_worth_ratio", kDedupNotWorthRatio},
                {"ddt_ram_fraction", kDdtRamFraction},
                {"compression_pays_ratio", kCompressionPaysRatio},
                {"stronger_codec_gain", kStrongerCodecGain},
                {"codec_tie", kCodecTie},
                {"recordsize_gain", kRecordsizeGain},
                {"directory_gain", kDirectoryGain},
                {"directory_share", kDirectoryShare},
                {"no_ddt_share", kNoDdtShare}}},
              {"items", items}};
}

json BreakdownRows(const std::vector<BreakdownRow>& rows) {
  json out = json::array();
  for (const BreakdownRow& row : rows) {
    out.push_back(json{{"name", row.name},
                       {"files", row.files},
                       {"bytes", row.bytes},
                       {"lsize", row.lsize},
                       {"psize", row.psize},
                       {"psize_known", row.psize_known},
                       {"zero_lsize", row.zero_lsize},
                       {"duplicate_bytes", row.duplicate_bytes}});
  }
  return out;
}

// The breakdown of the recommended setting, saying which setting it is for.
json BreakdownJson(const Breakdowns* b, int index) {
  if (b == nullptr) {
    return json{{"setting_index", nullptr},     {"recordsize", nullptr},
                {"compression", nullptr},       {"sample_modulus", 1},
                {"zero_lsize_known", true},     {"zero_written_without_dedup", false},
                {"directories", json::array()}, {"extensions", json::array()}};
  }
  return json{{"setting_index", index},
              {"recordsize", b->recordsize},
              {"compression", CompressionName(b->compression)},
              {"sample_modulus", b->sample_modulus},
              {"zero_lsize_known", b->zero_lsize_known},
              {"zero_written_without_dedup", b->zero_written_without_dedup},
              {"directories", BreakdownRows(b->directories)},
              {"extensions", BreakdownRows(b->extensions)}};
}

json DedupSourcesJson(const DedupSources& d) {
  return {{"recordsize", d.recordsize},
          {"duplicate_files", d.duplicate_files},
          {"duplicate_file_bytes", d.duplicate_file_bytes},
          {"zero_blocks", d.zero_blocks},
          {"zero_block_bytes", d.zero_block_bytes},
          {"sample_modulus", d.sample_modulus}};
}

// The advice's setting's block size (the one its sentences use), else the first block size.
const DedupSources& FeaturedDedupSources(const ScanResult& r, const Advice& advice) {
  static const DedupSources kNone;
  if (advice.featured >= 0 && size_t(advice.featured) < r.results.size()) {
    return DedupSourcesOf(r, r.results[size_t(advice.featured)]);
  }
  return r.dedup_sources.empty() ? kNone : r.dedup_sources[0];
}

}  // namespace

std::string ToJson(const ScanResult& r) { return ToJson(r, ComputeAdvice(r)); }

std::string ToJson(const ScanResult& r, const Advice& advice) {
  json by_recordsize = json::array();
  for (const DedupSources& d : r.dedup_sources) by_recordsize.push_back(DedupSourcesJson(d));
  const ScanOptions& o = r.options;
  json skipped = json::object();
  for (const auto& [reason, n] : r.input.skipped) skipped[reason] = n;
  json errors = json::array();
  for (const PathError& e : r.input.errors) {
    errors.push_back(json{{"path", e.path},
                          {"error", e.error},
                          {"bytes", e.bytes},
                          {"bytes_in_figures", e.bytes_in_figures}});
  }
  json recordsizes = json::array();
  // The block sizes evaluated: a zvol's is its volblocksize (the options' recordsizes hold the
  // unused default there).
  if (o.volblocksize) {
    recordsizes.push_back(*o.volblocksize);
  } else {
    for (uint64_t rs : o.recordsizes) recordsizes.push_back(rs);
  }
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
  for (const SettingResult& s : r.results) results.push_back(Setting(s, o, r.input, format));
  json top_up = json::array();
  for (const TopUpSummary& t : r.input.top_up) {
    top_up.push_back({{"block_size", t.block_size},
                      {"topped", t.topped},
                      {"blocks_read_again", t.blocks},
                      {"bytes_read_again", t.bytes},
                      {"seconds", t.seconds},
                      {"left", t.topped ? json(nullptr) : json(t.left)}});
  }
  json out = {
      {"schema_version", kJsonSchemaVersion},
      {"zsim_version", ZSIM_VERSION_STRING},
      {"partial", r.partial},
      {"input",
       {{"paths", r.input.paths},
        {"files", r.input.files},
        {"directories", r.input.directories},
        {"bytes_logical", r.input.bytes_logical},
        {"bytes_data", r.input.bytes_data_known ? json(r.input.bytes_data) : json(nullptr)},
        {"bytes_read", r.input.bytes_read},
        {"bytes_unread", UnreadBytes(r.input.errors)},
        {"files_counted_twice", r.input.files_counted_twice},
        {"files_named", r.input.files_named},
        {"bytes_named", r.input.bytes_named},
        {"named_complete", r.input.named_complete},
        {"skipped", skipped},
        {"errors", errors},
        {"notes", r.input.notes},
        {"top_up", top_up}}},
      {"settings", settings},
      {"results", results},
      {"seconds", r.seconds},
      {"memory",
       {{"ddt_table_bytes", r.memory.table_bytes},
        {"ddt_table_entries", r.memory.table_entries},
        {"distinct_sketch_bytes", r.memory.sketch_bytes},
        {"file_state_bytes", r.memory.file_state_bytes}}},
      {"advice", AdviceJson(r, advice)},
      {"breakdown", BreakdownJson(BreakdownFor(r, advice.featured), advice.featured)},
      {"dedup_sources", DedupSourcesJson(FeaturedDedupSources(r, advice))},
      {"dedup_sources_by_recordsize", by_recordsize},
  };
  // `replace` keeps invalid UTF-8 visible as U+FFFD instead of throwing mid-report.
  EncodeNamesIn(out);  // names that are not UTF-8, losslessly (name_encoding.h)
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace zsim::report
