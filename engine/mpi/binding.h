// engine/mpi/binding.h
//
// The cores the ranks of a distributed scan run on, per host. Each rank starts one thread per
// core of its CPU affinity unless told --threads (pipeline::ResolveOptions), so the launcher's
// binding decides how much of a host the scan uses. Open MPI 4 binds each rank to a core where
// the job has 2 ranks or fewer, to a socket beyond that, and not at all when oversubscribed
// (mpirun(1)): `mpirun -n 2 --host a,b` (one rank per node of a cluster) scans on one core of
// each node, and 64 ranks one per node on one socket of each. SurveyBinding finds such hosts,
// for rank 0 to say so (cli/messages.h).
//
// Thread safety: collective (every rank calls each function, in the same order), from the main
// thread, outside the scan.

#ifndef ZSIM_ENGINE_MPI_BINDING_H_
#define ZSIM_ENGINE_MPI_BINDING_H_

namespace zsim::mpi {

// The threads every rank's scan codes on, the cores of each host counted once: per host, the
// ranks' threads (each at most the cores of its CPU affinity, as TBB counts them) but at most the
// cores of their affinities' union. Ranks that share cores are not each given all of them (4
// unbound ranks on 2 cores: 2 threads, not 8).
int ThreadsOfAllRanks(int threads);

struct Binding {
  int hosts = 0;  // hosts the job runs on
  // Hosts where the launcher bound the ranks at launch (Open MPI 4 says so in the ranks'
  // environment, OMPI_MCA_orte_bound_at_launch) to fewer cores, together, than the launcher
  // itself may run on there (the CPU affinity of the ranks' parent: mpirun or its daemon, under
  // whatever cgroup, taskset or batch allocation the job has).
  int bound_hosts = 0;
  // On the first of them (by its lowest world rank): how many ranks it runs, the cores of their
  // affinities' union, and the launcher's cores. 0 where no host is bound.
  int ranks_on_host = 0;
  int bound_cores = 0;
  int launcher_cores = 0;
};

// The binding of every host, on every rank alike.
Binding SurveyBinding();

}  // namespace zsim::mpi

#endif  // ZSIM_ENGINE_MPI_BINDING_H_
