#include "engine/state/save_order.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace zsim::state {

namespace {

// One shard's entries, copied in their places' order (a place is its id), then given by key.
struct Entry {
  ddt::Fingerprint key;
  uint64_t lsize, origin;
  uint32_t refcount, id;
  bool is_zero;
};

}  // namespace

void ForEachInKeyOrder(const ddt::DedupTable& table,
                       const std::function<void(const ddt::EntryView&)>& fn,
                       ddt::DedupTable::RefMap* map) {
  if (map) map->assign(ddt::DedupTable::kShards, {});
  if (table.entries() != table.local_entries()) {
    // Partitioned: as it stands; the local entries keep their places.
    for (size_t k = 0; map && k < ddt::DedupTable::kShards; ++k) {
      (*map)[k].resize(table.shard_entries(k));
      std::iota((*map)[k].begin(), (*map)[k].end(), 0u);
    }
    table.ForEach(fn);
    return;
  }
  const size_t settings = table.settings();
  std::vector<Entry> entries;
  std::vector<ddt::PsizeCode> codes;
  for (size_t k = 0; k < ddt::DedupTable::kShards; ++k) {
    entries.clear();
    codes.clear();
    table.ForEachInShard(k, [&](const ddt::EntryView& e) {
      entries.push_back(Entry{e.key, e.lsize, e.origin, e.refcount,
                              static_cast<uint32_t>(entries.size()), e.is_zero});
      codes.insert(codes.end(), e.codes.begin(), e.codes.end());
    });
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.key.hi != b.key.hi ? a.key.hi < b.key.hi : a.key.lo < b.key.lo;
    });
    if (map) (*map)[k].resize(entries.size());
    for (uint32_t place = 0; place < entries.size(); ++place) {
      const Entry& e = entries[place];
      if (map) (*map)[k][e.id] = place;
      const ddt::EntryView view{
          e.key,
          e.refcount,
          e.lsize,
          e.is_zero,
          std::span<const ddt::PsizeCode>(codes).subspan(e.id * settings, settings),
          e.origin};
      fn(view);
    }
  }
}

std::unique_ptr<ddt::DedupTable> InKeyOrder(ddt::DedupTable& table) {
  auto out = std::make_unique<ddt::DedupTable>(table.layout());
  out->RaiseSampleShift(table.sample_shift());
  // Shard by shard: ForEachInKeyOrder gives shard k's entries before any of shard k + 1's.
  size_t shard = 0;
  ForEachInKeyOrder(table, [&](const ddt::EntryView& e) {
    const size_t k = ddt::DedupTable::ShardOf(e.key);
    for (; shard < k; ++shard) table.DropShard(shard);
    out->LoadNewEntry(e);
  });
  for (; shard < ddt::DedupTable::kShards; ++shard) table.DropShard(shard);
  return out;
}

std::vector<uint32_t> SortedRefs(const std::vector<uint32_t>& refs,
                                 const ddt::DedupTable::RefMap& map) {
  std::vector<uint32_t> out;
  out.reserve(refs.size());
  for (uint32_t ref : refs) out.push_back(ddt::DedupTable::MapRef(map, ref));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> NameOrder(const std::vector<std::string>& names) {
  std::vector<uint32_t> order(names.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  return order;
}

std::vector<uint32_t> Inverse(const std::vector<uint32_t>& order) {
  std::vector<uint32_t> where(order.size());
  for (uint32_t k = 0; k < order.size(); ++k) where[order[k]] = k;
  return where;
}

std::vector<uint32_t> InverseOf(const std::vector<uint32_t>& order, size_t size) {
  std::vector<uint32_t> where(size, kLeftOut);
  for (uint32_t k = 0; k < order.size(); ++k) where[order[k]] = k;
  return where;
}

std::vector<uint32_t> RecordOrder(const std::vector<FileRecord>& records) {
  std::vector<uint32_t> order(records.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t i) {
    const FileRecord& f = records[i];
    return std::tie(f.root, f.path, f.dev, f.ino, f.size, f.mtime_ns, f.ctime_ns);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  return order;
}

std::vector<uint32_t> LinkOrder(const std::vector<LinkedFile>& links) {
  std::vector<uint32_t> order(links.size());
  std::iota(order.begin(), order.end(), 0u);
  auto key = [&](uint32_t i) {
    const LinkedFile& f = links[i];
    return std::tie(f.path, f.fs, f.ino, f.dev, f.size, f.mtime_ns, f.ctime_ns);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  return order;
}

}  // namespace zsim::state
