// For the property tests that compare a run with the op-by-op run (steady_state_test,
// dualpipe_mirror_test): the comparison, and random simulator inputs with uneven stages, TP segments on the communication
// lane, sends long enough to queue behind them, and on some seeds recomputation, ZeRO-3 gathers
// with or without prefetch, bucketed or final gradient reductions, the optimizer's all-gather.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "plansight/estimator/pipeline_simulator.h"

namespace plansight::estimator::test {

// `ms(lo, hi)` draws a duration in seconds between lo and hi milliseconds.
template <class Ms>
ChunkCost drawn_chunk(Ms& ms, std::uint32_t seed) {
  ChunkCost c;
  c.forward.segments = {{Lane::compute, ms(0.5, 1.5)}, {Lane::communication, ms(0.05, 0.3)}, {Lane::compute, ms(0.1, 0.4)}};
  c.backward.segments = {{Lane::compute, ms(1, 3)}, {Lane::communication, ms(0.05, 0.3)}};
  c.weight_grad = compute_cost(ms(0.3, 1));
  c.recompute = compute_cost(seed % 3 == 1 ? ms(0, 0.5) : 0);
  c.send_activation_seconds = ms(0.01, 0.4);
  c.send_gradient_seconds = ms(0.01, 0.4);
  c.dp_reduce_seconds = ms(1, 6);
  c.param_gather_seconds = seed % 2 == 0 ? ms(0.1, 1) : 0;
  c.param_prefetch = seed % 4 != 2;
  return c;
}

// The run's settings beside the chunks: the optimizer step and its all-gather, the reduction.
template <class Ms>
void draw_run_settings(SimulationInput& in, Ms& ms, std::uint32_t seed) {
  in.optimizer_seconds = ms(0.2, 1);
  in.optimizer_gather_seconds = seed % 2 == 1 ? ms(0.1, 0.5) : 0;
  in.dp_buckets = static_cast<std::int32_t>(1 + seed % 5);
  in.dp_issue = seed % 3 == 0 ? DpReduceIssue::at_end : DpReduceIssue::per_chunk;
}

// Every figure of run `a` is run `b`'s, to the bit (the same integer times through the same
// arithmetic).
inline void expect_same_figures(const SimulationResult& a, const SimulationResult& b) {
  EXPECT_EQ(a.iteration_ns, b.iteration_ns);
  EXPECT_EQ(a.busy_ns, b.busy_ns);
  EXPECT_EQ(a.compute_end_ns, b.compute_end_ns);
  EXPECT_EQ(a.reduce_wait_ns, b.reduce_wait_ns);
  EXPECT_EQ(a.bubble_ns, b.bubble_ns);
  EXPECT_EQ(a.bubble_fraction, b.bubble_fraction);
  EXPECT_EQ(a.bubble_fraction_max, b.bubble_fraction_max);
}

}  // namespace plansight::estimator::test
