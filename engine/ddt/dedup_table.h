// engine/ddt/dedup_table.h
//
// DedupTable: fingerprint -> reference count, plus per unique block its lsize, whether it is all
// zero, and one 16-bit outcome code (PsizeCode) per evaluated compression setting. One table per
// recordsize.
//
// Memory (issue 7's budget is 32 bytes per unique block with the six codecs of the reference list,
// estimate/codec_budget.h CostReferenceCompressions; the default list, three, takes less):
//  - 256 shards chosen by the key's top 8 bits, each under its own mutex;
//  - entries packed in chunks of 64, 128, then 256 entries: 12 bytes of key (lo and the low 32 bits
//  of hi; with
//    the 8 shard bits that is a 104-bit key: a false match among 10^10 blocks has probability
//    about 10^-11), refcount 4, lsize and zero flag 2, then 2 bytes per setting stored inline;
//  - an open-addressing index of 4-byte slots (24-bit entry id + 8 tag bits) at load <= 7/8;
//  - settings need not all be stored inline (SettingStorage): compression=off is derived from
//    lsize and the zero flag, and a sampled codec keeps its codes in a side list for the few
//    entries it was run on.
// With off, lz4, zle inline-or-derived and zstd, gzip, lzjb sampled: 22 bytes per entry plus
// 4.6-6.9 bytes of index: 27-30 bytes per unique block (bench/ddt_bench.cc, bytes_per_entry).
//
// Sampling (--sample 1/M, --max-memory): the table keeps only keys whose low `sample_shift`
// bits of `hi` are zero (SampledOut), i.e. 1/M of the key space, M = 2^sample_shift. Raising the
// shift drops the keys the new space excludes; a key inside it was kept since its first sighting,
// so its refcount stays exact. The choice depends on the key only, never on arrival order.
// All-zero blocks are always kept: there are a few such keys (one per lsize), each often
// referenced more than any other, so a sample that missed one would miss much of the data.
//
// Partitioned (a distributed scan, engine/mpi/partition.h): a table may hold only some shards'
// keys, with a RemotePart attached for the others, held by other processes: ForEach, entries() and
// memory_bytes() then cover the whole table, so what reads a table (finish, the state file) needs
// no change.
//
// Thread safety: Insert/SetCodes/RaiseSampleShift from any thread concurrently; ForEach and Merge
// require that no Insert, SetCodes or RaiseSampleShift is running on the tables they read.

#ifndef ZSIM_ENGINE_DDT_DEDUP_TABLE_H_
#define ZSIM_ENGINE_DDT_DEDUP_TABLE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine/ddt/fingerprint.h"

