#include "engine/report/text_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/base/size_suffix.h"
#include "engine/report/codec_speed.h"
#include "engine/report/name_encoding.h"
#include "engine/report/sizing.h"
#include "engine/report/text_table.h"
#include "engine/zfs/ddt_footprint.h"
#include "engine/zfs/nicenum.h"
#include "engine/zfs/zdb_text.h"

namespace zsim::report {
namespace {

constexpr size_t kBreakdownRows = 10;

std::string Ratio(double r) { return fmt::format("{:.2f}x", r); }

std::string Section(const char* title) { return fmt::format("\n== {} ==\n", title); }

// A file name on one line: control characters (C0, DEL, C1) become '?' (name_encoding.h).
std::string Printable(const std::string& name) { return TerminalName(name); }

const char* FormatName(DdtFormat f) { return f == DdtFormat::kFast ? "fast" : "legacy"; }

void Scanned(const ScanResult& r, size_t width, std::string& out) {
  out += Section(kSectionScanned);
  const uint64_t in_part = FilesInPart(r.input.errors);
  out +=
      Wrap(fmt::format("{} file{}{} in {} director{}: {}, {:.1f} s", r.input.files,
                       r.input.files == 1 ? "" : "s",
                       in_part ? fmt::format(" (and {} read in part, listed below)", in_part) : "",
                       r.input.directories, r.input.directories == 1 ? "y" : "ies",
                       ScannedBytesText(r.input), r.seconds),
           width, "", "  ");
  if (r.input.skipped.empty()) {
    out += "Skipped: nothing\n";
  } else {
    std::string list;
    for (const auto& [reason, n] : r.input.skipped) {
      list += fmt::format("{}{} {}", list.empty() ? "" : ", ", n, reason);
    }
    out += "Skipped: " + list + "\n";
  }
  for (const std::string& note : r.input.notes) out += Wrap("Note: " + note + ".", width, "", "  ");
  if (!r.input.errors.empty()) {
    out += PathErrorsHeading(r.input.errors) + ":\n";
    for (const PathError& e : r.input.errors) {
      out += fmt::format("  {}: {}{}\n", Printable(e.path), e.error, PathErrorExtent(e));
    }
  }
  for (const TopUpSummary& t : r.input.top_up) {
    out += Wrap("Top-up: " + TopUpSentence(t, r.options), width, "", "  ");
    // The reason names a file: on a line of its own, not folded.
    if (!t.topped) out += "  " + Printable(t.left) + "\n";
  }
}

}  // namespace

std::string ScannedBytesText(const InputSummary& in) {
  // The sizes (st_size), the data (holes not counted: the base of the saved figures) and what
  // this run read, which is the data unless a --since rescan left unchanged files unread.
  std::string text = FormatBytes(in.bytes_logical) + " in size";
  if (in.bytes_data_known)
    text += ", " + FormatBytes(in.bytes_data) + " of data (holes not counted)";
  if (!in.bytes_data_known || in.bytes_read != in.bytes_data) {
    text += ", " + FormatBytes(in.bytes_read) + " read" +
            (in.bytes_data_known ? "" : " (holes are not read)");
  }
  return text;
}

std::string SampledNoteText(const SettingResult& f, bool with_codec, bool calibrated) {
  const EstimatedFigures e = EstimatedFiguresOf(f);
  const bool table = e.table;
  const bool codec = with_codec && e.without_dedup;
  if (!table && !codec) return "";
  std::string what;
  if (table) {
    const uint64_t m = f.dedup.sample_modulus;
    what = fmt::format(
        "the dedup table kept 1/{} of the blocks (by fingerprint), and the counts and sizes here "
        "are {}",
        m,
        calibrated ? "its sample's, scaled to add up to the setting's psize"
                   : fmt::format("those of its sample scaled up {} times", m));
  }
  if (codec) {
    what += std::string(what.empty() ? "" : "; ") + "the sizes after compression rest on " +
            CompressionName(f.compression) + "'s sample of the unique blocks";
  }
  // The settings table gives the codec's interval and a sampled table's dedup ratio's.
  return "~ estimates: " + what +
         (codec ? " (intervals in the settings table)."
                : " (the dedup ratio's interval in the settings table).");
}

std::string SavedBaseText(const ScanResult& r) {
  if (!r.input.bytes_data_known) {
    return "saved: 1 - stored/logical. Logical is the data in records, all-zero ones included "
           "(compression makes them holes): one base for the rows of a record size, not between "
           "record sizes (a record pads a file's tail), so compare those by what they store (a "
           "state saved by zsim before state format 22 does not keep the files' data size).";
  }
  return fmt::format(
      "saved: 1 - stored/data, one base for every row: data is the {} the files hold (holes not "
      "counted). Logical is the data in the row's records, all-zero ones included (compression "
      "makes them holes; a record pads a file's tail).",
      FormatBytes(r.input.bytes_data));
}

namespace {

void Settings(const ScanResult& r, const Advice& a, const TextOptions& t, std::string& out) {
  // Zvols are cut by volblocksize: the table, and every heading below, name it so.
  out += Section(r.options.volblocksize ? "Settings evaluated (volblocksize x compression)"
                                        : kSectionSettings);
  TextTable table({{"", true, 0},
                   {BlockSizeProperty(r.options), true, 0},
                   {"compression", true, 0},
                   {"logical", false, 4},
                   {"physical", false, 5},
                   {"allocated", false, 7},
                   {"compress", false, 0},
                   {"dedup", false, 0},
                   {"combined", false, 6},
                   {"used", false, 0},
                   {"saved", false, 0},
                   {"used+dedup", false, 2},
                   {"saved+dedup", false, 0},
                   {"ALLOC(raw)", false, 3}});
  std::string estimates;  // one line per setting with a sampled figure
  // A scan that found no data recommends nothing: its first row is shown below, unstarred.
  const bool recommends = a.verdict != Verdict::kNothingScanned;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const SettingResult& s = r.results[i];
    const SettingSpace space = SpaceOf(s, r.options, r.input);
    const bool sampled_compress = s.ci95.has_value();
    const bool sampled_dedup = s.dedup.ratio_ci95.has_value();
    // Every figure resting on a sampled one is an estimate too, and marked: the sizes after
    // compression on a sampled codec's, the dedup ratio (of DSIZE) on both, the figures with
    // dedup on the sampled table's.
    const EstimatedFigures e = EstimatedFiguresOf(s);
    table.AddRow({recommends && int(i) == a.featured ? "*" : "", zfs::NiceBytes(s.recordsize),
                  CompressionName(s.compression), zfs::NiceBytes(space.logical_bytes),
                  Marked(e.without_dedup, zfs::NiceBytes(s.psize)),
                  Marked(e.without_dedup, zfs::NiceBytes(s.asize)),
                  Marked(sampled_compress, Ratio(s.compressratio)),
                  Marked(e.with_dedup, Ratio(s.dedup.ratio)),
                  Marked(e.with_dedup, Ratio(s.dedup.zdb_total)),
                  Marked(e.without_dedup, zfs::NiceBytes(s.used)),
                  space.base_bytes > 0 ? Marked(e.without_dedup, SavedText(space.saved)) : "-",
                  Marked(e.with_dedup, zfs::NiceBytes(space.stored_dedup_bytes)),
                  space.base_bytes > 0 ? Marked(e.with_dedup, SavedText(space.saved_dedup)) : "-",
                  Marked(e.with_dedup, zfs::NiceBytes(s.pool_alloc))});
    if (!sampled_compress && !sampled_dedup) continue;
    std::string line =
        fmt::format("{} {}:", zfs::NiceBytes(s.recordsize), CompressionName(s.compression));
    if (sampled_compress) {
      line += " compress " + RatioWithInterval(s.compressratio, *s.ci95);
    }
    if (sampled_dedup) {
      line += fmt::format(
          "{} dedup {} (the dedup table kept 1/{} of the blocks)", sampled_compress ? ";" : "",
          RatioWithInterval(s.dedup.ratio, *s.dedup.ratio_ci95), s.dedup.sample_modulus);
    }
    estimates += Wrap(line, t.width, "  ", "    ");
  }
  out += table.Render(t.width, t.wide);
  out += Wrap(
      SavedBaseText(r) +
          " Stored is usable space as `zfs get used` counts it (parity and padding deflated by "
          "the vdev's ratio): used without dedup; used+dedup is used as dedup writes the data, "
          "less what dedup removes, plus the DDT, deflated the same way. ALLOC(raw): `zpool "
          "list` ALLOC with dedup, parity and the pool's own metadata included." +
          std::string(recommends ? " * the recommended setting, featured below." : "") +
          std::string(t.wide ? "" : " --wide shows every column."),
      t.width, "", "");
  if (!estimates.empty()) {
    out += Wrap(
        "~ estimates from a sample (`--exact` computes every block), and the figures resting on "
        "them; the sampled ones with their 95% intervals:",
        t.width, "", "");
    out += estimates;
  }
}

std::string SampledNote(const SettingResult& f, bool with_codec, size_t width,
                        bool calibrated = false) {
  const std::string note = SampledNoteText(f, with_codec, calibrated);
  return note.empty() ? note : Wrap(note, width, "", "  ");
}

void Histogram(const ScanResult& r, const SettingResult& f, const Advice& a, const TextOptions& t,
               std::string& out) {
  out += Section(kSectionHistogram);
  out +=
      fmt::format("{} {}, compression {}, as `zdb -DD` prints it:\n", BlockSizeProperty(r.options),
                  zfs::NiceBytes(f.recordsize), CompressionName(f.compression));
  out += Wrap(fmt::format("({})", kZdbRoundingNote), t.width, "", "  ");
  out += SampledNote(f, /*with_codec=*/true, t.width);
  out += ZdbBlock(f, a.ddt_format, r.options.profile);
}

void DdtSize(const SettingResult& f, const Advice& a, const TextOptions& t, std::string& out) {
  out += Section(kSectionDdtSize);
  const uint64_t entries = f.dedup.unique_entries + f.dedup.duplicate_entries;
  out += fmt::format("{} entries ({} unique, {} duplicate)\n", entries, f.dedup.unique_entries,
                     f.dedup.duplicate_entries);
  // The entry counts and so the sizes are the sampled table's, scaled; a sampled codec moves
  // only which blocks embed, a few entries.
  out += SampledNote(f, /*with_codec=*/false, t.width);
  for (const DdtFootprint& fp : f.dedup.footprints) {
    std::string line = fmt::format("{:<6} format{}: {} in core, {} on disk", FormatName(fp.format),
                                   fp.format == a.ddt_format ? " (in force)" : "",
                                   FormatBytes(fp.in_core_bytes), FormatBytes(fp.on_disk_bytes));
    if (fp.log_bytes > 0) line += fmt::format(", log up to {}", FormatBytes(fp.log_bytes));
    if (entries > 0) {
      line += fmt::format(", {} per entry in core", FormatBytes(fp.in_core_bytes / entries));
    }
    line += fmt::format("; L2ARC headers {}", FormatBytes(fp.l2arc_header_bytes));
    out += Wrap(line, t.width, "", "  ");
  }
  if (f.dedup.footprints.empty()) out += "(the engine computed no DDT size for this setting)\n";
  if (!f.dedup.footprints.empty() && f.dedup.footprints.front().leaves_from_keys) {
    out += Wrap(
        "The ZAP leaves were laid out on this table's own SHA-256 keys (the DDT's keys: the "
        "blocks' where they are stored as is, the written bytes' where they compress): the "
        "sizes are this data's, not a typical table's.",
        t.width, "", "  ");
  }
  if (entries > 0) {
    out += Wrap(fmt::format("For comparison: 320 B per entry (rule of thumb) = {}; 1.25 GiB per "
                            "TiB (zfsconcepts) = {}",
                            FormatBytes(entries * 320), FormatBytes(zfs::ManPageDedupRam(f.lsize))),
                t.width, "", "  ");
  }
  if (const AdviceItem* m = a.Find(AdviceKind::kDdtMemory)) {
    out += Wrap(fmt::format("Against {} of RAM: {}", FormatBytes(a.ram_bytes), m->sentence),
                t.width, "", "  ");
  }
}

void BlockSizes(const ScanResult& r, const SettingResult& f, const Advice& a, const TextOptions& t,
                std::string& out) {
  out += Section(kSectionBlockSizes);
  if (f.block_sizes.empty()) {
    out += "(no data blocks: nothing for a special vdev but metadata)\n";
  } else {
    out += fmt::format("{} {}, compression {}: data blocks by psize, as `zdb -bb` groups them\n",
                       BlockSizeProperty(r.options), zfs::NiceBytes(f.recordsize),
                       CompressionName(f.compression));
    out += SampledNote(f, /*with_codec=*/true, t.width, /*calibrated=*/true);
    uint64_t total = 0;
    for (const BlockSizeBucket& b : f.block_sizes) total += b.asize;
    TextTable table({{"block size", false, 0},
                     {"count", false, 0},
                     {"psize", false, 0},
                     {"asize", false, 0},
                     {"cum asize", false, 0},
                     {"unique", false, 1},
                     {"unique asize", false, 1}});
    uint64_t cum = 0;
    for (const BlockSizeBucket& b : f.block_sizes) {
      cum += b.asize;
      table.AddRow({zfs::NiceBytes(b.size), zfs::NiceNumber(b.blocks), zfs::NiceBytes(b.psize),
                    zfs::NiceBytes(b.asize),
                    fmt::format("{:.1f}%", total > 0 ? 100.0 * double(cum) / double(total) : 0.0),
                    zfs::NiceNumber(b.unique_blocks), zfs::NiceBytes(b.unique_asize)});
    }
    out += table.Render(t.width, t.wide, "  ");
  }
  const VdevSizing sizing = SizeVdevs(r, a);
  if (sizing.special.empty()) return;
  std::string lines;
  for (const SpecialVdevSize& v : sizing.special) {
    if (v.threshold != 0 && v.small_blocks == 0) continue;  // changes nothing
    lines += fmt::format(
        "  {:<28} {:>10}  (metadata {}{}{})\n",
        v.threshold == 0 ? std::string("metadata only")
                         : fmt::format("special_small_blocks={}", zfs::NiceBytes(v.threshold)),
        FormatBytes(v.total_bytes), FormatBytes(v.metadata_bytes),
        v.ddt_bytes > 0 ? fmt::format(", DDT {}", FormatBytes(v.ddt_bytes)) : "",
        v.threshold == 0
            ? ""
            : fmt::format(", {} block{} {}", zfs::NiceNumber(v.small_blocks),
                          v.small_blocks == 1 ? "" : "s", FormatBytes(v.small_block_bytes)));
  }
  out += Wrap(fmt::format("A special vdev (mirror, ashift {}) would hold{}:", r.options.ashift,
                          a.dedup_on || a.dedup_with_hardware
                              ? " (the DDT too, unless a dedup vdev takes it)"
                              : ""),
              t.width, "", "  ");
  out += lines;
  if (sizing.dedup_vdev_bytes > 0) {
    out += fmt::format("A dedup vdev would hold the DDT: {} on disk.\n",
                       FormatBytes(sizing.dedup_vdev_bytes));
  }
  out += Wrap(
      "Special and dedup vdevs hold blocks the pool cannot live without: give them the pool's "
      "redundancy (a mirror at least); losing one loses the pool.",
      t.width, "", "  ");
}

// A name cut to `width` columns, its middle replaced by "...": the two ends say most.
std::string Shortened(const std::string& name, size_t width) {
  if (DisplayWidth(name) <= width || width < 8) return name;
  std::vector<std::string> chars;  // UTF-8 characters
  for (size_t i = 0; i < name.size();) {
    size_t n = 1;
    while (i + n < name.size() && (static_cast<unsigned char>(name[i + n]) & 0xC0) == 0x80) ++n;
    chars.push_back(name.substr(i, n));
    i += n;
  }
  const size_t keep = width - 3, head = keep / 3, tail = keep - head;
  std::string out;
  for (size_t i = 0; i < head; ++i) out += chars[i];
  out += "...";
  for (size_t i = chars.size() - tail; i < chars.size(); ++i) out += chars[i];
  return out;
}

void BreakdownTable(const char* title, const Breakdowns& b, std::vector<BreakdownRow> rows,
                    bool by_compression, const TextOptions& t, std::string& out) {
  if (by_compression) {
    std::stable_sort(rows.begin(), rows.end(), [&b](const BreakdownRow& x, const BreakdownRow& y) {
      return BreakdownSaved(b, x) > BreakdownSaved(b, y);
    });
  }
  out += fmt::format("{}:\n", title);
  // The numbers take 53 columns with the indent; the name gets the rest of the width.
  const size_t name_width = t.wide || t.width < 53 + 20 ? size_t(4096) : t.width - 53;
  // logical, duplicate and saved on one footing, the row's records (lsize, all-zero ones
  // included): beside the files' st_size, the duplicate bytes of padded records could exceed it.
  TextTable table({{"files", false, 0},
                   {"logical", false, 0},
                   {"duplicate", false, 0},
                   {"saved", false, 0},
                   {"compress", false, 0},
                   {"name", true, 0}});
  for (size_t i = 0; i < rows.size() && i < kBreakdownRows; ++i) {
    const BreakdownRow& row = rows[i];
    table.AddRow(
        {std::to_string(row.files), FormatBytes(row.lsize + row.zero_lsize),
         FormatBytes(row.duplicate_bytes),
         row.psize_known ? FormatBytes(BreakdownSaved(b, row)) : "-",
         row.psize_known && row.psize > 0 ? Ratio(double(row.lsize) / double(row.psize)) : "-",
         Shortened(Printable(row.name), name_width)});
  }
  out += table.Render(t.width, true, "  ");
}

void Breakdown(const ScanResult& r, const Advice& a, const TextOptions& t, std::string& out) {
  out += Section(kSectionBreakdown);
  const Breakdowns* b = BreakdownFor(r, a.featured);
  if (b == nullptr) {
    out += "(no breakdown by directory or file type was collected by this scan)\n";
    return;
  }
  if (b->directories.empty() && b->extensions.empty()) {
    out += "(no file holds data: nothing to break down)\n";
    return;
  }
  out += fmt::format(
      "{} {}, compression {}{}\n", BlockSizeProperty(r.options), zfs::NiceBytes(b->recordsize),
      CompressionName(b->compression),
      b->sample_modulus > 1
          ? fmt::format("; duplicate bytes estimated from 1/{} of the blocks", b->sample_modulus)
          : "");
  // Its saved and compress columns rest on the codec's sample where the setting's do.
  if (const SettingResult& f = r.results[size_t(a.featured)]; f.ci95) {
    out += Wrap(fmt::format("~ estimates: saved and compress rest on {}'s sample of the unique "
                            "blocks (intervals in the settings table).",
                            CompressionName(f.compression)),
                t.width, "", "  ");
  } else if (EstimatedFiguresOf(f).table) {
    // The codec's own figures are exact (a census of the references), but each row's share of
    // them rests on the references of the keys the table kept.
    out += Wrap(fmt::format("~ estimates: saved and compress rest on the 1/{} of the blocks the "
                            "dedup table kept (the rows add up to the settings table).",
                            f.dedup.sample_modulus),
                t.width, "", "  ");
  }
  if (!b->zero_lsize_known) {
    out +=
        "(saved by directory and file type leaves out all-zero records: this state, of format "
        "18 or older or merged with one, did not keep them per directory)\n";
  }
  BreakdownTable("Top directories by duplicate bytes", *b, b->directories, false, t, out);
  BreakdownTable("Top file types by duplicate bytes", *b, b->extensions, false, t, out);
  BreakdownTable("Top directories by compression savings", *b, b->directories, true, t, out);
  BreakdownTable("Top file types by compression savings", *b, b->extensions, true, t, out);
}

// One line: each codec's CPU seconds per GB on this CPU (one core), at the first recordsize
// (a sampled scan ran them on a share of the unique blocks).
void CodecCost(const ScanResult& r, const TextOptions& t, std::string& out) {
  std::string line;
  for (const SettingResult& s : r.results) {
    if (s.recordsize != r.results.front().recordsize || s.codec_bytes == 0 ||
        s.compression.algorithm == CompressionAlgorithm::kOff) {
      continue;
    }
    line += fmt::format("{}{} {:.2f}", line.empty() ? "" : ", ", CompressionName(s.compression),
                        CodecCpuSecondsPerGb(s));
  }
  if (line.empty()) return;
  out += Wrap("Codec CPU s/GB on this CPU (one core): " + line, t.width, "", "  ");
}

}  // namespace

