// The iteration simulator against closed forms: (p-1)/m and (p-1)/(v*m) bubbles with uniform
// stages, Qi et al.'s ZB-H1 iteration time, the ordering 1F1B > interleaved > ZB-H1, dependency
// order of every simulated op, p2p gating, DP overlap, ZeRO-3 prefetch, TP spans and error paths.
#include "plansight/estimator/pipeline_simulator.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <string>
#include <tuple>

#include "plansight/estimator/schedule_metrics.h"

namespace plansight::estimator {
namespace {

constexpr double kMs = 1e-3;
constexpr std::int64_t kMsNs = 1'000'000;

ChunkCost uniform(double f_ms, double b_ms, double w_ms = 0) {
  ChunkCost c;
  c.forward = compute_cost(f_ms * kMs);
  c.backward = compute_cost(b_ms * kMs);
  if (w_ms > 0) c.weight_grad = compute_cost(w_ms * kMs);
  return c;
}

SimulationResult run(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                     SimulationInput input) {
  auto table = make_schedule(kind, p, v, m);
  EXPECT_TRUE(table.ok()) << table.error_text();
  auto result = simulate(*table, input);
  EXPECT_TRUE(result.ok()) << result.error_text();
  return std::move(result).value();
}

SimulationResult run(PipelineSchedule kind, std::int64_t p, std::int64_t v, std::int64_t m,
                     const ChunkCost& cost) {
  SimulationInput input;
  input.chunks = {cost};
  return run(kind, p, v, m, input);
}

TEST(PipelineSimulator, UniformStagesGiveTheTextbookBubble) {
  // Narayanan et al. 2021, Sec. 2.2.1 and 2.2.2: (p-1)/m for GPipe and 1F1B, (p-1)/(v*m) for
  // interleaved, with chunk times 1/v of a stage's. Every rank has the same bubble.
  const std::tuple<std::int64_t, std::int64_t, std::int64_t> grid[] = {
      {2, 2, 2}, {2, 2, 4}, {4, 2, 4}, {4, 2, 8}, {4, 4, 8}, {8, 2, 16}, {4, 3, 12}, {3, 2, 9}};
  for (const auto& [p, v, m] : grid) {
    SCOPED_TRACE("p=" + std::to_string(p) + " v=" + std::to_string(v) + " m=" + std::to_string(m));
    const double expected = static_cast<double>(p - 1) / static_cast<double>(m);
    for (auto kind : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
      const auto r = run(kind, p, 1, m, uniform(1, 2));
      EXPECT_EQ(r.iteration_ns, (m + p - 1) * 3 * kMsNs) << to_string(kind);
      for (std::int64_t b : r.bubble_ns) EXPECT_EQ(b, (p - 1) * 3 * kMsNs);
      EXPECT_NEAR(r.bubble_fraction, expected, 1e-12) << to_string(kind);
    }
    const auto r = run(PipelineSchedule::interleaved, p, v, m,
                       uniform(1.0 / static_cast<double>(v), 2.0 / static_cast<double>(v)));
    EXPECT_NEAR(r.bubble_fraction, expected / static_cast<double>(v), 1e-6);
    EXPECT_NEAR(
        static_cast<double>(r.iteration_ns),
        (static_cast<double>(m) + static_cast<double>(p - 1) / static_cast<double>(v)) * 3 * kMsNs,
        2.0 * static_cast<double>(m * v));  // ns rounding of 1/v ms chunks
  }
}

TEST(PipelineSimulator, ZbH1MatchesQiEtAlBubble) {
  // Qi et al. 2023, Sec. 2: 1F1B bubble (p-1)(T_F+T_B+T_W), ZB-H1 (p-1)(T_F+T_B-T_W) (T_W <= T_B).
  const std::tuple<int, int, int> times[] = {{1, 1, 1}, {2, 2, 1}, {1, 2, 1}, {3, 2, 2}, {2, 3, 1}};
  for (std::int64_t p : {2, 3, 4, 8}) {
    for (std::int64_t m : {p, 2 * p, 3 * p + 1}) {
      for (const auto& [tf, tb, tw] : times) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " F,B,W=" +
                     std::to_string(tf) + "," + std::to_string(tb) + "," + std::to_string(tw));
        const ChunkCost cost = uniform(tf, tb, tw);
        const std::int64_t work = m * (tf + tb + tw) * kMsNs;
        const auto zb = run(PipelineSchedule::zb_h1, p, 1, m, cost);
        EXPECT_EQ(zb.iteration_ns - work, (p - 1) * (tf + tb - tw) * kMsNs);
        const auto f1b = run(PipelineSchedule::one_f_one_b, p, 1, m, cost);
        EXPECT_EQ(f1b.iteration_ns - work, (p - 1) * (tf + tb + tw) * kMsNs);
      }
    }
  }
}

