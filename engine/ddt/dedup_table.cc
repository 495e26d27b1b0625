#include "engine/ddt/dedup_table.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace zsim::ddt {

PsizeCode EncodeAllocated(uint64_t psize) {
  assert(psize % 512 == 0 && psize >= 512 && psize <= (uint64_t{16} << 20));
  return static_cast<PsizeCode>(psize / 512);
}

PsizeCode EncodeEmbedded(uint64_t payload) {
  assert(payload >= 1 && payload <= 112);
  return static_cast<PsizeCode>(kEmbeddedBase + payload);
}

PsizeCode EncodeRawLength(std::optional<uint64_t> length) {
  if (!length) return kNoFitCode;
  assert(*length >= 1 && *length <= (uint64_t{16} << 20));
  if (*length <= 112) return EncodeEmbedded(*length);
  return static_cast<PsizeCode>((*length + 511) / 512);
}

PsizeCode EncodeLeastBudget(std::optional<uint64_t> length, uint64_t least) {
  if (!length) return kNoFitCode;
  const uint64_t c = *length;
  assert(c >= 1 && least >= c && least - c < 400 && c <= uint64_t{kLeastLastUnit} * 512);
  if (c <= 112) {
    return static_cast<PsizeCode>((least <= 112 ? kEmbeddedBase : kLeastSmallBase) + c);
  }
  const uint64_t u = (c + 511) / 512;
  return static_cast<PsizeCode>(least <= u * 512 ? u : kLeastNextBase + u);
}

LeastBudget LeastBudgetOf(PsizeCode c) {
  if (c == kNoFitCode) return {};
  if (c > kLeastNextBase) {
    const uint64_t u = c - kLeastNextBase;
    return {u * 512, u * 512, (u + 1) * 512};
  }
  if (c > kLeastSmallBase) return {uint64_t{c} - kLeastSmallBase, 112, 512};
  if (c > kEmbeddedBase) return {uint64_t{c} - kEmbeddedBase, uint64_t{c} - kEmbeddedBase - 1, 112};
  const uint64_t u = c;
  return {u * 512, std::max<uint64_t>((u - 1) * 512, 112), u * 512};
}

PsizeCode EncodeProbe(std::optional<uint64_t> least) {
  if (!least) return kNoFitCode;
  if (*least <= 112) return kProbeSmallCode;
  assert(*least <= uint64_t{kLeastLastUnit} * 512);
  return static_cast<PsizeCode>((*least + 511) / 512);
}

LeastBudget ProbeOf(PsizeCode c) {
  if (c == kNoFitCode) return {};
  if (c == kProbeSmallCode) return {0, 0, 112};
  const uint64_t u = c;
  return {0, u == 1 ? 112 : (u - 1) * 512, u * 512};
}

