#include "engine/state/state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <tuple>

#include "engine/base/temp_files.h"
#include "engine/ddt/written_key.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/state/frame_stream.h"
#include "engine/state/rare_classes.h"
#include "engine/state/save_order.h"
#include "engine/state/value_io.h"
#include "engine/zfs/write_rules.h"

namespace zsim::state {
namespace {

constexpr char kMagic[8] = {'Z', 'S', 'I', 'M', 'S', 'T', 'A', 'T'};
constexpr size_t kMaxSettings = 64;
constexpr size_t kMaxRows = 64;
constexpr uint64_t kMaxCount = uint64_t{1} << 40;            // any list longer is corrupt
constexpr uint64_t kMaxRareClassBlocks = uint64_t{1} << 20;  // a census class larger is corrupt
constexpr uint8_t kZeroFlag = 1, kSideFlag = 2;
// The bits of a key's hi a dedup table keeps (ddt::EntryView): the top 8 and the low 32.
constexpr uint64_t kTableHiBits = 0xFF000000FFFFFFFFull;
using LinkedFileCells = std::vector<std::pair<uint32_t, estimate::OccurrenceSums>>;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) {
    if (!s.empty()) s.push_back(',');
    s.append(x);
  }
  return s;
}

// The text header: what a person needs to know of the file.
std::string HeaderText(const ScanState& s) {
  const ScanOptions& o = s.options;
  std::vector<std::string> sizes, codecs;
  if (o.volblocksize) {
    sizes.push_back(std::to_string(*o.volblocksize));
  } else {
    for (uint64_t r : o.recordsizes) sizes.push_back(std::to_string(r));
  }
  for (const Compression& c : o.compressions) codecs.push_back(CompressionName(c));
  std::string t = "zsim " ZSIM_VERSION_STRING " scan state\n";
  t += (o.volblocksize ? "volblocksize " : "recordsizes ") + Join(sizes) + "\n";
  t += "compressions " + Join(codecs) + "\n";
  t += "profile " + std::string(ProfileName(o.profile)) + "\n";
  t +=
      std::string("checksum ") + (o.checksum == ChecksumKind::kSha256 ? "sha256" : "xxh128") + "\n";
  t += "sampling " + std::string(o.exact ? "exact" : "sampled-codecs") + " 1/" +
       std::to_string(o.sample_modulus) + "\n";
  t += "inputs " + Join(o.paths) + "\n";
  return t;
}

// ---- writing ----

void PutOptions(FrameWriter& w, const ScanOptions& o) {
  w.U32(static_cast<uint32_t>(o.paths.size()));
  for (const std::string& p : o.paths) w.Str(p);
  w.U32(static_cast<uint32_t>(o.recordsizes.size()));
  for (uint64_t r : o.recordsizes) w.U64(r);
  w.U64(o.volblocksize.value_or(0));
  w.U32(static_cast<uint32_t>(o.compressions.size()));
  for (const Compression& c : o.compressions) {
    w.U8(static_cast<uint8_t>(c.algorithm));
    w.I32(c.level);
  }
  w.U8(static_cast<uint8_t>(o.profile));
  w.I32(o.ashift);
  w.U8(static_cast<uint8_t>(o.vdev.kind));
  w.I32(o.vdev.parity);
  w.I32(o.vdev.children);
  w.I32(o.vdev.data);
  w.I32(o.copies);
  w.U8(static_cast<uint8_t>(o.checksum));
  w.U8(o.ddt_format ? static_cast<uint8_t>(*o.ddt_format) + 1 : 0);
  w.U64(o.ram_bytes);
  w.U8(o.exact);
  w.U64(o.sample_modulus);
  w.U64(o.max_memory_bytes);
  w.U8(o.one_file_system);
  w.U8(o.follow_symlinks);
  w.U32(static_cast<uint32_t>(o.excludes.size()));
  for (const std::string& e : o.excludes) w.Str(e);
}

// Keys of records and links (FileRecord::keys, LinkedFile::keys) and the references of their
// entries in the table as written.
struct KeyRefs {
  std::vector<ddt::Fingerprint> keys;  // sorted by (hi, lo), hi as the table keeps it
  std::vector<uint32_t> refs;          // kDroppedRef: not in the table
  uint32_t RefOf(ddt::Fingerprint key) const {
    key.hi &= kTableHiBits;
    const auto it = std::lower_bound(keys.begin(), keys.end(), key, KeyLess);
    return it != keys.end() && *it == key ? refs[static_cast<size_t>(it - keys.begin())]
                                          : ddt::DedupTable::kDroppedRef;
  }
  static bool KeyLess(const ddt::Fingerprint& a, const ddt::Fingerprint& b) {
    return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
  }
};

// Row `row`'s keys of every record and link that keeps keys, to be looked up in its table.
KeyRefs RecordKeys(const ScanState& s, size_t row) {
  KeyRefs k;
  auto add = [&](const std::vector<std::vector<ddt::Fingerprint>>& keys) {
    if (row >= keys.size()) return;
    for (ddt::Fingerprint key : keys[row]) {
      key.hi &= kTableHiBits;
      k.keys.push_back(key);
    }
  };
  for (const FileRecord& f : s.records) add(f.keys);
  for (const LinkedFile& f : s.links) add(f.keys);
  std::sort(k.keys.begin(), k.keys.end(), KeyRefs::KeyLess);
  k.keys.erase(std::unique(k.keys.begin(), k.keys.end()), k.keys.end());
  k.refs.assign(k.keys.size(), ddt::DedupTable::kDroppedRef);
  return k;
}

// Whether row `row`'s entry `e` keeps its code of sampled setting `c` in a saved state: where an
// estimate may read it (EstimateReadsCode). The others were coded by the order the scan met its
// blocks (a rare class's first blocks before it grew, blocks met before the sizing walk raised a
// level, keys a rank of a distributed scan met often): no figure reads them, and writing them as
// a block outside the sample is stored (UnsampledCode) makes the saved bytes a function of the
// data and the options.
bool KeepsSideCode(const ScanState& s, size_t row, const RareClasses& rare, const ddt::EntryView& e,
                   size_t c) {
  if (!s.sampling.adaptive || c >= s.sampling.sampled.size() || !s.sampling.sampled[c]) return true;
  return EstimateReadsCode(s.sampling, row, rare, e, c);
}

// The entries in the order of their keys (state/save_order.h); `map`, when given, receives their
// references as the loaded table will number them, and `keys`, when given, the references of
// its keys (the entries' places in their shards as written, which the loaded table gives them).
// Row `row` of `s`: its side codes as KeepsSideCode says.
void PutTable(FrameWriter& w, const ScanState& s, size_t row, ddt::DedupTable::RefMap* map,
              KeyRefs* keys = nullptr) {
  const ddt::DedupTable& t = *s.rows[row].table;
  const RareClasses rare(t, s.sampling, s.options, row);
  const std::vector<ddt::SettingStorage>& layout = t.layout();
  // The setting each column belongs to: its own, then its early-abort and written-key columns
  // (`is_key`).
  const size_t settings = s.options.compressions.size();
  std::vector<size_t> owner(layout.size());
  std::vector<bool> is_key(layout.size(), false);
  for (size_t c = 0; c < owner.size(); ++c) owner[c] = c;
  const std::vector<size_t> probes = ProbeColumns(s.code_kind, s.options.compressions);
  const std::vector<size_t> key_columns = KeyColumns(s.options, s.code_kind, s.written_keys);
  for (size_t c = 0; c < settings; ++c) {
    if (c < probes.size() && probes[c] != kNoProbe && probes[c] < owner.size())
      owner[probes[c]] = c;
    if (c >= key_columns.size() || key_columns[c] == kNoKey) continue;
    for (size_t k = 0; k < ddt::kWrittenKeyColumns && key_columns[c] + k < owner.size(); ++k) {
      owner[key_columns[c] + k] = c;
      is_key[key_columns[c] + k] = true;
    }
  }
  std::vector<ddt::PsizeCode> codes(layout.size());  // the codes an entry writes
  std::vector<bool> keeps(settings);
  for (const ddt::SettingStorage& storage : layout) {
    w.U8(static_cast<uint8_t>(storage.kind));
    w.U8(storage.zero_is_hole);
  }
  w.U32(t.sample_shift());
  w.U64(t.entries());
  size_t shard = ddt::DedupTable::kShards;  // the current entry's, and its place there
  uint32_t place = 0;
  ForEachInKeyOrder(
      t,
      [&](const ddt::EntryView& e) {
        if (keys) {
          const size_t k = ddt::DedupTable::ShardOf(e.key);
          place = k == shard ? place + 1 : 0;
          shard = k;
          const auto it =
              std::lower_bound(keys->keys.begin(), keys->keys.end(), e.key, KeyRefs::KeyLess);
          if (it != keys->keys.end() && *it == e.key) {
            keys->refs[static_cast<size_t>(it - keys->keys.begin())] =
                static_cast<uint32_t>(k << 24) | place;
          }
        }
        // The codes written. A code left out is written as the scan stores a block outside
        // the sample (UnsampledCode), in its early-abort column too; its written keys pending.
        for (size_t c = 0; c < settings; ++c) keeps[c] = KeepsSideCode(s, row, rare, e, c);
        bool side = false;
        for (size_t c = 0; c < layout.size(); ++c) {
          codes[c] = e.codes[c];
          if (layout[c].kind != ddt::SettingStorage::Kind::kSide) continue;
          const size_t o = owner[c];
          if (o < settings && !keeps[o]) {
            codes[c] =
                is_key[c] ? ddt::kPendingCode : UnsampledCode(e.is_zero, layout[o].zero_is_hole);
          }
          side = side || codes[c] != ddt::kPendingCode;
        }
        w.U64(e.key.lo);
        w.U8(static_cast<uint8_t>(e.key.hi >> 56));
        w.U32(static_cast<uint32_t>(e.key.hi));
        w.U32(e.refcount);
        w.U16(static_cast<uint16_t>(e.lsize / 512 - 1));
        w.U8((e.is_zero ? kZeroFlag : 0) | (side ? kSideFlag : 0));
        for (size_t c = 0; c < layout.size(); ++c) {
          if (layout[c].kind == ddt::SettingStorage::Kind::kInline ||
              (side && layout[c].kind == ddt::SettingStorage::Kind::kSide)) {
            w.U16(codes[c]);
          }
        }
      },
      map);
}