namespace zsim::ddt {

// What one compression setting made of a block, in 16 bits. A table holds one of two kinds of
// codes (state::CodeKind says which):
//
// Raw codes (scans, and state files from format 7): what the compressor produced under the scan's
// budget, whatever the pool, from which the report derives psize, embedding and asize under its
// own ashift, vdev and profile where that is certain (finish/settled_codes.h,
// zfs::ReplayCompressed):
//   0                       hole (all-zero block turned into a hole): no DDT entry
//   1 .. 32768              the compressor's output was c > 112 bytes: ceil(c / 512) (every
//                           allocation unit is a multiple of 512 bytes, so rounding needs no more)
//   32769 .. 32768 + 112    the compressor's output was c <= 112 bytes (embeddable): c exact
//   0xFFFE                  did not fit the scan's budget (or the compressor failed, or was not
//                           called: v23's 512-byte blocks)
//   0xFFFF                  not computed (a sampled codec skipped the block)
//
// Least-budget codes (state files from format 8, for the compressors whose smallest fitting
// budget zfs::LeastBudgetKnown says a scan keeps; zstd's codes stay raw): what the compressor
// produced under the largest budget any release gives (lsize - lsize/8), and where the smallest
// budget it fits lies, least (every budget ZFS computes is 112 bytes, a multiple of 512, or that
// largest one, so the report knows the outcome under every profile and geometry):
//   0                       hole
//   1 .. 28672              output c > 112 bytes, u = ceil(c / 512) = code, least <= 512u
//   32769 .. 32768 + 112    output c <= 112 bytes = code - 32768 exact, least <= 112
//   32881 .. 32880 + 112    output c <= 112 bytes = code - 32880 exact, 112 < least <= 512
//   32993 .. 32992 + 28672  output c > 112 bytes, u = code - 32992, 512u < least <= 512(u+1)
//   0xFFFE                  did not fit lsize - lsize/8 (so no budget: none is larger)
//   0xFFFF                  not computed
// The compressors ask for at most 64 bytes beyond their output (lzjb 17, zle 64, lz4 a few,
// gzip none), so least < c + 400 always has a code. An output fits lsize - lsize/8 < 14 MiB, so
// u <= 28672.
//
// Rounded (settled) codes: psize as one policy stores it (state files up to format 6 hold these;
// the report turns raw codes into these):
//   0                       hole
//   1 .. 32768              allocated, psize = code * 512 (every allocated psize is a multiple of
//                           512 and at most 16 MiB)
//   32769 .. 32768 + 112    embedded block pointer with (code - 32768) payload bytes
//   0xFFFF                  not computed
// The values line up, so EncodeAllocated(lsize) (compression=off's derived code) reads as "did not
// compress" among raw codes too.
using PsizeCode = uint16_t;
inline constexpr PsizeCode kHoleCode = 0;
inline constexpr PsizeCode kEmbeddedBase = 32768;
inline constexpr PsizeCode kNoFitCode = 0xFFFE;
inline constexpr PsizeCode kPendingCode = 0xFFFF;
PsizeCode EncodeAllocated(uint64_t psize);   // REQUIRES: psize % 512 == 0, 512..16M
PsizeCode EncodeEmbedded(uint64_t payload);  // REQUIRES: 1..112
// The raw code of a compressor output of `length` bytes (1..16M), or kNoFitCode for nullopt.
PsizeCode EncodeRawLength(std::optional<uint64_t> length);
// A raw code's length: exact up to 112 bytes, above rounded up to a multiple of 512; nullopt for
// kNoFitCode. REQUIRES: not a hole or pending code.
inline std::optional<uint64_t> RawLengthOf(PsizeCode c) {
  if (c == kNoFitCode) return std::nullopt;
  return c > kEmbeddedBase ? uint64_t{c} - kEmbeddedBase : uint64_t{c} * 512;
}
// A least-budget code (see above) of an output of `length` bytes whose smallest fitting budget
// is `least` (length <= least < length + 400), or kNoFitCode for nullopt.
PsizeCode EncodeLeastBudget(std::optional<uint64_t> length, uint64_t least);
// The largest unit a least-budget code holds: an output fits lsize - lsize/8 < 14 MiB.
inline constexpr PsizeCode kLeastLastUnit = 28672;
inline constexpr PsizeCode kLeastSmallBase = kEmbeddedBase + 112;             // 32880
inline constexpr PsizeCode kLeastNextBase = kLeastSmallBase + 112;            // 32992
inline constexpr PsizeCode kLeastLastCode = kLeastNextBase + kLeastLastUnit;  // 61664
// A least-budget code read back: the output length (exact up to 112 bytes, else rounded up to
// a multiple of 512; nullopt for kNoFitCode) and above < least <= at_most.
struct LeastBudget {
  std::optional<uint64_t> length;
  uint64_t above = 0;
  uint64_t at_most = 0;
};
// REQUIRES: not a hole or pending code; c <= kLeastLastCode or kNoFitCode.
LeastBudget LeastBudgetOf(PsizeCode c);

// Early-abort codes (state files from format 10, one more column per zstd setting of level 3 and
// up, state::ProbeColumns): where the least budget lies under which zstd's early abort (2.2+,
// blocks of 128K and more, codec/zfs_block.h EarlyAbortLeastBudget) lets the block through AND
// zstd's output fits, whatever the budget is made of:
//   0                       no such budget asked: a hole, or a block under 128K
//   1 .. 28672              u: 512(u-1) < least <= 512u (u = 1: 112 < least <= 512)
//   32768                   least <= 112
//   0xFFFE                  no budget up to lsize - lsize/8 lets it through (stored as is)
//   0xFFFF                  not computed (as the setting's own code)
// As for least-budget codes, only the class matters: every budget ZFS computes is 112 bytes, a
// multiple of 512 or lsize - lsize/8, and a least budget up to that largest one has a code.
PsizeCode EncodeProbe(std::optional<uint64_t> least);
// The 512-byte units of the compressor output a stored code records, whatever the code's kind
// (raw, least-budget or rounded, above): 0 for an output of at most 112 bytes, kNoFitUnits where
// the output did not fit. Sampling classes (estimate/anchor_class.h) are read from it, so a
// scan and a report of its state, under any profile or geometry, put a block in the same class.
// REQUIRES: not a hole or pending code.
inline constexpr uint64_t kNoFitUnits = ~uint64_t{0};
inline uint64_t OutputUnitsOf(PsizeCode c) {
  if (c == kNoFitCode) return kNoFitUnits;
  if (c <= kEmbeddedBase) return c;
  if (c <= kLeastNextBase) return 0;
  return uint64_t{c} - kLeastNextBase;
}

// An early-abort code read back: above < least <= at_most (length unset), or no length when it
// never passes. REQUIRES: 1..kLeastLastUnit, kEmbeddedBase or kNoFitCode.
LeastBudget ProbeOf(PsizeCode c);
inline constexpr PsizeCode kProbeSmallCode = kEmbeddedBase;
inline bool IsHoleCode(PsizeCode c) { return c == kHoleCode; }
inline bool IsEmbeddedCode(PsizeCode c) { return c > kEmbeddedBase && c < kNoFitCode; }
inline uint64_t AllocatedPsize(PsizeCode c) { return uint64_t{c} * 512; }
inline uint64_t EmbeddedPayload(PsizeCode c) { return uint64_t{c} - kEmbeddedBase; }
// The psize a code allocates: 0 for a hole, an embedded block and a pending code.
inline uint64_t StoredPsize(PsizeCode c) {
  return IsHoleCode(c) || IsEmbeddedCode(c) || c == kPendingCode ? 0 : AllocatedPsize(c);
}

// How a setting's codes are kept.
struct SettingStorage {
  enum class Kind : uint8_t {
    kInline,     // 2 bytes in every entry
    kFromLsize,  // compression=off: psize = lsize, or a hole when the block is all zero and
                 // zero_is_hole
    kSide,       // a sampled codec: stored only for the entries it ran on; an entry without a
                 // code reads kHoleCode when it is all zero (and zero_is_hole), else kPendingCode
  };
  Kind kind = Kind::kInline;
  bool zero_is_hole = true;
};

// A key as a table keeps it (EntryView::key): lo, and the top 8 and low 32 bits of hi. Two
// blocks whose TableKeys are equal are one entry; a block read again matches its entry when its
// fingerprint's TableKey is the entry's.
struct TableKey {
  uint64_t lo = 0;
  uint64_t hi = 0;
  explicit TableKey(const Fingerprint& k)
      : lo(k.lo), hi(k.hi & (uint64_t{0xff} << 56 | uint64_t{0xffffffff})) {}
  friend bool operator==(const TableKey&, const TableKey&) = default;
};
struct TableKeyHash {
  size_t operator()(const TableKey& k) const { return static_cast<size_t>(k.lo); }
};

struct EntryView {
  Fingerprint key;  // lo exact; hi keeps its top 8 and low 32 bits (the rest reads as zero)
  uint32_t refcount;
  uint64_t lsize;
  bool is_zero;
  std::span<const PsizeCode> codes;  // one per setting, in the order given to the table
  // Where one of the key's blocks lies, as the caller encoded it (KeepOrigins); 0: not known.
  uint64_t origin = 0;
};

enum class InsertOutcome : uint8_t {
  kFirst,        // first reference: compute the codes and call SetCodes
  kDuplicate,    // the key was there: refcount + 1
  kSampledOut,   // outside the sampled key space: not counted
  kBecameHeavy,  // a duplicate whose refcount has just reached kHeavyRefcount, or the table's
                 // census refcount (set_census_refcount; once per key)
};

// The refcount at which Insert says kBecameHeavy. A sampled codec's estimate takes the entries
// this referenced from a census, not from its sample (pipeline/tally.cc): they are few, and a
// handful of them can hold a large share of the referenced bytes. A power of two, so they are
// exactly the DDT histogram's buckets from 3 (refcnt 8) up.
inline constexpr uint32_t kHeavyRefcount = 8;

// True if `key` lies outside the 1/2^shift of the key space that sampling keeps.
inline bool SampledOut(const Fingerprint& key, uint32_t shift) {
  return shift != 0 && (key.hi & ((uint64_t{1} << shift) - 1)) != 0;
}

// The entries of a partitioned table that other processes hold (see the top of this file).
// Thread safety: ForEach from any thread (an implementation serializes its own messages).
class RemotePart {
 public:
  virtual ~RemotePart() = default;
  virtual void ForEach(const std::function<void(const EntryView&)>& fn) const = 0;
  virtual uint64_t entries() const = 0;
  virtual uint64_t memory_bytes() const = 0;
};

class DedupTable {
 public:
  // Shards, chosen by the key's top 8 bits: the unit a partitioned table is split by.
  static constexpr size_t kShards = 256;
  static size_t ShardOf(const Fingerprint& key) { return key.hi >> 56; }

