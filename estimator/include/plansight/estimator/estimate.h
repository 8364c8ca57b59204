// Estimate: what the estimator answers for a plan. Bytes and FLOPs as double (exact integers
// up to 2^53), time in seconds.
#pragma once

#include <cstdint>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::estimator {

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double buffers_bytes = 0;
  double reserve_bytes = 0;
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + buffers_bytes + reserve_bytes;
  }
};

// Memory of one GPU in pipeline rank `stage` (all its model chunks).
struct StageMemory {
  std::int64_t stage = 0;
  std::int64_t layers = 0;                  // transformer layers held by this rank
  double parameters = 0;                    // parameters held by this GPU (after TP split)
  double in_flight_micro_batches = 0;       // layer-equivalents of activations / layers, at peak
  MemoryBreakdown memory;                   // on the GPU, without what is offloaded
  double host_bytes = 0;                    // offloaded to host memory by this GPU (offload.h)
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;
  std::int64_t most_loaded_stage = 0;
  MemoryBreakdown peak;  // the most loaded GPU
  double capacity_bytes = 0;
  bool fits = false;
  // Host memory one node needs for what its GPUs offload (0 without offloading), against the
  // cluster's host_memory_bytes (0: unknown, host_fits stays true).
  double host_bytes_per_node = 0;
  double host_capacity_bytes = 0;
  bool host_fits = true;
};

struct FlopsEstimate {
  double model_per_iteration = 0;     // without recomputation (MFU numerator)
  double hardware_per_iteration = 0;  // with recomputation (HFU numerator)
};

// Where the time of one iteration goes, on the first pipeline rank: each exposed (not hidden
// behind compute) and adding up to the iteration time. Each communication part is that group's
// time on the rank's predicted timeline while the rank does no other work: rank_breakdown()'s
// rule (timeline_metrics.h), the one that measures probe and imported timelines, split by group.
// bubble_s + pp_comm_s is that rank's pipeline bubble (schedule_metrics.h): its idle time inside
// the pipeline window facing no collective, of which its pipeline sends run through pp_comm_s
// (PP is the one group whose transfers run in the bubble) and bubble_s is the rest: the rank's
// time with no work at all. (The closed form, for plans too long to simulate: closed_form.h.)
struct TimeBreakdown {
  double compute_s = 0;
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double ep_comm_s = 0;  // expert-parallel all-to-all (MoE models)
  double offload_s = 0;  // host-link (PCIe/C2C) transfers of offloading not hidden behind compute
  // Communication volume: bytes one GPU of the first pipeline stage sends per iteration in each
  // group's collectives, hidden or exposed (ring algorithms, nccl-tests' bus bytes): tensor-,
  // context- and pipeline-parallel, data-parallel (gradient reduction, ZeRO's gathers) and
  // expert-parallel. ZeRO-3 sends 1.5x the data-parallel volume of ZeRO-0/1/2 (Rajbhandari et
  // al. 2020, Sec. 7.2), per micro-batch.
  double tp_bytes = 0, cp_bytes = 0, pp_bytes = 0, dp_bytes = 0, ep_bytes = 0;
  double total_s() const {
    return compute_s + tp_comm_s + cp_comm_s + pp_comm_s + dp_comm_s + bubble_s + optimizer_s + ep_comm_s + offload_s;
  }
};

struct TimeEstimate {
  bool available = false;  // false when no throughput was given or predicted
  bool predicted = false;  // true: from the time model; false: from a given throughput
  // Predicted by simulating the schedule (true) or by the closed form (false: the schedule had
  // more ops than EstimateOptions::max_simulated_ops; the bubble and exposed PP/DP times are then
  // the closed form's).
  bool simulated = false;
  TimeBreakdown breakdown; // predicted only
  // Predicted only: per stage, idle pipeline time / the stage's work (schedule_metrics.h), the
  // mean over stages and the worst stage; TimePrediction's.
  double bubble_fraction = 0;
  double bubble_fraction_max = 0;
  double iteration_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double hfu = 0;
  double achieved_tflops_per_gpu = 0;
  double training_days = 0;
  double gpu_hours = 0;
  double cost = 0;
  std::string currency;  // of cost: the cluster's
};

struct Estimate {
  double parameters = 0;         // the model's own count, unpadded
  double parameters_padded = 0;  // as trained, vocabulary padded as Megatron does
  double active_parameters = 0;  // per token (MoE: top_k routed experts); == parameters for dense models
  std::int64_t padded_vocab = 0;
  std::int64_t dp = 1;
  std::int64_t micro_batches = 1;
  MemoryEstimate memory;
  FlopsEstimate flops;
  TimeEstimate time;
  std::vector<Diagnostic> warnings;
};

}  // namespace plansight::estimator
