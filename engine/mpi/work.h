// engine/mpi/work.h
//
// Handing out the walk: rank 0 walks the inputs once (so hard links and repeated roots count
// once, as in one process) and gives every rank, itself included, batches of walk items on
// request: dynamic, so a fast rank takes more and none waits on the slowest's backlog. A batch
// holds work up to a batch size of file bytes (at least one item), plus the directories, skipped
// paths and errors the walk met on the way (whoever takes them counts them, once).
//
// Items of one size and offset go to one rank while it keeps up (WorkPool::PreferredRank):
// copies of a file and clones of an image meet in that rank's table, so their blocks are coded
// once, not once on each rank that meets them first (docs/scale.md).
//
// Work goes by bytes, not by file: a file larger than a piece (the batch size rounded up to the
// scan's chunk size, pipeline::ChunkBytes) is handed out as pieces, byte ranges at chunk
// boundaries, one per batch (walk::WalkItem::piece_*), so one huge image is read by every rank.
// A piece's records are the whole file's (pipeline/file_pieces.h); the pool keeps the split
// files, whose per-file figures rank 0 counts once from the pieces' sums (distributed_scan.cc).
//
// Protocol (messages.h): rank 0 sends every rank k > 0 its first batch unasked as its own scan
// starts (kTagWorkBatch); from then on rank k keeps one request outstanding (kTagWorkRequest,
// byte 1) for the batch after the one it scans, and rank 0 answers with a batch, empty when the
// walk is done. So one batch is always on its way to each rank until it is told the walk is
// done. A rank that stops early (Ctrl-C) takes the batch on its way, says so (byte 0) and gets no
// answer.
//
// Thread safety: WorkPool::Take from any thread (locked); WorkServer's members from any thread
// (locked); RemoteShare's Next from one thread at a time (the pipeline's serial input
// stage).

#ifndef ZSIM_ENGINE_MPI_WORK_H_
#define ZSIM_ENGINE_MPI_WORK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/walk/walker.h"

namespace zsim::mpi {

// Default batch: 32 MiB of file size, at most 256 items. The next batch's request travels while
// one is scanned, so a batch must outlast the round trip, which includes rank 0 reaching the end
// of its current chunk (WorkServer; before, a server thread that first waited for a core on a
// node where every core runs a rank's scan). At 4 MiB (one 8 MiB chunk, 1.5 ms at 5.5 GB/s from
// the page cache) rank 1 of 2 waited 8% of its scan for work; at 32 MiB (about 6 ms) 0.2%
// (ZSIM_MPI_STATS' work_wait_seconds; bench/results/2026-12-02-s27-mpi). What a rank may hold
// unscanned at the end is one batch. ZSIM_MPI_BATCH_BYTES overrides the size (tests use small
// batches to spread a small tree over every rank).
inline constexpr uint64_t kBatchBytes = uint64_t{32} << 20;
inline constexpr size_t kBatchItems = 256;

// Walk items as bytes and back (every field a scan reads).
std::string EncodeItems(const std::vector<walk::WalkItem>& items);
std::vector<walk::WalkItem> DecodeItems(const std::string& bytes);

// What waits in the pool for one rank at most (WorkPool), after which whoever asks takes it:
// kParkedBatches batches' bytes, and kParkedItems / ranks items (at least a batch's: so at most
// max(65,536, 256 x ranks) items in all). Items only, not data (a walk item is about 200 bytes
// and its path), so the bound is of how long a rank's work waits for it, more than of memory.
// The ranks take at about one pace, but which rank an item goes to is random, so a queue's
// length wanders like the square root of the items handed out: at 8 batches, 8% of the 4,096
// offsets of three clones were split between ranks (tests/mpi/work_pool_unit.cc), at 32 3%,
// most of them at the walk's end. What waits when the walk is done beyond a batch per rank
// goes to whoever asks, so the end is balanced whatever the bound.
inline constexpr uint64_t kParkedBatches = 32;
inline constexpr size_t kParkedItems = size_t{1} << 16;

// Rank 0's walk, shared out.
class WorkPool {
 public:
  // Batches of `batch_bytes` of file size (kBatchBytes when 0); files larger than a piece, a
  // multiple of `chunk_bytes` (pipeline::ChunkBytes of the scan's options), are split. `ranks`
  // take batches (Take's `rank`, 0 to ranks - 1).
  WorkPool(std::unique_ptr<walk::WalkSource> walk, uint64_t batch_bytes, uint64_t chunk_bytes,
           int ranks = 1);
  // The next batch for `rank` (0 to ranks - 1); empty once the walk is done and nothing waits
  // for this rank but its next batch's worth of other ranks' items. So each rank must ask until
  // its batch comes back empty, or be forgotten (Forget), or that much may be left unscanned.
  std::vector<walk::WalkItem> Take(int rank = 0);
  // `rank` asks no more (it left early): nothing waits for it from now on, and what waited goes
  // to whoever asks.
  void Forget(int rank);
  // The files split so far, by their piece_file number (their pieces' fields cleared).
  std::vector<walk::WalkItem> SplitFiles();
  uint64_t piece_bytes() const { return piece_bytes_; }
  // The rank an item goes to while that rank keeps up (-1: whoever asks, an item of no data):
  // of its size and offset only.
  int PreferredRank(const walk::WalkItem& item) const;

