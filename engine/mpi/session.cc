#include "engine/mpi/session.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include "engine/mpi/messages.h"

namespace zsim::mpi {

bool Session::LaunchedByMpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

Session::Session(int* argc, char*** argv) {
  if (!LaunchedByMpirun()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_SERIALIZED) {
    std::fprintf(stderr,
                 "zsim: error: the MPI library does not allow calls from several "
                 "threads (MPI_THREAD_SERIALIZED), which a distributed scan needs\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  // A failed MPI call ends the job with MPI's own message naming the rank (the default), never a
  // silently partial report.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  active_ = true;
}

void Session::Abort(int code) {
  std::fflush(nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // not reached: MPI_Abort ends the process
}

void Session::AwaitAbort(int code) {
  std::fflush(nullptr);
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 aborts instead of reaching it
  Abort(code);
}

void Session::Finalize() {
  if (!active_ || finalized_) return;
  finalized_ = true;
  WaitForAll();
  MPI_Finalize();
}

Session::~Session() { Finalize(); }

}  // namespace zsim::mpi
