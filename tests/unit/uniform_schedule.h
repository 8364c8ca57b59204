// Test helper: one schedule simulated with every chunk alike (F, B and W in whole milliseconds,
// optional pipeline sends), for the schedules' closed-form checks.
#pragma once

#include <gtest/gtest.h>

#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"

namespace plansight::estimator::test {

inline SimulationResult simulate_uniform_chunks(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                                                int f_ms, int b_ms, int w_ms, double send_ms = 0) {
  constexpr double kMs = 1e-3;
  auto t = make_schedule(kind, p, v, m);
  EXPECT_TRUE(t.ok()) << t.error_text();
  if (!t.ok()) return {};
  ChunkCost c;
  c.forward = compute_cost(f_ms * kMs);
  c.backward = compute_cost(b_ms * kMs);
  if (w_ms > 0) c.weight_grad = compute_cost(w_ms * kMs);
  c.send_activation_seconds = c.send_gradient_seconds = send_ms * kMs;
  SimulationInput in;
  in.chunks = {c};
  auto r = simulate(*t, in);
  EXPECT_TRUE(r.ok()) << r.error_text();
  return r.ok() ? std::move(r).value() : SimulationResult{};
}

}  // namespace plansight::estimator::test