// File records (format version 3), after the tables their references name.
constexpr uint8_t kZvolRecord = 1, kFailedRecord = 2, kDataRecord = 4;
// A record that keeps keys (FileRecord::keys): in the parts a distributed scan's ranks send
// each other only (EncodeState with keyed records kept), never in a file.
constexpr uint8_t kKeyedRecord = 8;
// A linked file's flags (format version 5): its data, and, as kKeyedRecord, its keys kept
// (LinkedFile::keys).
constexpr uint8_t kDataLink = 1, kKeyedLink = 2;

// What a file record or a link keeps of one row: zero blocks, holes, and the references of its
// entries in the table as written, sorted.
void PutRowRefs(FrameWriter& w, uint64_t zero_blocks, uint64_t holes,
                const std::vector<uint32_t>& sorted_refs) {
  w.U64(zero_blocks);
  w.U64(holes);
  w.U64(sorted_refs.size());
  for (uint32_t ref : sorted_refs) w.U32(ref);
}

// PutRowRefs with the scan's references renumbered by `map` (the table's as written, PutTable).
void PutRowBlocks(FrameWriter& w, uint64_t zero_blocks, uint64_t holes,
                  const std::vector<uint32_t>& refs, const ddt::DedupTable::RefMap& map) {
  PutRowRefs(w, zero_blocks, holes, SortedRefs(refs, map));
}

// One row of a record or link that keeps keys: as keys (`keys` null: a part, kKeyedRecord,
// kKeyedLink), else as the references of their entries in the table as written, sorted (as
// PutRowBlocks writes).
void PutRowKeys(FrameWriter& w, uint64_t zero_blocks, uint64_t holes,
                const std::vector<ddt::Fingerprint>& row, const KeyRefs* keys) {
  if (keys == nullptr) {
    w.U64(zero_blocks);
    w.U64(holes);
    w.U64(row.size());
    PutKeys(w, row);
    return;
  }
  std::vector<uint32_t> refs;
  refs.reserve(row.size());
  for (const ddt::Fingerprint& key : row) refs.push_back(keys->RefOf(key));
  std::sort(refs.begin(), refs.end());
  PutRowRefs(w, zero_blocks, holes, refs);
}

// Indirect blocks per level (format version 6): FileShape::indirects, FileIndirects' rows.
void PutLevels(FrameWriter& w, const std::vector<uint64_t>& levels) {
  w.U64(levels.size());
  for (uint64_t n : levels) w.U64(n);
}

void PutIndirects(FrameWriter& w, const FileIndirects& f, size_t row) {
  PutLevels(w, row < f.read.size() ? f.read[row] : std::vector<uint64_t>{});
  PutLevels(w, row < f.nonzero.size() ? f.nonzero[row] : std::vector<uint64_t>{});
}

// `maps`: per row, the references of its table as written; `keys`: per row, those of the records'
// keys, or empty to write keys as keys (a part, kKeyedRecord). Records by input and path.
void PutRecords(FrameWriter& w, const ScanState& s,
                const std::vector<ddt::DedupTable::RefMap>& maps,
                const std::vector<KeyRefs>& keys) {
  w.U8(s.has_records);
  if (!s.has_records) return;
  w.U64(s.records.size());
  for (uint32_t i : RecordOrder(s.records)) {
    const FileRecord& f = s.records[i];
    w.Str(f.path);
    w.U32(f.root);
    w.U64(f.dev);
    w.U64(f.ino);
    w.U64(f.size);
    w.U64(f.data_bytes);  // from format 22
    w.U64(static_cast<uint64_t>(f.mtime_ns));
    w.U64(static_cast<uint64_t>(f.ctime_ns));
    const bool keyed = !f.keys.empty();
    const bool as_keys = keyed && keys.empty();
    w.U8((f.is_zvol ? kZvolRecord : 0) | (f.failed ? kFailedRecord : 0) |
         (f.has_data ? kDataRecord : 0) | (as_keys ? kKeyedRecord : 0));
    w.U64(f.content_lo);
    w.U64(f.content_hi);
    for (size_t r = 0; r < s.rows.size(); ++r) {
      if (keyed) {
        PutRowKeys(w, f.zero_blocks[r], f.holes[r], f.keys[r], as_keys ? nullptr : &keys[r]);
      } else {
        PutRowBlocks(w, f.zero_blocks[r], f.holes[r], f.refs[r], maps[r]);
      }
      PutIndirects(w, f.indirects, r);
    }
  }
}

