// tests/mpi/table_stream_throw.cc
//
// Run under mpirun -n 2 (tests/mpi/CMakeLists.txt): the table stream's thread
// (engine/mpi/table_stream.h) when it throws, as a merge's allocation may. Once rank 1's stream
// runs, every allocation off its main thread fails (std::bad_alloc). The job must end with
// zsim's message naming rank 1 (the test matches it), not with std::terminate's abort and no
// word of which rank or why, nor hang with rank 0 waiting for rank 1's entries.

#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/mpi/table_stream.h"

namespace {

std::atomic<bool> fail_other_threads{false};
std::thread::id main_thread;

}  // namespace

void* operator new(std::size_t n) {
  if (fail_other_threads.load(std::memory_order_relaxed) &&
      std::this_thread::get_id() != main_thread) {
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  main_thread = std::this_thread::get_id();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  zsim::ddt::DedupTable table(1);
  std::vector<zsim::ddt::DedupTable*> tables{&table};
  {
    zsim::mpi::TableStream stream(rank, size, uint64_t{1} << 30, 0, false, false, false);
    if (rank == 1) fail_other_threads.store(true);
    stream.Start(tables);
    // Rank 1's thread fails as it tells rank 0 it ships no more: the job ends there. Reaching
    // past Finish on either rank means the failure went unnoticed.
    const zsim::Status s = stream.Finish();
    std::fprintf(stderr, "FAIL: rank %d's stream finished (%s)\n", rank, s.ToString().c_str());
  }
  MPI_Finalize();
  return 1;
}