TEST(PipelineSimulator, InterleavingThenZbH1ShrinkTheBubble) {
  // Equal F, B, W (the paper's comparison): 1F1B 3(p-1), interleaved v=2 1.5(p-1), ZB-H1 (p-1).
  const std::int64_t p = 4, m = 8;
  const double f1b = run(PipelineSchedule::one_f_one_b, p, 1, m, uniform(1, 1, 1)).bubble_fraction;
  const double inter =
      run(PipelineSchedule::interleaved, p, 2, m, uniform(0.5, 0.5, 0.5)).bubble_fraction;
  const double zb = run(PipelineSchedule::zb_h1, p, 1, m, uniform(1, 1, 1)).bubble_fraction;
  EXPECT_NEAR(f1b, 3.0 / 8.0, 1e-12);
  EXPECT_NEAR(inter, 3.0 / 16.0, 1e-12);
  EXPECT_NEAR(zb, 1.0 / 8.0, 1e-12);
  EXPECT_LT(inter, f1b);
  EXPECT_LT(zb, inter);
}

// Start/end of every F, B, W op from its compute spans, keyed by (phase, global chunk,
// micro-batch).
std::map<std::tuple<Phase, int, int>, std::pair<std::int64_t, std::int64_t>> op_times(
    const Timeline& t) {
  std::map<std::tuple<Phase, int, int>, std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& track : t.tracks) {
    if (track.lane != Lane::compute) continue;
    for (const auto& s : track.spans) {
      if (s.phase == Phase::optimizer) continue;
      auto [it, fresh] = out.try_emplace({s.phase, s.stage, s.micro_batch}, s.start_ns, s.end_ns());
      if (!fresh)
        it->second = {std::min(it->second.first, s.start_ns),
                      std::max(it->second.second, s.end_ns())};
    }
  }
  return out;
}

TEST(PipelineSimulator, EveryOpRunsOnceAfterItsInputsAndP2pGatesTheReceiver) {
  const std::int64_t send_ns = kMsNs / 4;
  for (auto [kind, p, v, m] : {std::tuple{PipelineSchedule::gpipe, 3, 1, 5},
                               std::tuple{PipelineSchedule::one_f_one_b, 4, 1, 6},
                               std::tuple{PipelineSchedule::interleaved, 4, 2, 8},
                               std::tuple{PipelineSchedule::zb_h1, 4, 1, 6},
                               std::tuple{PipelineSchedule::dualpipev, 3, 2, 6},
                               std::tuple{PipelineSchedule::dualpipe, 4, 2, 8}}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    ChunkCost cost = uniform(1, 2, 1);
    cost.send_activation_seconds = cost.send_gradient_seconds = 0.25 * kMs;
    const auto r = run(kind, p, v, m, SimulationInput{{cost}});
    const auto ops = op_times(r.timeline);
    const int stages = static_cast<int>(p * v);
    const auto table = make_schedule(kind, p, v, m);
    ASSERT_TRUE(table.ok());
    const bool split = table->split_backward;
    // DualPipe's two pipelines take half the micro-batches each.
    const int per_chunk = two_pipelines(kind) ? m / 2 : m;
    EXPECT_EQ(ops.size(), static_cast<std::size_t>(stages * per_chunk * (split ? 3 : 2)));
    for (int g = 0; g < stages; ++g) {
      for (int mb = 0; mb < m; ++mb) {
        if (!table->passes(g, mb)) {
          EXPECT_EQ(ops.count({Phase::forward, g, mb}), 0u);
          continue;
        }
        const auto f = ops.at({Phase::forward, g, mb});
        const auto b = ops.at({Phase::backward, g, mb});
        EXPECT_LE(f.second, b.first);
        if (!ends_pipeline(kind, p, v, g)) {
          // DualPipeV's turn (chunks p-1 and p) stays on one rank: nothing to send.
          const std::int64_t hop = table->rank_of(g + 1) == table->rank_of(g) ? 0 : send_ns;
          EXPECT_GE(ops.at({Phase::forward, g + 1, mb}).first, f.second + hop);
          EXPECT_GE(b.first, ops.at({Phase::backward, g + 1, mb}).second + hop);
        }
        if (split) {
          EXPECT_LE(b.second, ops.at({Phase::weight_grad, g, mb}).first);
        }
      }
    }
    const auto no_comm = run(kind, p, v, m, uniform(1, 2, 1));
    EXPECT_GT(r.iteration_ns, no_comm.iteration_ns) << "p2p latency lengthens the iteration";
  }
}

