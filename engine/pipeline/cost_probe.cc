#include "engine/pipeline/cost_probe.h"

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <unordered_set>

#include "engine/base/byte_view.h"
#include "engine/base/thread_cpu.h"
#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"
#include "engine/estimate/interval_top_up.h"
#include "engine/estimate/pilot_level.h"
#include "engine/pipeline/block_code.h"
#include "engine/zfs/record_layout.h"

namespace zsim::pipeline {
namespace {

// Row r's cells of a row-major vector of `settings` per row; empty where it has none.
std::vector<bool> RowOf(const std::vector<bool>& cells, size_t r, size_t settings) {
  if (cells.size() < (r + 1) * settings) return {};
  return std::vector<bool>(cells.begin() + ptrdiff_t(r * settings),
                           cells.begin() + ptrdiff_t((r + 1) * settings));
}

constexpr uint64_t kSmallFileSeed = 0x70B3C0575EEDull;

// The first row's block size (the probe reads and codes in those).
uint64_t BlockBytes(const ScanOptions& options) {
  const std::vector<uint64_t> rows = estimate::RowBlockSizes(options);
  return rows.empty() ? 128 << 10 : rows.front();
}

// A short file's draw: the hash of its name (the path's last component) and size, so that
// copies of it under the same name are probed together.
uint64_t SmallFileKey(std::string_view path, uint64_t size) {
  const size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return XXH3_64bits_withSeed(name.data(), name.size(), kSmallFileSeed ^ size);
}

// lz4: the auxiliary codec timed on every distinct record (CodecCpuPerByte).
constexpr Compression kLz4{CompressionAlgorithm::kLz4, 0};

}  // namespace

ProbeStrides ProbeStridesFor(const std::vector<walk::SampledFile>& files, int file_level,
                             uint64_t data_bytes, uint64_t block_bytes) {
  ProbeStrides out;
  if (block_bytes == 0) return out;
  const uint64_t least = std::max(kProbeMinRecords * block_bytes, kProbeMinBytes);
  const double budget = double(std::min(
      std::clamp(data_bytes / kProbeShare, least, std::max(least, kProbeMaxRecords * block_bytes)),
      std::max(data_bytes / kProbeMostShare, kProbeMinRecords * block_bytes)));
  // With no sample, the data as one long file.
  const std::vector<walk::SampledFile> whole = {{"", data_bytes}};
  const std::vector<walk::SampledFile>& sample = files.empty() ? whole : files;
  double sampled = 0;  // the sample's apparent bytes
  for (const walk::SampledFile& f : sample) sampled += double(f.size);
  // The probe reads the sample's files only: their expected reads, times the share of their
  // apparent bytes that holds data (holes are not read; a compressed file system allocates less).
  const int level = files.empty() ? 0 : file_level;
  const double allocated =
      sampled > 0 ? std::min(1.0, double(data_bytes) / (sampled * std::ldexp(1.0, level))) : 0;
  auto fits = [&](uint64_t stride, uint64_t short_stride) {
    double reads = 0, records = 0;
    for (const walk::SampledFile& f : sample) {
      if (f.size >= stride) {
        const uint64_t count = (f.size + stride - 1) / stride;
        records += double(count);
        reads += double((count - 1) * block_bytes +
                        std::min(block_bytes, f.size - (count - 1) * stride));
      } else {
        const double drawn = std::min(1.0, double(f.size) / double(short_stride));
        records += drawn;
        reads += drawn * double(std::min(block_bytes, f.size));
      }
    }
    return reads * allocated <= budget && records * allocated <= double(kProbeMaxReads);
  };
  // The fewest blocks per stride that fit: reads and records fall as the stride grows, and a
  // stride longer than all the data reads at most one record.
  const uint64_t most = std::max<uint64_t>(data_bytes, uint64_t(sampled)) / block_bytes + 1;
  uint64_t hi = 1;
  while (hi < most && !fits(hi * block_bytes, hi * block_bytes)) hi = std::min(most, hi * 2);
  uint64_t lo = hi / 2;  // does not fit (or 0)
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (fits(mid * block_bytes, mid * block_bytes) ? hi : lo) = mid;
  }
  out.stride = hi * block_bytes;
  // The short files' stride: as short as the bytes and records left allow.
  uint64_t short_lo = 0, short_hi = out.stride;  // short_lo does not fit (0: by definition)
  while (short_hi - short_lo > 1) {
    const uint64_t mid = short_lo + (short_hi - short_lo) / 2;
    (fits(out.stride, mid) ? short_hi : short_lo) = mid;
  }
  out.short_stride = short_hi;
  return out;
}

