// The closed form (estimator/src/closed_form.h) against the simulation of the same costs, where
// the closed form claims to be exact: uniform stages and free pipeline transfers for GPipe and
// 1F1B (Narayanan et al. 2021, Sec. 2.2.1), interleaved 1F1B with m a multiple of p (Sec. 2.2.2),
// ZB-H1 with W <= B (Qi et al. 2023, Sec. 2.1), DualPipeV with equal F and B and no W op (the
// DualPipe README's bubble); with transfers, GPipe's ramps and 1F1B's round trips
// and interleaving's ramps (transfer_seconds); and on the side it claims where it is a bound
// (DualPipeV with W ops above the simulation; ZB-H1 with transfers below it); and the first rank's
// exposed sends (exposed_sends_seconds) where it claims to know their waits. Both sides read the
// same chunk costs: no formula is written out again here.
#include "closed_form.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/pipeline_simulator.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;

// One chunk's costs in whole milliseconds (no rounding to nanoseconds on either side).
ChunkCost chunk(double f_ms, double b_ms, double w_ms) {
  ChunkCost c;
  c.forward = compute_cost(f_ms * kMs);
  c.backward = compute_cost(b_ms * kMs);
  if (w_ms > 0) c.weight_grad = compute_cost(w_ms * kMs);
  return c;
}

// The simulated iteration and the closed form's pipeline span for p ranks of v identical chunks,
// and the first rank's exposed sends by both. `send_ms`: each pipeline transfer's time; the closed
// form then adds its ramps.
struct Both {
  double sim = 0, closed = 0, sim_sends = 0, closed_sends = 0;
};
Both run_both(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m, double f_ms, double b_ms,
              double w_ms, double send_ms = 0, double last_scale = 1) {
  auto table = make_schedule(kind, p, v, m);
  EXPECT_TRUE(table.ok()) << table.error_text();
  SimulationInput input;
  input.chunks = {chunk(f_ms, b_ms, w_ms)};
  input.chunks[0].send_activation_seconds = input.chunks[0].send_gradient_seconds = send_ms * kMs;
  if (last_scale != 1) {  // the last stage's chunk (the head) last_scale times the others
    input.chunks.push_back(chunk(f_ms * last_scale, b_ms * last_scale, w_ms * last_scale));
    input.chunks[1].send_activation_seconds = input.chunks[1].send_gradient_seconds = send_ms * kMs;
    input.chunk_of.assign(static_cast<std::size_t>(p * v), 0);
    input.chunk_of.back() = 1;
  }
  auto sim = simulate(*table, input);
  EXPECT_TRUE(sim.ok()) << sim.error_text();
  closed_form::Pipeline pipeline;
  closed_form::RankSums first;
  const double vd = static_cast<double>(v);
  for (std::int64_t r = 0; r < p; ++r) {
    closed_form::RankSums s;
    // A rank's sums cover its v chunks; a W op of a schedule without split backwards runs inside B.
    const double x = r == p - 1 && v == 1 ? last_scale : 1;
    s.forward = vd * x * f_ms * kMs;
    s.backward = vd * x * (table->split_backward ? b_ms : b_ms + w_ms) * kMs;
    s.weight = table->split_backward ? vd * x * w_ms * kMs : 0;
    pipeline.add_rank(s);
    if (r == 0) first = s;
  }
  const auto md = static_cast<double>(m), pd = static_cast<double>(p);
  Both out;
  out.sim = static_cast<double>(sim->iteration_ns) * 1e-9;
  out.closed = closed_form::pipeline_seconds(kind, md, pd, vd, pipeline) +
               closed_form::transfer_seconds(kind, md, pd, vd, send_ms * kMs, pipeline);
  out.sim_sends = static_cast<double>(sim->first_rank_exposed_send_ns) * 1e-9;
  out.closed_sends = closed_form::exposed_sends_seconds(kind, md, pd, send_ms * kMs, first, pipeline);
  return out;
}
std::pair<double, double> both(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m, double f_ms,
                               double b_ms, double w_ms, double send_ms = 0, double last_scale = 1) {
  const Both b = run_both(kind, p, v, m, f_ms, b_ms, w_ms, send_ms, last_scale);
  return {b.sim, b.closed};
}

std::string describe(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m) {
  return std::string(to_string(kind)) + " p=" + std::to_string(p) + " v=" + std::to_string(v) + " m=" + std::to_string(m);
}

