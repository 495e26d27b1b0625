// tests/mpi/table_service_throw.cc
//
// Run under mpirun -n 3 (tests/mpi/CMakeLists.txt): rank 0's table reads the other ranks'
// entries through table_service.h. A pass whose callback throws midway through a peer's batches
// (Finish's tally may run out of memory) must leave the streams clean: the exception reaches the
// caller, the next pass reads every rank's entries exactly once, and releasing the peers ends
// the job (a leftover batch would mix into that pass, or hang it). Exit 0 when all holds.

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <new>
#include <set>
#include <vector>

#include "engine/ddt/dedup_table.h"
#include "engine/mpi/table_service.h"

namespace {

// Several 1 MiB batches per peer (24 wire bytes per entry of one setting).
constexpr uint64_t kKeysPerRank = 120000;

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

int failures = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    zsim::ddt::DedupTable table(1);
    for (uint64_t i = 0; i < kKeysPerRank; ++i) {
      const uint64_t n = uint64_t(rank) * kKeysPerRank + i;
      table.Insert(zsim::ddt::Fingerprint{Mix(2 * n), Mix(2 * n + 1)}, 4096);
    }
    if (rank != 0) {
      zsim::mpi::ServeTables({&table});
    } else {
      zsim::mpi::AttachPeerTables({&table}, size);
      uint64_t seen = 0;
      bool thrown = false;
      try {
        // Into the first peer's first batch.
        table.ForEach([&](const zsim::ddt::EntryView&) {
          if (++seen == kKeysPerRank + 1000) throw std::bad_alloc();
        });
      } catch (const std::bad_alloc&) {
        thrown = true;
      }
      Check(thrown, "the callback's exception did not reach the caller");
      std::set<uint64_t> keys;
      uint64_t entries = 0;
      table.ForEach([&](const zsim::ddt::EntryView& e) {
        keys.insert(e.key.lo);
        ++entries;
      });
      Check(entries == uint64_t(size) * kKeysPerRank, "the next pass read a wrong entry count");
      Check(keys.size() == entries, "the next pass read an entry twice");
      std::fprintf(stderr, "rank 0: %llu entries of %llu after the failed pass\n",
                   static_cast<unsigned long long>(entries),
                   static_cast<unsigned long long>(uint64_t(size) * kKeysPerRank));
    }
  }  // rank 0's table goes: the peers are released
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}
