#include "engine/zfs/ddt_stats.h"

#include <bit>
#include <cassert>

namespace zsim::zfs {

double RatioPercentFloor(uint64_t a, uint64_t b) {
  if (b == 0) return 1.0;
  // floor(a * 100 / b) without forming a * 100, which passes 2^64 for pools above 160 PiB.
  const uint64_t percent = a / b * 100 + a % b * 100 / b;
  return static_cast<double>(percent) / 100.0;
}

void DdtStatsBuilder::AddEntry(uint64_t refcount, uint64_t lsize, uint64_t psize, uint64_t dsize) {
  AddEntries(1, refcount, lsize, psize, dsize);
}

void DdtStatsBuilder::AddEntriesOfBucket(int bucket, uint64_t count, uint64_t refs, uint64_t lsize,
                                         uint64_t psize, uint64_t dsize) {
  if (count == 0) return;
  assert(bucket >= 0 && bucket < 64 && refs >= count);
  DdtStat& a = allocated_[bucket];
  a.blocks += count;
  a.lsize += count * lsize;
  a.psize += count * psize;
  a.dsize += count * dsize;
  DdtStat& r = referenced_[bucket];
  r.blocks += refs;
  r.lsize += refs * lsize;
  r.psize += refs * psize;
  r.dsize += refs * dsize;
  (bucket == 0 ? unique_entries_ : duplicate_entries_) += count;
}

void DdtStatsBuilder::AddEntries(uint64_t count, uint64_t refcount, uint64_t lsize, uint64_t psize,
                                 uint64_t dsize) {
  if (count == 0) return;
  AddEntriesOfBucket(DdtBucket(refcount), count, count * refcount, lsize, psize, dsize);
}

void DdtStatsBuilder::Merge(const DdtStatsBuilder& other) {
  for (int b = 0; b < kBuckets; ++b) {
    allocated_[b] += other.allocated_[b];
    referenced_[b] += other.referenced_[b];
  }
  unique_entries_ += other.unique_entries_;
  duplicate_entries_ += other.duplicate_entries_;
}

DdtHistogramRow DdtStatsBuilder::Total() const {
  DdtHistogramRow total;
  total.refcnt = 0;
  for (int b = 0; b < kBuckets; ++b) {
    total.allocated += allocated_[b];
    total.referenced += referenced_[b];
  }
  return total;
}

void DdtStatsBuilder::AddBucket(int bucket, uint64_t entries, const DdtStat& allocated,
                                const DdtStat& referenced) {
  if (entries == 0) return;
  allocated_[bucket] += allocated;
  referenced_[bucket] += referenced;
  (bucket == 0 ? unique_entries_ : duplicate_entries_) += entries;
}

void DdtStatsBuilder::Scale(uint64_t factor) {
  auto scale = [factor](DdtStat& s) {
    s.blocks *= factor;
    s.lsize *= factor;
    s.psize *= factor;
    s.dsize *= factor;
  };
  for (DdtStat& s : allocated_) scale(s);
  for (DdtStat& s : referenced_) scale(s);
  unique_entries_ *= factor;
  duplicate_entries_ *= factor;
}

namespace {

// ratio and the zdb line from r.total.
void SetRatios(DedupResult* r) {
  const DdtStat& a = r->total.allocated;
  const DdtStat& ref = r->total.referenced;
  r->ratio = RatioPercentFloor(ref.dsize, a.dsize);
  if (a.blocks != 0 && a.dsize != 0 && ref.psize != 0) {
    r->zdb_dedup = static_cast<double>(ref.dsize) / static_cast<double>(a.dsize);
    r->zdb_compress = static_cast<double>(ref.lsize) / static_cast<double>(ref.psize);
    r->zdb_copies = static_cast<double>(ref.dsize) / static_cast<double>(ref.psize);
    r->zdb_total = r->zdb_dedup * r->zdb_compress / r->zdb_copies;
  }
}

}  // namespace

DedupResult DdtStatsBuilder::Result() const {
  DedupResult r;
  for (int b = 0; b < kBuckets; ++b) {
    if (allocated_[b].blocks == 0) continue;  // zdb skips empty buckets
    DdtHistogramRow row;
    row.refcnt = uint64_t{1} << b;
    row.allocated = allocated_[b];
    row.referenced = referenced_[b];
    r.histogram.push_back(row);
  }
  r.total = Total();
  r.unique_entries = unique_entries_;
  r.duplicate_entries = duplicate_entries_;
  SetRatios(&r);
  return r;
}

DedupResult DdtStatsBuilder::ResultWithTotals(const DdtStat& allocated, const DdtStat& referenced,
                                              uint64_t unique_entries,
                                              uint64_t duplicate_entries) const {
  DedupResult r = Result();
  r.total.allocated = allocated;
  r.total.referenced = referenced;
  r.unique_entries = unique_entries;
  r.duplicate_entries = duplicate_entries;
  r.zdb_dedup = r.zdb_compress = r.zdb_copies = r.zdb_total = 1.0;
  SetRatios(&r);
  return r;
}

}  // namespace zsim::zfs
