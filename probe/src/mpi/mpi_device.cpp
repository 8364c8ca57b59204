// The run device of a launched run: this process is world rank MPI rank (one rank per process),
// computing on the CPU backend and communicating through runtime::mpi, or, on GPUs, on this
// process's GPU with NCCL (an inner device: ProcessGpu), MPI then carrying only the run's
// bookkeeping. Clocks are aligned to rank 0's at registration and checked again when the
// results are gathered (the drift).
#include <algorithm>
#include <map>

#include <set>
#include <sstream>

#include <sched.h>

#include "backend.h"
#include "cpu_affinity.h"
#include "cpu_device.h"
#include "plansight/probe/mpi/mpi_probe.h"
#include "plansight/probe/run_device.h"
#include "plansight/runtime/communicator.h"
#include "plansight/runtime/mpi/threads_world.h"

namespace plansight::probe::mpi {
namespace {

namespace rm = plansight::runtime::mpi;

class MpiDevice final : public RunDevice {
 public:
  // `gpu` null: the CPU and MPI; else this process's GPU device, whose communication (NCCL) is
  // aborted through the world's failure hook when any process fails.
  // `ranks_per_process` > 1 (CPU only): rank threads inside each process (ThreadsWorld).
  MpiDevice(rm::MpiWorld& world, runtime::LaunchInfo launch, std::vector<rm::ClockOffset> start,
            std::unique_ptr<RunDevice> gpu, int ranks_per_process)
      : world_(world), launch_(std::move(launch)), start_(std::move(start)), gpu_(std::move(gpu)),
        cpu_name_(make_cpu_device(1)->name()) {
    if (gpu_) world_.on_failure([device = gpu_.get()](const std::string& reason) { device->abort(reason); });
    if (ranks_per_process > 1) threads_ = std::make_unique<rm::ThreadsWorld>(world_, ranks_per_process);
  }
  ~MpiDevice() override {
    if (gpu_) world_.on_failure({});
  }

  std::string name() const override { return gpu_ ? gpu_->name() : cpu_name_; }
  bool ranks_share_device() const override {
    if (gpu_) return false;  // one GPU per process
    const auto& p = world_.processes();
    return std::all_of(p.begin(), p.end(), [&](const rm::ProcessInfo& i) { return i.host == p.front().host; });
  }
  Result<std::unique_ptr<Backend>> make_backend(int rank) override {
    if (gpu_) return gpu_->make_backend(rank);
    return make_cpu_backend();
  }
  Result<std::unique_ptr<runtime::Communicator>> world(int rank, Backend& backend) override {
    if (gpu_) return gpu_->world(rank, backend);
    if (threads_) return threads_->world(rank);
    return world_.world("world");
  }
  Result<std::unique_ptr<runtime::Communicator>> split(runtime::Communicator& parent, int colour, int key,
                                                      const std::string& name, Backend& backend, bool gradient_queue) override {
    if (gpu_) return gpu_->split(parent, colour, key, name, backend, gradient_queue);
    if (threads_) return threads_->split(parent, colour, key, name);
    return world_.split(parent, colour, key, name);
  }
  // The failure hook aborts the GPU's communicators, or the threads' in-process world.
  void abort(const std::string& reason) override {
    if (threads_) threads_->abort(reason);
    else world_.abort(reason);
  }
  bool host_spans_are_timeline() const override { return !gpu_; }
  void step_begins(int rank, std::int64_t step, bool last) override {
    if (gpu_) gpu_->step_begins(rank, step, last);
  }
  Result<bool> thread_started(int rank) override {
    if (gpu_) return gpu_->thread_started(rank);
    return true;
  }
  void step_ends(int rank, std::int64_t step) override {
    if (gpu_) gpu_->step_ends(rank, step);
  }
  std::optional<Result<estimator::Timeline>> device_timeline(const runtime::Tracer& host) override {
    if (gpu_) return gpu_->device_timeline(host);
    return std::nullopt;
  }
  std::vector<int> local_ranks(int) const override {
    if (threads_) return threads_->local_ranks();
    return {world_.rank()};
  }

  Result<std::vector<std::string>> gather_parts(const std::string& mine) override {
    auto end = world_.measure_clock_offsets();
    if (!end) return end.errors();
    end_ = std::move(*end);
    return world_.gather_text(mine, 0);
  }
  bool writes_result() const override { return world_.rank() == 0; }
  // Processes on rank 0's host read the same CLOCK_MONOTONIC: their offset is exactly 0, and the
  // measured one (whose error is half a round trip, milliseconds on a loaded host) is not applied.
  std::int64_t clock_offset_ns(int process) const override {
    if (process < 0 || static_cast<std::size_t>(process) >= start_.size() || same_clock(process)) return 0;
    return start_[static_cast<std::size_t>(process)].offset_ns;
  }
  bool same_clock(int process) const {
    const auto& p = world_.processes();
    return p[static_cast<std::size_t>(process)].host == p.front().host;
  }

