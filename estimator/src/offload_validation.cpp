// Offloading rules. The ZeRO stages each offload needs follow DeepSpeed's configuration reference
// (zero_optimization.offload_optimizer: "valid for ZeRO stage 1, 2, 3"; offload_param: "valid
// only with stage 3"); the host figures must be known for the time model to cost the transfers.
#include "offload_validation.h"

#include <string>

namespace plansight::estimator {

void validate_offload(const Plan& p, std::vector<Diagnostic>& out) {
  const auto& l = p.layout;
  const std::string stage = std::to_string(l.zero_stage);
  if (l.offload_optimizer && l.zero_stage < 1) {
    out.push_back(make_error("layout.offload_optimizer",
                             "needs layout.zero_stage 1, 2 or 3 (ZeRO-Offload offloads the partitioned optimizer "
                             "states); layout.zero_stage is " + stage));
  }
  if (l.offload_params && l.zero_stage != 3) {
    out.push_back(make_error("layout.offload_params",
                             "needs layout.zero_stage 3 (ZeRO-Infinity offloads the partitioned parameters); "
                             "layout.zero_stage is " + stage + "; valid: zero_stage 3, or offload_params false"));
  }
  if (!l.offloads()) return;
  std::string which;
  for (auto [on, name] : {std::pair{l.offload_optimizer, "offload_optimizer"}, std::pair{l.offload_params, "offload_params"},
                          std::pair{l.offload_activations, "offload_activations"}}) {
    if (on) which += (which.empty() ? "layout." : ", layout.") + std::string(name);
  }
  if (p.cluster.host_link_bandwidth_bytes_per_s <= 0) {
    out.push_back(make_error("cluster.host_link_gb_per_s",
                             "value 0 (unknown) with " + which + "; valid: the GPU's host link in GB/s per direction, "
                             "e.g. 32 for PCIe Gen4 x16, 64 for PCIe Gen5 x16"));
  }
  if (l.offload_optimizer && p.cluster.host_memory_bandwidth_bytes_per_s <= 0) {
    out.push_back(make_error("cluster.host_memory_gb_per_s",
                             "value 0 (unknown) with layout.offload_optimizer, whose step runs on the CPU; valid: the "
                             "node's peak DRAM bandwidth in GB/s, e.g. 409.6 for 2 sockets x 8 channels of DDR4-3200"));
  }
}

}  // namespace plansight::estimator
