// Collective calibration between launched processes: the cases of the rank-thread sweep
// (collective_cases.h, nccl-tests' sizes) over MPI sub-communicators of the first g processes,
// so the profile holds what MPI moves between these processes (loopback on one host, the fabric
// between nodes). Rank 0 drives: it broadcasts each sweep's parameters to the other processes,
// which wait in serve_calibration() (sleeping, so rank 0's compute measurements run alone).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "calibration_util.h"
#include "collective_cases.h"
#include "plansight/probe/mpi/mpi_probe.h"

namespace plansight::probe::mpi {
namespace {

namespace est = plansight::estimator;
namespace rm = plansight::runtime::mpi;
namespace rt = plansight::runtime;

// One group size on every process (those outside the group only take part in the split and
// the gather): each member's median per case; rank 0 gets the slowest member's.
Result<std::vector<est::CollectiveSample>> sweep_group(rm::MpiWorld& world, rt::Communicator& all, std::int64_t ranks,
                                                       const std::vector<double>& sizes, CalibrationLevel level) {
  const auto cases = collective_cases(ranks, sizes);
  auto group = world.split(all, world.rank() < ranks ? 0 : -1, world.rank(), "calibration");
  if (!group) return group.errors();
  std::vector<double> medians;
  if (*group) {
    rt::Communicator& comm = **group;
    for (const CollectiveCase& c : cases) {
      std::vector<float> in(c.count * static_cast<std::size_t>(ranks)), out(c.count * static_cast<std::size_t>(ranks));
      fill_pattern(in);
      std::vector<double> times;
      const int reps = collective_repetitions(c.bytes, level);
      for (int rep = -1; rep < reps; ++rep) {  // rep -1 warms the buffers and the connection
        float token = 0;
        if (auto s = comm.all_reduce(&token, 1); !s) return s.errors();  // start together
        rt::Status status = rt::ok_status();
        const double s = seconds_of([&] { status = run_collective_case(comm, c, in, out); });
        if (!status) return status.errors();
        if (rep >= 0) times.push_back(s);
        if (c.op == est::Collective::all_reduce) fill_pattern(in);  // keep repeated sums bounded
      }
      medians.push_back(median(times));
    }
  }
  auto gathered = world.gather_text(nlohmann::json(medians).dump(), 0);
  if (!gathered) return gathered.errors();
  std::vector<est::CollectiveSample> out;
  if (world.rank() != 0) return out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    est::CollectiveSample s;
    s.op = cases[i].op;
    s.ranks = ranks;
    s.bytes = cases[i].bytes;
    for (std::int64_t r = 0; r < ranks; ++r) {
      const auto m = nlohmann::json::parse((*gathered)[static_cast<std::size_t>(r)]);
      if (i < m.size()) s.seconds = std::max(s.seconds, m[i].get<double>());
    }
    out.push_back(s);
  }
  return out;
}

Result<std::vector<est::CollectiveSample>> sweep_all(rm::MpiWorld& world, const std::vector<std::int64_t>& group_sizes,
                                                     const std::vector<double>& bytes, CalibrationLevel level) {
  auto all = world.world("calibration-world");
  if (!all) return all.errors();
  std::vector<est::CollectiveSample> samples;
  for (std::int64_t g : group_sizes) {
    if (g < 2 || g > world.size()) continue;  // groups larger than the launch cannot form
    auto s = sweep_group(world, **all, g, bytes, level);
    if (!s) return s.errors();
    samples.insert(samples.end(), s->begin(), s->end());
  }
  return samples;
}

}  // namespace

CollectiveSweep mpi_collective_sweep(rm::MpiWorld& world) {
  return [&world](const std::vector<std::int64_t>& group_sizes, const std::vector<double>& bytes, CalibrationLevel level,
                  const std::atomic<bool>* stop) -> Result<std::vector<est::CollectiveSample>> {
    if (stop && stop->load()) return make_error("calibration", "cancelled");
    std::string command = nlohmann::json{{"sweep", {{"groups", group_sizes},
                                                    {"bytes", bytes},
                                                    {"level", level == CalibrationLevel::quick ? "quick" : "full"}}}}
                              .dump();
    if (auto s = world.broadcast_text(command); !s) return s.errors();
    return sweep_all(world, group_sizes, bytes, level);
  };
}

rt::Status serve_calibration(rm::MpiWorld& world, const std::atomic<bool>*) {
  for (;;) {
    std::string command;
    if (auto s = world.broadcast_text(command); !s) return s;
    const auto j = nlohmann::json::parse(command, nullptr, false);
    if (j.is_discarded() || !j.contains("sweep")) return rt::ok_status();  // "done"
    const auto& sweep = j["sweep"];
    const CalibrationLevel level = sweep.value("level", std::string("quick")) == "quick" ? CalibrationLevel::quick : CalibrationLevel::full;
    auto samples = sweep_all(world, sweep["groups"].get<std::vector<std::int64_t>>(), sweep["bytes"].get<std::vector<double>>(), level);
    if (!samples) return samples.errors();
  }
}

rt::Status end_calibration(rm::MpiWorld& world) {
  std::string done = R"({"done":true})";
  return world.broadcast_text(done);
}

}  // namespace plansight::probe::mpi