TEST(PipelineSimulator, DpReductionsOverlapWhenIssuedPerChunk) {
  ChunkCost cost = uniform(1, 2);
  cost.dp_reduce_seconds = 4 * kMs;
  SimulationInput at_end{{cost}};
  at_end.dp_issue = DpReduceIssue::at_end;
  at_end.optimizer_seconds = 0.5 * kMs;
  SimulationInput per_chunk = at_end;
  per_chunk.dp_issue = DpReduceIssue::per_chunk;
  // Interleaved: chunk 1's reduction runs during chunk 0's remaining backwards.
  const auto late = run(PipelineSchedule::interleaved, 4, 2, 8, at_end);
  const auto early = run(PipelineSchedule::interleaved, 4, 2, 8, per_chunk);
  EXPECT_EQ(late.reduce_wait_ns[0], 2 * 4 * kMsNs);  // both chunks after the last backward
  EXPECT_LT(early.reduce_wait_ns[0], late.reduce_wait_ns[0]);
  EXPECT_LT(early.iteration_ns, late.iteration_ns);
  // v = 1: buckets issued during the last backward hide part of the reduction behind it.
  per_chunk.dp_buckets = 4;
  const auto one = run(PipelineSchedule::one_f_one_b, 4, 1, 8, at_end);
  const auto bucketed = run(PipelineSchedule::one_f_one_b, 4, 1, 8, per_chunk);
  EXPECT_EQ(one.reduce_wait_ns[0], 4 * kMsNs);
  EXPECT_EQ(bucketed.reduce_wait_ns[0], 4 * kMsNs - 2 * kMsNs * 3 / 4);  // 3 buckets overlap B
  // The optimizer runs after the reductions, on the compute lane.
  const auto& last = one.timeline.tracks[0].spans.back();
  EXPECT_EQ(last.phase, Phase::optimizer);
  EXPECT_EQ(last.start_ns, one.compute_end_ns[0] + 4 * kMsNs);
  EXPECT_EQ(one.iteration_ns, (8 + 3) * 3 * kMsNs + 4 * kMsNs + kMsNs / 2);
}

TEST(PipelineSimulator, TensorParallelSegmentsShowAsExposedCollectivesNotBubble) {
  ChunkCost cost;
  cost.forward.segments = {{Lane::compute, 1 * kMs, 1e12, 0},
                           {Lane::communication, 0.5 * kMs, 0, 1e6}};
  cost.backward = compute_cost(2 * kMs);
  const auto r = run(PipelineSchedule::one_f_one_b, 1, 1, 4, SimulationInput{{cost}});
  EXPECT_EQ(r.iteration_ns, 4 * 3500 * 1000);
  EXPECT_EQ(r.busy_ns[0], 4 * 3 * kMsNs);
  EXPECT_EQ(r.bubble_ns[0], 0);  // idle compute faces the TP all-reduce: exposed comm, not bubble
  const auto& comm = r.timeline.tracks[1].spans;
  ASSERT_EQ(comm.size(), 4u);
  EXPECT_EQ(comm[0].kind, SpanKind::collective);
  EXPECT_EQ(comm[0].start_ns, kMsNs);
  EXPECT_EQ(r.timeline.name_of(comm[0]), "F0.0");
  EXPECT_DOUBLE_EQ(comm[0].bytes, 1e6);
  EXPECT_DOUBLE_EQ(r.timeline.tracks[0].spans[0].flops, 1e12);
}