 private:
  struct Parked {
    std::deque<walk::WalkItem> items;
    uint64_t bytes = 0;
    bool gone = false;  // Forget
  };
  // The walk's next item, a piece of the file being split included. REQUIRES: mu_ held.
  std::optional<walk::WalkItem> NextItem();
  // Whether `rank`'s waiting items are as many as it may have. REQUIRES: mu_ held.
  bool ParkedFull(int rank) const;
  std::mutex mu_;
  std::unique_ptr<walk::WalkSource> walk_;  // Guarded by mu_, as are the four below.
  bool done_ = false;
  std::vector<walk::WalkItem> split_;  // files split, by number
  uint64_t next_piece_ = 0;            // of split_.back(), while it has pieces left
  const uint64_t batch_bytes_;
  const uint64_t piece_bytes_;
  const int ranks_;
  std::vector<Parked> parked_;  // per rank: the walk's items left for it
  const size_t park_items_;
};

// The time a share's scan waited for its next batch, in ns (ZSIM_MPI_STATS). Shared: an
// abandoned scan may still call its source after the scan has returned.
using WorkWait = std::shared_ptr<std::atomic<uint64_t>>;

// What rank 0's server sent.
struct WorkTraffic {
  uint64_t batches = 0;  // non-empty batches
  uint64_t bytes = 0;    // encoded items
};

class WorkServer;

// Rank 0's own share: batches taken from the pool directly, the other ranks' waiting requests
// answered first through `server` (null with one rank). Both shares add the time their scan
// waited for each batch to `wait` (may be null).
std::unique_ptr<walk::WalkSource> LocalShare(WorkPool* pool, WorkServer* server, WorkWait wait);

// Rank 0's answers to ranks 1 .. ranks-1, given without a thread of their own: rank 0's scan
// calls Poll between its chunks and whenever it takes a batch itself, and, once its scan is over,
// Drain until every rank was told the walk is done or has left. A rank asks for its next batch a
// batch ahead (32 MiB, four of rank 0's chunks), so an answer at rank 0's next chunk boundary is in
// time; a server thread polling on a timer instead woke about 1,500 times a second at N = 2 on
// 2 cores, each wake taking a core from a scanning thread (bench/results/2026-12-02-s28-mpi).
// Once `*cancel` is set (an interrupted scan; may be null) every rank is told the walk is done:
// the ranks end with the work they have.
// The answers are sent without waiting (a batch of many small files exceeds MPI's eager size:
// its bytes move as both ends call into MPI, on rank 0 at its next Poll, every chunk: a small
// file's chunk is short). Poll looks for requests at most every kPollEvery.
class WorkServer {
 public:
  static constexpr std::chrono::microseconds kPollEvery{100};

  WorkServer(WorkPool* pool, int ranks, const std::atomic<bool>* cancel);
  ~WorkServer();  // REQUIRES: Finish has returned (every answer sent)
  WorkServer(const WorkServer&) = delete;
  WorkServer& operator=(const WorkServer&) = delete;
  // Sends every other rank its first batch (the protocol above), once, as rank 0's scan starts:
  // rank 0 answers requests only between its own chunks, and no rank then waits for rank 0's
  // first chunk to end.
  void Start();
  // Answers the requests waiting, if any; returns at once.
  void Poll();
  // Once rank 0's own share finds the walk done: a thread of its own drains the rest (Drain), so
  // that the others' last requests are answered while rank 0's scan finishes its last chunks and
  // builds its state, not after. Poll does nothing from then on. Once.
  void DrainInBackground();
  // After rank 0's scan: waits for that thread (started now if the walk was not done: an
  // interrupted scan). Every rank has then been told the walk is done or has left.
  void Finish();
  WorkTraffic traffic() const;

 private:
  struct Answer;
  // Answers one waiting request; false when none is waiting. REQUIRES: mu_ held.
  bool AnswerOne();
  // Sends rank `to` its next batch. REQUIRES: mu_ held.
  void SendBatch(int to);
  // Forgets the answers sent. REQUIRES: mu_ held.
  void Progress();
  // Answers requests, waiting for them by polling (messages.h), until no rank is left to answer
  // and every answer has been sent.
  void Drain();
  mutable std::mutex mu_;  // Poll and Drain from any thread, one at a time
  WorkPool* const pool_;
  const std::atomic<bool>* const cancel_;
  const int ranks_;
  int active_;  // ranks not yet told the walk is done. Guarded by mu_, as are the three below.
  std::vector<std::unique_ptr<Answer>> sending_;
  std::chrono::steady_clock::time_point last_poll_{};
  WorkTraffic traffic_;
  std::once_flag drain_once_;
  std::thread drainer_;
};

// A rank k > 0's share: batches asked of rank 0. Destroying it before the walk is done (an
// interrupted scan) tells rank 0 this rank has left.
std::unique_ptr<walk::WalkSource> RemoteShare(WorkWait wait);

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_WORK_H_
