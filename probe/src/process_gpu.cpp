// choose_process_gpu (process_gpu.h). The rule, from what cluster users launch:
//  - one visible device: per-task binding (srun --gpus-per-task=1 or --gpu-bind, a wrapper that
//    sets CUDA_VISIBLE_DEVICES from the local rank, Slurm's device cgroups) shows each process
//    only its own GPU, as device 0, whatever its local rank. Several processes of one host that
//    really see the same single GPU are caught by NCCL's init (it refuses a duplicate GPU unless
//    multi-rank sharing is on), across processes, which no process can tell alone.
//  - several visible devices, local rank below their count: the host's GPUs are all visible
//    (mpirun's default), and local rank r takes device r, one GPU per process.
//  - local rank at or above the count: a wrapped index would put two ranks on one GPU. The
//    probe measures a rank per GPU; sharing would fail inside NCCL's init after every process
//    started, or with multi-rank NCCL halve each rank's GPU and skew every timing, so it is
//    refused with the numbers and the fix, unless the user turned multi-rank sharing on.
#include "process_gpu.h"

#include <string>

namespace plansight::probe {

Result<int> choose_process_gpu(const ProcessGpuView& v) {
  if (v.visible_gpus < 1) return make_error("device", "cuda: no GPU visible to this process; valid here: cpu");
  if (v.local_rank < 0) {
    return make_error("device", "cuda: local rank " + std::to_string(v.local_rank) + "; the launcher's local rank must be >= 0");
  }
  if (v.visible_gpus == 1) return 0;
  if (v.local_rank < v.visible_gpus) return v.local_rank;
  if (v.sharing_allowed) return v.local_rank % v.visible_gpus;
  const std::string gpus = std::to_string(v.visible_gpus);
  return make_error("device", "cuda: local rank " + std::to_string(v.local_rank) + " of " +
                                  std::to_string(v.local_size) + " processes on this host, but " + gpus +
                                  " GPUs visible: processes would share GPUs (NCCL runs one rank per GPU); start at "
                                  "most " + gpus + " processes per host, or bind one GPU per task (srun "
                                  "--gpus-per-task=1, or CUDA_VISIBLE_DEVICES set per local rank)");
}

}  // namespace plansight::probe