// An overlapped segment (a collective compute hides) takes no time and books no lane: every figure
// is that of the run without it. With the timeline kept it is drawn on the rank's third track,
// inside the op's compute and never beside its exposed collective: here 1.5 ms poured into the
// forward's 1 ms compute is cut at its end, and a backward's 0.4 ms sits under its compute.
TEST(PipelineSimulator, OverlappedSegmentsAreDrawnUnderComputeAndCostNothing) {
  ChunkCost cost;
  cost.forward.segments = {{Lane::compute, 1 * kMs, 0, 0},
                           {Lane::communication, 0.5 * kMs, 0, 1e6},
                           {Lane::communication, 1.5 * kMs, 0, 3e6, -1, true}};
  cost.backward.segments = {{Lane::compute, 2 * kMs, 0, 0}, {Lane::communication, 0.4 * kMs, 0, 8e5, -1, true}};
  ChunkCost plain = cost;
  plain.forward.segments.pop_back();
  plain.backward.segments.pop_back();
  EXPECT_DOUBLE_EQ(cost.forward.seconds(), plain.forward.seconds()) << "an overlapped segment adds no time";
  for (const PipelineSchedule kind : {PipelineSchedule::one_f_one_b, PipelineSchedule::zb_h1}) {
    const auto with = run(kind, 2, 1, 4, SimulationInput{{cost}});
    const auto without = run(kind, 2, 1, 4, SimulationInput{{plain}});
    EXPECT_EQ(with.iteration_ns, without.iteration_ns);
    EXPECT_EQ(with.bubble_ns, without.bubble_ns);
    EXPECT_EQ(with.busy_ns, without.busy_ns);
    ASSERT_EQ(with.timeline.tracks.size(), 6u) << "compute, communication and overlapped per rank";
    ASSERT_EQ(without.timeline.tracks.size(), 4u);
    for (std::int32_t r = 0; r < 2; ++r) {
      const Track& hidden = with.timeline.tracks[static_cast<std::size_t>(4 + r)];
      EXPECT_EQ(hidden.rank, r);
      EXPECT_EQ(hidden.lane, Lane::communication);
      EXPECT_EQ(hidden.stream, 2);
      ASSERT_EQ(hidden.spans.size(), 8u) << "one per F and per B of four micro-batches";
      std::int64_t forward_ns = 0, backward_ns = 0;
      for (const Span& x : hidden.spans) {
        const auto& compute = with.timeline.tracks[static_cast<std::size_t>(2 * r)].spans;
        EXPECT_TRUE(std::any_of(compute.begin(), compute.end(),
                                [&](const Span& c) { return c.start_ns <= x.start_ns && x.end_ns() <= c.end_ns(); }));
        (with.timeline.name_of(x)[0] == 'F' ? forward_ns : backward_ns) += x.duration_ns;
      }
      EXPECT_EQ(forward_ns, 4 * kMsNs) << "cut to the forwards' 1 ms of compute";
      EXPECT_EQ(backward_ns, 4 * 400 * 1000);
    }
  }
  // Only a communication segment may be overlapped.
  ChunkCost wrong = plain;
  wrong.forward.segments.push_back({Lane::compute, 1 * kMs, 0, 0, -1, true});
  auto table = *make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 4);
  EXPECT_EQ(simulate(table, SimulationInput{{wrong}}).errors().front().field, "simulation.chunks[0].forward");
}