  nlohmann::json report() const override {
    nlohmann::json hosts = nlohmann::json::array();
    std::map<std::string, std::vector<int>> ranks_of;
    std::vector<std::string> order;
    for (const auto& p : world_.processes()) {
      if (!ranks_of.count(p.host)) order.push_back(p.host);
      ranks_of[p.host].push_back(p.rank);
    }
    for (const auto& h : order) hosts.push_back({{"host", h}, {"ranks", ranks_of[h]}});
    nlohmann::json offsets = nlohmann::json::array(), applied = nlohmann::json::array(), trips = nlohmann::json::array(),
                   drift = nlohmann::json::array();
    std::int64_t bound = 0, worst_drift = 0;
    for (std::size_t p = 0; p < start_.size(); ++p) {
      offsets.push_back(start_[p].offset_ns);
      applied.push_back(clock_offset_ns(static_cast<int>(p)));
      trips.push_back(start_[p].round_trip_ns);
      if (!same_clock(static_cast<int>(p))) bound = std::max(bound, start_[p].round_trip_ns / 2);
      if (p < end_.size()) {
        const std::int64_t d = end_[p].offset_ns - start_[p].offset_ns;
        drift.push_back(d);
        worst_drift = std::max(worst_drift, d < 0 ? -d : d);
      }
    }
    nlohmann::json out = gpu_ ? gpu_->report() : nlohmann::json::object();
    out.update(nlohmann::json{{"launch",
             {{"launcher", launch_.launcher},
              {"processes", world_.size()},
              {"ranks_per_process", threads_ ? threads_->threads_per_process() : 1},
              {"hosts", hosts},
              {"communicator", gpu_ ? "nccl (bootstrapped through mpi: " + world_.library() + ")" : "mpi: " + world_.library()}}},
            {"clock",
             {{"method", "ping-pong with rank 0 at start and end, shortest of 16 round trips (Cristian 1989); "
                         "processes on rank 0's host share its clock and get offset 0"},
              {"offsets_ns", offsets},
              {"applied_offsets_ns", applied},
              {"round_trip_ns", trips},
              {"error_bound_ns", bound},
              {"drift_ns", drift},
              {"max_drift_ns", worst_drift}}}});
    return out;
  }

 private:
  rm::MpiWorld& world_;
  runtime::LaunchInfo launch_;
  std::vector<rm::ClockOffset> start_, end_;  // on rank 0 (empty elsewhere)
  std::unique_ptr<RunDevice> gpu_;
  std::unique_ptr<rm::ThreadsWorld> threads_;
  std::string cpu_name_;
};

}  // namespace

Result<std::vector<int>> host_cpus(rm::MpiWorld& world) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string mine;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c) if (CPU_ISSET(c, &set)) mine += std::to_string(c) + " ";
  }
  auto all = world.gather_text(mine, 0);
  if (!all) return all.errors();
  std::string joined;
  if (world.rank() == 0) {
    std::set<int> cpus;
    const std::string& host = world.processes().front().host;
    for (std::size_t p = 0; p < all->size(); ++p) {
      if (world.processes()[p].host != host) continue;
      std::istringstream in((*all)[p]);
      for (int c; in >> c;) cpus.insert(c);
    }
    for (int c : cpus) joined += std::to_string(c) + " ";
  }
  if (auto s = world.broadcast_text(joined); !s) return s.errors();
  std::vector<int> cpus;
  std::istringstream in(joined);
  for (int c; in >> c;) cpus.push_back(c);
  return cpus;
}

void run_on(const std::vector<int>& cpus) { confine_to(cpus); }

