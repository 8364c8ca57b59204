// The estimator's view of a stored probe run: the Plan of its exact configuration on a "cpu"
// device described by the run's measured HardwareProfile, so that `compare` asks the estimator
// the same question the probe answered by measuring.
#pragma once

#include <nlohmann/json.hpp>

#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/plan.h"

namespace plansight::core {

// Achievable per-rank link of the in-process collectives, fitted to the profile's samples with
// the estimator's own cost form t = steps x latency + bus_bytes / bandwidth (comm_model.h),
// weighted by 1/t^2 so small, latency-bound messages count as much as large ones.
struct FittedLink {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
};
FittedLink fit_collective_link(const estimator::HardwareProfile& profile);

// `request` is the probe request as the probe echoed it in its "started" event (the run's
// stored plan JSON). Precision fp32 throughout (the probe's kernels), Adam states in fp32, no
// master copy, standard attention, no framework reserve (no CUDA context on a CPU), and
// gpus = gpus_per_node = tp * pp * dp. `processes`: how many processes ran it (a launcher's; the
// device report's launch.processes), each with a GPU of its own on a GPU run: the ranks share
// that many GPUs, none when there is a process per rank.
Result<estimator::Plan> plan_of_probe_run(const nlohmann::json& request, const estimator::HardwareProfile& profile,
                                          std::int64_t processes = 1);
// The processes of a stored run's launch (its device report), 1 when it ran in one process.
std::int64_t launched_processes(const nlohmann::json& device_report);

}  // namespace plansight::core