namespace {

// A shard's chunks hold 64, 128, then 256 entries each: an empty table costs 400 KB (small
// scans; --sample 1/M keeps its 1/M), and the last, partly filled chunk of a shard wastes at most
// 6 KB (1.5 MB over 256 shards; 1024-entry chunks wasted ~6 bytes per entry at 1M entries).
constexpr size_t kGrowingChunks = 2;
constexpr uint32_t kGrowingEntries = 64 * ((1u << kGrowingChunks) - 1);  // 192
constexpr size_t kChunkEntries = 256;

inline size_t ChunkOf(uint32_t id) {
  if (id < kGrowingEntries) return static_cast<size_t>(std::bit_width((id >> 6) + 1u)) - 1;
  return kGrowingChunks + (id - kGrowingEntries) / kChunkEntries;
}
inline size_t SlotOf(uint32_t id) {
  if (id < kGrowingEntries) return id - 64 * ((size_t{1} << ChunkOf(id)) - 1);
  return (id - kGrowingEntries) % kChunkEntries;
}
inline size_t ChunkEntries(size_t chunk) {
  return chunk < kGrowingChunks ? size_t{64} << chunk : kChunkEntries;
}
constexpr uint32_t kIdBits = 24;
// Index load up to 7/8: linear probing then scans ~30 slots for a new key at worst, 4 bytes each
// with the tag sparing most entry reads, and the index averages ~5.5 bytes per entry instead of
// ~7 at 3/4 (bench/ddt_bench.cc, bytes_per_entry).
constexpr uint32_t kIdMask = (uint32_t{1} << kIdBits) - 1;
constexpr uint32_t kMaxEntriesPerShard = kIdMask;  // index slots hold id + 1
static_assert(DedupTable::kMaxShardEntries == kMaxEntriesPerShard);

// Entry layout (bytes): 0 lo, 8 low 32 bits of hi, 12 refcount, 16 lsize/512 - 1 with bit 15 the
// zero flag, 18.. inline codes. Unaligned, accessed with memcpy.
constexpr size_t kLoOffset = 0, kHiOffset = 8, kRefOffset = 12, kLsizeOffset = 16,
                 kCodesOffset = 18;
constexpr uint16_t kZeroFlag = 0x8000;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void Store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

uint32_t Tag(uint64_t lo) { return static_cast<uint32_t>(lo >> 48) & 0xFF; }

// The index grows by half (any size, not a power of two): at most 4 / (7/8 x 2/3) = 6.9 bytes
// of index per entry right after a growth, about 5.5 on average, against 9.1 / 7 when doubling.
size_t NextIndexSize(size_t size) { return std::max<size_t>(64, size + size / 2); }

// First slot for a key: lo's low 32 bits (rotated up) scaled onto [0, n) by a multiply-shift,
// so neither the tag (bits 48..55) nor the sample level (bits 40..63) steers it.
size_t Home(uint64_t lo, size_t n) {
  const uint64_t h = (lo << 32) | (lo >> 32);
  return static_cast<size_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

}  // namespace

// Invariants:
//  1. Entries 0..count-1 live in chunks (ChunkOf(id), SlotOf(id)); ids never
//     change except when RaiseSampleShift rebuilds the shard.
//  2. index.size() is 0 or at least 64, and count < 7/8 of it; slot = (tag << 24) | (id + 1),
//     0 empty; an entry sits at the first free slot from Home(lo) (linear probing, wrapping).
//  3. side_ids[i] is the entry whose side codes are side_codes[i * side_count ..].
//  4. A shard with no entries and no index (DropShard: its entries live on the process that owns
//     it) costs nothing: Compact leaves it so, or the whole's memory would count an index per
//     rank; once refilled (a distributed scan ships a shard and goes on reading) it is compacted
//     as any other.
struct DedupTable::Shard {
  std::mutex mu;
  std::vector<std::unique_ptr<uint8_t[]>> chunks;  // Guarded by mu.
  uint32_t count = 0;                              // Guarded by mu.
  std::vector<uint32_t> index;                     // Guarded by mu.
  std::vector<uint32_t> side_ids;                  // Guarded by mu.
  std::vector<PsizeCode> side_codes;               // Guarded by mu.

  uint8_t* Entry(uint32_t id, size_t entry_bytes) const {
    return chunks[ChunkOf(id)].get() + SlotOf(id) * entry_bytes;
  }

  // The index slot holding `key`, or the empty slot where it would go.
  size_t Find(uint64_t lo, uint32_t hi32, size_t entry_bytes) const {
    const size_t n = index.size();
    const uint32_t tag = Tag(lo);
    for (size_t i = Home(lo, n);; i = i + 1 == n ? 0 : i + 1) {
      const uint32_t slot = index[i];
      if (slot == 0) return i;
      if ((slot >> kIdBits) != tag) continue;
      const uint8_t* e = Entry((slot & kIdMask) - 1, entry_bytes);
      if (Load<uint64_t>(e + kLoOffset) == lo && Load<uint32_t>(e + kHiOffset) == hi32) return i;
    }
  }

  // Bytes of the side lists, and of everything the shard holds (its share of memory_bytes()).
  uint64_t SideBytes() const {
    return side_ids.capacity() * sizeof(uint32_t) + side_codes.capacity() * sizeof(PsizeCode);
  }
  uint64_t Bytes(size_t entry_bytes) const {
    uint64_t n = index.capacity() * sizeof(uint32_t) + SideBytes();
    for (size_t c = 0; c < chunks.size(); ++c) n += ChunkEntries(c) * entry_bytes;
    return n;
  }

  void RebuildIndex(size_t slots, size_t entry_bytes) {
    std::vector<uint32_t>(slots, 0).swap(index);
    for (uint32_t id = 0; id < count; ++id) {
      const uint8_t* e = Entry(id, entry_bytes);
      const uint64_t lo = Load<uint64_t>(e + kLoOffset);
      const size_t i = Find(lo, Load<uint32_t>(e + kHiOffset), entry_bytes);
      index[i] = (Tag(lo) << kIdBits) | (id + 1);
    }
  }

  // The side records' numbers by entry, then by record (the order they were added in).
  std::vector<uint32_t> SideOrder() const {
    std::vector<uint32_t> order(side_ids.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return side_ids[a] != side_ids[b] ? side_ids[a] < side_ids[b] : a < b;
    });
    return order;
  }