TEST(PipelineSimulator, ZeroThreeGatherIsPrefetchedOneOpAhead) {
  ChunkCost cost = uniform(1, 2);
  cost.param_gather_seconds = 0.5 * kMs;
  const auto r = run(PipelineSchedule::gpipe, 1, 1, 2, SimulationInput{{cost}});
  const auto& comm = r.timeline.tracks[1].spans;
  ASSERT_EQ(comm.size(), 2u);
  EXPECT_EQ(r.timeline.name_of(comm[0]), "gather F0");
  EXPECT_EQ(comm[0].start_ns, 0);
  EXPECT_EQ(r.timeline.name_of(comm[1]), "gather B0");
  EXPECT_EQ(comm[1].start_ns, 1500 * 1000);  // issued when F0.1 (the op before B0.0) starts
  // Only the first gather is exposed: F, F, B, B after 0.5 ms.
  EXPECT_EQ(r.iteration_ns, 6500 * 1000);
}

TEST(PipelineSimulator, RecomputeRunsBeforeEachBackward) {
  ChunkCost cost = uniform(1, 2);
  cost.recompute = compute_cost(1 * kMs);
  const auto r = run(PipelineSchedule::one_f_one_b, 2, 1, 2, SimulationInput{{cost}});
  const auto ops = op_times(r.timeline);
  EXPECT_EQ(ops.at({Phase::recompute, 1, 0}).second, ops.at({Phase::backward, 1, 0}).first);
  EXPECT_EQ(r.busy_ns[1], 2 * 4 * kMsNs);
}

// Per-chunk costs with every kind of work the simulator books: compute and TP segments, sends,
// bucketed DP reductions and ZeRO-3 gathers (whose early issue times place work out of order
// on the communication lane). Chunk g differs from chunk g+1, as first and last stages do.
SimulationInput mixed_input(std::int64_t stages, std::uint32_t seed) {
  SimulationInput in;
  std::uint32_t x = seed;
  auto ms = [&x](double lo, double hi) {  // a deterministic draw in [lo, hi) ms
    x = x * 1664525u + 1013904223u;
    return (lo + (hi - lo) * static_cast<double>(x >> 8) / static_cast<double>(1u << 24)) * kMs;
  };
  for (std::int64_t g = 0; g < stages; ++g) {
    ChunkCost c;
    c.forward.segments = {{Lane::compute, ms(0.5, 1.5)}, {Lane::communication, ms(0.05, 0.3)}, {Lane::compute, ms(0.1, 0.4)}};
    c.backward.segments = {{Lane::compute, ms(1, 3)}, {Lane::communication, ms(0.05, 0.3)}};
    c.weight_grad = compute_cost(ms(0.3, 1));
    c.recompute = compute_cost(ms(0, 0.5));
    c.send_activation_seconds = ms(0.01, 0.2);
    c.send_gradient_seconds = ms(0.01, 0.2);
    c.dp_reduce_seconds = ms(1, 6);
    c.param_gather_seconds = seed % 2 == 0 ? ms(0.1, 1) : 0;
    c.param_prefetch = seed % 4 != 2;
    in.chunks.push_back(c);
  }
  in.optimizer_seconds = ms(0.2, 1);
  in.optimizer_gather_seconds = seed % 2 == 1 ? ms(0.1, 0.5) : 0;
  in.dp_buckets = static_cast<std::int32_t>(1 + seed % 5);
  in.dp_issue = seed % 3 == 0 ? DpReduceIssue::at_end : DpReduceIssue::per_chunk;
  return in;
}