std::string RatioWithInterval(double ratio, const std::array<double, 2>& ci95) {
  const auto [lo, hi] = PrintedInterval(ci95);
  // "±" only where the interval is about symmetric: a skewed one (few sampled blocks, a ratio
  // near its floor of 1) would read "1.28x ±1.41", a low end below zero the bounds deny.
  const double below = std::max(0.0, ratio - lo), above = std::max(0.0, hi - ratio);
  if (above > 1.5 * below + 0.015 || below > 1.5 * above + 0.015) {
    return fmt::format("{:.2f}x ({:.2f}x-{:.2f}x)", ratio, lo, hi);
  }
  return fmt::format("{:.2f}x ±{:.2f} ({:.2f}x-{:.2f}x)", ratio, std::max(below, above), lo, hi);
}

std::string TopUpSentence(const TopUpSummary& t, const ScanOptions& options) {
  const std::string row =
      fmt::format("{} {}", BlockSizeProperty(options), zfs::NiceBytes(t.block_size));
  const std::string blocks = fmt::format("{} block{}", t.blocks, t.blocks == 1 ? "" : "s");
  if (t.topped && t.for_interval) {
    return fmt::format(
        "{}: its sampled codecs whose sample was wider than ±0.5% were run on the {} they had "
        "skipped ({}, {:.2f} s), every unique block; exact where not marked ~",
        row, blocks, FormatBytes(t.bytes), t.seconds);
  }
  if (t.topped) {
    return fmt::format(
        "{} has few unique blocks: its sampled codecs {}, as many as a tree of its unique blocks "
        "asks for; exact where not marked ~",
        row,
        t.blocks == 0 ? std::string("had already run on them (none read again)")
                      : fmt::format("were run again on {} they had skipped ({}, {:.2f} s)", blocks,
                                    FormatBytes(t.bytes), t.seconds));
  }
  return fmt::format(
      "{}: its sampled codecs were not run again on the blocks they had skipped{}, "
      "so its ~ figures keep their intervals:",
      row,
      t.blocks == 0
          ? std::string()
          : fmt::format(" ({} read, {}, {:.2f} s)", blocks, FormatBytes(t.bytes), t.seconds));
}