  // Entry `id`'s side codes from its records order[*next ..] (SideOrder) into out[0, side_count),
  // *next moved past them; false (out untouched) when it has none. An entry coded more than once
  // (a first sighting that ran only the codecs whose sample level it is in, then the census of
  // heavy keys, or a merge) has a record per coding: each code is its first record's that is not
  // pending. A codec's output depends on the block only, so two codes given agree.
  bool ReadSide(uint32_t id, const std::vector<uint32_t>& order, size_t* next, size_t side_count,
                PsizeCode* out) const {
    if (*next >= order.size() || side_ids[order[*next]] != id) return false;
    std::fill(out, out + side_count, kPendingCode);
    for (; *next < order.size() && side_ids[order[*next]] == id; ++*next) {
      const PsizeCode* record = side_codes.data() + size_t{order[*next]} * side_count;
      for (size_t s = 0; s < side_count; ++s) {
        assert(out[s] == kPendingCode || record[s] == kPendingCode || out[s] == record[s]);
        if (out[s] == kPendingCode) out[s] = record[s];
      }
    }
    return true;
  }
};

static_assert(DedupTable::kShards == size_t{1} << 8, "ShardOf takes the key's top 8 bits");

DedupTable::DedupTable(size_t settings)
    : DedupTable(std::vector<SettingStorage>(settings, SettingStorage{})) {}

DedupTable::DedupTable(std::vector<SettingStorage> layout) : layout_(std::move(layout)) {
  for (const SettingStorage& s : layout_) {
    inline_slot_.push_back(s.kind == SettingStorage::Kind::kInline ? inline_count_++ : SIZE_MAX);
    side_slot_.push_back(s.kind == SettingStorage::Kind::kSide ? side_count_++ : SIZE_MAX);
  }
  entry_bytes_ = kCodesOffset + 2 * inline_count_;
  counted_bytes_ = entry_bytes_;
  for (auto& s : shards_) s = std::make_unique<Shard>();
}

DedupTable::~DedupTable() = default;

// A new entry at index slot `slot`: its chunk allocated if needed, every inline code pending.
// Returns its id. REQUIRES: shard.mu held, shard.count < kMaxEntriesPerShard.
uint32_t DedupTable::AppendEntry(Shard& shard, size_t slot, uint64_t lo, uint32_t hi32,
                                 uint32_t refcount, uint64_t lsize, bool is_zero, uint64_t origin) {
  const uint32_t id = shard.count++;
  // Every 4096th entry of a shard: a shared write per new key would be a contended line.
  if ((id & 0xFFF) == 0 && id > fullest_.load(std::memory_order_relaxed)) {
    fullest_.store(id, std::memory_order_relaxed);
  }
  if (ChunkOf(id) >= shard.chunks.size()) {
    const size_t chunk_bytes = ChunkEntries(shard.chunks.size()) * entry_bytes_;
    shard.chunks.push_back(std::make_unique<uint8_t[]>(chunk_bytes));
    bytes_.fetch_add(ChunkEntries(shard.chunks.size() - 1) * counted_bytes_,
                     std::memory_order_relaxed);
  }
  uint8_t* e = shard.Entry(id, entry_bytes_);
  Store<uint64_t>(e + kLoOffset, lo);
  Store<uint32_t>(e + kHiOffset, hi32);
  Store<uint32_t>(e + kRefOffset, refcount);
  Store<uint16_t>(e + kLsizeOffset,
                  static_cast<uint16_t>((lsize / 512 - 1) | (is_zero ? kZeroFlag : 0)));
  for (size_t c = 0; c < inline_count_; ++c)
    Store<PsizeCode>(e + kCodesOffset + 2 * c, kPendingCode);
  if (origin_offset_ != 0) Store<uint64_t>(e + origin_offset_, origin);
  if (slot != SIZE_MAX) shard.index[slot] = (Tag(lo) << kIdBits) | (id + 1);
  return id;
}