// Files with several names (format version 5), after the tables their references name: by
// path, their breakdown rows as written (`directories`, `extensions`: each index's new one).
// `keys` as PutRecords'.
void PutLinks(FrameWriter& w, const ScanState& s, const std::vector<ddt::DedupTable::RefMap>& maps,
              const std::vector<KeyRefs>& keys, const std::vector<uint32_t>& directories,
              const std::vector<uint32_t>& extensions) {
  w.U64(s.links.size());
  for (uint32_t i : LinkOrder(s.links)) {
    const LinkedFile& f = s.links[i];
    w.Str(f.path);
    w.U64(f.fs);
    w.U64(f.ino);
    w.U64(f.dev);
    w.U64(f.size);
    w.U64(f.data_bytes);  // from format 22
    w.U64(f.allocated);
    w.U64(static_cast<uint64_t>(f.mtime_ns));
    w.U64(static_cast<uint64_t>(f.ctime_ns));
    w.U32(directories[f.directory]);
    w.U32(extensions[f.extension]);
    const bool keyed = !f.keys.empty();
    const bool as_keys = keyed && keys.empty();
    w.U8((f.has_data ? kDataLink : 0) | (as_keys ? kKeyedLink : 0));
    w.U64(f.content_lo);
    w.U64(f.content_hi);
    for (size_t r = 0; r < s.rows.size(); ++r) {
      if (keyed) {
        PutRowKeys(w, f.zero_blocks[r], f.holes[r], f.keys[r], as_keys ? nullptr : &keys[r]);
      } else {
        PutRowBlocks(w, f.zero_blocks[r], f.holes[r], f.refs[r], maps[r]);
      }
      PutIndirects(w, f.indirects, r);
      // The cells by index.
      auto cells = r < f.occurrences.size() ? f.occurrences[r] : LinkedFileCells{};
      std::stable_sort(cells.begin(), cells.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      w.U32(static_cast<uint32_t>(cells.size()));
      for (const auto& [index, sums] : cells) {
        w.U32(index);
        PutOccurrenceSums(w, sums);
      }
    }
  }
}

// The run section (format 11): what the run did, which depends on how the state was made (one
// scan, a merge of parts, a --since rescan, the machine and its load) and not on the data and
// options alone, in a frame of its own at the end, so that every byte before it is a function of
// those. The bytes read in all and of each file with several names (in PutLinks' order: what this
// run read, 0 for what a --since rescan did not read), and per row and setting the codec's
// seconds and the bytes it compressed.
void PutRun(FrameWriter& w, const ScanState& s) {
  w.EndFrame();
  w.Str(s.host);
  w.F64(s.seconds);
  w.I32(s.options.threads);
  w.U64(s.input.bytes_read);
  for (uint32_t i : LinkOrder(s.links)) w.U64(s.links[i].bytes_read);
  for (const RowState& r : s.rows) {
    for (size_t c = 0; c < r.codec_seconds.size(); ++c) {
      w.F64(r.codec_seconds[c]);
      w.U64(r.codec_bytes[c]);
    }
  }
  for (const RowState& r : s.rows) {
    w.U64(r.top_up.blocks);
    w.U64(r.top_up.bytes);
    w.F64(r.top_up.seconds);
    w.Str(r.top_up.left);
  }
}

// `resolve_keys`: records that keep keys (FileRecord::keys) are written with the references of
// their entries (a file), else with their keys (a distributed scan's part, whose tables are
// elsewhere).
void PutState(FrameWriter& w, const ScanState& s, bool resolve_keys) {
  PutOptions(w, s.options);
  const size_t settings = s.options.compressions.size();
  for (size_t c = 0; c < settings; ++c) {
    w.U8(s.sampling.sampled[c]);
    w.I32(s.sampling.anchors[c]);
  }
  w.I32(s.sampling.complete_level);
  w.I32(s.sampling.occurrence_level);
  w.U8(s.sampling.adaptive);
  w.U64(s.sampling.planned_bytes);
  w.U64(s.sampling.plan_scope);
  w.U64(s.sampling.planned_files);  // from format 21
  w.U32(static_cast<uint32_t>(s.sampling.setting_levels.size()));
  for (int lv : s.sampling.setting_levels) w.I32(lv);
  w.U64(s.sampling.rare_class_blocks);
  w.U32(static_cast<uint32_t>(s.sampling.topped_bytes.size()));
  for (uint64_t b : s.sampling.topped_bytes) w.U64(b);
  w.U8(static_cast<uint8_t>(s.code_kind));
  w.U8(s.written_keys && s.code_kind == CodeKind::kEarlyAbort);  // KeyColumns: none otherwise
  w.U32(static_cast<uint32_t>(s.featured));
  w.U8(s.partial);
  w.U64(s.file_ids.size());
  for (uint64_t id : s.file_ids) w.U64(id);
  // Input summary.
  const InputSummary& in = s.input;
  w.U32(static_cast<uint32_t>(in.paths.size()));
  for (const std::string& p : in.paths) w.Str(p);
  w.U64(in.files);
  w.U64(in.directories);
  w.U64(in.bytes_logical);
  w.U32(static_cast<uint32_t>(in.skipped.size()));
  for (const auto& [reason, n] : in.skipped) {
    w.Str(reason);
    w.U64(n);
  }
  std::vector<PathError> errors = in.errors;
  std::sort(errors.begin(), errors.end(), [](const PathError& a, const PathError& b) {
    return std::tie(a.path, a.error, a.bytes, a.bytes_in_figures) <
           std::tie(b.path, b.error, b.bytes, b.bytes_in_figures);
  });
  w.U64(errors.size());
  for (const PathError& e : errors) {
    w.Str(e.path);
    w.Str(e.error);
    w.U64(e.bytes);             // from format 14
    w.U64(e.bytes_in_figures);  // from format 20
  }
  w.U64(in.files_counted_twice);  // from format 20
  w.U64(in.files_named);          // from format 20
  w.U64(in.bytes_named);
  w.U8(in.named_complete);
  w.U8(in.bytes_data_known);  // from format 22
  w.U64(in.bytes_data);
  w.U64(s.directories.size());
  for (const auto& [d, n] : s.directories) {
    w.U64(d.entries);
    w.U64(d.name_bytes);
    w.U64(d.longest_name);
    w.U64(d.microzap_lz4_bytes);
    w.U64(n);
  }
  // Breakdown: rows by name, references by row and key (their rows renumbered to match). A row
  // that no file, part-read file, reference or link holds (a merge took its one linked file out:
  // it counts under the link's smallest name) is left out, as the scan of the union never made
  // it: the merged state is then that scan's, byte for byte.
  const BreakdownState& b = s.breakdown;
  const auto kept_order = [&](const std::vector<std::string>& names,
                              const std::vector<BreakdownRowSums>& rows, bool directories) {
    std::vector<bool> used(names.size(), false);
    for (size_t i = 0; i < rows.size() && i < used.size(); ++i) {
      const BreakdownRowSums& r = rows[i];
      const auto nonzero = [](const std::vector<uint64_t>& v) {
        return std::any_of(v.begin(), v.end(), [](uint64_t x) { return x != 0; });
      };
      used[i] = r.files != 0 || r.bytes != 0 || r.lsize != 0 || nonzero(r.setting_lsize) ||
                nonzero(r.setting_zero_lsize);
    }
    for (const BreakdownState::Reference& ref : b.references) {
      const uint32_t i = directories ? ref.directory : ref.extension;
      if (i < used.size()) used[i] = true;
    }
    for (const LinkedFile& f : s.links) {
      const uint32_t i = directories ? f.directory : f.extension;
      if (i < used.size()) used[i] = true;
    }
    std::vector<uint32_t> order = NameOrder(names);
    std::erase_if(order, [&](uint32_t i) { return !used[i]; });
    return order;
  };
  const std::vector<uint32_t> directory_order =
      kept_order(b.directory_names, b.directories, /*directories=*/true);
  const std::vector<uint32_t> extension_order =
      kept_order(b.extension_names, b.extensions, /*directories=*/false);
  const std::vector<uint32_t> directory_at = InverseOf(directory_order, b.directory_names.size());
  const std::vector<uint32_t> extension_at = InverseOf(extension_order, b.extension_names.size());
  for (const auto& [names, order] : {std::pair{&b.directory_names, &directory_order},
                                     std::pair{&b.extension_names, &extension_order}}) {
    w.U32(static_cast<uint32_t>(order->size()));
    for (uint32_t i : *order) w.Str((*names)[i]);
  }
  for (const auto& [rows, order] :
       {std::pair{&b.directories, &directory_order}, std::pair{&b.extensions, &extension_order}}) {
    for (uint32_t i : *order) {
      const BreakdownRowSums& r = (*rows)[i];
      w.U64(r.files);
      w.U64(r.bytes);
      w.U64(r.lsize);
      w.U32(static_cast<uint32_t>(r.setting_lsize.size()));
      for (uint64_t v : r.setting_lsize) w.U64(v);
      w.U32(static_cast<uint32_t>(r.setting_zero_lsize.size()));  // format 19
      for (uint64_t v : r.setting_zero_lsize) w.U64(v);
    }
  }
  w.U32(b.shift);
  std::vector<BreakdownState::Reference> references = b.references;
  for (BreakdownState::Reference& r : references) {
    r.directory = directory_at[r.directory];
    r.extension = extension_at[r.extension];
    // Only the bits of hi a table keeps (ddt::EntryView): a --since rescan takes the keys of the
    // files it does not read from the table. Reports read lo and the sample's low bits.
    r.key.hi &= kTableHiBits;
  }
  std::sort(references.begin(), references.end(),
            [](const BreakdownState::Reference& x, const BreakdownState::Reference& y) {
              return std::tie(x.row, x.key.hi, x.key.lo, x.directory, x.extension) <
                     std::tie(y.row, y.key.hi, y.key.lo, y.directory, y.extension);
            });
  w.U64(references.size());
  for (const BreakdownState::Reference& r : references) {
    w.U64(r.key.lo);
    w.U64(r.key.hi);
    w.U32(r.directory);
    w.U32(r.extension);
    w.U32(r.row);
  }
  // From format 14, a content's lsize and the zero blocks per row.
  w.U64(b.contents.size());
  for (const auto& [c, n] : b.contents) {
    w.U64(c.lo);
    w.U64(c.hi);
    w.U32(static_cast<uint32_t>(c.lsize.size()));
    for (uint64_t l : c.lsize) w.U64(l);
    w.U64(n);
  }
  w.U32(b.content_shift);  // from format 15
  w.U32(static_cast<uint32_t>(b.zero_blocks.size()));
  for (size_t r = 0; r < b.zero_blocks.size(); ++r) {
    w.U64(b.zero_blocks[r]);
    w.U64(r < b.zero_bytes.size() ? b.zero_bytes[r] : 0);
  }
  // Rows. The file records and links name entries as the tables are written.
  const bool refs = s.has_records || !s.links.empty();
  std::vector<ddt::DedupTable::RefMap> maps(s.rows.size());
  const bool keyed =
      (s.has_records && std::any_of(s.records.begin(), s.records.end(),
                                    [](const FileRecord& f) { return !f.keys.empty(); })) ||
      std::any_of(s.links.begin(), s.links.end(),
                  [](const LinkedFile& f) { return !f.keys.empty(); });
  std::vector<KeyRefs> keys;
  if (keyed && resolve_keys) {
    for (size_t row = 0; row < s.rows.size(); ++row) keys.push_back(RecordKeys(s, row));
  }
  w.U32(static_cast<uint32_t>(s.rows.size()));
  for (size_t row = 0; row < s.rows.size(); ++row) {
    const RowState& r = s.rows[row];
    w.U64(r.block_bytes);
    w.U64(r.sparse_holes);
    for (size_t c = 0; c < settings; ++c) {
      w.U64(r.files[c].size());
      for (const auto& [shape, n] : r.files[c]) {
        w.U64(shape.block_bytes);
        w.U64(shape.blocks);
        w.U64(shape.non_hole);
        w.U64(shape.zero_blocks);
        PutLevels(w, shape.indirects);
        w.U64(n);
      }
    }
    w.U64(r.occurrences.sums.size());
    for (const estimate::OccurrenceSums& o : r.occurrences.sums) PutOccurrenceSums(w, o);
    for (int k = 0; k < 3; ++k) {
      const estimate::DistinctCounter& dc = r.distinct->counter(k);
      w.U8(static_cast<uint8_t>(dc.precision()));
      for (size_t i = 0; i < (size_t{1} << dc.precision()); ++i) w.U8(dc.register_at(i));
    }
    PutTable(w, s, row, refs ? &maps[row] : nullptr, keys.empty() ? nullptr : &keys[row]);
  }
  PutRecords(w, s, maps, keys);
  PutLinks(w, s, maps, keys, directory_at, extension_at);
  PutRun(w, s);
}

// ---- reading ----

// Reads a count and fails the stream when it exceeds `max`.
uint64_t Count(FrameReader& r, uint64_t max, const char* what) {
  const uint64_t n = r.U64();
  if (n > max) r.Fail(std::string("corrupt: ") + what + " count " + std::to_string(n));
  return r.ok() ? n : 0;
}
uint32_t Count32(FrameReader& r, uint32_t max, const char* what) {
  const uint32_t n = r.U32();
  if (n > max) r.Fail(std::string("corrupt: ") + what + " count " + std::to_string(n));
  return r.ok() ? n : 0;
}

void GetOptions(FrameReader& r, ScanOptions& o, uint32_t version) {
  o.paths.clear();
  for (uint32_t i = 0, n = Count32(r, 1 << 20, "path"); i < n && r.ok(); ++i) {
    o.paths.push_back(r.Str());
  }
  o.recordsizes.clear();
  for (uint32_t i = 0, n = Count32(r, kMaxRows, "recordsize"); i < n && r.ok(); ++i) {
    o.recordsizes.push_back(r.U64());
  }
  const uint64_t vbs = r.U64();
  if (vbs) o.volblocksize = vbs;
  o.compressions.clear();
  for (uint32_t i = 0, n = Count32(r, kMaxSettings, "compression"); i < n && r.ok(); ++i) {
    const uint8_t alg = r.U8();
    const int32_t level = r.I32();
    if (alg > static_cast<uint8_t>(CompressionAlgorithm::kZstd)) r.Fail("corrupt: codec");
    o.compressions.push_back(Compression{static_cast<CompressionAlgorithm>(alg), level});
  }
  const uint8_t profile = r.U8();
  if (profile > static_cast<uint8_t>(Profile::kZfs24)) r.Fail("corrupt: profile");
  o.profile = static_cast<Profile>(profile);
  o.ashift = r.I32();
  const uint8_t kind = r.U8();
  if (kind > static_cast<uint8_t>(VdevKind::kDraid)) r.Fail("corrupt: vdev");
  o.vdev.kind = static_cast<VdevKind>(kind);
  o.vdev.parity = r.I32();
  o.vdev.children = r.I32();
  o.vdev.data = r.I32();
  o.copies = r.I32();
  const uint8_t checksum = r.U8();
  if (checksum > 1) r.Fail("corrupt: checksum");
  o.checksum = static_cast<ChecksumKind>(checksum);
  const uint8_t format = r.U8();
  if (format > 2) r.Fail("corrupt: ddt format");
  if (format) o.ddt_format = static_cast<DdtFormat>(format - 1);
  o.ram_bytes = r.U64();
  o.exact = r.U8() != 0;
  o.sample_modulus = r.U64();
  o.max_memory_bytes = r.U64();
  if (version < 11) o.threads = r.I32();  // from 11 in the run section
  o.one_file_system = r.U8() != 0;
  o.follow_symlinks = r.U8() != 0;
  o.excludes.clear();
  for (uint32_t i = 0, n = Count32(r, 1 << 20, "exclude"); i < n && r.ok(); ++i) {
    o.excludes.push_back(r.Str());
  }
  if (!r.ok()) return;
  ScanOptions check = o;
  if (check.paths.empty()) check.paths.push_back(".");
  const Status valid = ValidateScanOptions(check);
  if (!valid.ok()) r.Fail("corrupt: its options are invalid (" + valid.message() + ")");
}

// `least`: the setting keeps least-budget codes (ddt/dedup_table.h).
bool ValidCode(ddt::PsizeCode c, CodeKind kind, bool least) {
  if (c == ddt::kPendingCode) return true;
  // A least-budget unit stops at kLeastLastUnit (the output fit lsize - lsize/8).
  if (least && c > ddt::kLeastLastUnit && c <= ddt::kEmbeddedBase) return false;
  if (c <= ddt::kEmbeddedBase + 112) return true;
  if (kind == CodeKind::kRounded) return false;
  return c == ddt::kNoFitCode || (least && c <= ddt::kLeastLastCode);
}

// True when a valid code (ValidCode) of an entry of `lsize` says more than such a block can
// have: a least-budget code whose least budget lies at or above the largest budget any profile
// computes for `lsize` (its output fit that one, so its least budget does too), or a raw code
// whose output is longer than `scan_budget`, the budget the scan gave the compressor.
bool CodeBeyondBudget(ddt::PsizeCode c, CodeKind kind, bool least, uint64_t lsize,
                      uint64_t scan_budget) {
  if (c == ddt::kPendingCode || c == ddt::kHoleCode || c == ddt::kNoFitCode) return false;
  if (kind == CodeKind::kRounded) return false;
  if (least) return ddt::LeastBudgetOf(c).above >= zfs::LargestCompressionBudget(lsize);
  // A raw length above 112 bytes is rounded up to 512: the output is at least 512 bytes
  // shorter plus one, and above 112.
  const uint64_t length = *ddt::RawLengthOf(c);
  const uint64_t shortest =
      length <= zfs::kEmbeddedPayloadBytes
          ? length
          : std::max(length - zfs::kMinBlockBytes + 1, zfs::kEmbeddedPayloadBytes + 1);
  return shortest > scan_budget;
}

// `policy`: the scan's (its profile decides where zstd's codes are least-budget ones).
// Why early-abort code `probe` (ddt::EncodeProbe) cannot go with `code`, the same setting's
// least-budget code, for a block of `lsize`, or nullptr.
const char* ProbeMismatch(ddt::PsizeCode code, ddt::PsizeCode probe, uint64_t lsize) {
  const bool valid = probe == ddt::kPendingCode || probe == ddt::kHoleCode ||
                     probe == ddt::kNoFitCode || probe == ddt::kProbeSmallCode ||
                     probe <= ddt::kLeastLastUnit;
  if (!valid) return "an early-abort code out of range";
  if ((code == ddt::kPendingCode) != (probe == ddt::kPendingCode)) {
    return "an early-abort code without its codec's, or the other way round";
  }
  if (code == ddt::kPendingCode) return nullptr;
  // A hole or a block under 128K has none; the others one.
  if ((code == ddt::kHoleCode || lsize < zfs::kZstdEarlyAbortBytes) != (probe == ddt::kHoleCode)) {
    return "an early-abort code where none applies, or none where one does";
  }
  if (probe == ddt::kHoleCode) return nullptr;
  if (code == ddt::kNoFitCode) {
    return probe == ddt::kNoFitCode ? nullptr
                                    : "an early-abort budget for a block that fits no budget";
  }
  if (probe == ddt::kNoFitCode) return nullptr;
  // Early abort lets it through where zstd fits and the probes pass: never below zstd's own
  // least budget, and within the largest budget.
  const ddt::LeastBudget through = ddt::ProbeOf(probe);
  if (through.at_most < ddt::LeastBudgetOf(code).at_most) {
    return "an early-abort budget below the codec's own least budget";
  }
  if (through.above >= zfs::LargestCompressionBudget(lsize)) {
    return "an early-abort budget beyond the largest compression budget of that size";
  }
  return nullptr;
}

std::unique_ptr<ddt::DedupTable> GetTable(FrameReader& r,
                                          const std::vector<ddt::SettingStorage>& expected,
                                          CodeKind kind, const std::vector<Compression>& comps,
                                          const zfs::WritePolicy& policy,
                                          const std::vector<size_t>& keys) {
  // The settings' columns, then their early-abort columns (ProbeColumns), then their written
  // keys' (KeyColumns).
  const size_t settings = expected.size();
  const std::vector<size_t> probes = ProbeColumns(kind, comps);
  std::vector<bool> key_column(settings, false);
  for (const size_t k : keys) {
    if (k == kNoKey) continue;
    for (size_t i = 0; i < ddt::kWrittenKeyColumns; ++i) key_column[k + i] = true;
  }
  std::vector<ddt::SettingStorage> layout(settings);
  for (size_t c = 0; c < settings; ++c) {
    const uint8_t kind = r.U8();
    if (kind > static_cast<uint8_t>(ddt::SettingStorage::Kind::kSide)) r.Fail("corrupt: layout");
    layout[c].kind = static_cast<ddt::SettingStorage::Kind>(kind);
    layout[c].zero_is_hole = r.U8() != 0;
    if (layout[c].kind != expected[c].kind || layout[c].zero_is_hole != expected[c].zero_is_hole) {
      r.Fail("corrupt: the table's layout does not follow its options");
    }
  }
  if (!r.ok()) return nullptr;
  auto table = std::make_unique<ddt::DedupTable>(layout);
  const uint32_t shift = r.U32();
  if (shift > 63) r.Fail("corrupt: sample shift");
  if (r.ok()) table->RaiseSampleShift(shift);
  const uint64_t n = Count(r, kMaxCount, "entry");
  // Sized for the entries the file announces, only when it is that long: a corrupt count
  // must not make the loader allocate what the file does not hold.
  if (n > 0 && n <= r.remaining_hint() / 20) table->Reserve(n);
  std::vector<ddt::PsizeCode> codes(settings);
  // Per setting, what its codes are checked against for the last lsize met (nearly every entry
  // of a row has the same).
  struct Rule {
    uint64_t lsize = 0;
    bool least = false;
    uint64_t budget = 0;
  };
  std::vector<Rule> rules(settings);
  ddt::DedupTable::OrderedLoader loader(*table);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    ddt::EntryView e{};
    e.key.lo = r.U64();
    const uint64_t top = r.U8();
    e.key.hi = (top << 56) | r.U32();
    e.refcount = r.U32();
    e.lsize = (uint64_t{r.U16()} + 1) * 512;
    const uint8_t flags = r.U8();
    e.is_zero = (flags & kZeroFlag) != 0;
    if (e.refcount == 0 || e.lsize > (uint64_t{16} << 20) || flags > 3) {
      r.Fail("corrupt: a dedup table entry");
    }
    for (size_t c = 0; c < settings; ++c) {
      codes[c] = ddt::kPendingCode;
      if (layout[c].kind == ddt::SettingStorage::Kind::kInline ||
          ((flags & kSideFlag) && layout[c].kind == ddt::SettingStorage::Kind::kSide)) {
        codes[c] = r.U16();
        if (key_column[c]) continue;  // checked as a whole below
        Rule& rule = rules[c];
        if (rule.lsize != e.lsize && c < comps.size()) {
          rule = {e.lsize, KeepsLeastBudget(kind, policy, comps[c], e.lsize),
                  zfs::CompressionBudget(policy, comps[c], e.lsize)};
        }
        const bool least = rule.least;
        if (!ValidCode(codes[c], kind, least)) {
          r.Fail("corrupt: a codec outcome");
        } else if (c >= comps.size()) {
          continue;  // an early-abort code: checked with its setting's below
        } else if (CodeBeyondBudget(codes[c], kind, least, e.lsize, rule.budget)) {
          r.Fail("corrupt: a codec outcome of " + CompressionName(comps[c]) + " for a block of " +
                 std::to_string(e.lsize) + " bytes lies beyond " +
                 (least ? "the largest compression budget of that size"
                        : "the compression budget the scan gave it"));
        }
      }
    }
    for (size_t c = 0; c < comps.size() && r.ok(); ++c) {
      if (keys[c] == kNoKey) continue;
      const ddt::WrittenKey key = ddt::DecodeWrittenKey(
          std::span<const ddt::PsizeCode>(&codes[keys[c]], ddt::kWrittenKeyColumns));
      if (key.kind == ddt::WrittenKey::Kind::kCorrupt) r.Fail("corrupt: a written key");
    }
    for (size_t c = 0; c < comps.size() && r.ok(); ++c) {
      if (probes[c] == kNoProbe) continue;
      if (const char* why = ProbeMismatch(codes[c], codes[probes[c]], e.lsize)) {
        r.Fail("corrupt: " + std::string(why) + " (" + CompressionName(comps[c]) + ", a block of " +
               std::to_string(e.lsize) + " bytes)");
      }
    }
    if (!r.ok()) break;
    e.codes = codes;
    // A key given twice (or one the table's sample excludes) would shift the reference of
    // every later entry of its shard, which the file records name.
    if (!loader.Add(e))
      r.Fail("corrupt: a dedup table key is given twice or lies outside its sample");
  }
  loader.Finish();
  return table;
}