TEST(PipelineSimulator, WithoutATimelineEveryTimeIsTheSame) {
  // keep_timeline = false skips spans and names; the times it returns must not move by a
  // nanosecond, on every schedule, with processors shared or not.
  const std::tuple<PipelineSchedule, std::int64_t, std::int64_t, std::int64_t> grid[] = {
      {PipelineSchedule::gpipe, 4, 1, 8},       {PipelineSchedule::one_f_one_b, 1, 1, 5},
      {PipelineSchedule::one_f_one_b, 4, 1, 12}, {PipelineSchedule::zb_h1, 4, 1, 8},
      {PipelineSchedule::interleaved, 4, 2, 8},  {PipelineSchedule::interleaved, 3, 3, 9}};
  std::uint32_t seed = 0;
  for (const auto& [kind, p, v, m] : grid) {
    for (std::int64_t shared : {std::int64_t{0}, p}) {
      ++seed;
      SCOPED_TRACE(std::string(to_string(kind)) + " p=" + std::to_string(p) + " seed=" + std::to_string(seed) +
                   " shared=" + std::to_string(shared));
      SimulationInput kept = mixed_input(p * v, seed);
      kept.shared_processors = shared;
      kept.threads_per_rank = 2;
      SimulationInput lean = kept;
      lean.keep_timeline = false;
      const auto a = run(kind, p, v, m, kept);
      const auto b = run(kind, p, v, m, lean);
      EXPECT_EQ(a.iteration_ns, b.iteration_ns);
      EXPECT_EQ(a.busy_ns, b.busy_ns);
      EXPECT_EQ(a.compute_end_ns, b.compute_end_ns);
      EXPECT_EQ(a.reduce_wait_ns, b.reduce_wait_ns);
      EXPECT_FALSE(a.timeline.tracks.empty());
      EXPECT_TRUE(b.timeline.tracks.empty());
      // The bubbles the simulation records as it runs, timeline or not, are schedule_bubbles() of
      // its timeline: one definition (schedule_metrics.h).
      const ScheduleBubbles expected = schedule_bubbles(a.timeline);
      EXPECT_EQ(b.bubble_ns, expected.bubble_ns);
      EXPECT_EQ(a.bubble_ns, expected.bubble_ns);
      EXPECT_DOUBLE_EQ(b.bubble_fraction, expected.mean_fraction);
      EXPECT_DOUBLE_EQ(b.bubble_fraction_max, expected.max_fraction);
      // The communication lane never runs two things at once, however early work was issued.
      for (const Track& track : a.timeline.tracks) {
        if (track.lane != Lane::communication) continue;
        for (std::size_t i = 1; i < track.spans.size(); ++i) {
          EXPECT_GE(track.spans[i].start_ns, track.spans[i - 1].end_ns()) << track.label << " span " << i;
        }
      }
    }
  }
}

// SimulationInput::chunk_of: distinct costs shared by chunks give every figure and span of the
// same costs written out chunk by chunk.
TEST(PipelineSimulator, ChunkOfGivesTheRunOfTheChunksWrittenOut) {
  ChunkCost middle = uniform(1.5, 2.5, 0.5);
  middle.forward.segments.push_back({Lane::communication, 0.2 * kMs});
  middle.send_activation_seconds = middle.send_gradient_seconds = 0.1 * kMs;
  middle.dp_reduce_seconds = 2 * kMs;
  ChunkCost first = middle, last = middle;
  first.forward = compute_cost(2 * kMs);
  last.backward.segments.push_back({Lane::compute, 1 * kMs});
  for (const PipelineSchedule kind : {PipelineSchedule::interleaved, PipelineSchedule::zb_h1, PipelineSchedule::dualpipev}) {
    SCOPED_TRACE(to_string(kind));
    const std::int64_t p = 4, v = kind == PipelineSchedule::zb_h1 ? 1 : 2, m = 16;
    auto table = make_schedule(kind, p, v, m);
    ASSERT_TRUE(table.ok()) << table.error_text();
    const auto chunks = static_cast<std::size_t>(p * v);
    SimulationInput shared, written;
    shared.chunks = {first, middle, last};
    shared.chunk_of.assign(chunks, 1);
    shared.chunk_of.front() = 0;
    shared.chunk_of.back() = 2;
    for (const std::int32_t i : shared.chunk_of) written.chunks.push_back(shared.chunks[static_cast<std::size_t>(i)]);
    for (const bool keep : {true, false}) {
      shared.keep_timeline = written.keep_timeline = keep;
      const auto a = simulate(*table, shared), b = simulate(*table, written);
      ASSERT_TRUE(a.ok() && b.ok()) << a.error_text() << b.error_text();
      EXPECT_EQ(a->iteration_ns, b->iteration_ns);
      EXPECT_EQ(a->busy_ns, b->busy_ns);
      EXPECT_EQ(a->reduce_wait_ns, b->reduce_wait_ns);
      EXPECT_EQ(a->bubble_ns, b->bubble_ns);
      EXPECT_EQ(a->skipped_ops, b->skipped_ops);
      ASSERT_EQ(a->timeline.tracks.size(), b->timeline.tracks.size());
      for (std::size_t t = 0; t < a->timeline.tracks.size(); ++t) {
        const auto& x = a->timeline.tracks[t].spans;
        const auto& y = b->timeline.tracks[t].spans;
        ASSERT_EQ(x.size(), y.size()) << "track " << t;
        for (std::size_t i = 0; i < x.size(); ++i) {
          EXPECT_EQ(x[i].start_ns, y[i].start_ns);
          EXPECT_EQ(x[i].duration_ns, y[i].duration_ns);
        }
      }
    }
  }
}