InsertOutcome DedupTable::Insert(const Fingerprint& key, uint64_t lsize, bool is_zero,
                                 uint32_t* ref, uint64_t origin) {
  const size_t shard_index = key.hi >> (64 - kShardBits);
  Shard& shard = *shards_[shard_index];
  const uint32_t hi32 = static_cast<uint32_t>(key.hi);
  std::lock_guard<std::mutex> lock(shard.mu);
  // Read under the shard lock: a raise compacts each shard under its lock after storing the new
  // shift, so no key outside the new space can slip in after its shard was compacted.
  if (!is_zero && SampledOut(key, sample_shift_.load(std::memory_order_acquire))) {
    return InsertOutcome::kSampledOut;
  }
  MakeRoom(shard);
  const size_t i = shard.Find(key.lo, hi32, entry_bytes_);
  if (shard.index[i] != 0) {
    const uint32_t id = (shard.index[i] & kIdMask) - 1;
    uint8_t* e = shard.Entry(id, entry_bytes_);
    const uint32_t refs = Load<uint32_t>(e + kRefOffset);
    if (refs != std::numeric_limits<uint32_t>::max()) Store<uint32_t>(e + kRefOffset, refs + 1);
    if (ref != nullptr) *ref = static_cast<uint32_t>(shard_index << kIdBits) | id;
    return refs + 1 == census_refcount_ ? InsertOutcome::kBecameHeavy : InsertOutcome::kDuplicate;
  }
  if (shard.count >= kMaxEntriesPerShard) {
    // 16.7M entries in one shard (4.3G in the table, about 100 GiB): the caller should have
    // sampled (kShardEntriesToSample). Left out, and said so.
    overflowed_.store(true, std::memory_order_relaxed);
    return InsertOutcome::kSampledOut;
  }
  const uint32_t id = AppendEntry(shard, i, key.lo, hi32, 1, lsize, is_zero, origin);
  if (ref != nullptr) *ref = static_cast<uint32_t>(shard_index << kIdBits) | id;
  return InsertOutcome::kFirst;
}

void DedupTable::SetCodes(const Fingerprint& key, std::span<const PsizeCode> codes) {
  assert(codes.size() == layout_.size());
  Shard& shard = *shards_[key.hi >> (64 - kShardBits)];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.index.empty()) return;
  const size_t i = shard.Find(key.lo, static_cast<uint32_t>(key.hi), entry_bytes_);
  if (shard.index[i] == 0) return;  // dropped by a raised sample shift
  StoreCodes(shard, (shard.index[i] & kIdMask) - 1, codes);
}

void DedupTable::StoreCodes(Shard& shard, uint32_t id, std::span<const PsizeCode> codes) {
  uint8_t* e = shard.Entry(id, entry_bytes_);
  bool side_needed = false;
  for (size_t c = 0; c < layout_.size(); ++c) {
    if (inline_slot_[c] != SIZE_MAX) {
      if (codes[c] != kPendingCode)
        Store<PsizeCode>(e + kCodesOffset + 2 * inline_slot_[c], codes[c]);
    } else if (side_slot_[c] != SIZE_MAX && codes[c] != kPendingCode) {
      const bool derivable = codes[c] == kHoleCode &&
                             (Load<uint16_t>(e + kLsizeOffset) & kZeroFlag) != 0 &&
                             layout_[c].zero_is_hole;
      side_needed = side_needed || !derivable;
    }
  }
  if (!side_needed) return;
  const uint64_t before = shard.SideBytes();
  shard.side_ids.push_back(id);
  for (size_t c = 0; c < layout_.size(); ++c) {
    if (side_slot_[c] != SIZE_MAX) shard.side_codes.push_back(codes[c]);
  }
  bytes_.fetch_add(shard.SideBytes() - before, std::memory_order_relaxed);
}

void DedupTable::Reserve(uint64_t entries) {
  // Expected keys per shard plus four standard deviations (the shard bits are uniform).
  const double mean = double(entries) / double(shards_.size());
  const uint64_t per_shard = static_cast<uint64_t>(mean + 4 * std::sqrt(mean)) + 1;
  if (per_shard >= kMaxEntriesPerShard) return;
  for (auto& shard_ptr : shards_) {
    Shard& shard = *shard_ptr;
    std::lock_guard<std::mutex> lock(shard.mu);
    size_t slots = std::max<size_t>(shard.index.size(), 64);
    while ((per_shard + 1) * 8 > slots * 7) slots = NextIndexSize(slots);
    if (slots <= shard.index.size()) continue;
    const size_t before = shard.index.capacity();
    shard.RebuildIndex(slots, entry_bytes_);
    bytes_.fetch_add((shard.index.capacity() - before) * sizeof(uint32_t),
                     std::memory_order_relaxed);
  }
}

void DedupTable::Merge(const DedupTable& other) {
  assert(other.layout_.size() == layout_.size());
  // Per shard, the side records it had when the merge began, by entry (ids past them are new).
  std::vector<std::vector<uint32_t>> side_order(shards_.size());
  for (size_t k = 0; k < shards_.size(); ++k) side_order[k] = shards_[k]->SideOrder();
  other.ForEach(
      [&](const EntryView& e) { MergeEntry(e, side_order[e.key.hi >> (64 - kShardBits)]); });
}

