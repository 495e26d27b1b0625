// tests/mpi/mpirun_check.h
//
// The frame of a test program run under mpirun (tests/mpi/CMakeLists.txt zsim_mpirun_test): a
// start, a rank's failed checks, each printed as it fails, and the exit status of every rank's.

#ifndef ZSIM_TESTS_MPI_MPIRUN_CHECK_H_
#define ZSIM_TESTS_MPI_MPIRUN_CHECK_H_

#include <mpi.h>

#include <cstdio>
#include <string>

namespace zsim::testing {

// Starts MPI (threads serialized, as zsim's ranks run it) and sets this rank and the ranks'
// count.
inline void StartRanks(int* argc, char*** argv, int* rank, int* size) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

// This rank's failed checks.
inline int& RankFailures() {
  static int failures = 0;
  return failures;
}

inline void Check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "FAIL: %s\n", what.c_str());
  ++RankFailures();
}

// Prints this rank's count, sums every rank's and ends MPI: main's exit status, 0 when no rank
// failed. Collective.
inline int FinishRanks(int rank) {
  std::fprintf(stderr, "rank %d: %d failure(s)\n", rank, RankFailures());
  int all = 0;
  MPI_Allreduce(&RankFailures(), &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}

}  // namespace zsim::testing

#endif  // ZSIM_TESTS_MPI_MPIRUN_CHECK_H_