  // Every setting inline.
  explicit DedupTable(size_t settings);
  explicit DedupTable(std::vector<SettingStorage> layout);
  ~DedupTable();
  DedupTable(const DedupTable&) = delete;
  DedupTable& operator=(const DedupTable&) = delete;

  // Adds one reference to `key` (a block of `lsize` bytes, all zero or not) unless sampling
  // excludes it (never an all-zero block). Refcounts saturate at 2^32-1. When `ref` is given and
  // the key is kept, *ref names its entry (see EntryRef).
  // `origin` (not 0) is kept with a new entry of a table that keeps origins (KeepOrigins).
  InsertOutcome Insert(const Fingerprint& key, uint64_t lsize, bool is_zero = false,
                       uint32_t* ref = nullptr, uint64_t origin = 0);

  // Entry references: 32 bits naming one entry (its shard and its place in it), what a file's
  // record keeps per block to take it back out (state/scan_state.h FileRecord). A reference stays
  // valid until RaiseSampleShift or DropUnreferenced renumbers the entries; a table saved and
  // loaded again (ForEach, then AddEntry or LoadEntry in that order) keeps every entry's reference.
  // True when `ref` names an entry of this table.
  bool HasRef(uint32_t ref) const;
  // The key of the entry `ref` names (as ForEach gives it). REQUIRES: HasRef(ref).
  Fingerprint KeyOf(uint32_t ref) const;
  // The entry of `key` (as KeyOf or ForEach give it: the top 8 and low 32 bits of hi are
  // enough), or kDroppedRef when the table holds no such key. No concurrent Insert.
  uint32_t Find(const Fingerprint& key) const;
  // Takes one reference back out of the entry `ref` names (a block no longer there), and returns
  // the references it has left. An entry left with none stays until DropUnreferenced.
  // REQUIRES: HasRef(ref), no concurrent ForEach.
  uint32_t Release(uint32_t ref);
  // Drops every entry without references, renumbering the others; returns per shard the new
  // place of every old one (kDroppedRef for the dropped), for MapRef. No concurrent use.
  using RefMap = std::vector<std::vector<uint32_t>>;
  static constexpr uint32_t kDroppedRef = UINT32_MAX;
  RefMap DropUnreferenced();
  static uint32_t MapRef(const RefMap& map, uint32_t ref);

