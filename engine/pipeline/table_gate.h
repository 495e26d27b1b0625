// engine/pipeline/table_gate.h
//
// TableGate: who may change a scan's dedup tables wholesale while the scan runs. The scan's
// workers hold it shared from a chunk's first Insert to its last SetCodes, and its serial stage
// while it samples the tables (a first sighting's codes then never miss their entry); a
// distributed scan's exchange (engine/mpi/table_stream.h) holds it exclusively while it reads out
// and drops the shards other ranks own, or merges in the entries they sent.
//
// Writers come first: once one waits, no new reader enters, so a scan's threads, which each take
// it again per chunk, never keep the exchange out (std::shared_mutex gives no such promise).
//
// Thread safety: any threads; not recursive.

#ifndef ZSIM_ENGINE_PIPELINE_TABLE_GATE_H_
#define ZSIM_ENGINE_PIPELINE_TABLE_GATE_H_

#include <condition_variable>
#include <mutex>

namespace zsim::pipeline {

class TableGate {
 public:
  void lock_shared();
  void unlock_shared();
  void lock();
  void unlock();
  // Threads waiting to enter, shared and exclusively (tests: an order shown, not timed).
  int waiting_readers() const;
  int waiting_writers() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int readers_ = 0;          // Guarded by mu_.
  int readers_waiting_ = 0;  // Guarded by mu_.
  int writers_waiting_ = 0;  // Guarded by mu_.
  bool writing_ = false;     // Guarded by mu_.
};

}  // namespace zsim::pipeline

#endif  // ZSIM_ENGINE_PIPELINE_TABLE_GATE_H_
