#include "engine/state/scan_state.h"

#include "engine/base/mix.h"
#include "engine/ddt/written_key.h"

namespace zsim::state {

size_t FeaturedSetting(const std::vector<Compression>& compressions) {
  for (size_t c = 0; c < compressions.size(); ++c) {
    if (compressions[c].algorithm != CompressionAlgorithm::kOff) return c;
  }
  return 0;
}

uint64_t FileIdentity(uint64_t dev, uint64_t ino) {
  // Two of a billion files share a hash with odds of about 3%; a false match only adds a warning.
  return Mix64(Mix64(dev) ^ (ino * kGoldenGamma));
}

namespace {

// Heap bytes of containers as libstdc++ lays them out: a vector's buffer, a string's beyond its
// 15 inline bytes, and a std::map node's header (colour and three links) before its value.
constexpr uint64_t kMapNodeHeader = 32;
constexpr uint64_t kInlineStringBytes = 15;

template <typename T>
uint64_t Buffer(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
uint64_t Buffer(const std::string& s) {
  return s.capacity() > kInlineStringBytes ? s.capacity() + 1 : 0;
}
template <typename T>
uint64_t Buffers(const std::vector<std::vector<T>>& v) {
  uint64_t n = Buffer(v);
  for (const std::vector<T>& inner : v) n += Buffer(inner);
  return n;
}
template <typename K, typename V>
uint64_t Nodes(const std::map<K, V>& m) {
  return m.size() * (kMapNodeHeader + sizeof(typename std::map<K, V>::value_type));
}

uint64_t IndirectsBytes(const FileIndirects& f) { return Buffers(f.read) + Buffers(f.nonzero); }

uint64_t RecordBytes(const FileRecord& r) {
  return Buffer(r.path) + Buffer(r.zero_blocks) + Buffer(r.holes) + Buffers(r.refs) +
         Buffers(r.keys) + IndirectsBytes(r.indirects);
}

uint64_t LinkBytes(const LinkedFile& l) {
  return Buffer(l.path) + Buffer(l.zero_blocks) + Buffer(l.holes) + Buffers(l.refs) +
         Buffers(l.keys) + IndirectsBytes(l.indirects) + Buffers(l.occurrences);
}

uint64_t BreakdownBytes(const BreakdownState& b) {
  uint64_t n = Buffer(b.directory_names) + Buffer(b.extension_names) + Buffer(b.directories) +
               Buffer(b.extensions) + Buffer(b.references) + Buffer(b.zero_blocks) +
               Buffer(b.zero_bytes) + Nodes(b.contents);
  for (const auto* names : {&b.directory_names, &b.extension_names}) {
    for (const std::string& name : *names) n += Buffer(name);
  }
  for (const auto* rows : {&b.directories, &b.extensions}) {
    for (const BreakdownRowSums& row : *rows) {
      n += Buffer(row.setting_lsize) + Buffer(row.setting_zero_lsize);
    }
  }
  for (const auto& [content, copies] : b.contents) n += Buffer(content.lsize);
  return n;
}

}  // namespace

ScanMemory StateMemory(const ScanState& state) {
  ScanMemory m;
  uint64_t files = Buffer(state.file_ids) + Buffer(state.records) + Buffer(state.links) +
                   Nodes(state.directories) + BreakdownBytes(state.breakdown);
  for (const FileRecord& r : state.records) files += RecordBytes(r);
  for (const LinkedFile& l : state.links) files += LinkBytes(l);
  for (const RowState& r : state.rows) {
    m.table_bytes += r.table->memory_bytes();
    m.table_entries += r.table->entries();
    m.sketch_bytes += r.distinct->memory_bytes();
    files += Buffer(r.files);
    for (const std::map<FileShape, uint64_t>& shapes : r.files) {
      files += Nodes(shapes);
      for (const auto& [shape, count] : shapes) {
        files += Buffer(shape.indirects) + Buffer(shape.written_indirects);
      }
    }
  }
  m.file_state_bytes = files;
  return m;
}

bool KeepsLeastBudget(CodeKind kind, const zfs::WritePolicy& scan, Compression c, uint64_t lsize) {
  switch (kind) {
    case CodeKind::kRounded:
    case CodeKind::kRaw:
      return false;
    case CodeKind::kLeastBudget:
      return zfs::LeastBudgetKnown(c);
    case CodeKind::kLeastBudgetZstd:
      break;
    case CodeKind::kEarlyAbort:
      return c.algorithm != CompressionAlgorithm::kOff;
  }
  return zfs::LeastBudgetKept(scan, c, lsize);
}

bool HasProbe(CodeKind kind, Compression c) {
  return kind == CodeKind::kEarlyAbort && zfs::ZstdEarlyAbortLevel(c);
}

std::vector<size_t> ProbeColumns(CodeKind kind, const std::vector<Compression>& compressions) {
  std::vector<size_t> out(compressions.size(), kNoProbe);
  size_t next = compressions.size();
  for (size_t c = 0; c < compressions.size(); ++c) {
    if (HasProbe(kind, compressions[c])) out[c] = next++;
  }
  return out;
}

bool KeepsWrittenKey(const ScanOptions& options, size_t c) {
  const CompressionAlgorithm a = options.compressions[c].algorithm;
  return options.checksum == ChecksumKind::kSha256 && a != CompressionAlgorithm::kOff &&
         a != CompressionAlgorithm::kZstd;
}

std::vector<size_t> KeyColumns(const ScanOptions& options, CodeKind kind, bool written_keys) {
  const std::vector<Compression>& comps = options.compressions;
  std::vector<size_t> out(comps.size(), kNoKey);
  // Only least-budget codes leave the output a key is taken of (pipeline::CodeBlock).
  if (!written_keys || kind != CodeKind::kEarlyAbort) return out;
  size_t next = comps.size();
  for (const Compression& c : comps) next += HasProbe(kind, c) ? 1 : 0;
  for (size_t c = 0; c < comps.size(); ++c) {
    if (!KeepsWrittenKey(options, c)) continue;
    out[c] = next;
    next += ddt::kWrittenKeyColumns;
  }
  return out;
}

std::vector<ddt::SettingStorage> TableLayout(const ScanOptions& options,
                                             const std::vector<bool>& sampled, CodeKind kind,
                                             bool written_keys) {
  const zfs::WritePolicy policy = zfs::DedupPolicyOf(options.profile, options.vdev, options.ashift);
  const std::vector<Compression>& comps = options.compressions;
  std::vector<ddt::SettingStorage> layout(comps.size());
  for (size_t c = 0; c < comps.size(); ++c) {
    layout[c].zero_is_hole = zfs::ZeroBlockIsHole(policy, comps[c]);
    if (comps[c].algorithm == CompressionAlgorithm::kOff) {
      layout[c].kind = ddt::SettingStorage::Kind::kFromLsize;
    } else if (c < sampled.size() && sampled[c]) {
      layout[c].kind = ddt::SettingStorage::Kind::kSide;
    }
  }
  for (size_t c = 0; c < comps.size(); ++c) {
    if (HasProbe(kind, comps[c])) layout.push_back(layout[c]);
  }
  const std::vector<size_t> keys = KeyColumns(options, kind, written_keys);
  for (size_t c = 0; c < comps.size(); ++c) {
    if (keys[c] == kNoKey) continue;
    // Stored as the setting: inline, or beside the entries a sampled codec ran on.
    layout.insert(layout.end(), ddt::kWrittenKeyColumns, layout[c]);
  }
  return layout;
}

}  // namespace zsim::state
