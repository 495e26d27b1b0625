#include "engine/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/base/size_suffix.h"
#include "engine/report/html_script.h"
#include "engine/report/json_report.h"
#include "engine/report/sizing.h"
#include "engine/report/text_report.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/zdb_text.h"

namespace zsim::report {
namespace {

constexpr size_t kBreakdownRows = 15;
constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

// A ratio as the settings table shows it: "~" and its interval when estimated from a sample.
std::string Estimated(double r, const std::optional<std::array<double, 2>>& ci95) {
  return ci95 ? HtmlEscape(fmt::format("~{}", RatioWithInterval(r, *ci95))) : Ratio(r);
}

// The embedded JSON: '<', '>' and '&' as \u escapes, so "</script>" or "<!--" inside a file
// name cannot end the data element. They only occur inside JSON strings, where \u is valid.
std::string ScriptSafeJson(const std::string& json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (char ch : json) {
    switch (ch) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

void Scanned(const ScanResult& r, std::string& out) {
  out += "<h2>What was scanned</h2>\n<p>";
  const uint64_t in_part = FilesInPart(r.input.errors);
  out += fmt::format("{} files{} in {} directories: {}, {:.1f} s.", r.input.files,
                     in_part ? fmt::format(" (and {} read in part, listed below)", in_part) : "",
                     r.input.directories, HtmlEscape(ScannedBytesText(r.input)), r.seconds);
  out += " Paths: ";
  for (size_t i = 0; i < r.input.paths.size(); ++i) {
    out += (i ? ", <code>" : "<code>") + HtmlEscape(r.input.paths[i]) + "</code>";
  }
  out += ".";
  if (r.input.skipped.empty()) {
    out += " Skipped: nothing.";
  } else {
    out += " Skipped:";
    bool first = true;
    for (const auto& [reason, n] : r.input.skipped) {
      out += fmt::format("{} {} {}", first ? "" : ",", n, HtmlEscape(reason));
      first = false;
    }
    out += ".";
  }
  for (const std::string& note : r.input.notes) out += " Note: " + HtmlEscape(note) + ".";
  out += "</p>\n";
  if (!r.input.errors.empty()) {
    out += "<p>" + HtmlEscape(PathErrorsHeading(r.input.errors)) + ":</p>\n<ul>\n";
    for (const PathError& e : r.input.errors) {
      out += "<li><code>" + HtmlEscape(e.path) + "</code>: " + HtmlEscape(e.error) +
             HtmlEscape(PathErrorExtent(e)) + "</li>\n";
    }
    out += "</ul>\n";
  }
  for (const TopUpSummary& t : r.input.top_up) {
    out += "<p>Top-up: " + HtmlEscape(TopUpSentence(t, r.options)) +
           (t.topped ? "." : " <code>" + HtmlEscape(t.left) + "</code>") + "</p>\n";
  }
}

void Charts(std::string& out) {
  static constexpr const char* kCaptions[] = {
      "Compression ratio against codec speed", "Dedup ratio by recordsize",
      "DDT histogram (allocated and referenced DSIZE per refcount bucket)",
      "Space saved per setting", "DDT RAM against the RAM budget"};
  out += "<h2>Charts</h2>\n<div class=\"charts\">\n";
  for (size_t i = 0; i < std::size(kChartIds); ++i) {
    out += fmt::format(
        "<figure><figcaption>{}</figcaption><div class=\"note\"></div>"
        "<svg id=\"{}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\">"
        "</svg></figure>\n",
        kCaptions[i], kChartIds[i], kCaptions[i]);
  }
  out += "</div>\n";
}

void SettingsTable(const ScanResult& r, const Advice& a, std::string& out) {
  out +=
      "<h2>Settings evaluated (recordsize &times; compression)</h2>\n<div "
      "class=\"scroll\"><table>\n";
  out +=
      "<tr><th>recordsize</th><th class=\"l\">compression</th><th>logical</th><th>physical</th>"
      "<th>allocated</th><th>compressratio</th><th>dedup</th><th>combined</th>"
      "<th>used (no dedup)</th><th>saved</th><th>used with dedup</th><th>saved with dedup</th>"
      "<th>ALLOC (raw)</th></tr>\n";
  // A scan that found no data recommends nothing (its first row is shown below).
  const bool recommends = a.verdict != Verdict::kNothingScanned;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const SettingResult& s = r.results[i];
    const SettingSpace space = SpaceOf(s, r.options, r.input);
    // As the text table: "~" on every figure resting on a sampled one.
    const EstimatedFigures e = EstimatedFiguresOf(s);
    out += fmt::format(
        "<tr{}><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        recommends && int(i) == a.featured ? " class=\"featured\"" : "",
        zfs::NiceBytes(s.recordsize), CompressionName(s.compression),
        FormatBytes(space.logical_bytes), Marked(e.without_dedup, FormatBytes(s.psize)),
        Marked(e.without_dedup, FormatBytes(s.asize)), Estimated(s.compressratio, s.ci95),
        s.dedup.ratio_ci95 ? Estimated(s.dedup.ratio, s.dedup.ratio_ci95)
                           : Marked(e.with_dedup, Ratio(s.dedup.ratio)),
        Marked(e.with_dedup, Ratio(s.dedup.zdb_total)),
        Marked(e.without_dedup, FormatBytes(s.used)),
        space.base_bytes > 0 ? Marked(e.without_dedup, SavedText(space.saved)) : "-",
        Marked(e.with_dedup, FormatBytes(space.stored_dedup_bytes)),
        space.base_bytes > 0 ? Marked(e.with_dedup, SavedText(space.saved_dedup)) : "-",
        Marked(e.with_dedup, FormatBytes(s.pool_alloc)));
  }
  out +=
      "</table></div>\n<p class=\"meta\">" + HtmlEscape(SavedBaseText(r)) +
      " Stored is usable space as <code>zfs get used</code> counts it (parity and padding "
      "deflated by the vdev's ratio); with dedup: used as dedup writes the data, less what dedup "
      "removes, plus the DDT, deflated alike. ALLOC (raw): <code>zpool list</code> ALLOC with "
      "dedup, parity and the pool's own metadata included. " +
      std::string(recommends ? "Highlighted: the setting the advice recommends, shown in full "
                               "below. "
                             : "") +
      "~: estimated from a sample, with the 95% interval "
      "(<code>--exact</code> "
      "computes every block).</p>\n";
}

// The text report's note under a section whose figures rest on a sample (SampledNoteText).
std::string SampledNoteHtml(const SettingResult& f, bool with_codec, bool calibrated = false) {
  const std::string note = SampledNoteText(f, with_codec, calibrated);
  return note.empty() ? note : "<p class=\"meta\">" + HtmlEscape(note) + "</p>\n";
}

void Ddt(const ScanResult& r, const Advice& a, std::string& out) {
  if (a.featured < 0) return;
  const SettingResult& f = r.results[size_t(a.featured)];
  out += fmt::format("<h2>DDT histogram: {} {}, compression {} (as zdb -DD prints it)</h2>\n",
                     BlockSizeProperty(r.options), zfs::NiceBytes(f.recordsize),
                     CompressionName(f.compression));
  out += SampledNoteHtml(f, /*with_codec=*/true);
  out += "<p>" + HtmlEscape(kZdbRoundingNote) + "</p>\n";
  out += "<pre>" + HtmlEscape(ZdbBlock(f, a.ddt_format, r.options.profile)) + "</pre>\n";
  out += "<h2>DDT size and RAM</h2>\n" + SampledNoteHtml(f, /*with_codec=*/false) +
         "<table>\n<tr><th class=\"l\">format</th><th>in core</th>"
         "<th>on disk</th><th>log</th><th>L2ARC headers</th><th>320 B/entry rule</th></tr>\n";
  for (const DdtFootprint& fp : f.dedup.footprints) {
    out += fmt::format(
        "<tr><td class=\"l\">{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        fp.format == DdtFormat::kFast ? "fast" : "legacy",
        fp.format == a.ddt_format ? " (in force)" : "", FormatBytes(fp.in_core_bytes),
        FormatBytes(fp.on_disk_bytes), FormatBytes(fp.log_bytes),
        FormatBytes(fp.l2arc_header_bytes), FormatBytes(fp.rule_of_thumb_320));
  }
  out += "</table>\n";
  if (const AdviceItem* m = a.Find(AdviceKind::kDdtMemory)) {
    out += fmt::format("<p>Against {} of RAM: {}</p>\n", FormatBytes(a.ram_bytes),
                       HtmlEscape(m->sentence));
  }
}

void BlockSizes(const ScanResult& r, const Advice& a, std::string& out) {
  if (a.featured < 0) return;
  const SettingResult& f = r.results[size_t(a.featured)];
  out += fmt::format("<h2>Block sizes and special vdev: {} {}, compression {}</h2>\n",
                     BlockSizeProperty(r.options), zfs::NiceBytes(f.recordsize),
                     CompressionName(f.compression));
  out += SampledNoteHtml(f, /*with_codec=*/true, /*calibrated=*/true);
  if (!f.block_sizes.empty()) {
    out +=
        "<p class=\"meta\">Data blocks by psize, as <code>zdb -bb</code> groups them (count: "
        "every reference; unique: each block once, as dedup allocates).</p>\n<table>\n"
        "<tr><th>block size</th><th>count</th><th>psize</th><th>asize</th><th>cum asize</th>"
        "<th>unique</th><th>unique asize</th></tr>\n";
    uint64_t total = 0, cum = 0;
    for (const BlockSizeBucket& b : f.block_sizes) total += b.asize;
    for (const BlockSizeBucket& b : f.block_sizes) {
      cum += b.asize;
      out += fmt::format(
          "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{}</td><td>{}</td>"
          "</tr>\n",
          zfs::NiceBytes(b.size), b.blocks, FormatBytes(b.psize), FormatBytes(b.asize),
          total > 0 ? 100.0 * double(cum) / double(total) : 0.0, b.unique_blocks,
          FormatBytes(b.unique_asize));
    }
    out += "</table>\n";
  }
  const VdevSizing sizing = SizeVdevs(r, a);
  out += fmt::format(
      "<p>A special vdev (mirror, ashift {}) would hold{}:</p>\n<table>\n<tr><th "
      "class=\"l\">special_small_blocks</th><th>total</th><th>metadata</th><th>DDT</th>"
      "<th>small blocks</th><th>their size</th></tr>\n",
      r.options.ashift,
      a.dedup_on || a.dedup_with_hardware ? " (the DDT too, unless a dedup vdev takes it)" : "");
  for (const SpecialVdevSize& v : sizing.special) {
    if (v.threshold != 0 && v.small_blocks == 0) continue;
    out += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        v.threshold == 0 ? std::string("(metadata only)") : zfs::NiceBytes(v.threshold),
        FormatBytes(v.total_bytes), FormatBytes(v.metadata_bytes), FormatBytes(v.ddt_bytes),
        v.small_blocks, FormatBytes(v.small_block_bytes));
  }
  out += "</table>\n";
  if (sizing.dedup_vdev_bytes > 0) {
    out += fmt::format("<p>A dedup vdev would hold the DDT: {} on disk.</p>\n",
                       FormatBytes(sizing.dedup_vdev_bytes));
  }
  out +=
      "<p><strong>Special and dedup vdevs hold blocks the pool cannot live without: give them "
      "the pool's redundancy (a mirror at least); losing one loses the pool.</strong></p>\n";
}

void BreakdownTable(const char* title, const Breakdowns& b, std::vector<BreakdownRow> rows,
                    bool by_compression, std::string& out) {
  if (by_compression) {
    std::stable_sort(rows.begin(), rows.end(), [&b](const BreakdownRow& x, const BreakdownRow& y) {
      return BreakdownSaved(b, x) > BreakdownSaved(b, y);
    });
  }
  out += fmt::format(
      "<h3>{}</h3>\n<table>\n<tr><th class=\"l\">name</th><th>files</th>"
      "<th>logical</th><th>duplicate</th><th>saved by compression</th>"
      "<th>compressratio</th></tr>\n",
      title);
  for (size_t i = 0; i < rows.size() && i < kBreakdownRows; ++i) {
    const BreakdownRow& row = rows[i];
    out += fmt::format(
        "<tr><td class=\"l\"><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        HtmlEscape(row.name), row.files, FormatBytes(row.lsize + row.zero_lsize),
        FormatBytes(row.duplicate_bytes),
        row.psize_known ? FormatBytes(BreakdownSaved(b, row)) : "-",
        row.psize_known && row.psize > 0 ? Ratio(double(row.lsize) / double(row.psize)) : "-");
  }
  out += "</table>\n";
}

void Breakdown(const ScanResult& r, const Advice& a, std::string& out) {
  out += "<h2>Breakdown</h2>\n";
  const Breakdowns* found = BreakdownFor(r, a.featured);
  const Breakdowns b = found ? *found : Breakdowns{};
  if (b.directories.empty() && b.extensions.empty()) {
    out +=
        "<p class=\"meta\">No breakdown by directory or file type was collected by this "
        "scan.</p>\n";
    return;
  }
  out += fmt::format("<p class=\"meta\">For the recommended setting: {} {}, compression {}.</p>\n",
                     BlockSizeProperty(r.options), zfs::NiceBytes(b.recordsize),
                     CompressionName(b.compression));
  out += SampledNoteHtml(r.results[size_t(a.featured)], /*with_codec=*/true);
  if (!b.zero_lsize_known) {
    out +=
        "<p class=\"meta\">Saved by directory and file type leaves out all-zero records: this "
        "state, of format 18 or older or merged with one, did not keep them per directory.</p>\n";
  }
  BreakdownTable("Top directories by duplicate bytes", b, b.directories, false, out);
  BreakdownTable("Top file types by duplicate bytes", b, b.extensions, false, out);
  BreakdownTable("Top directories by compression savings", b, b.directories, true, out);
  BreakdownTable("Top file types by compression savings", b, b.extensions, true, out);
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out += char(b0);
      ++i;
      continue;
    }
    // Sequence length and the allowed range of the second byte (RFC 3629 table).
    size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      if (b0 == 0xE0) lo = 0xA0;  // no overlong forms
      if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      if (b0 == 0xF0) lo = 0x90;  // no overlong forms
      if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    }
    bool valid = len > 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      valid = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
    }
    if (valid) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