TEST(PipelineSimulator, ErrorsNameTheField) {
  auto table = *make_schedule(PipelineSchedule::one_f_one_b, 2, 1, 2);
  SimulationInput two{{uniform(1, 1), uniform(1, 1), uniform(1, 1)}};
  auto r = simulate(table, two);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().field, "simulation.chunks");
  SimulationInput negative{{uniform(-1, 1)}};
  r = simulate(table, negative);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().field, "simulation.chunks[0].forward");
  // chunk_of: one index of `chunks` per chunk.
  SimulationInput indexed{{uniform(1, 1), uniform(2, 2)}};
  indexed.chunk_of = {0, 1, 1};
  EXPECT_EQ(simulate(table, indexed).errors().front().field, "simulation.chunk_of");
  indexed.chunk_of = {0, 2};
  r = simulate(table, indexed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().field, "simulation.chunk_of");
  EXPECT_NE(r.error_text().find("entry 1 is 2"), std::string::npos) << r.error_text();
  indexed.chunk_of = {1, 0};
  EXPECT_TRUE(simulate(table, indexed).ok());
  SimulationInput buckets{{uniform(1, 1)}};
  buckets.dp_buckets = 0;
  EXPECT_EQ(simulate(table, buckets).errors().front().field, "simulation.dp_buckets");
  // A labelled segment or reduction needs its name in `labels`: refused, never read past the end.
  SimulationInput labelled{{uniform(1, 1)}};
  labelled.chunks[0].forward.segments.push_back({Lane::communication, 1e-3, 0, 4096, 0});
  EXPECT_EQ(simulate(table, labelled).errors().front().field, "simulation.chunks[0].forward");
  labelled.labels = {"TP all-reduce · tp 2 · in a node"};
  EXPECT_TRUE(simulate(table, labelled).ok());
  labelled.dp_reduce_label = 1;
  EXPECT_EQ(simulate(table, labelled).errors().front().field, "simulation.dp_reduce_label");
  // Locally valid but globally deadlocked: rank 1 wants micro-batch 1 first, rank 0 sends it only
  // after micro-batch 0's backward, which needs rank 1.
  auto stuck = table;
  stuck.ranks[0] = {{OpKind::forward, 0, 0},
                    {OpKind::backward, 0, 0},
                    {OpKind::forward, 0, 1},
                    {OpKind::backward, 0, 1}};
  stuck.ranks[1] = {{OpKind::forward, 0, 1},
                    {OpKind::backward, 0, 1},
                    {OpKind::forward, 0, 0},
                    {OpKind::backward, 0, 0}};
  r = simulate(stuck, SimulationInput{{uniform(1, 1)}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().front().field, "schedule");
  EXPECT_NE(r.error_text().find("deadlock: rank 0 waits at op 1 (B chunk 0 micro-batch 0)"),
            std::string::npos)
      << r.error_text();
}

TEST(PipelineSimulator, AsciiGoldenForOneFOneBFourRanksEightMicroBatches) {
  // Hand-derived with unit F and B: rank 0 warms up with 3 forwards, waits 3 units for the first
  // gradient, then alternates; the last rank alternates from t = 3; the drain leaves 1-unit gaps.
  const auto r = run(PipelineSchedule::one_f_one_b, 4, 1, 8, uniform(1, 1));
  EXPECT_EQ(render_ascii(r.timeline, 22),
            "r0 |FFFF...BFBFBFBFB.B.B.B|\n"
            "r1 |.FFF..BFBFBFBFBFB.B.B.|\n"
            "r2 |..FF.BFBFBFBFBFBFB.B..|\n"
            "r3 |...FBFBFBFBFBFBFBFB...|\n");
}

}  // namespace
}  // namespace plansight::estimator