ProbedRecords ProbedRecordsOf(std::string_view path, uint64_t size, const ProbeStrides& strides) {
  ProbedRecords p;
  if (size == 0 || strides.stride == 0) return p;
  p.stride = strides.stride;
  if (size >= strides.stride) {
    p.count = (size + strides.stride - 1) / strides.stride;
    p.bytes_each = double(size) / double(p.count);
    return p;
  }
  p.short_file = true;
  const uint64_t short_stride = std::max<uint64_t>(1, strides.short_stride);
  if (size >= short_stride || SmallFileKey(path, size) % short_stride < size) {
    p.count = 1;
    p.bytes_each = double(std::max(size, short_stride));
  }
  return p;
}

std::optional<uint64_t> NextProbedRecord(io::File& file, uint64_t size, const ProbedRecords& p,
                                         uint64_t k, uint64_t block_bytes) {
  while (k < p.count) {
    const uint64_t offset = k * p.stride;
    if (offset >= size) return std::nullopt;
    const uint64_t capacity = std::min(block_bytes, size - offset);
    Result<std::optional<uint64_t>> data = file.NextData(offset);
    if (!data.ok() || (*data && **data < offset + capacity)) return k;  // data in it
    if (!*data) return std::nullopt;                                    // only a hole follows
    // The data starts at or after this record's end: on to the record whose stride holds it
    // (it holds data if the data starts within its block; else the next one is asked).
    k = std::max(k + 1, **data / p.stride);
  }
  return std::nullopt;
}

size_t ProbeTimedRecords(double forecast_codec_cpu_seconds, double nominal_seconds_per_byte,
                         const std::vector<uint64_t>& lsizes) {
  if (nominal_seconds_per_byte <= 0) return 0;
  const double budget = 0.015 * forecast_codec_cpu_seconds;
  const size_t most = std::min(lsizes.size(), kProbeMaxTimed);
  double spent = 0;
  size_t n = 0;
  while (n < most && (n < kProbeMinTimed || spent < budget)) {
    spent += double(lsizes[n]) * nominal_seconds_per_byte;
    ++n;
  }
  return n;
}

double CodecCpuPerByte(const std::vector<TimedRecord>& records) {
  // Per record: lz4's and the codecs' nanoseconds per byte, weighted by what it stands for.
  struct Point {
    double w, x, y;
  };
  std::vector<Point> all, timed;
  for (const TimedRecord& r : records) {
    if (r.bytes == 0 || r.stands_for <= 0) continue;
    const Point p{r.stands_for, r.lz4_ns / double(r.bytes), r.codecs_ns / double(r.bytes)};
    all.push_back(p);
    if (r.codecs_ns >= 0) timed.push_back(p);
  }
  double w = 0, x = 0, y = 0;
  for (const Point& p : timed) {
    w += p.w;
    x += p.w * p.x;
    y += p.w * p.y;
  }
  if (w <= 0) return 0;
  x /= w;
  y /= w;
  // The slope of the codecs' cost on lz4's over the timed records (never negative: the codecs
  // do not get cheaper where lz4 gets costlier).
  double sxx = 0, sxy = 0, lo = timed.front().x, hi = lo;
  for (const Point& p : timed) {
    sxx += p.w * (p.x - x) * (p.x - x);
    sxy += p.w * (p.x - x) * (p.y - y);
    lo = std::min(lo, p.x);
    hi = std::max(hi, p.x);
  }
  if (timed.size() < 3 || !(sxx > 0)) return y * 1e-9;
  const double slope = std::max(0.0, sxy / sxx);
  // lz4's mean over every record, each held to the timed records' range: a tiny file's lz4 cost
  // per byte is its call's fixed cost, far above any timed record's, and the line is not
  // extended there.
  double w_all = 0, x_all = 0;
  for (const Point& p : all) {
    w_all += p.w;
    x_all += p.w * std::clamp(p.x, lo, hi);
  }
  x_all /= w_all;
  const double estimate = y + slope * (x_all - x);
  return (estimate > 0 ? estimate : y) * 1e-9;
}