  // Records the codes of a key inserted earlier, one per setting (values for kFromLsize settings
  // are ignored; kPendingCode stores nothing and leaves a code set before). A key dropped by a
  // raised sample shift is ignored. Calling it again for a key must give the same codes (a
  // codec's output depends on the block only): a second side record is kept but never read.
  void SetCodes(const Fingerprint& key, std::span<const PsizeCode> codes);

  // Adds every entry of `other` (a table of the same layout): refcounts add (saturating at
  // 2^32-1), and each code this table lacks (kPendingCode) is taken from `other` (a codec's
  // output depends on the block only, so codes both have agree). Keys outside this table's
  // sampled space are left out: raise its shift to the coarser of the two first. Merging the
  // tables of two scans gives the table one scan of both inputs builds.
  // REQUIRES: other.settings() == settings(), same kinds; no concurrent use of `other`.
  void Merge(const DedupTable& other);

  // Adds one entry as another table's ForEach gave it (a key not yet in this table; or as Merge
  // does for one that is).
  void AddEntry(const EntryView& e) { MergeEntry(e, {}); }
  // The same for a table only the calling thread uses meanwhile (gathering entries that come
  // from several tables): no lock; a key given twice adds up.
  void LoadEntry(const EntryView& e);
  // Appends a new entry for a table only the calling thread uses meanwhile (loading a saved
  // one): no lock, and it takes the next reference of its shard, as the saved table's ForEach
  // met it. False, and nothing stored, when the key is there already, lies outside the sampled
  // key space, or its shard is full: a saved table holds none of those, so the file is corrupt
  // (adding it up would shift every later entry's reference).
  bool LoadNewEntry(const EntryView& e);

  // Sizes every shard's index for `entries` keys spread evenly over the shards (a table about to
  // be filled with a known number of entries: loading a saved one), so the fill rebuilds no index.
  void Reserve(uint64_t entries);

