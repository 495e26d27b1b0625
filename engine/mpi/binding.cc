#include "engine/mpi/binding.h"

#include <mpi.h>
#include <sched.h>
#include <tbb/info.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace zsim::mpi {
namespace {

// The ranks on this host (MPI_COMM_TYPE_SHARED), the union of their CPU affinities, and that of
// their parents' (the launcher's cores).
struct Host {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;  // this rank's place among them
  int size = 1;
  cpu_set_t cores;
  cpu_set_t launcher;
};

Host JoinHost() {
  Host h;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &h.comm);
  MPI_Comm_rank(h.comm, &h.rank);
  MPI_Comm_size(h.comm, &h.size);
  CPU_ZERO(&h.cores);
  if (sched_getaffinity(0, sizeof(h.cores), &h.cores) != 0) CPU_ZERO(&h.cores);
  CPU_ZERO(&h.launcher);
  if (sched_getaffinity(getppid(), sizeof(h.launcher), &h.launcher) != 0) CPU_ZERO(&h.launcher);
  MPI_Allreduce(MPI_IN_PLACE, &h.cores, static_cast<int>(sizeof(h.cores)), MPI_BYTE, MPI_BOR,
                h.comm);
  MPI_Allreduce(MPI_IN_PLACE, &h.launcher, static_cast<int>(sizeof(h.launcher)), MPI_BYTE, MPI_BOR,
                h.comm);
  return h;
}

// Open MPI (4.x) sets this in a rank's environment when it bound the rank at launch.
bool BoundAtLaunch() {
  const char* bound = std::getenv("OMPI_MCA_orte_bound_at_launch");
  return bound != nullptr && std::strcmp(bound, "1") == 0;
}

}  // namespace

int ThreadsOfAllRanks(int threads) {
  Host host = JoinHost();
  int on_host = std::max(1, std::min(threads, tbb::info::default_concurrency()));
  MPI_Allreduce(MPI_IN_PLACE, &on_host, 1, MPI_INT, MPI_SUM, host.comm);
  MPI_Comm_free(&host.comm);
  const int host_cores = CPU_COUNT(&host.cores);
  int all = host.rank == 0 ? (host_cores > 0 ? std::min(on_host, host_cores) : on_host) : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return std::max(1, all);
}

Binding SurveyBinding() {
  Host host = JoinHost();
  int bound = BoundAtLaunch() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &bound, 1, MPI_INT, MPI_MAX, host.comm);
  MPI_Comm_free(&host.comm);
  const int cores = CPU_COUNT(&host.cores);
  const int launcher = CPU_COUNT(&host.launcher);
  const bool short_of_host = bound != 0 && cores > 0 && launcher > cores;
  // Per host, from its first rank: one host, and whether it is short; the first short host is
  // the one of lowest world rank.
  int world_rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int counts[2] = {host.rank == 0 ? 1 : 0, host.rank == 0 && short_of_host ? 1 : 0};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int first = host.rank == 0 && short_of_host ? world_rank : std::numeric_limits<int>::max();
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  Binding b;
  b.hosts = counts[0];
  b.bound_hosts = counts[1];
  if (b.bound_hosts == 0) return b;
  int figures[3] = {host.size, cores, launcher};  // the root's are sent
  MPI_Bcast(figures, 3, MPI_INT, first, MPI_COMM_WORLD);
  b.ranks_on_host = figures[0];
  b.bound_cores = figures[1];
  b.launcher_cores = figures[2];
  return b;
}

}  // namespace zsim::mpi