double UniqueBytes(const std::vector<ProbedRecord>& records, double short_bytes,
                   uint64_t data_bytes) {
  std::unordered_set<uint64_t> seen;
  double unique = 0, data = short_bytes;
  for (const ProbedRecord& r : records) {
    if (!r.short_file) data += r.stands_for;
    if (!r.is_zero && seen.insert(r.key).second) unique += r.stands_for;
  }
  return data > 0 ? double(data_bytes) * unique / data : 0;
}

CostProbe::CostProbe(io::FileSystem* fs, std::vector<walk::SampledFile> files, int file_level,
                     uint64_t data_bytes, const ScanOptions& options,
                     const zfs::WritePolicy& policy, std::vector<double> shares,
                     double forecast_codec_cpu_seconds, PilotPlan pilot,
                     std::shared_ptr<ReadThrottle> throttle)
    : fs_(fs),
      options_(options),
      policy_(policy),
      shares_(std::move(shares)),
      pilot_(std::move(pilot)),
      throttle_(std::move(throttle)) {
  thread_ = std::thread([this, files = std::move(files), file_level, data_bytes,
                         forecast_codec_cpu_seconds]() mutable {
    // A failure ends the probe, not the scan: the expected time goes on without its figures, and
    // the scan keeps the budget's levels (no pilot levels: the same on every run that fails so).
    try {
      Run(std::move(files), file_level, data_bytes, forecast_codec_cpu_seconds);
    } catch (...) {
      failed_.store(true, std::memory_order_release);
    }
    finished_.store(true, std::memory_order_release);
  });
}

CostProbe::~CostProbe() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void CostProbe::Stop() { stop_.store(true, std::memory_order_relaxed); }

std::optional<std::vector<int>> CostProbe::pilot_levels() const {
  if (!pilot_done_.load(std::memory_order_acquire)) return std::nullopt;
  return pilot_levels_;
}

bool CostProbe::finished() const { return finished_.load(std::memory_order_acquire); }

std::vector<int> CostProbe::RunPilot(
    const int* budget_levels, size_t records,
    const std::function<std::optional<PilotBlock>(size_t)>& block_of, uint64_t block_bytes,
    double unique_bytes, uint64_t planned_blocks, const std::vector<bool>& foreseeable,
    codec::Compressor& compressor, uint8_t* scratch) {
  const double unique_blocks = unique_bytes / double(block_bytes);
  const size_t settings = options_.compressions.size();
  const std::vector<int> budget(budget_levels, budget_levels + settings);
  std::vector<std::vector<estimate::PilotPoint>> points(settings);
  // A setting whose points already ask for far more blocks than a raise would leave stops early
  // (estimate::PilotSettled), in key order: the same records decide it on every run.
  std::vector<bool> settled(settings, false);
  // The codecs the pilot runs on a record: its settings not settled, and their anchors.
  auto coded = [&](size_t c) {
    if (budget[c] >= 0 && !settled[c]) return true;
    for (size_t f = 0; f < settings; ++f) {
      if (pilot_.anchors[f] == int(c) && budget[f] >= 0 && !settled[f]) return true;
    }
    return false;
  };
  std::vector<double> psize(settings, 0);
  for (size_t i = 0; i < std::min(records, estimate::kPilotRecords); ++i) {
    if (stop_.load(std::memory_order_relaxed)) return {};
    const std::optional<PilotBlock> block = block_of(i);
    if (!block) return {};
    if (block->repeat) continue;
    for (size_t c = 0; c < settings; ++c) {
      if (!coded(c)) continue;
      const zfs::BlockWrite w =
          codec::CompressZfsBlock(policy_, options_.compressions[c], block->bytes, false,
                                  compressor, MutableByteView(scratch, block->bytes.size()));
      // ZFS accounts nothing for an embedded block (zfs/write_rules.h BlockWrite).
      psize[c] = w.kind == zfs::BlockKind::kEmbedded ? 0 : double(w.psize);
    }
    const double lsize = double(block->bytes.size());
    for (size_t c = 0; c < settings; ++c) {
      if (budget[c] < 0 || settled[c]) continue;
      const int anchor = pilot_.anchors[c];
      points[c].push_back({lsize, anchor >= 0 ? psize[anchor] : lsize, psize[c], block->weight});
      settled[c] = estimate::PilotSettled(points[c], unique_blocks, budget[c]);
    }
  }
  std::vector<int> levels = estimate::PilotLevels(points, unique_blocks, budget);
  // The interval top-up foreseen: a setting on lsize whose points say the budget's sample will be
  // far too wide is coded on every block from here on (level 0; the scan only lowers its coding
  // level, the estimate still takes the rule's decision at the end: interval_top_up.h). On the
  // planned blocks, which the unique ones never exceed (unique bytes over the block size would
  // count a tree of small files as few blocks, and its sample as far too small).
  std::vector<bool> wide(settings, false);
  const double planned = double(planned_blocks);
  for (size_t c = 0; c < settings; ++c) {
    wide[c] = budget[c] >= 0 && levels[c] == budget[c] && c < foreseeable.size() &&
              foreseeable[c] && estimate::PilotFindsItWide(points[c], planned, budget[c]);
  }
  const std::vector<bool> whole = estimate::ForeseenWhole(options_, wide, levels, block_bytes,
                                                          planned, unique_blocks, unique_bytes);
  for (size_t c = 0; c < settings; ++c) {
    if (whole[c]) levels[c] = 0;
  }
  return levels;
}

