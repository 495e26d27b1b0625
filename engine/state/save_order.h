// engine/state/save_order.h
//
// The order a state file gives what a scan holds in an order of its own. Threads meet files and
// blocks in whatever order the run takes them: a dedup table's entries sit in each shard in the
// order their keys were first inserted (and entry references name those places), breakdown
// names are numbered as first met, file records and linked files are listed as their files were
// finished. None of that order means anything (every figure is a sum), so from format 11 the
// state file writes each in an order of its content alone (state_file.h): the table by key,
// names and files by name, references by key, with every index and entry reference renumbered
// to match. The bytes a save writes are then a function of the data and the options (but for
// the run section, state_file.h), whatever the thread count, and a state loaded and saved again
// gives the same bytes.
//
// Thread safety: pure functions of values nobody changes meanwhile.

#ifndef ZSIM_ENGINE_STATE_SAVE_ORDER_H_
#define ZSIM_ENGINE_STATE_SAVE_ORDER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/state/scan_state.h"

namespace zsim::state {

// Calls fn for every entry of `table` in the order of its keys (hi, then lo; so shard by shard),
// and fills `*map` (when given) with each entry's new reference (ddt::DedupTable::MapRef): the
// reference it gets in a table loaded in that order (ddt::DedupTable::LoadNewEntry numbers
// entries as they come, per shard). Holds one shard's entries at a time (about 40 bytes plus 2
// per setting each). A partitioned table (a distributed scan's, ddt::RemotePart) is given in
// its own order instead (its local entries, then the remote part's): its remote entries cannot
// be gathered per shard, and its local entries keep their references (the remote ones lie in
// other shards). That is the order of the keys when every part holds its shards in key order
// (InKeyOrder) and the remote part gives shards above the local ones, in order: a distributed
// scan's partition (mpi/partition.h: rank k owns the k-th range of shards) before a save.
void ForEachInKeyOrder(const ddt::DedupTable& table,
                       const std::function<void(const ddt::EntryView&)>& fn,
                       ddt::DedupTable::RefMap* map = nullptr);

// `table`'s entries (not partitioned) in a new table of the same layout and sample shift, each
// shard's in the order of their keys, so that its ForEach gives them as ForEachInKeyOrder does;
// `table`'s shards are freed as they are copied (at most one shard held twice). Origins and the
// census refcount are not kept (a table whose scan is over).
std::unique_ptr<ddt::DedupTable> InKeyOrder(ddt::DedupTable& table);

// The entry references `refs` renumbered by `map` (ForEachInKeyOrder) and sorted.
std::vector<uint32_t> SortedRefs(const std::vector<uint32_t>& refs,
                                 const ddt::DedupTable::RefMap& map);

// The order of `names` sorted: order[k] is the index of the k-th smallest.
std::vector<uint32_t> NameOrder(const std::vector<std::string>& names);

// The inverse of a permutation: where each index went.
std::vector<uint32_t> Inverse(const std::vector<uint32_t>& order);

// Where each of `size` indices went in `order`, which may leave some out: kLeftOut for those.
inline constexpr uint32_t kLeftOut = UINT32_MAX;
std::vector<uint32_t> InverseOf(const std::vector<uint32_t>& order, size_t size);

// The order to write `records` in (their input, then their path; the rest breaks ties of
// overlapping inputs), and `links` in (their path, then their file).
std::vector<uint32_t> RecordOrder(const std::vector<FileRecord>& records);
std::vector<uint32_t> LinkOrder(const std::vector<LinkedFile>& links);

}  // namespace zsim::state

#endif  // ZSIM_ENGINE_STATE_SAVE_ORDER_H_