std::string HtmlEscape(std::string_view text) {
  const std::string valid = ValidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  for (char ch : valid) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      case '\n':
      case '\t':
        out += ch;
        break;
      default:
        // Control bytes (ESC, BEL, CR ... DEL) from file names show as '?', as in the text report.
        out += (static_cast<unsigned char>(ch) < 0x20 || ch == '\x7f') ? '?' : ch;
    }
  }
  return out;
}

std::string ToHtml(const ScanResult& r) { return ToHtml(r, ComputeAdvice(r)); }

std::string ToHtml(const ScanResult& r, const Advice& a) {
  const ScanOptions& o = r.options;
  const AdviceItem* summary = a.Find(AdviceKind::kSummary);
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  // No network: nothing may be fetched, whatever the page holds.
  out +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n";
  out += "<title>zsim report</title>\n<style>" + std::string(kHtmlStyle) + "</style>\n</head>\n";
  out += "<body>\n<h1>zsim report</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">zsim {}: what ZFS {} would store (ashift {}, vdev {}, copies {}, "
      "checksum {}).{}</p>\n",
      ZSIM_VERSION_STRING, ProfileName(o.profile), o.ashift, HtmlEscape(VdevName(o.vdev)), o.copies,
      o.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128",
      r.partial ? " <strong>PARTIAL: " + HtmlEscape(PartialSentence(r)) + "</strong>"
                : std::string());
  if (summary != nullptr) {
    out += fmt::format("<p class=\"verdict {}\" id=\"verdict\">{}</p>\n",
                       VerdictName(summary->verdict), HtmlEscape(summary->sentence));
  }
  if (const std::string unread = UnreadSentence(r); !unread.empty()) {
    out += "<p><strong>NOT READ: " + HtmlEscape(unread) + "</strong></p>\n";
  }
  if (const std::string twice = CountedTwiceSentence(r); !twice.empty()) {
    out += "<p><strong>COUNTED TWICE: " + HtmlEscape(twice) + "</strong></p>\n";
  }
  out += "<h2>Advice</h2>\n<ul class=\"advice\">\n";
  for (const AdviceItem& item : a.items) {
    out += fmt::format(
        "<li data-kind=\"{}\" data-verdict=\"{}\"><span class=\"kind\">{}</span>{}"
        "</li>\n",
        AdviceKindName(item.kind), VerdictName(item.verdict), AdviceKindName(item.kind),
        HtmlEscape(item.sentence));
  }
  out += "</ul>\n";
  Scanned(r, out);
  Charts(out);
  SettingsTable(r, a, out);
  Ddt(r, a, out);
  BlockSizes(r, a, out);
  Breakdown(r, a, out);
  out += "<script type=\"application/json\" id=\"zsim-data\">" + ScriptSafeJson(ToJson(r, a)) +
         "</script>\n";
  out += "<script>" + std::string(kHtmlScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace zsim::report
