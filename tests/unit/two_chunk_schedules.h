// Test helpers: one schedule simulated with every chunk alike (F, B and W in whole milliseconds,
// optional pipeline sends), for the schedules' closed-form checks; a plan of two chunks per rank
// and its plan-file round trip.
#pragma once

#include <gtest/gtest.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/presets.h"
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

// The default plan (GPT-3 175B style, 96 layers) on 8 pipeline ranks of two chunks each.
inline Plan two_chunk_plan(PipelineSchedule kind) {
  Plan plan = default_plan();
  plan.layout.pp = 8;
  plan.layout.vpp = 2;
  plan.layout.schedule = kind;
  return plan;
}

// Plan files keep a two-chunk schedule and its virtual stages, and "schedule" alone brings vpp 2.
inline void expect_plan_files_keep_two_chunks(PipelineSchedule kind) {
  auto back = plan_from_json(to_json(two_chunk_plan(kind)));
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back->layout.schedule, kind);
  EXPECT_EQ(back->layout.vpp, 2);
  nlohmann::json j = to_json(default_plan());
  j["layout"].erase("vpp");
  j["layout"]["schedule"] = std::string(to_string(kind));
  j["layout"]["pp"] = 8;
  auto chosen = plan_from_json(j);
  ASSERT_TRUE(chosen.ok()) << chosen.error_text();
  EXPECT_EQ(chosen->layout.vpp, 2);
}

// The plan's estimate and that of the same plan under 1F1B with one chunk per rank (the
// estimates stay empty when either fails, which is then a test failure).
struct BesideOneFOneB {
  Estimate two_chunks, one_f_one_b;
};
inline BesideOneFOneB estimate_beside_one_f_one_b(const Plan& plan) {
  BesideOneFOneB out;
  auto e = estimate(plan);
  Plan one_f_one_b = plan;
  one_f_one_b.layout.schedule = PipelineSchedule::one_f_one_b;
  one_f_one_b.layout.vpp = 1;
  auto f = estimate(one_f_one_b);
  EXPECT_TRUE(e.ok()) << e.error_text();
  EXPECT_TRUE(f.ok()) << f.error_text();
  if (e.ok() && f.ok()) out = {std::move(e).value(), std::move(f).value()};
  return out;
}

}  // namespace plansight::estimator::test
