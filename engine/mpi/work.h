// engine/mpi/work.h
//
// Handing out the walk: rank 0 walks the inputs once (so hard links and repeated roots count
// once, as in one process) and gives every rank, itself included, batches of walk items on
// request: dynamic, so a fast rank takes more and none waits on the slowest's backlog. A batch
// holds work up to a batch size of file bytes (at least one item), plus the directories, skipped
// paths and errors the walk met on the way (whoever takes them counts them, once).
//
// Work goes by bytes, not by file: a file larger than a piece (the batch size rounded up to the
// scan's chunk size, pipeline::ChunkBytes) is handed out as pieces, byte ranges at chunk
// boundaries, one per batch (walk::WalkItem::piece_*), so one huge image is read by every rank.
// A piece's records are the whole file's (pipeline/file_pieces.h); the pool keeps the split
// files, whose per-file figures rank 0 counts once from the pieces' sums (distributed_scan.cc).
//
// Protocol (messages.h): rank k > 0 keeps one request outstanding (kTagWorkRequest, byte 1),
// rank 0's server answers with a batch (kTagWorkBatch), empty when the walk is done; a rank that
// stops early (Ctrl-C) says so (byte 0) and gets no answer.
//
// Thread safety: WorkPool::Take from any thread (locked). ServeWork on one thread; RemoteShare's
// Next from one thread at a time (the pipeline's serial input stage).

#ifndef ZSIM_ENGINE_MPI_WORK_H_
#define ZSIM_ENGINE_MPI_WORK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/walk/walker.h"

namespace zsim::mpi {

// Default batch: 32 MiB of file size, at most 256 items. The next batch's request travels while
// one is scanned, so a batch must outlast the round trip, and on a node where every core runs a
// rank's scan, rank 0's server thread first waits for a core (the scheduler's slice, about a
// millisecond or more). At 4 MiB (one 8 MiB chunk, 1.5 ms at 5.5 GB/s from the page cache) rank 1
// of 2 waited 8% of its scan for work; at 32 MiB (about 6 ms) 0.2% (ZSIM_MPI_STATS'
// work_wait_seconds; bench/results/2026-12-02-s27-mpi). What a rank may hold unscanned at the
// end is one batch. ZSIM_MPI_BATCH_BYTES overrides the size (tests use small batches to spread a
// small tree over every rank).
inline constexpr uint64_t kBatchBytes = uint64_t{32} << 20;
inline constexpr size_t kBatchItems = 256;

// Walk items as bytes and back (every field a scan reads).
std::string EncodeItems(const std::vector<walk::WalkItem>& items);
std::vector<walk::WalkItem> DecodeItems(const std::string& bytes);

// Rank 0's walk, shared out.
class WorkPool {
 public:
  // Batches of `batch_bytes` of file size (kBatchBytes when 0); files larger than a piece, a
  // multiple of `chunk_bytes` (pipeline::ChunkBytes of the scan's options), are split.
  WorkPool(std::unique_ptr<walk::WalkSource> walk, uint64_t batch_bytes, uint64_t chunk_bytes);
  // The next batch; empty once the walk is done.
  std::vector<walk::WalkItem> Take();
  // The files split so far, by their piece_file number (their pieces' fields cleared).
  std::vector<walk::WalkItem> SplitFiles();
  uint64_t piece_bytes() const { return piece_bytes_; }

 private:
  std::mutex mu_;
  std::unique_ptr<walk::WalkSource> walk_;  // Guarded by mu_, as are the three below.
  bool done_ = false;
  std::vector<walk::WalkItem> split_;  // files split, by number
  uint64_t next_piece_ = 0;            // of split_.back(), while it has pieces left
  const uint64_t batch_bytes_;
  const uint64_t piece_bytes_;
};

// The time a share's scan waited for its next batch, in ns (ZSIM_MPI_STATS). Shared: an
// abandoned scan may still call its source after the scan has returned.
using WorkWait = std::shared_ptr<std::atomic<uint64_t>>;

// Rank 0's own share: batches taken from the pool directly. Both shares add the time their
// scan waited for each batch to `wait` (may be null).
std::unique_ptr<walk::WalkSource> LocalShare(WorkPool* pool, WorkWait wait);

// What rank 0's server sent.
struct WorkTraffic {
  uint64_t batches = 0;  // non-empty batches
  uint64_t bytes = 0;    // encoded items
};

// Answers ranks 1 .. ranks-1 until each was told the walk is done or has left. Once `*cancel` is
// set (an interrupted scan; may be null) every rank is told the walk is done: the ranks end
// with the work they have.
WorkTraffic ServeWork(WorkPool* pool, int ranks, const std::atomic<bool>* cancel);

// A rank k > 0's share: batches asked of rank 0. Destroying it before the walk is done (an
// interrupted scan) tells rank 0 this rank has left.
std::unique_ptr<walk::WalkSource> RemoteShare(WorkWait wait);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_WORK_H_
