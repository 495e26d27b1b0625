// engine/state/state_write.cc
//
// A ScanState as frames (state_frames.h PutState): the writing half of the state file's format
// (state_file.h); state_read.cc reads it back.

#include <algorithm>
#include <tuple>

#include "engine/ddt/written_key.h"
#include "engine/estimate/sample_level.h"
#include "engine/state/frame_stream.h"
#include "engine/state/rare_classes.h"
#include "engine/state/save_order.h"
#include "engine/state/state_frames.h"
#include "engine/state/value_io.h"

namespace zsim::state::internal {
namespace {

// The bits of a key's hi a dedup table keeps (ddt::EntryView): the top 8 and the low 32.
constexpr uint64_t kTableHiBits = 0xFF000000FFFFFFFFull;
using LinkedFileCells = std::vector<std::pair<uint32_t, estimate::OccurrenceSums>>;

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

}  // namespace

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
  w.U64(in.notes.size());  // from format 23
  for (const std::string& note : in.notes) w.Str(note);
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
        PutLevels(w, shape.written_indirects);
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

}  // namespace zsim::state::internal