  // Loads a saved table whose entries come in key order (shard, then hi, then lo: the order a
  // state file holds them in) into a table only the calling thread uses meanwhile. Add is
  // LoadNewEntry without the probe per entry: the order itself shows a key given twice, and a
  // shard's index is built in one pass, in its slots' order, once its entries are in (the next
  // shard's first entry, or Finish), on a thread of its own for a large shard while the next
  // one's entries come in. An entry out of key order (a file that predates the order) makes the
  // rest go through LoadNewEntry. The table is whole again once Finish returns; use nothing else
  // of it before. The destructor finishes (an exception there ends the process: call Finish),
  // or while an exception unwinds, only waits for a build under way.
  class OrderedLoader {
   public:
    explicit OrderedLoader(DedupTable& table) : table_(table) {}
    ~OrderedLoader() {
      if (std::uncaught_exceptions() == 0) {
        Finish();
      } else if (building_.valid()) {
        building_.wait();
      }
    }
    OrderedLoader(const OrderedLoader&) = delete;
    OrderedLoader& operator=(const OrderedLoader&) = delete;
    // As LoadNewEntry: false, and nothing stored, for a key given before, outside the sampled
    // key space, or in a full shard.
    bool Add(const EntryView& e);
    void Finish();

   private:
    void IndexPending();  // starts the pending shard's build, after the one under way
    void Wait();          // for the build under way (its exception goes on)
    DedupTable& table_;
    std::future<void> building_;
    size_t shard_ = SIZE_MAX;               // the shard whose index is not built yet
    Fingerprint last_{};                    // the last key added to it
    bool probing_ = false;                  // out of order once: LoadNewEntry from then on
    std::vector<uint64_t> placed_, order_;  // BuildIndex's scratch, kept across shards
    std::vector<uint32_t> starts_;
  };

  // How each setting's codes are kept.
  const std::vector<SettingStorage>& layout() const { return layout_; }

  // The refcount at which Insert says kBecameHeavy: kHeavyRefcount, or fewer for the part of a
  // distributed scan's table one process fills (engine/mpi/table_stream.h: a key referenced
  // kHeavyRefcount times in all is referenced ceil(kHeavyRefcount / N) times by some rank of N).
  // Set before the first Insert.
  void set_census_refcount(uint32_t refcount) { census_refcount_ = refcount; }

  // Origins (a distributed scan's census, engine/mpi/heavy_census.h): from now on every entry
  // also keeps 8 bytes naming where one of its blocks lies (EntryView::origin; the first one
  // given: Insert's, or a merged entry's when this one has none). memory_bytes() leaves them out,
  // so that budgets sample as a table without them does; origin_bytes() says what they take.
  // REQUIRES: no entry yet.
  void KeepOrigins();
  bool keeps_origins() const { return origin_offset_ != 0; }
  uint64_t origin_bytes() const;

  // Keeps from now on only 1/2^shift of the key space (and every all-zero block) and drops the
  // other entries.
  // A shift not above the current one changes nothing.
  void RaiseSampleShift(uint32_t shift);
  uint32_t sample_shift() const { return sample_shift_.load(std::memory_order_relaxed); }

  // Calls fn for every entry, shard by shard in insertion order within a shard (figures are
  // sums, so the order never shows), then for the remote part's entries.
  void ForEach(const std::function<void(const EntryView&)>& fn) const;
  // The same for the entries this object holds in shard `shard` (< kShards) alone.
  void ForEachInShard(size_t shard, const std::function<void(const EntryView&)>& fn) const;
  // Frees every entry of shard `shard` (they went to the process that owns it). No concurrent use.
  void DropShard(size_t shard);
  // Makes this table the part of a partitioned one that this process holds: from now on
  // ForEach, entries() and memory_bytes() add `remote`. No Insert, SetCodes, Merge or
  // RaiseSampleShift afterwards.
  void AttachRemote(std::shared_ptr<const RemotePart> remote) { remote_ = std::move(remote); }
  // Entries and bytes this object holds itself (all of them unless partitioned).
  uint64_t local_entries() const;
  // The entries this object holds in shard `shard` (< kShards).
  uint32_t shard_entries(size_t shard) const;
  uint64_t local_memory_bytes() const { return bytes_.load(std::memory_order_relaxed); }

  size_t settings() const { return layout_.size(); }
  uint64_t entries() const { return local_entries() + (remote_ ? remote_->entries() : 0); }
  // Bytes held by the table (entries, index, side codes): the RAM cost of the DDT. Kept up to
  // date as the table grows, so reading it costs nothing (the scan checks it per chunk).
  uint64_t memory_bytes() const {
    return local_memory_bytes() + (remote_ ? remote_->memory_bytes() : 0);
  }
  // The least memory_bytes() of a table with an entry in every shard, whatever its sample shift:
  // a first chunk of entries and a first index per shard. A memory budget below it cannot hold.
  uint64_t floor_bytes() const;