// PutRowBlocks read back, each reference checked against `table`.
void GetRowBlocks(FrameReader& r, const ddt::DedupTable& table, std::vector<uint64_t>& zero_blocks,
                  std::vector<uint64_t>& holes, std::vector<std::vector<uint32_t>>& refs) {
  zero_blocks.push_back(r.U64());
  holes.push_back(r.U64());
  const uint64_t n = Count(r, kMaxCount, "block reference");
  std::vector<uint32_t>& v = refs.emplace_back();
  // Reserved up to a bound only: a corrupt count must not allocate what it says (the reads fail
  // at the end of the data).
  v.reserve(std::min<uint64_t>(n, 1 << 16));
  for (uint64_t k = 0; k < n && r.ok(); ++k) {
    const uint32_t ref = r.U32();
    if (!table.HasRef(ref)) r.Fail("corrupt: a block reference");
    v.push_back(ref);
  }
}

// PutLevels read back: at most 8 levels (zfs/indirect_ranges.h). A file shape's levels are
// checked against its blocks where it is read; a record's are not (zfs/metadata.h AddFile
// clamps them to what its blocks allow).
std::vector<uint64_t> GetLevels(FrameReader& r) {
  const uint64_t n = Count(r, 8, "indirect level");
  std::vector<uint64_t> levels;
  for (uint64_t i = 0; i < n && r.ok(); ++i) levels.push_back(r.U64());
  return levels;
}

