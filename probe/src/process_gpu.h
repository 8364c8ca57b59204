// Which GPU a launched process (mpirun/srun, one rank per process) takes, as a pure function of
// what it can see: its local rank and the number of processes on its host, and the number of
// devices the CUDA runtime reports to it (after CUDA_VISIBLE_DEVICES or a launcher's per-task
// binding has narrowed them). Kept apart from the CUDA device so that the rule is tested
// without a GPU.
#pragma once

#include "plansight/estimator/diagnostic.h"

namespace plansight::probe {

struct ProcessGpuView {
  int local_rank = 0;   // this process among the launched processes of its host
  int local_size = 1;   // processes of the launch on this host
  int visible_gpus = 0;  // cudaGetDeviceCount in this process
  // Whether several NCCL ranks may share one GPU (NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1).
  bool sharing_allowed = false;
};

// The device index for this process, or an error naming the local rank, the processes on the
// host and the visible GPUs, and what to start instead.
Result<int> choose_process_gpu(const ProcessGpuView& view);

}  // namespace plansight::probe
