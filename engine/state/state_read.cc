// engine/state/state_read.cc
//
// Frames read back into a ScanState (state_frames.h GetState), every count, code and size checked
// so that a corrupt or foreign file is refused, never read as a wrong state: the reading half of
// the state file's format (state_file.h); state_write.cc writes it.

#include <algorithm>
#include <cmath>
#include <string>

#include "engine/ddt/written_key.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/sample_level.h"
#include "engine/state/frame_stream.h"
#include "engine/state/state_frames.h"
#include "engine/state/value_io.h"
#include "engine/zfs/write_rules.h"

namespace zsim::state::internal {
namespace {

constexpr size_t kMaxSettings = 64;
constexpr size_t kMaxRows = 64;
constexpr uint64_t kMaxCount = uint64_t{1} << 40;            // any list longer is corrupt
constexpr uint64_t kMaxRareClassBlocks = uint64_t{1} << 20;  // a census class larger is corrupt

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

}  // namespace

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
  if (version >= 23) {
    for (uint64_t i = 0, n = Count(r, 1 << 16, "input note"); i < n && r.ok(); ++i) {
      in.notes.push_back(r.Str());
    }
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
        if (version >= 23) f.written_indirects = GetLevels(r);
        const auto fit = [&](const std::vector<uint64_t>& levels) {
          return std::all_of(levels.begin(), levels.end(),
                             [&](uint64_t n) { return n <= f.blocks; });
        };
        const bool levels_fit = fit(f.indirects) && fit(f.written_indirects) &&
                                (f.zero_blocks != 0 || f.written_indirects.empty());
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

}  // namespace zsim::state::internal