void GetIndirects(FrameReader& r, FileIndirects& f) {
  f.read.push_back(GetLevels(r));
  f.nonzero.push_back(GetLevels(r));
}

// A row of a record or link that keeps keys (PutRowKeys without references).
void GetRowKeys(FrameReader& r, std::vector<uint64_t>& zero_blocks, std::vector<uint64_t>& holes,
                std::vector<std::vector<ddt::Fingerprint>>& keys) {
  zero_blocks.push_back(r.U64());
  holes.push_back(r.U64());
  GetKeys(r, Count(r, kMaxCount, "block key"), keys.emplace_back());
}

// `keyed`: records that keep keys are accepted (a distributed scan's part), else corrupt.
void GetRecords(FrameReader& r, ScanState& s, uint32_t version, bool keyed) {
  s.has_records = r.U8() != 0;
  if (!s.has_records || !r.ok()) return;
  const uint64_t n = Count(r, kMaxCount, "file record");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    FileRecord f;
    f.path = r.Str(1 << 20);
    f.root = r.U32();
    if (f.root >= s.options.paths.size()) r.Fail("corrupt: a file record's input");
    f.dev = r.U64();
    f.ino = r.U64();
    f.size = r.U64();
    if (version >= 22) f.data_bytes = r.U64();
    f.mtime_ns = static_cast<int64_t>(r.U64());
    f.ctime_ns = static_cast<int64_t>(r.U64());
    const uint8_t flags = r.U8();
    const uint8_t known = kZvolRecord | kFailedRecord | kDataRecord | (keyed ? kKeyedRecord : 0);
    if ((flags & ~known) != 0) r.Fail("corrupt: a file record");
    f.is_zvol = (flags & kZvolRecord) != 0;
    f.failed = (flags & kFailedRecord) != 0;
    f.has_data = (flags & kDataRecord) != 0;
    f.content_lo = r.U64();
    f.content_hi = r.U64();
    for (size_t row = 0; row < s.rows.size() && r.ok(); ++row) {
      if ((flags & kKeyedRecord) != 0) {
        GetRowKeys(r, f.zero_blocks, f.holes, f.keys);
        if (f.zero_blocks[row] > f.keys[row].size()) {
          r.Fail("corrupt: a file record's zero blocks");
        }
      } else {
        GetRowBlocks(r, *s.rows[row].table, f.zero_blocks, f.holes, f.refs);
        if (f.zero_blocks[row] > f.refs[row].size()) r.Fail("corrupt: a file record's zero blocks");
      }
      if (version >= 6) GetIndirects(r, f.indirects);
    }
    s.records.push_back(std::move(f));
  }
}