std::optional<ProbeFigures> CostProbe::figures() const {
  if (!done_.load(std::memory_order_acquire)) return std::nullopt;
  return figures_;
}

bool CostProbe::failed() const { return failed_.load(std::memory_order_acquire); }

bool CostProbe::Follow(const std::string& path) const {
  // As the scan opens it (scan_input.cc): symlinks are followed with --follow-symlinks, or when an
  // input path names one.
  return options_.follow_symlinks ||
         std::find(options_.paths.begin(), options_.paths.end(), path) != options_.paths.end();
}

bool CostProbe::Read(io::File& file, uint64_t offset, MutableByteView dst) {
  if (throttle_) {
    // Ahead of the workers' queue: behind it, one record at a time, the pilot answered only at
    // the reading's end (read_throttle.h AcquireAhead).
    throttle_->AcquireAhead(dst.size(), &stop_);
    if (stop_.load(std::memory_order_relaxed)) return false;
  }
  return io::ReadFully(file, offset, dst).ok();
}

void CostProbe::Run(std::vector<walk::SampledFile> files, int file_level, uint64_t data_bytes,
                    double forecast_codec_cpu_seconds) {
  const uint64_t bs = BlockBytes(options_);
  const std::vector<uint64_t> rows = estimate::RowBlockSizes(options_);
  const size_t settings = options_.compressions.size();
  // The rows the pilot reads blocks of (PilotPlan), and the largest block read.
  std::vector<size_t> piloted;
  uint64_t most = bs;
  for (size_t r = 0; r < rows.size() && (r + 1) * settings <= pilot_.budget_levels.size(); ++r) {
    const int* levels = pilot_.budget_levels.data() + r * settings;
    if (std::any_of(levels, levels + settings, [](int l) { return l >= 0; })) {
      piloted.push_back(r);
      most = std::max(most, rows[r]);
    }
  }
  const uint64_t cpu_start = ThreadCpuNanos();
  const auto wall_start = std::chrono::steady_clock::now();
  const ProbeStrides strides = ProbeStridesFor(files, file_level, data_bytes, bs);
  const double scale = std::ldexp(1.0, file_level);
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[most]);
  std::unique_ptr<uint8_t[]> scratch(new uint8_t[most]);
  codec::Compressor compressor;
  // A block as the scan cuts it in blocks of `block_bytes` (zfs/record_layout.h): a file of at
  // most that size is one block of its size rounded up to a sector; the bytes past the data
  // are zeros.
  auto lsize_of = [&](uint64_t file_size, uint64_t block_bytes) {
    return options_.volblocksize ? zfs::ZvolLayout(file_size, block_bytes).block_bytes
                                 : zfs::FileLayout(file_size, block_bytes).block_bytes;
  };
  // `probes`: the record's zstd early-abort probes, shared by its settings as the scan shares
  // them (lz4's run seeds them, zstd-1 runs once); none: each setting's own (a first, untimed
  // call).
  auto time_code = [&](Compression comp, ByteView block,
                       codec::EarlyAbortProbes* probes = nullptr) {
    const uint64_t t0 = ThreadCpuNanos();
    const MutableByteView s(scratch.get(), block.size());
    codec::EarlyAbortProbes own;
    codec::EarlyAbortProbes& shared = probes != nullptr ? *probes : own;
    const BlockCodes got = CodeBlock(policy_, comp, block, false, compressor, s,
                                     state::CodeKind::kEarlyAbort, /*with_probe=*/false);
    SeedLz4Probe(comp, got, &shared);
    if (state::HasProbe(state::CodeKind::kEarlyAbort, comp)) {
      EarlyAbortCode(block, got.code, compressor, s, &shared);
    }
    return double(ThreadCpuNanos() - t0);
  };
  bool lz4_ready = false;  // its first call sets up its context: untimed
  // Reading: every probed record's key; the distinct non-zero ones kept for the codecs, lz4
  // timed on each.
  std::vector<ProbedRecord> records;
  struct Kept {
    std::string path;
    uint64_t offset, capacity, file_size;
  };
  std::vector<std::pair<uint64_t, Kept>> distinct;  // (key, where)
  std::vector<TimedRecord> timed_records;           // per distinct record, in the same order
  std::unordered_set<uint64_t> seen;
  // The short files' bytes, drawn or not, less those drawn that could not be read (UniqueBytes).
  double short_bytes = 0;
  for (const walk::SampledFile& f : files) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const ProbedRecords p = ProbedRecordsOf(f.path, f.size, strides);
    if (p.short_file) short_bytes += double(f.size) * scale;
    if (p.count == 0) continue;
    Result<std::unique_ptr<io::File>> file = fs_->Open(f.path, Follow(f.path));
    if (!file.ok()) {  // gone since the walk: the scan says so
      if (p.short_file) short_bytes -= double(f.size) * scale;  // out of the data, as a long one
      continue;
    }
    // Records wholly in a hole (a sparse image's unwritten space) are not read: they cost the
    // scan nothing either, and hold no data for UniqueBytes.
    for (std::optional<uint64_t> k = NextProbedRecord(**file, f.size, p, 0, bs); k;
         k = NextProbedRecord(**file, f.size, p, *k + 1, bs)) {
      if (stop_.load(std::memory_order_relaxed)) return;
      const uint64_t offset = *k * p.stride;
      const uint64_t capacity = std::min(bs, f.size - offset);
      ProbedRecord r;
      r.stands_for = p.bytes_each * scale;
      r.short_file = p.short_file;
      // The whole record, as the scan reads it (a short read is not the record's end).
      if (!Read(**file, offset, MutableByteView(buffer.get(), capacity))) {
        if (stop_.load(std::memory_order_relaxed)) return;
        if (p.short_file) short_bytes -= double(f.size) * scale;
        break;
      }
      const ByteView bytes(buffer.get(), capacity);
      r.key = XXH3_64bits(bytes.data(), bytes.size());
      r.is_zero = IsAllZero(bytes);
      records.push_back(r);
      if (!r.is_zero && seen.insert(r.key).second) {
        distinct.push_back({r.key, Kept{f.path, offset, capacity, f.size}});
        const uint64_t lsize = lsize_of(f.size, bs);
        std::fill(buffer.get() + capacity, buffer.get() + lsize, 0);
        const ByteView block(buffer.get(), lsize);
        if (!lz4_ready) {
          time_code(kLz4, block);
          lz4_ready = true;
        }
        timed_records.push_back({r.stands_for, capacity, time_code(kLz4, block), -1});
      }
    }
  }
  ProbeFigures figures;
  figures.unique_bytes = UniqueBytes(records, short_bytes, data_bytes);
  // Codecs: on the distinct records with the lowest keys (a deterministic spread), each timed.
  double nominal_per_byte = 0;
  for (size_t c = 0; c < options_.compressions.size(); ++c) {
    const double speed = estimate::NominalCodecBytesPerSecond(options_.compressions[c]);
    if (speed > 0) nominal_per_byte += 1 / speed;
  }
  std::vector<size_t> order(distinct.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return distinct[a].first < distinct[b].first; });
  std::vector<uint64_t> lsizes(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    lsizes[i] = lsize_of(distinct[order[i]].second.file_size, bs);
  // The block of `block_bytes` that holds the i-th record of lowest key, read again as the scan
  // codes it, and its data bytes (nullopt: gone since).
  struct Reread {
    ByteView bytes;
    uint64_t capacity;
  };
  auto reread = [&](size_t i, uint64_t block_bytes) -> std::optional<Reread> {
    const Kept& k = distinct[order[i]].second;
    Result<std::unique_ptr<io::File>> file = fs_->Open(k.path, Follow(k.path));
    if (!file.ok()) return std::nullopt;
    const uint64_t offset = k.offset / block_bytes * block_bytes;
    const uint64_t capacity = std::min(block_bytes, k.file_size - offset);
    const uint64_t lsize = lsize_of(k.file_size, block_bytes);
    std::fill(buffer.get(), buffer.get() + lsize, 0);
    if (!Read(**file, offset, MutableByteView(buffer.get(), capacity))) return std::nullopt;
    return Reread{ByteView(buffer.get(), lsize), capacity};
  };
  // The pilot first, published at once: its levels change the shares the codecs are timed at
  // below. A record it cannot read again (gone since) ends it without levels: another record
  // would make them depend on when the file went.
  if (!pilot_.budget_levels.empty()) {
    std::vector<int> levels(pilot_.budget_levels.size(), -1);
    bool failed = false;
    for (size_t r : piloted) {
      const uint64_t block_bytes = rows[r];
      // A row of larger blocks than the probe's: two records may lie in one block, and blocks
      // of two places may be alike (the row's distinct blocks are what its estimate samples).
      std::unordered_set<uint64_t> seen_blocks;
      auto block_of = [&](size_t i) -> std::optional<PilotBlock> {
        const std::optional<Reread> read = reread(i, block_bytes);
        if (!read) return std::nullopt;
        PilotBlock b;
        b.bytes = read->bytes;
        // The blocks of the tree it stands for: the bytes its record stands for, in its blocks.
        b.weight = read->capacity ? timed_records[order[i]].stands_for / double(read->capacity) : 0;
        b.repeat = !seen_blocks.insert(XXH3_64bits(b.bytes.data(), b.bytes.size())).second;
        return b;
      };
      const std::vector<int> row = RunPilot(
          pilot_.budget_levels.data() + r * settings, order.size(), block_of, block_bytes,
          figures.unique_bytes, r < pilot_.planned_blocks.size() ? pilot_.planned_blocks[r] : 0,
          RowOf(pilot_.foreseeable, r, settings), compressor, scratch.get());
      if (stop_.load(std::memory_order_relaxed)) return;
      if (row.empty()) {
        failed = true;
        break;
      }
      std::copy(row.begin(), row.end(), levels.begin() + ptrdiff_t(r * settings));
    }
    if (failed) levels.clear();
    // The codecs run at the pilot's levels from here on (cost_forecast.h coded_shares: a sum
    // over the rows).
    for (size_t i = 0; i < levels.size(); ++i) {
      const int budget = pilot_.budget_levels[i];
      if (budget >= 0 && i % settings < shares_.size()) {
        shares_[i % settings] += std::ldexp(1.0, -levels[i]) - std::ldexp(1.0, -budget);
      }
    }
    pilot_levels_ = std::move(levels);
    pilot_done_.store(true, std::memory_order_release);
  }
  const size_t timed = ProbeTimedRecords(forecast_codec_cpu_seconds, nominal_per_byte, lsizes);
  std::vector<bool> ready(options_.compressions.size(), false);
  // lz4 first, as the scan codes it first: its run seeds zstd's early-abort probes. Then by
  // falling share: the probes' runs are timed with the first zstd setting that asks, and the scan
  // runs them on every block some zstd setting codes, the largest share's (levels nest).
  std::vector<size_t> timed_order(options_.compressions.size());
  for (size_t c = 0; c < timed_order.size(); ++c) timed_order[c] = c;
  std::stable_sort(timed_order.begin(), timed_order.end(), [&](size_t a, size_t b) {
    const bool lz4_a = options_.compressions[a].algorithm == CompressionAlgorithm::kLz4;
    const bool lz4_b = options_.compressions[b].algorithm == CompressionAlgorithm::kLz4;
    if (lz4_a != lz4_b) return lz4_a;
    return shares_[a] > shares_[b];
  });
  for (size_t i = 0; i < timed; ++i) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const std::optional<Reread> read = reread(i, bs);
    if (!read) continue;
    const ByteView block = read->bytes;
    double ns = 0;
    codec::EarlyAbortProbes probes;
    for (const size_t c : timed_order) {
      if (shares_[c] <= 0) continue;
      // Untimed first: a codec's first call sets up its context.
      if (!ready[c]) time_code(options_.compressions[c], block);
      ready[c] = true;
      ns += shares_[c] * time_code(options_.compressions[c], block, &probes);
    }
    timed_records[order[i]].codecs_ns = ns;
  }
  figures.codec_cpu_per_byte = CodecCpuPerByte(timed_records);
  figures.cpu_seconds = double(ThreadCpuNanos() - cpu_start) * 1e-9;
  figures.run_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  figures_ = figures;
  done_.store(true, std::memory_order_release);
}

}  // namespace zsim::pipeline
