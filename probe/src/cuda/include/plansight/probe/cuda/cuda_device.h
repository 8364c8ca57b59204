// The GPU run device of the probe: virtual ranks (threads) on streams of one GPU, each with a
// CUDA backend (probe/src/cuda/cuda_backend.h), the device communicator for their collectives,
// NVTX ranges from the probe's spans, the CUPTI activity tracer for the measured timeline and
// the tensor-core share of the step. plansight-probe registers it at start-up when built with
// CUDA; a request with device cuda (or auto on a machine with a GPU) then runs here.
#pragma once

#include "plansight/estimator/diagnostic.h"
#include "plansight/probe/run_device.h"

namespace plansight::probe::cuda {

// The device for `request` with `world_size` ranks, or why there is none ("no NVIDIA driver",
// "no CUDA device", an unsupported precision), as an error on the field "device" or "precision".
Result<std::unique_ptr<RunDevice>> make_cuda_device(const ProbeRequest& request, int world_size);

// In a launched run (mpirun/srun, one process per GPU): this process's rank `process.rank` on
// the GPU of its local rank, with NCCL between the processes; `process.bootstrap` is the NCCL
// unique id rank 0 made (make_nccl_bootstrap) and the launcher's MPI handed to every process.
Result<std::unique_ptr<RunDevice>> make_cuda_process_device(const ProbeRequest& request, int world_size,
                                                            const ProcessRank& process);
Result<std::string> make_nccl_bootstrap();

// register_cuda_device(make_cuda_device).
void register_cuda_probe_device();

}  // namespace plansight::probe::cuda
