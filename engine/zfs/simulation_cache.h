// engine/zfs/simulation_cache.h
//
// SimulationCache: the results of a deterministic simulation kept per input for the life of the
// process. A report models each setting's DDT objects in two formats, most of them at the same
// entry counts, so the ZAP and log-drain simulations (ddt_footprint.cc, ddt_log_drain.cc) run
// once per input. Bounded: past `max_entries` results are computed but no longer kept.
//
// Thread safety: GetOrCompute from any thread; `compute` runs outside the lock (two threads may
// compute the same input; both get the same deterministic result).

#ifndef ZSIM_ENGINE_ZFS_SIMULATION_CACHE_H_
#define ZSIM_ENGINE_ZFS_SIMULATION_CACHE_H_

#include <cstddef>
#include <map>
#include <mutex>

namespace zsim::zfs {

template <class Key, class Value>
class SimulationCache {
 public:
  explicit SimulationCache(size_t max_entries) : max_entries_(max_entries) {}

  template <class Compute>
  Value GetOrCompute(const Key& key, Compute compute) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = done_.find(key); it != done_.end()) return it->second;
    }
    Value v = compute();
    std::lock_guard<std::mutex> lock(mu_);
    if (done_.size() < max_entries_) done_.emplace(key, v);
    return v;
  }

 private:
  const size_t max_entries_;
  std::mutex mu_;
  std::map<Key, Value> done_;  // Guarded by mu_.
};

}  // namespace zsim::zfs

#endif  // ZSIM_ENGINE_ZFS_SIMULATION_CACHE_H_
