// The layout search's lean closed form: the most loaded GPU's memory (estimate_memory) and the
// closed-form iteration time (closed_form_time over iteration_costs) of a uniform-chunk plan,
// without per-chunk vectors. With uniform chunks only four kinds of chunk exist (first, middle,
// last, or the only one) and only three kinds of pipeline rank, so each sum is a few products.
#pragma once

#include <cstdint>
#include <string>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator::search_detail {

// What does not depend on the layout.
struct SearchContext {
  explicit SearchContext(const Plan& base);
  Plan base;
  DeviceEfficiency efficiency;
  DeviceModel device;
  StateBytesPerParameter per_param;
  double optimizer_step_bytes = 0;  // per parameter, as iteration_costs() counts them
  double element_bytes = 2;         // activations and transfers: 4 for fp32/tf32, else 2
};

// What depends on (tp, cp, sequence parallel, micro-batch, recomputation) only.
struct KeyCosts {
  PassCost layer, embedding, head;
  double layer_activation_bytes = 0;       // with the key's recomputation
  double full_layer_activation_bytes = 0;  // without: a recomputed layer's working set
  double backward_working_bytes = 0;       // activation gradients of one layer's backward
  Link tp_link;
  std::int64_t padded_vocab = 0;
  ParameterCounts counts;
  double layer_params = 0;  // one layer's parameters on one TP rank
};
KeyCosts key_costs(const SearchContext& ctx, std::int64_t tp, std::int64_t cp, bool sequence_parallel,
                   std::int64_t micro_batch, Recompute recompute);

// The data-parallel and pipeline links of a (tp, cp, dp) placement.
struct UnitLinks {
  Link dp, pp;
};
UnitLinks unit_links(const SearchContext& ctx, std::int64_t tp, std::int64_t cp, std::int64_t dp);

struct LeanMemory {
  MemoryBreakdown peak;
  double total_bytes = 0;
  std::int64_t stage = 0;
};
LeanMemory lean_memory(const SearchContext& ctx, const KeyCosts& key, const Candidate& c);

// Iteration seconds; fills `breakdown` when given.
double lean_iteration_s(const SearchContext& ctx, const KeyCosts& key, const UnitLinks& links, const Candidate& c,
                        TimeBreakdown* breakdown = nullptr);

// Micro-batches per pipeline per iteration (Plan::micro_batches()).
std::int64_t micro_batches(const SearchContext& ctx, const Candidate& c);

// Why `c` was rejected for `reason`, with the numbers (built once per reason, not per candidate).
std::string rejection_detail(const Plan& base, RejectReason reason, const Candidate& c);

}  // namespace plansight::estimator::search_detail