// `keyed`: links that keep keys are accepted (a distributed scan's part), else corrupt.
void GetLinks(FrameReader& r, ScanState& s, uint32_t version, bool keyed) {
  const uint64_t n = Count(r, kMaxCount, "linked file");
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    LinkedFile f;
    f.path = r.Str(1 << 20);
    f.fs = r.U64();
    f.ino = r.U64();
    f.dev = r.U64();
    f.size = r.U64();
    if (version >= 22) f.data_bytes = r.U64();
    f.allocated = r.U64();
    f.mtime_ns = static_cast<int64_t>(r.U64());
    f.ctime_ns = static_cast<int64_t>(r.U64());
    f.directory = r.U32();
    f.extension = r.U32();
    if (f.directory >= s.breakdown.directories.size() ||
        f.extension >= s.breakdown.extensions.size()) {
      r.Fail("corrupt: a linked file's breakdown row");
    }
    if (version < 11) f.bytes_read = r.U64();  // from 11 in the run section
    const uint8_t flags = r.U8();
    if ((flags & ~(kDataLink | (keyed ? kKeyedLink : 0))) != 0) r.Fail("corrupt: a linked file");
    f.has_data = (flags & kDataLink) != 0;
    f.content_lo = r.U64();
    f.content_hi = r.U64();
    for (size_t row = 0; row < s.rows.size() && r.ok(); ++row) {
      if ((flags & kKeyedLink) != 0) {
        GetRowKeys(r, f.zero_blocks, f.holes, f.keys);
      } else {
        GetRowBlocks(r, *s.rows[row].table, f.zero_blocks, f.holes, f.refs);
      }
      if (version >= 6) GetIndirects(r, f.indirects);
      const size_t sums = s.rows[row].occurrences.sums.size();
      auto& cells = f.occurrences.emplace_back();
      for (uint32_t k = 0, m = Count32(r, 1 << 16, "occurrence cell"); k < m && r.ok(); ++k) {
        const uint32_t index = r.U32();
        if (index >= sums) r.Fail("corrupt: a linked file's occurrences");
        cells.emplace_back(index, GetOccurrenceSums(r));
      }
    }
    s.links.push_back(std::move(f));
  }
}

