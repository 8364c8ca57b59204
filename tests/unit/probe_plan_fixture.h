// The plan and estimate of a GPT-2 124M probe run, as `plansight compare` builds them from the
// stored request (plan_of_probe_run) with a hand-made profile: for tests of what compare shows
// for a run (throughput, memory) without running one.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "plansight/core/probe_plan.h"
#include "plansight/estimator/estimator.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::core::testing {

struct Gpt2Run {
  estimator::Plan plan;
  estimator::Estimate estimate;
};

// `request`: the probe request's fields besides the model (micro_batch, layout, device, ...);
// `device`: the profile's device, "cuda: NVIDIA H200 (...)" or "cpu: ...".
inline Gpt2Run gpt2_run(nlohmann::json request, const std::string& device) {
  request["model"] = "gpt2-124m";
  auto parsed = probe::probe_request_from_json(request);
  EXPECT_TRUE(parsed.ok()) << parsed.error_text();
  estimator::HardwareProfile profile;
  profile.device = device;
  const bool gpu = device.rfind("cuda", 0) == 0;
  profile.peak_flops = gpu ? 6e14 : 5e10;
  profile.memory_bandwidth_bytes_per_s = gpu ? 4e12 : 1e10;
  profile.collectives.push_back({estimator::Collective::all_reduce, 2, 1 << 20, gpu ? 2e-5 : 1e-3, false});
  auto plan = plan_of_probe_run(probe::to_json(*parsed), profile);
  EXPECT_TRUE(plan.ok()) << plan.error_text();
  auto estimate = estimator::estimate(*plan);
  EXPECT_TRUE(estimate.ok()) << estimate.error_text();
  return {*plan, *estimate};
}

inline constexpr const char* kH200 = "cuda: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)";

}  // namespace plansight::core::testing
