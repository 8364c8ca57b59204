// RunDevice: where a probe run's ranks execute, made once per run. The CPU (rank threads, the
// in-process communicator, the CPU backend) is built in; a GPU build registers a factory for
// `device: cuda` (plansight::probe_cuda: virtual ranks on streams of one GPU, the device
// communicator, the CUDA backend, CUPTI tracing), so this library never links CUDA.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/timeline.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::runtime {
class Communicator;
class Tracer;
}  // namespace plansight::runtime

namespace plansight::probe {

class Backend;  // probe/src/backend.h

class RunDevice {
 public:
  virtual ~RunDevice() = default;

  // "cpu: <model> (<n> threads)", "cuda: NVIDIA H100 80GB HBM3 (sm_90)".
  virtual std::string name() const = 0;
  // Whether the ranks share one processor or GPU (virtual ranks).
  virtual bool ranks_share_device() const = 0;

  // Called on rank `rank`'s thread before its model is built: its backend, then its world
  // communicator (every rank calls world() together).
  virtual Result<std::unique_ptr<Backend>> make_backend(int rank) = 0;
  virtual Result<std::unique_ptr<runtime::Communicator>> world(int rank, Backend& backend) = 0;
  // MPI_Comm_split of a communicator this device made (every member calls it together; a
  // negative colour gets null). A GPU's gradient-queue group enqueues on the rank's gradient
  // stream (`gradient_queue`), every other group on its compute stream.
  virtual Result<std::unique_ptr<runtime::Communicator>> split(runtime::Communicator& parent, int colour, int key,
                                                              const std::string& name, Backend& backend,
                                                              bool gradient_queue) = 0;
  // Fails every pending and later collective with `reason`.
  virtual void abort(const std::string& reason) = 0;

  // Ranks spread over processes (mpirun/srun, one rank per process): the world ranks this
  // process runs. All of them otherwise.
  virtual std::vector<int> local_ranks(int world_size) const {
    std::vector<int> all(static_cast<std::size_t>(world_size));
    for (int r = 0; r < world_size; ++r) all[static_cast<std::size_t>(r)] = r;
    return all;
  }
  // With ranks spread over processes, after every local rank finished: each process's part of
  // the result (process_parts.h), collected on the process that writes the result, by process
  // (index 0: the writer's own); the other processes get an empty vector. Every process calls
  // it together.
  virtual Result<std::vector<std::string>> gather_parts(const std::string& mine) { return std::vector<std::string>{mine}; }
  // Whether this process writes the run's result (rank 0's process, or the only one).
  virtual bool writes_result() const { return true; }
  // Nanoseconds to subtract from process `process`'s steady clock to read this process's (0 on
  // one host, where every process reads the same CLOCK_MONOTONIC).
  virtual std::int64_t clock_offset_ns(int /*process*/) const { return 0; }

  // On a thread of rank `rank` other than the one that made its backend (its gradient thread),
  // when it starts: a GPU makes the rank's device current on it (a new thread's is device 0)
  // and its timeline gives that thread's ranges to the rank. An error: the thread cannot work.
  virtual Result<bool> thread_started(int /*rank*/) { return true; }
  // Whether the host tracer's spans are the run's measured timeline (the CPU), so that the step
  // the run keeps also records each span's thread CPU time (runtime::Tracer::set_thread_cpu_time).
  // A GPU measures its own timeline (device_timeline): false.
  virtual bool host_spans_are_timeline() const { return true; }
  // Each rank at the start of each step (on its thread), before any of its work is enqueued.
  virtual void step_begins(int /*rank*/, std::int64_t /*step*/, bool /*last*/) {}
  // Each rank at the end of each step (on its thread), after its last host synchronisation (the
  // world's all-reduce of the loss): none of the step's device work is left.
  virtual void step_ends(int /*rank*/, std::int64_t /*step*/) {}
  // After every rank finished: the measured timeline of the last step, when this device
  // measures its own (a GPU: CUPTI activity records) instead of the host tracer's spans; and
  // what it says about the run beside the timeline (JSON object, may be empty).
  virtual std::optional<Result<estimator::Timeline>> device_timeline(const runtime::Tracer& /*host*/) { return std::nullopt; }
  virtual nlohmann::json report() const { return nlohmann::json::object(); }
};

// Makes the device for a request whose device is cuda (or auto, when a GPU is present), or an
// error saying why not (no driver, no device, ...). `world_size` ranks.
using RunDeviceFactory = std::function<Result<std::unique_ptr<RunDevice>>(const ProbeRequest&, int world_size)>;

// A GPU build registers its factory before running requests (plansight-probe's main does).
void register_cuda_device(RunDeviceFactory factory);
bool cuda_device_registered();

// A rank of a world spread over launched processes: what a GPU device of one process needs to
// join the others (`bootstrap`: the communication library's id, made by rank 0, e.g. NCCL's).
struct ProcessRank {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;  // local: the processes on this host
  std::string bootstrap;
};
// Makes the GPU device of one launched process; and rank 0's bootstrap for it.
struct ProcessGpu {
  std::function<Result<std::unique_ptr<RunDevice>>(const ProbeRequest&, int world_size, const ProcessRank&)> make_device;
  std::function<Result<std::string>()> make_bootstrap;
};

// Under a launcher with several processes (mpirun/srun), the device whose ranks are those
// processes (plansight::probe_mpi) replaces the in-process CPU device; an empty factory removes it.
void register_process_device(RunDeviceFactory factory);

}  // namespace plansight::probe