void GetState(FrameReader& r, ScanState& s, uint32_t version, bool keyed) {
  GetOptions(r, s.options, version);
  if (!r.ok()) return;
  const ScanOptions& o = s.options;
  const size_t settings = o.compressions.size();
  s.sampling.sampled.assign(settings, false);
  s.sampling.anchors.assign(settings, -1);
  for (size_t c = 0; c < settings; ++c) {
    s.sampling.sampled[c] = r.U8() != 0;
    s.sampling.anchors[c] = r.I32();
    if (s.sampling.anchors[c] < -1 || s.sampling.anchors[c] >= static_cast<int>(settings)) {
      r.Fail("corrupt: sampling anchor");
    }
  }
  s.sampling.complete_level = r.I32();
  s.sampling.occurrence_level = r.I32();
  s.sampling.adaptive = r.U8() != 0;
  if (version >= 4) {
    s.sampling.planned_bytes = r.U64();
    s.sampling.plan_scope = r.U64();
  }
  if (version >= 21) s.sampling.planned_files = r.U64();
  const uint32_t cells = r.U32();
  if (cells != 0 && cells != o.recordsizes.size() * settings && cells != settings) {
    r.Fail("corrupt: sampling levels");
    return;
  }
  s.sampling.setting_levels.assign(cells, 0);
  for (size_t i = 0; i < cells; ++i) {
    int& lv = s.sampling.setting_levels[i];
    lv = r.I32();
    // An exact setting's level is 0; a sampled one's at or above the complete level.
    const int lowest = s.sampling.sampled[i % settings] ? s.sampling.complete_level : 0;
    if (lv < lowest || lv > estimate::kMaxSampleLevel) r.Fail("corrupt: sampling level");
  }
  for (int lv : {s.sampling.complete_level, s.sampling.occurrence_level}) {
    if (lv < 0 || lv > estimate::kMaxSampleLevel) r.Fail("corrupt: sampling level");
  }
  // Format 16: the rare-class census (0 before: none ran).
  if (version >= 16) {
    s.sampling.rare_class_blocks = r.U64();
    if (s.sampling.rare_class_blocks > kMaxRareClassBlocks) r.Fail("corrupt: rare class size");
  }
  // Format 17: the topped rows' unique bytes (none before).
  if (version >= 17) {
    const uint32_t rows = r.U32();
    if (rows != 0 && rows != estimate::RowBlockSizes(o).size()) {
      r.Fail("corrupt: topped rows");
      return;
    }
    s.sampling.topped_bytes.assign(rows, 0);
    for (uint64_t& b : s.sampling.topped_bytes) b = r.U64();
  }
  // Before format 7 every table held psize rounded under the scan's policy.
  s.code_kind = CodeKind::kRounded;
  if (version >= 7) {
    const uint8_t kind = r.U8();
    // Format 7 wrote raw codes only; format 8 scans write least-budget ones but for zstd, format
    // 9 scans zstd's too where early abort does not apply (the older kinds after --since from
    // an older state).
    const uint8_t newest = static_cast<uint8_t>(version >= 10  ? CodeKind::kEarlyAbort
                                                : version >= 9 ? CodeKind::kLeastBudgetZstd
                                                : version >= 8 ? CodeKind::kLeastBudget
                                                               : CodeKind::kRaw);
    if (kind > newest) r.Fail("corrupt: code kind");
    s.code_kind = static_cast<CodeKind>(kind);
  }
  // Written keys from format 12 (older tables have no such columns).
  s.written_keys = false;
  if (version >= 12) {
    const uint8_t keys = r.U8();
    // Only a table of the codecs' least-budget outputs (the kind format 12 scans write) has
    // them: the others' codes leave no output to take a key of.
    if (keys > 1 || (keys == 1 && s.code_kind != CodeKind::kEarlyAbort)) {
      r.Fail("corrupt: written keys flag");
    }
    s.written_keys = keys != 0;
  }
  s.featured = r.U32();
  if (s.featured >= settings) r.Fail("corrupt: featured setting");
  s.partial = r.U8() != 0;
  if (version < 11) {  // from 11 in the run section
    s.seconds = r.F64();
    s.host = r.Str();
  }
  for (uint64_t i = 0, n = Count(r, kMaxCount, "file"); i < n && r.ok(); ++i) {
    s.file_ids.push_back(r.U64());
    if (i > 0 && s.file_ids[i] < s.file_ids[i - 1]) r.Fail("corrupt: file identities not sorted");
  }
  InputSummary& in = s.input;
  for (uint32_t i = 0, n = Count32(r, 1 << 20, "path"); i < n && r.ok(); ++i) {
    in.paths.push_back(r.Str());
  }
  in.files = r.U64();
  in.directories = r.U64();
  in.bytes_logical = r.U64();
  if (version < 11) in.bytes_read = r.U64();  // from 11 in the run section
  for (uint32_t i = 0, n = Count32(r, 1 << 16, "skip reason"); i < n && r.ok(); ++i) {
    std::string reason = r.Str();
    in.skipped[reason] = r.U64();
  }
  for (uint64_t i = 0, n = Count(r, kMaxCount, "error"); i < n && r.ok(); ++i) {
    PathError e;
    e.path = r.Str();
    e.error = r.Str();
    if (version >= 14) e.bytes = r.U64();
    if (version >= 20) e.bytes_in_figures = r.U64();
    in.errors.push_back(std::move(e));
  }
  if (version >= 20) {
    in.files_counted_twice = r.U64();
    in.files_named = r.U64();
    in.bytes_named = r.U64();
    in.named_complete = r.U8() != 0;
  }
  if (version >= 22) {
    in.bytes_data_known = r.U8() != 0;
    in.bytes_data = r.U64();
  } else {
    in.bytes_data_known = false;  // the saved figures rest on each row's logical size
  }
  for (uint64_t i = 0, n = Count(r, kMaxCount, "directory shape"); i < n && r.ok(); ++i) {
    DirectoryShape d;
    d.entries = r.U64();
    d.name_bytes = r.U64();
    d.longest_name = r.U64();
    if (version >= 13) d.microzap_lz4_bytes = r.U64();
    s.directories[d] += r.U64();
  }
  BreakdownState& b = s.breakdown;
  for (auto* names : {&b.directory_names, &b.extension_names}) {
    for (uint32_t i = 0, n = Count32(r, 1 << 24, "breakdown name"); i < n && r.ok(); ++i) {
      names->push_back(r.Str());
    }
  }
  for (auto [rows, n] : {std::pair{&b.directories, b.directory_names.size()},
                         std::pair{&b.extensions, b.extension_names.size()}}) {
    for (size_t i = 0; i < n && r.ok(); ++i) {
      BreakdownRowSums row;
      row.files = r.U64();
      row.bytes = r.U64();
      row.lsize = r.U64();
      for (uint32_t k = 0, m = Count32(r, 1 << 16, "breakdown sizes"); k < m && r.ok(); ++k) {
        row.setting_lsize.push_back(r.U64());
      }
      if (version >= 19) {
        const uint32_t m = Count32(r, 1 << 16, "breakdown zero sizes");
        if (m != 0 && m != row.setting_lsize.size()) r.Fail("corrupt: breakdown zero sizes");
        for (uint32_t k = 0; k < m && r.ok(); ++k) row.setting_zero_lsize.push_back(r.U64());
      }
      rows->push_back(row);
    }
  }
  b.shift = r.U32();
  if (b.shift > 63) r.Fail("corrupt: breakdown shift");
  for (uint64_t i = 0, n = Count(r, kMaxCount, "reference"); i < n && r.ok(); ++i) {
    BreakdownState::Reference ref;
    ref.key.lo = r.U64();
    ref.key.hi = r.U64();
    ref.directory = r.U32();
    ref.extension = r.U32();
    ref.row = r.U32();
    if (ref.directory >= b.directory_names.size() || ref.extension >= b.extension_names.size() ||
        ref.row >= (1u << 16)) {
      r.Fail("corrupt: a breakdown reference");
    }
    b.references.push_back(ref);
  }
  for (uint64_t i = 0, n = Count(r, kMaxCount, "content"); i < n && r.ok(); ++i) {
    BreakdownState::Content c;
    c.lo = r.U64();
    c.hi = r.U64();
    const uint32_t rows = version >= 14 ? r.U32() : 1;
    if (rows > kMaxRows) {
      r.Fail("corrupt: a content's rows");
      break;
    }
    for (uint32_t k = 0; k < rows && r.ok(); ++k) c.lsize.push_back(r.U64());
    b.contents[c] += r.U64();
  }
  b.content_shift = version >= 15 ? r.U32() : 0;
  if (b.content_shift > 63) r.Fail("corrupt: the contents' shift");
  if (r.ok() && std::any_of(b.contents.begin(), b.contents.end(), [&](const auto& c) {
        return !ContentKept(c.first, b.content_shift);
      })) {
    r.Fail("corrupt: a content its shift does not keep");
  }
  const uint32_t zero_rows = version >= 14 ? r.U32() : 1;
  if (zero_rows > kMaxRows) r.Fail("corrupt: the zero blocks' rows");
  for (uint32_t k = 0; k < zero_rows && r.ok(); ++k) {
    b.zero_blocks.push_back(r.U64());
    b.zero_bytes.push_back(r.U64());
  }
  // The first row's only: a state of format < 14, or one written from a merge with such a state
  // (state::KeepFirstRowOnly), when it has several rows.
  const size_t row_count = s.options.volblocksize ? 1 : s.options.recordsizes.size();
  b.first_row_only =
      row_count > 1 && (version < 14 || zero_rows == 1 ||
                        std::any_of(b.contents.begin(), b.contents.end(),
                                    [](const auto& c) { return c.first.lsize.size() == 1; }));
  if (!r.ok()) return;

  // Rows: as many as the options say, each with its block size.
  std::vector<uint64_t> sizes =
      o.volblocksize ? std::vector<uint64_t>{*o.volblocksize} : o.recordsizes;
  const uint32_t rows = r.U32();
  if (rows != sizes.size()) r.Fail("corrupt: row count");
  // The table layout the options imply (pipeline/scan.cc): off is derived from lsize, a sampled
  // codec kept aside, the others inline; zeros are holes unless the write rules say otherwise,
  // which the table stores per setting and is taken as written.
  for (size_t row = 0; row < rows && r.ok(); ++row) {
    RowState& rs = s.rows.emplace_back();
    rs.block_bytes = r.U64();
    if (rs.block_bytes != sizes[row]) r.Fail("corrupt: a row's block size");
    rs.sparse_holes = r.U64();
    rs.files.resize(settings);
    rs.codec_seconds.resize(settings);
    rs.codec_bytes.resize(settings);
    for (size_t c = 0; c < settings && r.ok(); ++c) {
      if (version < 11) {  // from 11 in the run section
        rs.codec_seconds[c] = r.F64();
        rs.codec_bytes[c] = r.U64();
      }
      for (uint64_t i = 0, n = Count(r, kMaxCount, "file shape"); i < n && r.ok(); ++i) {
        FileShape f;
        f.block_bytes = r.U64();
        f.blocks = r.U64();
        f.non_hole = r.U64();
        f.zero_blocks = r.U64();
        if (version >= 6) f.indirects = GetLevels(r);
        const bool levels_fit = std::all_of(f.indirects.begin(), f.indirects.end(),
                                            [&](uint64_t n) { return n <= f.blocks; });
        if (!levels_fit || f.non_hole > f.blocks || f.zero_blocks > f.blocks ||
            (f.block_bytes == 0 && f.blocks != 0) || f.block_bytes > (uint64_t{16} << 20) ||
            f.block_bytes % 512 != 0) {
          r.Fail("corrupt: a file shape");
        }
        rs.files[c][f] += r.U64();
      }
    }
    const uint64_t sums = Count(r, kMaxCount, "occurrence sum");
    if (sums != 0 && sums != settings * 2 * (estimate::kMaxSampleLevel + 1)) {
      r.Fail("corrupt: occurrence sample size");
    }
    rs.occurrences.sums.resize(r.ok() ? sums : 0);
    for (estimate::OccurrenceSums& os : rs.occurrences.sums) os = GetOccurrenceSums(r);
    if (!r.ok()) return;
    rs.distinct = std::make_unique<estimate::DistinctBlocks>(rs.block_bytes);
    for (int k = 0; k < 3 && r.ok(); ++k) {
      estimate::DistinctCounter& dc = rs.distinct->counter(k);
      if (r.U8() != dc.precision()) {
        r.Fail("corrupt: sketch precision");
        break;
      }
      for (size_t i = 0; i < (size_t{1} << dc.precision()); ++i) {
        const uint8_t v = r.U8();
        if (v > 66 - dc.precision()) r.Fail("corrupt: sketch register");
        dc.set_register(i, v);
      }
    }
    if (!r.ok()) return;
    // The layout must be the one the scan builds from these options (pipeline/scan.cc): off
    // derived from lsize, a sampled codec kept aside, the others inline, and zero blocks holes
    // where the write rules say so.
    // The scan's policy: its profile decides where zstd's codes are least-budget ones, its
    // geometry the budget raw codes were made under.
    const zfs::WritePolicy policy = zfs::DedupPolicyOf(o.profile, o.vdev, o.ashift);
    const std::vector<ddt::SettingStorage> expected =
        TableLayout(o, s.sampling.sampled, s.code_kind, s.written_keys);
    rs.table = GetTable(r, expected, s.code_kind, o.compressions, policy,
                        KeyColumns(o, s.code_kind, s.written_keys));
  }
  if (version >= 3 && r.ok()) GetRecords(r, s, version, keyed);
  if (version >= 5 && r.ok()) GetLinks(r, s, version, keyed);
  if (version >= 11 && r.ok()) {
    s.host = r.Str();
    s.seconds = r.F64();
    s.options.threads = r.I32();
    ScanOptions check = s.options;
    if (check.paths.empty()) check.paths.push_back(".");
    if (!ValidateScanOptions(check).ok()) r.Fail("corrupt: the run's thread count");
    s.input.bytes_read = r.U64();
    for (LinkedFile& f : s.links) f.bytes_read = r.U64();
    for (RowState& row : s.rows) {
      for (size_t c = 0; c < row.codec_seconds.size(); ++c) {
        row.codec_seconds[c] = r.F64();
        row.codec_bytes[c] = r.U64();
      }
    }
  }
  // Format 18: what the run's top-up did per row (nothing before).
  if (version >= 18 && r.ok()) {
    for (RowState& row : s.rows) {
      row.top_up.blocks = r.U64();
      row.top_up.bytes = r.U64();
      row.top_up.seconds = r.F64();
      row.top_up.left = r.Str(1 << 20);  // a path (as FileRecord::path) and what happened
      if (row.top_up.bytes < row.top_up.blocks ||
          (row.top_up.blocks == 0) != (row.top_up.bytes == 0) ||
          !std::isfinite(row.top_up.seconds) || row.top_up.seconds < 0) {
        r.Fail("corrupt: a row's top-up");
      }
    }
  }
}

}  // namespace