void DedupTable::MergeEntry(const EntryView& view, const std::vector<uint32_t>& side_order) {
  Shard& shard = *shards_[view.key.hi >> (64 - kShardBits)];
  const uint32_t hi32 = static_cast<uint32_t>(view.key.hi);
  std::lock_guard<std::mutex> lock(shard.mu);
  if (!view.is_zero && SampledOut(view.key, sample_shift_.load(std::memory_order_acquire))) return;
  MakeRoom(shard);
  const size_t i = shard.Find(view.key.lo, hi32, entry_bytes_);
  if (shard.index[i] != 0) {
    const uint32_t id = (shard.index[i] & kIdMask) - 1;
    uint8_t* e = shard.Entry(id, entry_bytes_);
    const uint64_t refs = uint64_t{Load<uint32_t>(e + kRefOffset)} + view.refcount;
    Store<uint32_t>(e + kRefOffset, static_cast<uint32_t>(std::min<uint64_t>(refs, UINT32_MAX)));
    // Only the codes this entry lacks: a code set here stays, and a side record is added only
    // for side codes this entry has none of yet (a partly coded entry gets the rest).
    std::vector<PsizeCode> missing(view.codes.begin(), view.codes.end());
    for (size_t c = 0; c < layout_.size(); ++c) {
      if (inline_slot_[c] != SIZE_MAX &&
          Load<PsizeCode>(e + kCodesOffset + 2 * inline_slot_[c]) != kPendingCode) {
        missing[c] = kPendingCode;
      }
    }
    std::vector<PsizeCode> side(side_count_);
    size_t next = static_cast<size_t>(
        std::lower_bound(side_order.begin(), side_order.end(), id,
                         [&](uint32_t record, uint32_t v) { return shard.side_ids[record] < v; }) -
        side_order.begin());
    if (shard.ReadSide(id, side_order, &next, side_count_, side.data())) {
      for (size_t c = 0; c < layout_.size(); ++c) {
        if (side_slot_[c] != SIZE_MAX && side[side_slot_[c]] != kPendingCode) {
          missing[c] = kPendingCode;
        }
      }
    }
    StoreCodes(shard, id, missing);
    if (origin_offset_ != 0 && Load<uint64_t>(e + origin_offset_) == 0) {
      Store<uint64_t>(e + origin_offset_, view.origin);
    }
    return;
  }
  if (shard.count >= kMaxEntriesPerShard) {
    overflowed_.store(true, std::memory_order_relaxed);
    return;
  }
  const uint32_t id = AppendEntry(shard, i, view.key.lo, hi32, view.refcount, view.lsize,
                                  view.is_zero, view.origin);
  StoreCodes(shard, id, view.codes);
}

void DedupTable::MakeRoom(Shard& shard) {
  if ((size_t{shard.count} + 1) * 8 <= shard.index.size() * 7) return;
  const size_t before = shard.index.capacity();
  shard.RebuildIndex(NextIndexSize(shard.index.size()), entry_bytes_);
  bytes_.fetch_add((shard.index.capacity() - before) * sizeof(uint32_t), std::memory_order_relaxed);
}

void DedupTable::LoadEntry(const EntryView& view) {
  // A key given twice adds up, as AddEntry does (MergeEntry also skips a sampled-out key).
  if (!LoadNewEntry(view)) MergeEntry(view, {});
}

bool DedupTable::LoadNewEntry(const EntryView& view) {
  Shard& shard = *shards_[view.key.hi >> (64 - kShardBits)];
  const uint32_t hi32 = static_cast<uint32_t>(view.key.hi);
  if (!view.is_zero && SampledOut(view.key, sample_shift_.load(std::memory_order_relaxed))) {
    return false;
  }
  MakeRoom(shard);
  const size_t i = shard.Find(view.key.lo, hi32, entry_bytes_);
  if (shard.index[i] != 0 || shard.count >= kMaxEntriesPerShard) return false;
  const uint32_t id = AppendEntry(shard, i, view.key.lo, hi32, view.refcount, view.lsize,
                                  view.is_zero, view.origin);
  StoreCodes(shard, id, view.codes);
  return true;
}

bool DedupTable::OrderedLoader::Add(const EntryView& view) {
  if (probing_) return table_.LoadNewEntry(view);
  const size_t k = view.key.hi >> (64 - kShardBits);
  Shard& shard = *table_.shards_[k];
  // A shard's entries come together (the shards' own order does not matter), each key above
  // the one before.
  const bool in_order =
      k != shard_ ? shard.count == 0
                  : (view.key.hi != last_.hi ? view.key.hi > last_.hi : view.key.lo > last_.lo);
  if (!in_order) {
    if (k == shard_ && view.key == last_) return false;  // given twice
    IndexPending();
    Wait();
    probing_ = true;
    return table_.LoadNewEntry(view);
  }
  if (!view.is_zero && SampledOut(view.key, table_.sample_shift_.load(std::memory_order_relaxed))) {
    return false;
  }
  if (shard.count >= kMaxEntriesPerShard) return false;
  if (k != shard_) {
    IndexPending();
    shard_ = k;
  }
  last_ = view.key;
  const uint32_t id =
      table_.AppendEntry(shard, SIZE_MAX, view.key.lo, static_cast<uint32_t>(view.key.hi),
                         view.refcount, view.lsize, view.is_zero, view.origin);
  table_.StoreCodes(shard, id, view.codes);
  return true;
}

