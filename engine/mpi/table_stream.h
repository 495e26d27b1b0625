// engine/mpi/table_stream.h
//
// The dedup tables' exchange while the ranks read (the key partition, partition.h). A thread of
// each rank, started when the scan has made its tables:
//  - ships: once the entries of the shards this rank does not own reach `ship_bytes` (in wire
//    bytes, entry_wire.h), it takes the scan's table gate (pipeline/table_gate.h), reads those
//    shards out and drops them, and sends each owner its part, a message per row of at most
//    1 MiB; it ships again only once those sends are done;
//  - merges: what other ranks ship to it is received by the thread (woken by the scan's serial
//    stage when one is waiting after a chunk; else it looks every 50 ms while the scan runs)
//    and, after each chunk (by the serial stage) or once the scan is over (by the thread), goes
//    into the scan's tables, by ddt::DedupTable::Merge, the one merge logic, under the gate; or,
//    when the scan runs a census on its own references (sampled codecs without --sample), into a
//    table of its own per row (received()) without stopping the scan, so that the scan's tables
//    hold only this rank's own sightings, which the census (pipeline/scan_blocks.cc) counts.
// So during the scan a rank holds the shards it owns (with a census: of what it read, and apart
// what others sent of them, both at most the shards' whole) and at most `ship_bytes` (plus one
// ship in flight) of the others'. After the scan, partition.h moves what is left to the owners in
// all-to-all rounds, as before.
//
// A key read again after its shard was shipped is a first sighting again: its codes are computed
// again (a codec's output depends on the block only, so Merge adds up the references and the
// codes agree). `shipped()` remembers every key shipped (a Bloom filter, no false negatives), so
// that the census at ceil(8/N) can treat such a sighting as a repeated one, and the rare classes
// do not count its key twice.
//
// Sampling: the tables merged into raise their sample shift, all rows alike, when a shard nears
// its limit (ddt::DedupTable::kShardEntriesToSample) or when they alone outgrow `budget_bytes`:
// they hold a part of the whole's keys, so they outgrow it only if the whole does; the partition
// then takes the coarsest shift of every table on every rank, as for the scan's own.
//
// End: Finish() after the scan has returned: the rank ships no more, tells every other rank so,
// and returns once every other rank has told it the same and every message is received and
// merged. Collective in effect: every rank must call Start (or none) and Finish.
//
// Thread safety: Start from the scan's thread (ScanControl::tables_started), AfterChunk from its
// serial stage, Finish and received() from the thread that made the object, after the scan; the
// tables given to Start must outlive Finish. MPI calls hold MpiLock() (messages.h).

#ifndef ZSIM_ENGINE_MPI_TABLE_STREAM_H_
#define ZSIM_ENGINE_MPI_TABLE_STREAM_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/mpi/shipped_keys.h"
#include "engine/pipeline/table_gate.h"
#include "zsim/status.h"

namespace zsim::mpi {

struct StreamStats {
  uint64_t ships = 0;             // times this rank read out its foreign shards
  uint64_t bytes_sent = 0;        // entry bytes shipped during the scan
  uint64_t entries_sent = 0;      // and how many entries
  uint64_t references_sent = 0;   // and their references (blocks this rank read)
  uint64_t entries_received = 0;  // entries received and merged during the scan
  // Their references, where merged into the scan's tables (without a census): not blocks this
  // rank read.
  uint64_t references_merged = 0;
  // The most the scan's tables and the received ones took at once (looked at after each chunk),
  // and the shipped keys' filter at the end.
  uint64_t peak_table_bytes = 0;
  uint64_t shipped_keys_bytes = 0;
  uint64_t wakes = 0;  // times the thread slept and woke (woken, or its wait's bound passed)
};

class TableStream {
 public:
  // ZSIM_MPI_SHIP_BYTES overrides `ship_bytes` (tests: ship after a few entries). `census`: the
  // scan runs a census on its own references (census.h: the count at ceil(8/N)): what others
  // ship goes to received(); else it is merged into the scan's tables (under the gate) and
  // received() stays empty. `remember`: shipped() keeps the keys shipped (sampled codecs without
  // --sample: the census and the rare classes ask it); else it stays empty.
  // `origins`: the tables keep their entries' origins (heavy_census.h), set on them by Start, and
  // the entries travel with them.
  TableStream(int rank, int size, uint64_t ship_bytes, uint64_t budget_bytes, bool census,
              bool remember, bool origins);
  ~TableStream();  // joins the thread (Finish not called: only on a failure path)
  TableStream(const TableStream&) = delete;
  TableStream& operator=(const TableStream&) = delete;