TEST(ClosedForm, EqualsTheSimulationForGPipeAnd1F1B) {
  for (auto kind : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (std::int64_t p : {1, 2, 3, 4, 8, 16}) {
      for (std::int64_t m : {1, 2, 5, 8, 33}) {
        const auto [sim, closed] = both(kind, p, 1, m, 1, 2, 0);
        EXPECT_NEAR(sim, closed, 1e-12) << describe(kind, p, 1, m);
      }
    }
  }
}

TEST(ClosedForm, GPipeTransfersAreItsRamps) {
  // Each transfer shorter than a forward (F 1 ms): the sends of one stage never queue.
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {1, 3, 8, 33}) {
      for (double send : {0.05, 0.5, 1.0}) {
        const auto [sim, closed] = both(PipelineSchedule::gpipe, p, 1, m, 1, 2, 0, send);
        EXPECT_NEAR(sim, closed, 1e-12) << describe(PipelineSchedule::gpipe, p, 1, m) << " send " << send << " ms";
      }
    }
  }
}

TEST(ClosedForm, OneFOneBRoundTripsWithinOneRoundTripOfTheSimulation) {
  // Uniform stages (last 1) and a heavier last stage (the head): exact for uniform stages when m
  // is a multiple of p; otherwise the round trips accrue in whole loops of p micro-batches, which
  // the closed form spreads evenly: within 2 transfers. Where the head's slack hides the round
  // trip (1.5 x with 5% transfers), the ramps alone, exactly.
  for (double last : {1.0, 1.05, 1.2, 1.5}) {
    for (std::int64_t p : {2, 3, 4, 8, 16}) {
      for (std::int64_t m : {1, 2, 3, 5, 8, 16, 33, 64}) {
        for (double send : {0.05, 0.25, 0.5, 1.0}) {
          const auto [sim, closed] = both(PipelineSchedule::one_f_one_b, p, 1, m, 1, 2, 0, send, last);
          const std::string what = describe(PipelineSchedule::one_f_one_b, p, 1, m) + " last x" + std::to_string(last) +
                                   " send " + std::to_string(send) + " ms";
          EXPECT_NEAR(sim, closed, 2 * send * kMs + 1e-12) << what;
          if (last == 1.0 && m % p == 0) {
            EXPECT_NEAR(sim, closed, 1e-12) << what;
          }
          if (last == 1.5 && send == 0.05) {
            EXPECT_NEAR(sim, closed, 1e-12) << what;
          }
        }
      }
    }
  }
}

TEST(ClosedForm, InterleavedTransfersAreItsRamps) {
  // Each transfer shorter than a chunk's forward (1 ms): p v - 1 boundaries each way.
  for (std::int64_t p : {2, 3, 4, 8, 16}) {
    for (std::int64_t v : {2, 3, 4}) {
      for (std::int64_t groups : {1, 2, 3, 8}) {
        for (double send : {0.05, 0.25, 0.5, 1.0}) {
          const std::int64_t m = groups * p;
          const auto [sim, closed] = both(PipelineSchedule::interleaved, p, v, m, 1, 2, 0, send);
          EXPECT_NEAR(sim, closed, 1e-12) << describe(PipelineSchedule::interleaved, p, v, m) << " send " << send << " ms";
        }
      }
    }
  }
}

TEST(ClosedForm, ZbH1TransfersAreALowerBound) {
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {p, 2 * p, 4 * p}) {
      for (double send : {0.25, 1.0}) {
        const auto [sim, closed] = both(PipelineSchedule::zb_h1, p, 1, m, 1, 2, 1, send);
        EXPECT_LE(closed, sim + 1e-12) << describe(PipelineSchedule::zb_h1, p, 1, m) << " send " << send << " ms";
      }
    }
  }
}

TEST(ClosedForm, EqualsTheSimulationForInterleavedWithWholeGroups) {
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t v : {2, 3, 4}) {
      for (std::int64_t groups : {1, 2, 5}) {
        const std::int64_t m = groups * p;
        const auto [sim, closed] = both(PipelineSchedule::interleaved, p, v, m, 1, 2, 0);
        EXPECT_NEAR(sim, closed, 1e-12) << describe(PipelineSchedule::interleaved, p, v, m);
      }
    }
  }
}