void DedupTable::OrderedLoader::Finish() {
  IndexPending();
  Wait();
}

void DedupTable::OrderedLoader::Wait() {
  if (building_.valid()) building_.get();
}

void DedupTable::OrderedLoader::IndexPending() {
  Wait();  // one build at a time: they share the scratch
  if (shard_ == SIZE_MAX) return;
  Shard& shard = *table_.shards_[shard_];
  shard_ = SIZE_MAX;
  // A small shard's index costs less than a thread's start.
  if (shard.count < 4096) {
    table_.BuildIndex(shard, placed_, order_, starts_);
    return;
  }
  building_ = std::async(std::launch::async,
                         [this, &shard] { table_.BuildIndex(shard, placed_, order_, starts_); });
}

void DedupTable::BuildIndex(Shard& shard, std::vector<uint64_t>& placed,
                            std::vector<uint64_t>& order, std::vector<uint32_t>& starts) {
  const uint32_t n = shard.count;
  if (n == 0) return;
  // The size the entries' one-by-one insertion would have grown the index to (MakeRoom), so the
  // table's memory is what LoadNewEntry gives.
  size_t slots = shard.index.size();
  while (size_t{n} * 8 > slots * 7) slots = NextIndexSize(slots);
  const size_t before = shard.index.capacity();
  if (slots != shard.index.size()) {
    std::vector<uint32_t>(slots, 0).swap(shard.index);
  } else {
    std::fill(shard.index.begin(), shard.index.end(), 0u);
  }
  bytes_.fetch_add((shard.index.capacity() - before) * sizeof(uint32_t), std::memory_order_relaxed);
  // Each entry's home and slot value, sorted by home (a counting sort), then each at the first
  // slot from its home that the entries of lower homes left free. Those fill their slots without
  // gaps from their homes, so every slot from an entry's home to its own is taken: a lookup
  // walks to it. Entries pushed past the last slot wrap to the first free ones from slot 0 (a
  // lookup wraps there too).
  placed.resize(n);
  starts.assign(slots + 1, 0);
  for (uint32_t id = 0; id < n; ++id) {
    const uint64_t lo = Load<uint64_t>(shard.Entry(id, entry_bytes_));
    const uint64_t home = Home(lo, slots);
    placed[id] = (home << 32) | (Tag(lo) << kIdBits) | (id + 1);
    ++starts[home + 1];
  }
  for (size_t i = 1; i <= slots; ++i) starts[i] += starts[i - 1];
  order.resize(n);
  for (const uint64_t p : placed) order[starts[p >> 32]++] = p;
  size_t next = 0;  // the first slot no entry has passed
  size_t wrapped = 0;
  for (const uint64_t p : order) {
    const size_t slot = std::max<size_t>(p >> 32, next);
    if (slot >= slots) {
      placed[wrapped++] = p;
      continue;
    }
    shard.index[slot] = static_cast<uint32_t>(p);
    next = slot + 1;
  }
  size_t slot = 0;
  for (size_t k = 0; k < wrapped; ++k) {
    while (shard.index[slot] != 0) ++slot;
    shard.index[slot] = static_cast<uint32_t>(placed[k]);
  }
}

void DedupTable::RaiseSampleShift(uint32_t shift) {
  uint32_t current = sample_shift_.load();
  while (shift > current && !sample_shift_.compare_exchange_weak(current, shift)) {
  }
  if (shift <= current) return;
  for (auto& shard_ptr : shards_) {
    Shard& shard = *shard_ptr;
    std::lock_guard<std::mutex> lock(shard.mu);
    const uint64_t before = shard.Bytes(counted_bytes_);
    Compact(shard, [&](const uint8_t* e) {
      const Fingerprint k{Load<uint64_t>(e + kLoOffset), Load<uint32_t>(e + kHiOffset)};
      return (Load<uint16_t>(e + kLsizeOffset) & kZeroFlag) != 0 || !SampledOut(k, shift);
    });
    bytes_.fetch_sub(before - shard.Bytes(counted_bytes_), std::memory_order_relaxed);
  }
  UpdateFullest();
}

void DedupTable::UpdateFullest() {
  uint32_t fullest = 0;
  for (auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    fullest = std::max(fullest, shard->count & ~uint32_t{0xFFF});
  }
  fullest_.store(fullest, std::memory_order_relaxed);
}