  // The gate the scan must hold shared while it changes its tables (ScanControl::table_gate).
  pipeline::TableGate* gate() { return &gate_; }
  // Starts the thread over the scan's tables (one per row).
  void Start(const std::vector<ddt::DedupTable*>& tables);
  // From the scan's serial stage after each chunk (ScanControl::chunk_done), not holding the
  // gate: merges what arrived, notes the tables' size, wakes the thread when another rank's ship
  // is waiting, and ships when the foreign entries reached ship_bytes and no ship is under way.
  void AfterChunk();
  // See the top of the file. Fails when a message does not read back (ranks built differently).
  Status Finish();
  // Per row, the entries other ranks shipped during the scan (empty before Start). After Finish.
  std::vector<std::unique_ptr<ddt::DedupTable>>& received() { return received_; }
  // The keys this rank shipped, for the census and the rare classes. Any thread; valid until
  // destruction.
  const ShippedKeys& shipped() const { return shipped_; }
  const StreamStats& stats() const { return stats_; }

 private:
  // The thread: Loop, and on an exception Fail.
  void Run();
  void Loop();
  // Ends the job (MPI_Abort) with a message naming this rank and `what`.
  [[noreturn]] void Fail(const char* what) const;
  // Wire bytes of the entries in the shards this rank does not own.
  uint64_t ForeignBytes() const;
  struct Send;
  void Post(std::unique_ptr<Send> send);
  // Receives the messages waiting into the inbox; returns whether there were any.
  bool ReceiveWaiting();
  // Merges the inbox's messages: from the scan's serial stage (the tables then grow in the scan
  // threads' malloc arenas, as the rest of them: merged from this thread, the freed pages of
  // one arena would not serve the other's growth, about 10-15 MB more resident per rank at
  // 2 GiB of 512-byte records), and from the thread once the scan is over.
  void MergeInbox();
  // Raises `tables`' sample shift, alike, while a shard nears its limit (as one process's,
  // state::FitTablesToShards) or they outgrow the budget (see the top of the file).
  void Fit(const std::vector<ddt::DedupTable*>& tables) const;

  const int rank_, size_;
  uint64_t ship_bytes_;
  const uint64_t budget_bytes_;
  const bool census_;
  const bool remember_;
  const bool origins_;
  pipeline::TableGate gate_;
  std::vector<ddt::DedupTable*> tables_;
  std::vector<std::unique_ptr<ddt::DedupTable>> received_;
  ShippedKeys shipped_;
  StreamStats stats_;
  Status failure_;
  std::atomic<bool> scanning_{true};
  int done_from_ = 0;                         // ranks that told this one they ship no more
  std::vector<std::unique_ptr<Send>> sends_;  // under way (the thread's)
  std::mutex outbox_mu_;
  std::vector<std::unique_ptr<Send>> outbox_;  // read out, not yet sent. Guarded by outbox_mu_.
  std::mutex inbox_mu_;
  std::vector<std::string> inbox_;      // received, not yet merged. Guarded by inbox_mu_.
  std::mutex merge_mu_;                 // one MergeInbox at a time
  std::atomic<bool> in_flight_{false};  // a ship is in the outbox or under way
  // Wakes the thread from its pause at once: a ship in the outbox, another rank's ship waiting,
  // the scan's end.
  void Wake();
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ = false;      // Guarded by wake_mu_.
  uint64_t untrimmed_ = 0;  // bytes shipped since the last trim. Guarded by outbox_mu_.
  std::thread thread_;
};

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_TABLE_STREAM_H_