  // Entries per shard: at most kMaxShardEntries (the 24-bit ids). A key whose shard is full is
  // not kept (Insert says kSampledOut, Merge leaves it out) and overflowed() turns true; the
  // callers keep every shard below kShardEntriesToSample by sampling the key space
  // (state/table_budget.h FitTablesToShards; for a partitioned table, mpi/partition.h) long
  // before, so it never happens in practice.
  // About the most entries any shard holds, rounded down to a multiple of 4096 (kept up to date
  // as entries are added, without a lock).
  static constexpr uint32_t kMaxShardEntries = (uint32_t{1} << 24) - 1;
  static constexpr uint32_t kShardEntriesToSample = uint32_t{1} << 23;
  uint32_t fullest_shard() const { return fullest_.load(std::memory_order_relaxed); }
  bool overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

 private:
  struct Shard;
  // Stores `codes` into entry `id` of `shard` (inline codes where not kPendingCode; a side
  // record when a side code is neither pending nor derivable). REQUIRES: shard.mu held.
  void StoreCodes(Shard& shard, uint32_t id, std::span<const PsizeCode> codes);
  // `slot` SIZE_MAX: no index slot taken (OrderedLoader builds the index afterwards).
  uint32_t AppendEntry(Shard& shard, size_t slot, uint64_t lo, uint32_t hi32, uint32_t refcount,
                       uint64_t lsize, bool is_zero, uint64_t origin);
  // One entry of another table (see Merge); `side_order`: this shard's side records when the
  // merge began, by entry (Shard::SideOrder; empty: none read).
  void MergeEntry(const EntryView& e, const std::vector<uint32_t>& side_order);
  // Builds the index of a shard whose entries were appended without one (OrderedLoader), in
  // home order: each entry at the first slot from its home not taken, without a probe.
  // `placed`, `order`, `starts`: scratch. REQUIRES: the table to the calling thread alone.
  void BuildIndex(Shard& shard, std::vector<uint64_t>& placed, std::vector<uint64_t>& order,
                  std::vector<uint32_t>& starts);
  // Grows the shard's index when one more entry would load it past 7/8. REQUIRES: shard.mu
  // held, or the table to the calling thread alone.
  void MakeRoom(Shard& shard);
  // fullest_ from the shards' counts (after entries were dropped).
  void UpdateFullest();
  // Keeps the entries of `shard` `keep` says yes to, renumbered in order into right-sized chunks,
  // with the index and side list rebuilt; returns each old id's new one (kDroppedRef: dropped).
  // REQUIRES: shard.mu held.
  std::vector<uint32_t> Compact(Shard& shard, const std::function<bool(const uint8_t*)>& keep);
  static constexpr size_t kShardBits = 8;
  std::vector<SettingStorage> layout_;
  std::vector<size_t> inline_slot_;  // per setting: its inline position, or SIZE_MAX
  std::vector<size_t> side_slot_;    // per setting: its side position, or SIZE_MAX
  size_t inline_count_ = 0;
  size_t side_count_ = 0;
  size_t entry_bytes_ = 0;    // an entry's bytes in its chunk
  size_t counted_bytes_ = 0;  // of which memory_bytes() counts (all but the origin)
  size_t origin_offset_ = 0;  // of the origin in an entry, 0: none kept
  std::atomic<uint32_t> sample_shift_{0};
  uint32_t census_refcount_ = kHeavyRefcount;
  std::atomic<uint64_t> bytes_{0};       // memory_bytes(), updated by every allocation's change
  std::atomic<uint32_t> fullest_{0};     // fullest_shard()
  std::atomic<bool> overflowed_{false};  // a key was left out for a full shard
  std::array<std::unique_ptr<Shard>, size_t{1} << kShardBits> shards_;
  std::shared_ptr<const RemotePart> remote_;
};

// A table's entries that are not all zero (its unique blocks), and their bytes.
struct UniqueBlocks {
  uint64_t blocks = 0;
  uint64_t bytes = 0;
};
UniqueBlocks UniqueBlocksOf(const DedupTable& table);

}  // namespace zsim::ddt

#endif  // ZSIM_ENGINE_DDT_DEDUP_TABLE_H_
