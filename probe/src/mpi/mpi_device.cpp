// The run device of a launched run: this process is world rank MPI rank (one rank per process),
// computing on the CPU backend and communicating through runtime::mpi. Clocks are aligned to
// rank 0's at registration and checked again when the results are gathered (the drift).
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

namespace plansight::probe::mpi {
namespace {

namespace rm = plansight::runtime::mpi;

class MpiDevice final : public RunDevice {
 public:
  MpiDevice(rm::MpiWorld& world, runtime::LaunchInfo launch, std::vector<rm::ClockOffset> start)
      : world_(world), launch_(std::move(launch)), start_(std::move(start)), cpu_name_(make_cpu_device(1)->name()) {}

  std::string name() const override { return cpu_name_; }
  bool ranks_share_device() const override {
    const auto& p = world_.processes();
    return std::all_of(p.begin(), p.end(), [&](const rm::ProcessInfo& i) { return i.host == p.front().host; });
  }
  Result<std::unique_ptr<Backend>> make_backend(int) override { return make_cpu_backend(); }
  Result<std::unique_ptr<runtime::Communicator>> world(int, Backend&) override { return world_.world("world"); }
  Result<std::unique_ptr<runtime::Communicator>> split(runtime::Communicator& parent, int colour, int key,
                                                      const std::string& name, Backend&, bool) override {
    return world_.split(parent, colour, key, name);
  }
  void abort(const std::string& reason) override { world_.abort(reason); }
  std::vector<int> local_ranks(int) const override { return {world_.rank()}; }

  Result<std::vector<std::string>> gather_parts(const std::string& mine) override {
    auto end = world_.measure_clock_offsets();
    if (!end) return end.errors();
    end_ = std::move(*end);
    return world_.gather_text(mine, 0);
  }
  bool writes_result() const override { return world_.rank() == 0; }
  std::int64_t clock_offset_ns(int process) const override {
    return process >= 0 && static_cast<std::size_t>(process) < start_.size() ? start_[static_cast<std::size_t>(process)].offset_ns : 0;
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
    nlohmann::json offsets = nlohmann::json::array(), trips = nlohmann::json::array(), drift = nlohmann::json::array();
    std::int64_t bound = 0, worst_drift = 0;
    for (std::size_t p = 0; p < start_.size(); ++p) {
      offsets.push_back(start_[p].offset_ns);
      trips.push_back(start_[p].round_trip_ns);
      bound = std::max(bound, start_[p].round_trip_ns / 2);
      if (p < end_.size()) {
        const std::int64_t d = end_[p].offset_ns - start_[p].offset_ns;
        drift.push_back(d);
        worst_drift = std::max(worst_drift, d < 0 ? -d : d);
      }
    }
    return {{"launch",
             {{"launcher", launch_.launcher},
              {"processes", world_.size()},
              {"ranks_per_process", 1},
              {"hosts", hosts},
              {"communicator", "mpi: " + world_.library()}}},
            {"clock",
             {{"method", "ping-pong with rank 0 at start and end, shortest of 16 round trips (Cristian 1989)"},
              {"offsets_ns", offsets},
              {"round_trip_ns", trips},
              {"error_bound_ns", bound},
              {"drift_ns", drift},
              {"max_drift_ns", worst_drift}}}};
  }

 private:
  rm::MpiWorld& world_;
  runtime::LaunchInfo launch_;
  std::vector<rm::ClockOffset> start_, end_;  // on rank 0 (empty elsewhere)
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

runtime::Status register_mpi_probe_device(rm::MpiWorld& world, const runtime::LaunchInfo& launch) {
  auto offsets = world.measure_clock_offsets();
  if (!offsets) return offsets.errors();
  const std::vector<rm::ClockOffset> start = *offsets;
  register_process_device([&world, launch, start](const ProbeRequest&, int world_size) -> Result<std::unique_ptr<RunDevice>> {
    if (world_size != world.size()) {
      return make_error("layout", "tp x pp x dp = " + std::to_string(world_size) + " ranks, but " + launch.launcher +
                                      " started " + std::to_string(world.size()) +
                                      " processes; each process runs one rank: start " + std::to_string(world_size) +
                                      " (mpirun -np " + std::to_string(world_size) +
                                      "), or run without a launcher to have rank threads");
    }
    return std::unique_ptr<RunDevice>(std::make_unique<MpiDevice>(world, launch, start));
  });
  return runtime::ok_status();
}

}  // namespace plansight::probe::mpi