TEST(ClosedForm, EqualsTheSimulationForZbH1) {
  const std::tuple<double, double, double> times[] = {{1, 1, 1}, {2, 2, 1}, {1, 2, 1}, {3, 2, 2}, {2, 3, 1}};
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {p, 2 * p, 3 * p + 1}) {
      for (const auto& [f, b, w] : times) {
        const auto [sim, closed] = both(PipelineSchedule::zb_h1, p, 1, m, f, b, w);
        EXPECT_NEAR(sim, closed, 1e-12) << describe(PipelineSchedule::zb_h1, p, 1, m) << " F,B,W " << f << "," << b << "," << w;
      }
    }
  }
}

TEST(ClosedForm, EqualsTheSimulationForDualPipeVWithEqualPassesAndBoundsItWithWOps) {
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {2 * p, 4 * p, 6 * p}) {
      const auto [sim, closed] = both(PipelineSchedule::dualpipev, p, 2, m, 2, 2, 0);
      EXPECT_NEAR(sim, closed, 1e-12) << describe(PipelineSchedule::dualpipev, p, 2, m);
      for (const auto& [f, b, w] : {std::tuple<double, double, double>{1, 1, 1}, {1, 2, 1}, {2, 3, 1}}) {
        const auto [sim_w, closed_w] = both(PipelineSchedule::dualpipev, p, 2, m, f, b, w);
        EXPECT_LE(sim_w, closed_w + 1e-12) << describe(PipelineSchedule::dualpipev, p, 2, m) << " F,B,W " << f << "," << b
                                           << "," << w;
      }
    }
  }
}

TEST(ClosedForm, FirstRankExposedSendsAreTheSimulationsWhereItKnowsTheWaits) {
  // The first rank's sends while it has no work (exposed_sends_seconds) against the simulation's
  // (SimulationResult::first_rank_exposed_send_ns), transfers of 1 ms against 4 ms forwards.
  // `heavy`: the last stage 1.5x the others (the LM head): the first rank is faster than the pace.
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {2, 8, 16, 33}) {
      for (double heavy : {1.0, 1.5}) {
        const std::string name = " p=" + std::to_string(p) + " m=" + std::to_string(m) + " heavy " + std::to_string(heavy);
        const Both gpipe = run_both(PipelineSchedule::gpipe, p, 1, m, 4, 8, 0, 1, heavy);
        EXPECT_NEAR(gpipe.closed_sends, gpipe.sim_sends, 1e-12) << "gpipe" << name;
        EXPECT_NEAR(gpipe.sim_sends, 1 * kMs, 1e-12) << "one: the last forward's";
        const Both zb = run_both(PipelineSchedule::zb_h1, p, 1, m, 4, 8, 3, 1, heavy);
        EXPECT_NEAR(zb.closed_sends, zb.sim_sends, 1e-12) << "zb-h1" << name;
        const Both one = run_both(PipelineSchedule::one_f_one_b, p, 1, m, 4, 8, 0, 1, heavy);
        if (heavy > 1) {
          EXPECT_NEAR(one.closed_sends, one.sim_sends, 1e-12) << "1f1b" << name;
        } else {
          EXPECT_NEAR(one.closed_sends, one.sim_sends, 1 * kMs) << "1f1b, equal stages" << name;
        }
        EXPECT_GT(one.sim_sends, 0);
      }
    }
  }
  for (std::int64_t p : {2, 4, 8}) {
    for (std::int64_t m : {16, 32}) {
      const std::string name = " p=" + std::to_string(p) + " m=" + std::to_string(m);
      const Both interleaved = run_both(PipelineSchedule::interleaved, p, 2, m, 4, 8, 0, 1);
      EXPECT_LE(interleaved.closed_sends, interleaved.sim_sends + 1e-12) << "interleaved" << name;
      const Both v = run_both(PipelineSchedule::dualpipev, p, 2, m, 4, 8, 3, 1);
      EXPECT_LE(v.closed_sends, v.sim_sends + 1e-12) << "dualpipev" << name;
    }
  }
  EXPECT_EQ(run_both(PipelineSchedule::one_f_one_b, 4, 1, 8, 4, 8, 0, 0).closed_sends, 0) << "free transfers";
  EXPECT_EQ(run_both(PipelineSchedule::one_f_one_b, 1, 1, 8, 4, 8, 0, 1).closed_sends, 0) << "no pipeline";
}

}  // namespace
}  // namespace plansight::estimator