std::string ToText(const ScanResult& r) { return ToText(r, ComputeAdvice(r)); }

std::string ToText(const ScanResult& r, const Advice& a, const TextOptions& t) {
  const ScanOptions& o = r.options;
  std::string out;
  out += fmt::format("zsim {}: what ZFS {} would store (ashift {}, vdev {}, copies {})\n",
                     ZSIM_VERSION_STRING, ProfileName(o.profile), o.ashift, VdevName(o.vdev),
                     o.copies);
  if (r.partial) out += Wrap(PartialSentence(r), t.width, "PARTIAL: ", "  ");
  if (const AdviceItem* s = a.Find(AdviceKind::kSummary)) {
    out += Wrap(s->sentence, t.width, "Verdict: ", "  ");
  }
  if (const std::string unread = UnreadSentence(r); !unread.empty()) {
    out += Wrap(unread, t.width, "NOT READ: ", "  ");
  }
  if (const std::string twice = CountedTwiceSentence(r); !twice.empty()) {
    out += Wrap(twice, t.width, "COUNTED TWICE: ", "  ");
  }
  Scanned(r, t.width, out);
  Settings(r, a, t, out);
  if (a.featured >= 0) {
    const SettingResult& f = r.results[size_t(a.featured)];
    Histogram(r, f, a, t, out);
    DdtSize(f, a, t, out);
    BlockSizes(r, f, a, t, out);
  }
  Breakdown(r, a, t, out);
  CodecCost(r, t, out);
  out += Section(kSectionAdvice);
  // The sentences quote the featured setting's figures without the table's ~: say once that
  // they are estimates where they are.
  if (a.featured >= 0 && size_t(a.featured) < r.results.size()) {
    const EstimatedFigures e = EstimatedFiguresOf(r.results[size_t(a.featured)]);
    if (e.without_dedup || e.with_dedup) {
      out +=
          Wrap(std::string("~ The figures below rest on a sample, as the settings table marks "
                           "them: ") +
                   (e.without_dedup ? "the recommended codec's and dedup's"
                                    : "those with dedup (the DDT, its RAM, what dedup removes)") +
                   " are estimates.",
               t.width, "", "  ");
    }
  }
  for (const AdviceItem& item : a.items) out += Wrap(item.sentence, t.width, "- ", "  ");
  return out;
}

}  // namespace zsim::report
