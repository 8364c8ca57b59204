// Private to the estimator: the per-iteration communication terms that iteration_costs() and the
// layout search's lean evaluation (layout_search_lean.cpp) both charge, one formula each, so the
// search ranks by exactly the costs the estimate computes.
#pragma once

#include <cstdint>

#include "plansight/estimator/comm_model.h"

namespace plansight::estimator::terms {

// One pipeline transfer of a micro-batch's activation (or gradient) of `bytes` between stages,
// with Megatron's scatter/gather optimisation (Narayanan et al. 2021, Sec. 4.1): each of the tp
// ranks sends 1/tp of it over the pipeline's link, then the receivers all-gather it over the TP
// group's link. With sequence parallelism the activation is already split by TP: no gather.
inline double pipeline_transfer_seconds(double bytes, std::int64_t tp, bool sequence_parallel, const Link& pp_link,
                                        const Link& tp_link) {
  return collective_seconds(Collective::send_recv, bytes / static_cast<double>(tp), 2, pp_link) +
         (tp > 1 && !sequence_parallel ? collective_seconds(Collective::all_gather, bytes, tp, tp_link) : 0.0);
}

// The once-per-iteration reduction of `gradient_bytes` over `shards` data-parallel ranks:
// all-reduce without ZeRO, reduce-scatter under ZeRO-1/2 (Rajbhandari et al. 2020, Sec. 5.1).
// ZeRO-3 reduce-scatters per micro-batch inside the phases instead (add_zero3_communication): 0.
inline Collective gradient_reduction(std::int64_t zero_stage) {
  return zero_stage == 0 ? Collective::all_reduce : Collective::reduce_scatter;
}
inline double gradient_reduction_seconds(std::int64_t zero_stage, double gradient_bytes, std::int64_t shards,
                                         const Link& link) {
  if (zero_stage >= 3) return 0.0;
  return collective_seconds(gradient_reduction(zero_stage), gradient_bytes, shards, link);
}

// After the optimizer step, ZeRO-1/2 (Megatron's distributed optimizer) all-gather the updated
// weights of `weight_bytes` over `shards` ranks; 0 for other stages.
inline bool gathers_after_step(std::int64_t zero_stage) { return zero_stage == 1 || zero_stage == 2; }
inline double optimizer_gather_seconds(std::int64_t zero_stage, double weight_bytes, std::int64_t shards, const Link& link) {
  return gathers_after_step(zero_stage) ? collective_seconds(Collective::all_gather, weight_bytes, shards, link) : 0.0;
}

}  // namespace plansight::estimator::terms