std::vector<uint32_t> DedupTable::Compact(Shard& shard,
                                          const std::function<bool(const uint8_t*)>& keep) {
  // The survivors in id order into fresh, right-sized chunks (the memory given back must show:
  // --max-memory counts it), then the index and the side list rebuilt.
  if (shard.count == 0 && shard.index.empty()) return {};  // invariant 4
  std::vector<uint32_t> new_id(shard.count, kDroppedRef);
  std::vector<std::unique_ptr<uint8_t[]>> chunks;
  uint32_t kept = 0;
  for (uint32_t id = 0; id < shard.count; ++id) {
    const uint8_t* e = shard.Entry(id, entry_bytes_);
    if (!keep(e)) continue;
    if (ChunkOf(kept) >= chunks.size()) {
      chunks.push_back(std::make_unique<uint8_t[]>(ChunkEntries(chunks.size()) * entry_bytes_));
    }
    std::memcpy(chunks[ChunkOf(kept)].get() + SlotOf(kept) * entry_bytes_, e, entry_bytes_);
    new_id[id] = kept++;
  }
  shard.chunks = std::move(chunks);
  shard.count = kept;
  size_t slots = 64;
  while ((size_t{kept} + 1) * 8 > slots * 7) slots = NextIndexSize(slots);
  shard.RebuildIndex(slots, entry_bytes_);
  std::vector<uint32_t> ids;
  std::vector<PsizeCode> codes;
  for (size_t s = 0; s < shard.side_ids.size(); ++s) {
    const uint32_t n = new_id[shard.side_ids[s]];
    if (n == kDroppedRef) continue;
    ids.push_back(n);
    codes.insert(codes.end(), shard.side_codes.begin() + s * side_count_,
                 shard.side_codes.begin() + (s + 1) * side_count_);
  }
  shard.side_ids = std::move(ids);
  shard.side_codes = std::move(codes);
  return new_id;
}

bool DedupTable::HasRef(uint32_t ref) const {
  Shard& shard = *shards_[ref >> kIdBits];
  std::lock_guard<std::mutex> lock(shard.mu);
  return (ref & kIdMask) < shard.count;
}

Fingerprint DedupTable::KeyOf(uint32_t ref) const {
  Shard& shard = *shards_[ref >> kIdBits];
  std::lock_guard<std::mutex> lock(shard.mu);
  const uint8_t* e = shard.Entry(ref & kIdMask, entry_bytes_);
  return Fingerprint{
      Load<uint64_t>(e + kLoOffset),
      (uint64_t{ref >> kIdBits} << (64 - kShardBits)) | Load<uint32_t>(e + kHiOffset)};
}

uint32_t DedupTable::Find(const Fingerprint& key) const {
  const size_t shard_index = key.hi >> (64 - kShardBits);
  Shard& shard = *shards_[shard_index];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (shard.index.empty()) return kDroppedRef;
  const size_t i = shard.Find(key.lo, static_cast<uint32_t>(key.hi), entry_bytes_);
  if (shard.index[i] == 0) return kDroppedRef;
  return static_cast<uint32_t>(shard_index << kIdBits) | ((shard.index[i] & kIdMask) - 1);
}

uint32_t DedupTable::Release(uint32_t ref) {
  Shard& shard = *shards_[ref >> kIdBits];
  std::lock_guard<std::mutex> lock(shard.mu);
  uint8_t* e = shard.Entry(ref & kIdMask, entry_bytes_);
  const uint32_t refs = Load<uint32_t>(e + kRefOffset);
  // A saturated count no longer knows how many there were: it stays.
  if (refs != 0 && refs != std::numeric_limits<uint32_t>::max()) {
    Store<uint32_t>(e + kRefOffset, refs - 1);
    return refs - 1;
  }
  return refs;
}

DedupTable::RefMap DedupTable::DropUnreferenced() {
  RefMap map(shards_.size());
  for (size_t k = 0; k < shards_.size(); ++k) {
    Shard& shard = *shards_[k];
    std::lock_guard<std::mutex> lock(shard.mu);
    const uint64_t before = shard.Bytes(counted_bytes_);
    map[k] = Compact(shard, [](const uint8_t* e) { return Load<uint32_t>(e + kRefOffset) != 0; });
    bytes_.fetch_sub(before - shard.Bytes(counted_bytes_), std::memory_order_relaxed);
  }
  UpdateFullest();
  return map;
}

