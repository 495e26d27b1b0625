#include "engine/pipeline/cost_probe.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_set>

#include "engine/base/byte_view.h"
#include "engine/base/thread_cpu.h"
#include "engine/codec/codec.h"
#include "engine/codec/zfs_block.h"
#include "engine/estimate/codec_budget.h"
#include "engine/estimate/codec_cost.h"

namespace zsim::pipeline {
namespace {

constexpr uint64_t kSmallFileSeed = 0x70B3C0575EEDull;
constexpr uint64_t kSector = 512;

// The first row's block size (the probe reads and codes in those).
uint64_t BlockBytes(const ScanOptions& options) {
  const std::vector<uint64_t> rows = estimate::RowBlockSizes(options);
  return rows.empty() ? 128 << 10 : rows.front();
}

}  // namespace

uint64_t ProbeStride(uint64_t data_bytes, uint64_t block_bytes) {
  if (block_bytes == 0) return 0;
  const uint64_t records =
      std::clamp(data_bytes / block_bytes / kProbeShare, kProbeMinRecords, kProbeMaxRecords);
  const uint64_t stride = data_bytes / records;
  return std::max<uint64_t>(1, (stride + block_bytes - 1) / block_bytes) * block_bytes;
}

ProbedRecords ProbedRecordsOf(std::string_view path, uint64_t size, uint64_t stride) {
  ProbedRecords p;
  if (size == 0 || stride == 0) return p;
  p.stride = stride;
  if (size >= stride) {
    p.count = (size + stride - 1) / stride;
    p.bytes_each = double(size) / double(p.count);
  } else if (XXH3_64bits_withSeed(path.data(), path.size(), kSmallFileSeed) % stride < size) {
    p.count = 1;
    p.bytes_each = double(stride);
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

size_t ProbeTimedRecords(double forecast_codec_cpu_seconds, double record_nominal_seconds) {
  if (record_nominal_seconds <= 0) return 0;
  const double n = 0.015 * forecast_codec_cpu_seconds / record_nominal_seconds;
  return static_cast<size_t>(std::clamp(n, 8.0, 64.0));
}

double UniqueBytes(const std::vector<ProbedRecord>& records, uint64_t data_bytes) {
  std::unordered_set<uint64_t> seen;
  double unique = 0, data = 0;
  for (const ProbedRecord& r : records) {
    data += r.stands_for;
    if (!r.is_zero && seen.insert(r.key).second) unique += r.stands_for;
  }
  return data > 0 ? double(data_bytes) * unique / data : 0;
}

CostProbe::CostProbe(io::FileSystem* fs, std::vector<walk::SampledFile> files, int file_level,
                     uint64_t data_bytes, const ScanOptions& options,
                     const zfs::WritePolicy& policy, std::vector<double> shares,
                     double forecast_codec_cpu_seconds)
    : fs_(fs), options_(options), policy_(policy), shares_(std::move(shares)) {
  thread_ = std::thread([this, files = std::move(files), file_level, data_bytes,
                         forecast_codec_cpu_seconds]() mutable {
    // The probe only feeds the progress line's expected time: a failure ends it, not the scan.
    try {
      Run(std::move(files), file_level, data_bytes, forecast_codec_cpu_seconds);
    } catch (...) {
      failed_.store(true, std::memory_order_release);
    }
  });
}

CostProbe::~CostProbe() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void CostProbe::Stop() { stop_.store(true, std::memory_order_relaxed); }

std::optional<ProbeFigures> CostProbe::figures() const {
  if (!done_.load(std::memory_order_acquire)) return std::nullopt;
  return figures_;
}

bool CostProbe::failed() const { return failed_.load(std::memory_order_acquire); }

bool CostProbe::Follow(const std::string& path) const {
  // As the scan opens it (scan.cc): symlinks are followed with --follow-symlinks, or when an
  // input path names one.
  return options_.follow_symlinks ||
         std::find(options_.paths.begin(), options_.paths.end(), path) != options_.paths.end();
}

void CostProbe::Run(std::vector<walk::SampledFile> files, int file_level, uint64_t data_bytes,
                    double forecast_codec_cpu_seconds) {
  const uint64_t bs = BlockBytes(options_);
  const uint64_t stride = ProbeStride(data_bytes, bs);
  const double scale = std::ldexp(1.0, file_level);
  std::unique_ptr<uint8_t[]> buffer(new uint8_t[bs]);
  std::unique_ptr<uint8_t[]> scratch(new uint8_t[bs]);
  codec::Compressor compressor;
  // Reading: every probed record's key; the distinct non-zero ones kept for the codecs.
  std::vector<ProbedRecord> records;
  struct Kept {
    std::string path;
    uint64_t offset, capacity;
  };
  std::vector<std::pair<uint64_t, Kept>> distinct;  // (key, where)
  std::unordered_set<uint64_t> seen;
  for (const walk::SampledFile& f : files) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const ProbedRecords p = ProbedRecordsOf(f.path, f.size, stride);
    if (p.count == 0) continue;
    Result<std::unique_ptr<io::File>> file = fs_->Open(f.path, Follow(f.path));
    if (!file.ok()) continue;  // gone since the walk: the scan says so
    // Records wholly in a hole (a sparse image's unwritten space) are not read: they cost the
    // scan nothing either, and hold no data for UniqueBytes.
    for (std::optional<uint64_t> k = NextProbedRecord(**file, f.size, p, 0, bs); k;
         k = NextProbedRecord(**file, f.size, p, *k + 1, bs)) {
      if (stop_.load(std::memory_order_relaxed)) return;
      const uint64_t offset = *k * p.stride;
      const uint64_t capacity = std::min(bs, f.size - offset);
      ProbedRecord r;
      r.stands_for = p.bytes_each * scale;
      // The whole record, as the scan reads it (a short read is not the record's end).
      if (!io::ReadFully(**file, offset, MutableByteView(buffer.get(), capacity)).ok()) break;
      const ByteView bytes(buffer.get(), capacity);
      r.key = XXH3_64bits(bytes.data(), bytes.size());
      r.is_zero = IsAllZero(bytes);
      records.push_back(r);
      if (!r.is_zero && seen.insert(r.key).second) {
        distinct.push_back({r.key, Kept{f.path, offset, capacity}});
      }
    }
  }
  ProbeFigures figures;
  figures.unique_bytes = UniqueBytes(records, data_bytes);
  // Codecs: on the distinct records with the lowest keys (a deterministic spread), each timed.
  double record_nominal = 0;
  for (size_t c = 0; c < options_.compressions.size(); ++c) {
    const double speed = estimate::NominalCodecBytesPerSecond(options_.compressions[c]);
    if (speed > 0) record_nominal += double(bs) / speed;
  }
  const size_t timed =
      std::min(distinct.size(), ProbeTimedRecords(forecast_codec_cpu_seconds, record_nominal));
  std::partial_sort(distinct.begin(), distinct.begin() + timed, distinct.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint64_t> ns(options_.compressions.size(), 0);
  uint64_t timed_bytes = 0;
  for (size_t i = 0; i < timed; ++i) {
    if (stop_.load(std::memory_order_relaxed)) return;
    const Kept& k = distinct[i].second;
    Result<std::unique_ptr<io::File>> file = fs_->Open(k.path, Follow(k.path));
    if (!file.ok()) continue;
    // A small file's block: its size rounded up to a sector, the rest zeros (as the scan's).
    const uint64_t lsize = std::min(bs, (k.capacity + kSector - 1) / kSector * kSector);
    std::fill(buffer.get(), buffer.get() + lsize, 0);
    if (!io::ReadFully(**file, k.offset, MutableByteView(buffer.get(), k.capacity)).ok()) continue;
    const ByteView block(buffer.get(), lsize);
    for (size_t c = 0; c < options_.compressions.size(); ++c) {
      if (shares_[c] <= 0) continue;
      if (i == 0) {  // untimed: a codec's first call sets up its context
        codec::CompressZfsBlock(policy_, options_.compressions[c], block, false, compressor,
                                MutableByteView(scratch.get(), lsize));
      }
      const uint64_t t0 = ThreadCpuNanos();
      codec::CompressZfsBlock(policy_, options_.compressions[c], block, false, compressor,
                              MutableByteView(scratch.get(), lsize));
      ns[c] += ThreadCpuNanos() - t0;
    }
    timed_bytes += k.capacity;
  }
  if (timed_bytes > 0) {
    for (size_t c = 0; c < ns.size(); ++c) {
      figures.codec_cpu_per_byte += shares_[c] * double(ns[c]) * 1e-9 / double(timed_bytes);
    }
  }
  figures_ = figures;
  done_.store(true, std::memory_order_release);
}

}  // namespace zsim::pipeline
