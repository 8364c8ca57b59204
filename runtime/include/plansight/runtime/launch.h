// Launch detection: whether this process was started as one rank of several by a launcher
// (mpirun, srun, a PMI launcher) and which one, read from the environment variables the
// launchers set. Pure (no MPI), so it is tested everywhere; the MPI world (runtime/mpi) starts
// only when a launch says there are other processes.
#pragma once

#include <functional>
#include <string>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime {

struct LaunchInfo {
  // "mpirun" (Open MPI's OMPI_COMM_WORLD_*), "srun" (Slurm's SLURM_PROCID inside a job step),
  // "pmi" (PMI_RANK/PMI_SIZE: MPICH's Hydra and other PMI launchers); empty: not launched.
  std::string launcher;
  int rank = 0, size = 1;              // this process in the launch
  // On this host; local_rank picks a process's GPU. srun exports no count per host, so there
  // local_size is only local_rank + 1 (a launched run counts the hosts' processes over MPI).
  int local_rank = 0, local_size = 1;
  bool launched() const { return !launcher.empty(); }
};

// Reads a variable; null when unset. Tests pass a map; programs pass std::getenv.
using EnvironmentLookup = std::function<const char*(const char* name)>;

// The launch the environment describes. Open MPI's variables win over Slurm's (mpirun inside an
// allocation sets both), Slurm's count only inside a job step (an sbatch script's own shell has
// SLURM_PROCID=0 too, with no step). A malformed variable is an error naming it and its value.
Result<LaunchInfo> detect_launch(const EnvironmentLookup& env);
Result<LaunchInfo> detect_launch();  // from this process's environment

}  // namespace plansight::runtime