uint32_t DedupTable::MapRef(const RefMap& map, uint32_t ref) {
  const std::vector<uint32_t>& ids = map[ref >> kIdBits];
  const uint32_t id = ref & kIdMask;
  if (id >= ids.size() || ids[id] == kDroppedRef) return kDroppedRef;
  return (ref & ~kIdMask) | ids[id];
}

void DedupTable::ForEach(const std::function<void(const EntryView&)>& fn) const {
  for (size_t k = 0; k < shards_.size(); ++k) ForEachInShard(k, fn);
  if (remote_) remote_->ForEach(fn);
}

void DedupTable::ForEachInShard(size_t shard_index,
                                const std::function<void(const EntryView&)>& fn) const {
  std::vector<PsizeCode> codes(layout_.size());
  std::vector<PsizeCode> side_codes(side_count_);
  {
    const Shard& shard = *shards_[shard_index];
    const uint64_t shard_bits = static_cast<uint64_t>(shard_index) << (64 - kShardBits);
    const std::vector<uint32_t> order = shard.SideOrder();
    size_t next_side = 0;
    for (uint32_t id = 0; id < shard.count; ++id) {
      const uint8_t* e = shard.Entry(id, entry_bytes_);
      const uint16_t lsize_field = Load<uint16_t>(e + kLsizeOffset);
      const bool is_zero = (lsize_field & kZeroFlag) != 0;
      const uint64_t lsize = (uint64_t{lsize_field & 0x7FFFu} + 1) * 512;
      const PsizeCode* side = shard.ReadSide(id, order, &next_side, side_count_, side_codes.data())
                                  ? side_codes.data()
                                  : nullptr;
      for (size_t c = 0; c < layout_.size(); ++c) {
        switch (layout_[c].kind) {
          case SettingStorage::Kind::kInline:
            codes[c] = Load<PsizeCode>(e + kCodesOffset + 2 * inline_slot_[c]);
            break;
          case SettingStorage::Kind::kFromLsize:
            codes[c] = is_zero && layout_[c].zero_is_hole ? kHoleCode : EncodeAllocated(lsize);
            break;
          case SettingStorage::Kind::kSide:
            if (side != nullptr) {
              codes[c] = side[side_slot_[c]];
            } else {
              codes[c] = is_zero && layout_[c].zero_is_hole ? kHoleCode : kPendingCode;
            }
            break;
        }
      }
      EntryView view{
          Fingerprint{Load<uint64_t>(e + kLoOffset), shard_bits | Load<uint32_t>(e + kHiOffset)},
          Load<uint32_t>(e + kRefOffset),
          lsize,
          is_zero,
          codes,
          origin_offset_ != 0 ? Load<uint64_t>(e + origin_offset_) : 0};
      fn(view);
    }
  }
}

void DedupTable::DropShard(size_t shard_index) {
  Shard& shard = *shards_[shard_index];
  std::lock_guard<std::mutex> lock(shard.mu);
  const uint64_t before = shard.Bytes(counted_bytes_);
  std::vector<std::unique_ptr<uint8_t[]>>().swap(shard.chunks);
  std::vector<uint32_t>().swap(shard.index);
  std::vector<uint32_t>().swap(shard.side_ids);
  std::vector<PsizeCode>().swap(shard.side_codes);
  shard.count = 0;
  bytes_.fetch_sub(before, std::memory_order_relaxed);
}

uint64_t DedupTable::local_entries() const {
  uint64_t n = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    n += shard->count;
  }
  return n;
}

uint32_t DedupTable::shard_entries(size_t shard_index) const {
  Shard& shard = *shards_[shard_index];
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.count;
}

void DedupTable::KeepOrigins() {
  assert(local_entries() == 0);
  if (origin_offset_ != 0) return;
  origin_offset_ = entry_bytes_;
  entry_bytes_ += sizeof(uint64_t);
  for ([[maybe_unused]] auto& shard : shards_) assert(shard->chunks.empty());  // the stride changes
}

uint64_t DedupTable::origin_bytes() const {
  if (origin_offset_ == 0) return 0;
  uint64_t slots = 0;
  for (const auto& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard->mu);
    for (size_t c = 0; c < shard->chunks.size(); ++c) slots += ChunkEntries(c);
  }
  return slots * sizeof(uint64_t);
}

uint64_t DedupTable::floor_bytes() const {
  const uint64_t shard = ChunkEntries(0) * counted_bytes_ + NextIndexSize(0) * sizeof(uint32_t);
  return shard * shards_.size();
}

UniqueBlocks UniqueBlocksOf(const DedupTable& table) {
  UniqueBlocks u;
  table.ForEach([&](const EntryView& e) {
    if (e.is_zero) return;
    ++u.blocks;
    u.bytes += e.lsize;
  });
  return u;
}

}  // namespace zsim::ddt
