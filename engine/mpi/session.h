// engine/mpi/session.h
//
// The mpi module, overview. A distributed scan: `mpirun -n N zsim scan PATHS...` runs N copies
// of zsim (ranks) on nodes that all see PATHS, and prints one report, the one a single process
// would print, from rank 0:
//
//   rank 0: walk PATHS ──batches by bytes, large files in pieces, on request──▶ ranks 0..N-1
//   (work.h)
//   every rank: the usual pipeline over its share ──▶ its ScanState, and its pieces' sums
//   the dedup tables ──entries to their key's owner: during the scan, a few MiB at a time, by a
//   thread of each rank (table_stream.h), then the rest in all-to-all rounds──▶ each rank keeps
//   its shards of the whole table (partition.h)
//   the states without their tables, and pieces ──serialized, binary tree of point-to-point
//   sends──▶ rank 0, combined by state::Merge (reduce.h) ──▶ the split files counted from their
//   pieces (pipeline::StateOfPiecedFiles), merged too ──▶ --max-memory applied to the sum of the
//   shards (an all-reduce) ──▶ Finish and --save on rank 0, reading the other ranks' shards in
//   batches while they serve them (table_service.h)
//
// Every block is read by exactly one rank (a file or a piece of a file goes to one rank); hard
// links and repeated roots count once (one walk). The sampling plan is global: each rank's sizing
// walk walks all of PATHS, and rank 0's memory budget is every rank's, so all keep the same key
// subset.
//
// Session (this file): MPI started when, and only when, the process was launched by mpirun;
// finalized at exit. Open MPI's runtime ends the whole job when a rank dies.
//
// Thread safety: one Session per process, made on the main thread before any other MPI call.
// MPI is initialised at MPI_THREAD_SERIALIZED: MPI calls come from one thread at a time. During
// the scan several threads make them (rank 0's pipeline answering requests for work, and at its
// end a thread draining them; a rank's pipeline input stage asking for work; its table stream),
// each call under MpiLock() (messages.h) and none of them blocking
// (every wait polls); before and after the scan, the main thread alone.

#ifndef ZSIM_ENGINE_MPI_SESSION_H_
#define ZSIM_ENGINE_MPI_SESSION_H_

namespace zsim::mpi {

class Session {
 public:
  // True if the environment says mpirun started this process (Open MPI's OMPI_COMM_WORLD_SIZE,
  // or PMIx's PMIX_RANK): what the constructor checks, for signal handlers that must be in place
  // before MPI_Init (mpirun may pass a signal on while a rank starts).
  static bool LaunchedByMpirun();
  // Initialises MPI if LaunchedByMpirun(); else does nothing (active() is false).
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool active() const { return active_; }
  // Waits for every rank and ends MPI now (the destructor then does nothing): before leaving
  // with _exit (an interrupted scan, whose abandoned reads may still hold threads).
  void Finalize();
  // Ends every rank of the job with `code` (MPI_Abort): for a failure of one rank before the
  // scan, which the others would wait on.
  [[noreturn]] void Abort(int code);
  // For a rank other than 0 refusing what rank 0 refuses too (the same command line): waits to be
  // ended by rank 0's Abort, so that rank 0 says why first. Its own MPI_Abort reached rank 0 as
  // mpirun's SIGTERM before rank 0 had said it, and rank 0 told of an interrupt instead
  // (mpi_scan_refused_since, with the other tests beside it in CI). Ends the job with `code`
  // itself should rank 0 ever go on.
  [[noreturn]] void AwaitAbort(int code);
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  bool active_ = false;
  bool finalized_ = false;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_SESSION_H_
