// Private to the estimator: the closed form of one iteration, the one set of formulas that
// closed_form_time() (time_model.cpp) and the layout search's lean evaluation
// (layout_search_lean.cpp) both use. Each caller sums its ranks' chunk costs its own way (the
// library chunk by chunk, the search by chunk kind); from those sums on, the pipeline, transfer,
// data-parallel and breakdown terms are these.
#pragma once

#include <algorithm>
#include <vector>

#include "plansight/estimator/estimate.h"
#include "plansight/estimator/layer_costs.h"

namespace plansight::estimator::closed_form {

// One rank's costs per micro-batch, summed over its chunks: compute and exposed communication by
// group (over F, B, W and recomputation), the F, B (+ recomputation) and W passes, and its
// chunks' data-parallel reduction seconds.
struct RankSums {
  double compute = 0, tp = 0, cp = 0, dp_phase = 0, ep = 0, offload = 0;
  double forward = 0, backward = 0, weight = 0;
  double dp = 0;

  // A chunk's phases, `times` over (chunks of one kind on the rank).
  void add(const PhaseCost& f, const PhaseCost& b, const PhaseCost& w, const PhaseCost& r, double dp_s, double times) {
    for (const PhaseCost* ph : {&f, &b, &w, &r}) {
      compute += times * ph->compute_s;
      tp += times * ph->tp_comm_s;
      cp += times * ph->cp_comm_s;
      dp_phase += times * ph->dp_comm_s;
      ep += times * ph->ep_comm_s;
      offload += times * ph->offload_s;
    }
    forward += times * f.total_s();
    backward += times * (b.total_s() + r.total_s());
    weight += times * w.total_s();
    dp += times * dp_s;
  }
  double pass() const { return forward + backward + weight; }
};

// The pipeline's pace (its slowest rank's pass), one pass through every stage (the ramps), and
// the longest F, B and W of any rank (ZB-H1's and DualPipeV's cooldown).
struct Pipeline {
  double pace = 0, through = 0, fwd_max = 0, bwd_max = 0, w_max = 0;
  struct Stage {
    double pass = 0, ranks = 1;
  };
  // For the bubble fractions, a kind of rank each; only when asked (the search's ranking, which
  // evaluates millions of layouts, reads no bubble fraction and allocates nothing here).
  bool keep_stages = false;
  std::vector<Stage> stages;
  void add_rank(const RankSums& s, double ranks = 1) {
    pace = std::max(pace, s.pass());
    through += ranks * s.pass();
    fwd_max = std::max(fwd_max, s.forward);
    bwd_max = std::max(bwd_max, s.backward);
    w_max = std::max(w_max, s.weight);
    if (keep_stages) stages.push_back({s.pass(), ranks});
  }
};

// Compute span of the pipeline for m micro-batches on p ranks with v chunks each: 1F1B and GPipe
// (m + p - 1)(F + B) as (m - 1) paces plus one pass through every stage (Narayanan et al. 2021,
// Sec. 2.2.1), interleaved (m + (p - 1)/v) paces (Sec. 2.2.2), ZB-H1 m(F + B + W) +
// (p - 1)(F + B - W) (Qi et al. 2023, Sec. 2.1).
inline double pipeline_seconds(PipelineSchedule schedule, double m, double p, double v, const Pipeline& s) {
  const double pm1 = p - 1;
  switch (schedule) {
    case PipelineSchedule::gpipe:
    case PipelineSchedule::one_f_one_b: return (m - 1) * s.pace + s.through;
    case PipelineSchedule::interleaved: return m * s.pace + pm1 * s.pace / v;
    case PipelineSchedule::zb_h1: return m * s.pace + pm1 * std::max(s.fwd_max + s.bwd_max - s.w_max, s.fwd_max);
    // DualPipe README's bubble for PP = 2p stages, (PP/2 - 1)(F&B + B - 3W) with per-chunk F, full
    // backward B (our B + W) and F&B = F + B unoverlapped: (p - 1)(F + 2B - W) in this struct's
    // terms, halved since a rank's sums cover its two chunks. The simulation of the generated
    // table equals it with equal F and B and W = 0, and stays at or below it (dualpipev_test).
    case PipelineSchedule::dualpipev:
      return m * s.pace + pm1 * std::max(s.fwd_max + 2 * s.bwd_max - s.w_max, s.fwd_max) / 2;
    // DualPipe's bubble, (PP/2 - 1)(F&B + B - 3W) with PP = p ranks (DualPipe README), in the
    // same terms; here m is the micro-batches through each chunk (half of them per pipeline),
    // each rank's pass covering one micro-batch of each pipeline.
    case PipelineSchedule::dualpipe:
      return m * s.pace + (p / 2 - 1) * std::max(s.fwd_max + 2 * s.bwd_max - s.w_max, s.fwd_max) / 2;
  }
  return 0;
}

// The bubble fractions by their one definition (schedule_metrics.h) in closed form: every stage
// is idle for what the pipeline window (the pipeline span and its ramps) holds beyond its own m
// passes, relative to those passes; the mean over stages and the worst stage.
struct BubbleFractions {
  double mean = 0, max = 0;
};
inline BubbleFractions bubble_fractions(double window_s, double m, const Pipeline& s) {
  BubbleFractions out;
  double ranks = 0;
  for (const Pipeline::Stage& st : s.stages) {
    const double work = std::min(window_s, m * st.pass);
    const double f = work > 0 ? (window_s - work) / work : 0.0;
    out.mean += st.ranks * f;
    out.max = std::max(out.max, f);
    ranks += st.ranks;
  }
  if (ranks > 0) out.mean /= ranks;
  return out;
}

// What the transfers between stages (p2p_s each) add to the pipeline span:
//  - the ramps: the warm-up's activations and the cooldown's gradients cross every boundary
//    between ranks once: p - 1, p v - 1 with interleaving (its v p chunks form one pipeline, rank
//    p - 1's chunk feeding rank 0's next), 2 (p - 1) in DualPipeV's V (its turn stays on rank
//    p - 1);
//  - 1F1B's round trips. With at most p micro-batches in flight, micro-batch j + p enters stage 0
//    only after j's backward has left it, and between the two lie every stage's F and B and
//    2(p - 1) transfers: beyond the first p micro-batches the pipeline repeats at most every
//    (through + 2(p - 1) p2p_s) / p a micro-batch, which is slower than its slowest stage's pass
//    when the transfers are long against the stages' mean pass. Before that, each of the first
//    min(m, p) micro-batches after the second waits 2 p2p_s for its turn. With uniform stages,
//    whose round trip no stage's slack hides, the two add
//      2 p2p_s (min(m, p) - 2)+ + (m - p)+ 2 (p - 1) p2p_s / p,
//    which the simulation equals while a transfer is shorter than a forward (closed_form_test).
//    With unequal stages the faster stages' slack hides part of each round trip: both terms are
//    taken in the proportion of the round trip's pace the slowest stage leaves unhidden (the
//    simulation stays the reference there).
//  Interleaving keeps v p chunks in flight and hides the round trip: its ramps equal the
//  simulation of uniform chunks (closed_form_test). ZB-H1's W ops fill part of its round trip and
//  DualPipeV's steady state waits on its transfers as well (2 (p - 1) / p of one a micro-batch
//  with equal F and B): for both, the ramps are a lower bound of what transfers add.
inline double transfer_seconds(PipelineSchedule schedule, double m, double p, double v, double p2p_s, const Pipeline& s) {
  const double boundaries = schedule == PipelineSchedule::interleaved ? p * v - 1
                            : schedule == PipelineSchedule::dualpipev ? 2 * (p - 1)
                                                                      : p - 1;
  double out = 2 * boundaries * p2p_s;
  if (schedule == PipelineSchedule::one_f_one_b && p > 1 && p2p_s > 0) {
    const double round_trip = 2 * (p - 1) * p2p_s / p;  // a micro-batch's share of the loop's transfers
    const double unhidden = std::clamp((s.through / p + round_trip - s.pace) / round_trip, 0.0, 1.0);
    out += unhidden * (2 * p2p_s * std::max(0.0, std::min(m, p) - 2) + std::max(0.0, m - p) * round_trip);
  }
  return out;
}

// The first rank's sends while it does no work (the simulation's exposed PP time: time_model.cpp,
// by the timeline rule of rank_breakdown()), counted where the closed form knows that rank waits
// right after sending, each send exposed up to its wait (transfers no longer than a forward):
//  - at the end of the warm-up every schedule's first rank sends its last warm-up activation and
//    waits for its first gradient, a round trip through the later stages: one transfer; GPipe's
//    first rank has no other wait after a send (its backwards send nothing);
//  - in the steady state of 1F1B and ZB-H1 each of the m - p forwards after the warm-up is
//    followed by a wait for the next gradient when the first rank is faster than the pipeline's
//    pace: its send is exposed up to that slack (ZB-H1's: what its W ops, deferred into the wait,
//    leave of it);
//  - with equal stages, 1F1B's round trips (transfer_seconds) make the first rank wait after
//    (p - 1) of every p of those forwards, for the part of the round trip its pace leaves
//    unhidden; ZB-H1's W ops fill those waits.
// The simulation of the same costs equals it for GPipe, for 1F1B and ZB-H1 whose first rank is
// faster than the pace (a heavier last stage: the LM head), for ZB-H1 with equal stages, and for
// 1F1B with equal stages within one transfer (closed_form_test). Interleaving's and DualPipe(V)'s
// first rank waits on its sends in more places of its ramps: for them it is a lower bound.
inline double exposed_sends_seconds(PipelineSchedule schedule, double m, double p, double p2p_s, const RankSums& r0,
                                    const Pipeline& s) {
  if (p <= 1 || p2p_s <= 0) return 0;
  double out = p2p_s;
  const double steady = std::max(0.0, m - p);
  if (schedule != PipelineSchedule::one_f_one_b && schedule != PipelineSchedule::zb_h1) return out;
  // ZB-H1 defers W ops into the waits: what they leave of the slack.
  const double slack = s.pace - r0.pass() - (schedule == PipelineSchedule::zb_h1 ? r0.weight : 0);
  if (slack > 0) return out + steady * std::min(p2p_s, slack);
  if (schedule == PipelineSchedule::zb_h1) return out;  // its W ops fill the first rank's waits
  const double round_trip = 2 * (p - 1) * p2p_s / p;
  const double unhidden = std::clamp((s.through / p + round_trip - s.pace) / round_trip, 0.0, 1.0);
  return out + unhidden * steady * (p - 1) / p * p2p_s;
}

// Exposed data-parallel reduction of the first rank: without overlap all of it; with overlap
// (buckets per chunk, kDpBucketsPerChunk) the last chunk's buckets overlap the rest of its last
// backward, and earlier chunks' reductions overlap the (v - 1) p backwards that follow them.
inline double exposed_dp_seconds(bool overlap, double buckets, double v, double p, double dp_total_s,
                                 double dp_last_chunk_s, double backward_last_chunk_s) {
  if (!overlap) return dp_total_s;
  const double last = std::max(dp_last_chunk_s / buckets, dp_last_chunk_s - backward_last_chunk_s * (buckets - 1) / buckets);
  const double earlier = dp_total_s - dp_last_chunk_s;
  const double window = (v - 1) * p * backward_last_chunk_s;
  return last + std::max(0.0, earlier - window);
}

// The first rank's breakdown from the terms above: m micro-batches of its sums, the exposed
// reduction plus the optimizer's parameter all-gather as data-parallel communication, and its
// idle time (what the pipeline span and the transfers add to it hold beyond its work) split into
// its exposed sends (exposed_sends_seconds) and the bubble.
inline void fill_breakdown(TimeBreakdown& b, double m, const RankSums& r0, double pipe_s, double transfers_s,
                           double sends_s, double dp_exposed_s, double optimizer_s, double optimizer_gather_s,
                           double optimizer_offload_s) {
  b.compute_s = m * r0.compute;
  b.tp_comm_s = m * r0.tp;
  b.cp_comm_s = m * r0.cp;
  b.ep_comm_s = m * r0.ep;
  b.dp_comm_s = dp_exposed_s + optimizer_gather_s + m * r0.dp_phase;
  b.optimizer_s = optimizer_s - optimizer_gather_s - optimizer_offload_s;
  b.offload_s = m * r0.offload + optimizer_offload_s;
  const double idle = std::max(0.0, pipe_s + transfers_s - (b.compute_s + b.tp_comm_s + b.cp_comm_s + m * r0.dp_phase +
                                                             b.ep_comm_s + m * r0.offload));
  b.pp_comm_s = std::min(sends_s, idle);
  b.bubble_s = idle - b.pp_comm_s;
}

}  // namespace plansight::estimator::closed_form