namespace {

// Whether every process succeeded: "" when all did, else the first failure, as "rank r: ...",
// on every process.
Result<std::string> first_failure(rm::MpiWorld& world, const std::string& mine) {
  auto all = world.gather_text(mine, 0);
  if (!all) return all.errors();
  std::string first;
  if (world.rank() == 0) {
    for (std::size_t r = 0; r < all->size() && first.empty(); ++r) {
      if (!(*all)[r].empty()) first = "rank " + std::to_string(r) + ": " + (*all)[r];
    }
  }
  if (auto s = world.broadcast_text(first); !s) return s.errors();
  return first;
}

// The processes of the launch on this process's host, counted from the hosts every process
// reported (MPI_Get_processor_name): Slurm gives no count per host, and the launch's guess
// (local rank + 1) would understate it in messages about GPUs.
int processes_on_my_host(rm::MpiWorld& world, const runtime::LaunchInfo& launch) {
  const auto& all = world.processes();
  if (all.size() != static_cast<std::size_t>(world.size())) return launch.local_size;
  const std::string& mine = all[static_cast<std::size_t>(world.rank())].host;
  const auto n = std::count_if(all.begin(), all.end(), [&](const rm::ProcessInfo& p) { return p.host == mine; });
  return std::max(static_cast<int>(n), launch.local_size);
}

// The GPU device of this process for a launched run, when the request wants one and every
// process can have one: rank 0 makes the NCCL id, every process gets it and opens its GPU, and
// all agree. Null: the CPU (device auto where a GPU is missing somewhere).
Result<std::unique_ptr<RunDevice>> launched_gpu(rm::MpiWorld& world, const runtime::LaunchInfo& launch,
                                                const ProcessGpu& gpu, const ProbeRequest& request, int world_size) {
  if (request.device == Device::cpu) return std::unique_ptr<RunDevice>();
  if (!gpu.make_device) {
    if (request.device == Device::automatic) return std::unique_ptr<RunDevice>();
    return make_error("device", "cuda was asked for, but this plansight-probe was built without CUDA "
                                "(PLANSIGHT_ENABLE_CUDA=OFF); valid: cpu, auto");
  }
  nlohmann::json id;
  if (world.rank() == 0) {
    auto made = gpu.make_bootstrap();
    id = made ? nlohmann::json{{"id", nlohmann::json::binary(std::vector<std::uint8_t>(made->begin(), made->end()))}}
              : nlohmann::json{{"error", made.error_text()}};
  }
  const auto wire = nlohmann::json::to_cbor(id);
  std::string text = world.rank() == 0 ? std::string(wire.begin(), wire.end()) : std::string();
  if (auto s = world.broadcast_text(text); !s) return s.errors();
  id = nlohmann::json::from_cbor(text);
  Result<std::unique_ptr<RunDevice>> device = make_error("device", "rank 0 could not make the NCCL id: " + id.value("error", std::string()));
  if (id.contains("id")) {
    const auto& bytes = id["id"].get_binary();
    ProcessRank rank{world.rank(), world.size(), launch.local_rank, processes_on_my_host(world, launch),
                     std::string(bytes.begin(), bytes.end())};
    device = gpu.make_device(request, world_size, rank);
  }
  auto failure = first_failure(world, device ? std::string() : device.errors().front().message);
  if (!failure) return failure.errors();
  if (failure->empty()) return device;
  if (request.device == Device::automatic) return std::unique_ptr<RunDevice>();  // the CPU, everywhere
  return make_error("device", "cuda on every launched process: " + *failure);
}

// With k rank threads per process (world rank p * k + t), every group must be inside one
// process or spread one member per process at one thread index (ThreadsWorld). Megatron's
// groups are strided runs of the world: TP (stride 1, tp members), DP (stride tp, dp members),
// PP (stride tp * dp, pp members); a run of n members at stride s is inside aligned blocks of k
// when s * n divides k, and one per process at one index when k divides s.
Result<bool> check_placement(const ProbeRequest& request, int k) {
  if (k <= 1) return true;
  const std::int64_t tp = request.layout.tp, dp = std::max<std::int64_t>(request.layout.dp, 1), pp = request.layout.pp;
  struct Group {
    const char* name;
    std::int64_t stride, size;
  };
  for (const Group& g : {Group{"tp", 1, tp}, Group{"dp", tp, dp}, Group{"pp", tp * dp, pp}}) {
    if (g.size <= 1 || k % (g.stride * g.size) == 0 || g.stride % k == 0) continue;
    return make_error("layout", std::to_string(k) + " ranks per process (tp " + std::to_string(tp) + " x pp " +
                                    std::to_string(pp) + " x dp " + std::to_string(dp) + " on " +
                                    std::to_string(tp * pp * dp / k) + " processes) would split the " + g.name +
                                    " groups between threads and processes; ranks per process must divide tp, or be "
                                    "whole groups: start tp x pp x dp / tp = " + std::to_string(tp * pp * dp / tp) +
                                    " processes (each one TP group), or tp x pp x dp for one rank each");
  }
  return true;
}

}  // namespace

runtime::Status register_mpi_probe_device(rm::MpiWorld& world, const runtime::LaunchInfo& launch, const ProcessGpu& gpu) {
  auto offsets = world.measure_clock_offsets();
  if (!offsets) return offsets.errors();
  const std::vector<rm::ClockOffset> start = *offsets;
  register_process_device([&world, launch, start, gpu](const ProbeRequest& request, int world_size) -> Result<std::unique_ptr<RunDevice>> {
    if (world_size % world.size() != 0) {
      return make_error("layout", "tp x pp x dp = " + std::to_string(world_size) + " ranks, but " + launch.launcher +
                                      " started " + std::to_string(world.size()) +
                                      " processes; each process runs the same number of ranks: start a divisor of " +
                                      std::to_string(world_size) + " (mpirun -np " + std::to_string(world_size) +
                                      " for one rank each), or run without a launcher to have rank threads");
    }
    const int per_process = world_size / world.size();
    if (auto placed = check_placement(request, per_process); !placed) return placed.errors();
    auto device = launched_gpu(world, launch, gpu, request, world_size);
    if (!device) return device.errors();
    if (*device && per_process > 1) {
      return make_error("layout", "tp x pp x dp = " + std::to_string(world_size) + " ranks on " +
                                      std::to_string(world.size()) + " processes with GPUs; NCCL runs one rank per "
                                      "process and GPU: start " + std::to_string(world_size));
    }
    if (!*device) {
      if (auto p = check_cpu_precision(request); !p) return p.errors();
    }
    return std::unique_ptr<RunDevice>(std::make_unique<MpiDevice>(world, launch, start, std::move(*device), per_process));
  });
  return runtime::ok_status();
}

}  // namespace plansight::probe::mpi