Status CheckSavePath(const std::string& path) {
  if (path.empty())
    return Status::InvalidArgument("--save needs a file name, e.g. --save scan.zstate");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("--save " + path + " is a directory: give a file name");
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::InvalidArgument("--save " + path + ": the directory " + dir.string() +
                                   " does not exist");
  }
  // Whether a file can be created there is proven before a scan by the command line's check
  // (cli/output_file.h CheckCreatable), which creates one as --html's does; at the end, by the
  // write itself.
  return Status::Ok();
}

namespace {

// Magic, version and the text header: what precedes the frames.
std::string HeadBytes(const ScanState& state) {
  const std::string text = HeaderText(state);
  std::string head(kMagic, sizeof kMagic);
  const uint32_t version = kStateFormatVersion, len = static_cast<uint32_t>(text.size());
  const uint64_t sum = XXH3_64bits(text.data(), text.size());
  head.append(reinterpret_cast<const char*>(&version), 4);
  head.append(reinterpret_cast<const char*>(&len), 4);
  head.append(text);
  head.append(reinterpret_cast<const char*>(&sum), 8);
  return head;
}

}  // namespace

std::string EncodeState(const ScanState& state, bool keep_keys) {
  std::string bytes = HeadBytes(state);
  FrameWriter w(&bytes);
  PutState(w, state, !keep_keys);
  w.Finish();  // appending to a string does not fail
  return bytes;
}

Status SaveState(const ScanState& state, const std::string& path, uint64_t* bytes) {
  ZSIM_RETURN_IF_ERROR(CheckSavePath(path));
  const std::string tmp = TempPathBeside(path, ".tmp." + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("cannot create " + tmp, errno);
  // Removed by a second Ctrl-C's abrupt exit too, until renamed or removed here.
  const TempFileRegistration registered(tmp);
  auto fail = [&](Status s) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  const std::string head = HeadBytes(state);
  for (size_t done = 0; done < head.size();) {
    const ssize_t w = ::write(fd, head.data() + done, head.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return fail(Status::FromErrno("cannot write " + tmp, errno));
    done += static_cast<size_t>(w);
  }
  FrameWriter w(fd);
  PutState(w, state, /*resolve_keys=*/true);
  const Status written = w.Finish();
  if (!written.ok()) return fail(written);
  if (::fsync(fd) != 0) return fail(Status::FromErrno("cannot sync " + tmp, errno));
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    return Status::FromErrno("cannot close " + tmp, errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::FromErrno("cannot rename " + tmp + " to " + path, err);
  }
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);  // the rename itself made durable
    ::close(dfd);
  }
  if (bytes) *bytes = head.size() + w.bytes_written();
  return Status::Ok();
}

namespace {

// Reads magic, version and text header through `read` (n bytes into p, false when short), then
// the frames through `reader`. `name` prefixes every message.
template <typename ReadFn>
Result<ScanState> Parse(ReadFn read, FrameReader& reader, const std::string& name, bool verify,
                        bool keyed) {
  char magic[sizeof kMagic];
  uint32_t version = 0, len = 0;
  if (!read(magic, sizeof magic) || std::memcmp(magic, kMagic, sizeof kMagic) != 0) {
    return Status::InvalidArgument(name +
                                   " is not a zsim state file (written by zsim scan --save)");
  }
  if (!read(&version, 4) || !read(&len, 4) || len > (1u << 20)) {
    return Status::Corruption(name + " is truncated or corrupt: its header is incomplete");
  }
  std::string text(len, '\0');
  uint64_t sum = 0;
  if (!read(text.data(), len) || !read(&sum, 8)) {
    return Status::Corruption(name + " is truncated: its header is incomplete");
  }
  if (verify && XXH3_64bits(text.data(), text.size()) != sum) {
    return Status::Corruption(name + " is corrupt: its header fails its checksum");
  }
  if (version > kStateFormatVersion || version < kOldestReadableVersion) {
    const std::string writer = text.substr(0, text.find('\n'));
    return Status::InvalidArgument(
        name + " has state format version " + std::to_string(version) + " (" + writer +
        "); this zsim (" ZSIM_VERSION_STRING ") reads versions " +
        std::to_string(kOldestReadableVersion) + " to " + std::to_string(kStateFormatVersion) +
        ": report it with the zsim that wrote it, or scan again");
  }
  ScanState s;
  GetState(reader, s, version, keyed);
  const Status end = reader.End();
  if (!end.ok()) return Status::Corruption(name + " is " + end.message());
  return s;
}

}  // namespace

Result<ScanState> LoadState(const std::string& path) {
  // O_NONBLOCK: a fifo without a writer would block the open forever. Only a regular file is a
  // state file (a fifo, a device or a directory is refused at once); for it the flag changes
  // nothing.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::FromErrno("cannot open the state file " + path, errno);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument("the state file " + path +
                                   " is not a regular file (a state is written by zsim scan "
                                   "--save)");
  }
  FrameReader reader(fd);
  auto read = [&](void* p, size_t n) {
    auto* b = static_cast<uint8_t*>(p);
    while (n > 0) {
      const ssize_t r = ::read(fd, b, n);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return false;
      b += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  Result<ScanState> s = Parse(read, reader, path, true, /*keyed=*/false);
  ::close(fd);
  return s;
}

Result<ScanState> ParseState(ByteView bytes, bool verify_checksums, bool keep_keys) {
  size_t pos = 0;
  auto read = [&](void* p, size_t n) {
    if (bytes.size() - pos < n) return false;
    std::memcpy(p, bytes.data() + pos, n);
    pos += n;
    return true;
  };
  // The header is read first; the frames start where it ends.
  char magic[sizeof kMagic];
  uint32_t version = 0, len = 0;
  size_t header_end = 0;
  if (read(magic, sizeof magic) && read(&version, 4) && read(&len, 4) &&
      bytes.size() - pos >= size_t{len} + 8) {
    header_end = pos + len + 8;
  }
  pos = 0;
  FrameReader reader(bytes.subspan(std::min(header_end, bytes.size())), verify_checksums);
  return Parse(read, reader, "the state", verify_checksums, keep_keys);
}

}  // namespace zsim::state
