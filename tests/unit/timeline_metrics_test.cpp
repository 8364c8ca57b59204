// Timeline analysis: interval sets, HTA's definitions (hand-computed values), our breakdown and
// overlap beside HTA's, pipeline bubbles, alignment and diff on small hand-built timelines.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/interval_set.h"
#include "plansight/estimator/timeline_align.h"
#include "plansight/estimator/timeline_diff.h"
#include "plansight/estimator/timeline_metrics.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

Track& add_track(Timeline& t, int rank, Lane lane, int stream) {
  Track tr;
  tr.rank = rank;
  tr.lane = lane;
  tr.stream = stream;
  tr.label = "stream " + std::to_string(stream);
  t.tracks.push_back(tr);
  return t.tracks.back();
}

void add_span(Timeline& t, Track& tr, const std::string& name, std::int64_t start_us, std::int64_t end_us,
              SpanKind kind = SpanKind::kernel, Phase phase = Phase::none) {
  Span s;
  s.start_ns = start_us * 1000;
  s.duration_ns = (end_us - start_us) * 1000;
  s.name_id = t.intern(name);
  s.kind = kind;
  s.phase = phase;
  tr.spans.push_back(s);
}

// Rank 0 of the hand example (µs): compute [0,100) [150,300) [400,450); NCCL [50,200) [280,420);
// memcpy [460,470).
// Merged communication = 150 + 140 = 290; intersection with compute = 50 + 50 + 20 + 20 = 140;
// HTA overlap = 140 / 290. All GPU work merged: [0,450) + [460,470) = 460 of a 470 window.
Timeline hand_example() {
  Timeline t;
  t.tracks.reserve(8);
  auto& compute = add_track(t, 0, Lane::compute, 7);
  add_span(t, compute, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", 0, 100);
  add_span(t, compute, "void at::native::vectorized_elementwise_kernel<4>", 150, 300);
  add_span(t, compute, "void at::native::reduce_kernel<512, 1>", 400, 450);
  auto& comm = add_track(t, 0, Lane::communication, 20);
  add_span(t, comm, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 50, 200, SpanKind::collective);
  add_span(t, comm, "ncclKernel_AllGather_RING_LL_Sum_int8_t", 280, 420, SpanKind::collective);
  auto& copy = add_track(t, 0, Lane::copy, 7);
  add_span(t, copy, "Memcpy DtoH (Device -> Pinned)", 460, 470, SpanKind::memcpy);
  auto& host = add_track(t, 0, Lane::host, 4243);
  add_span(t, host, "aten::mm", 0, 470, SpanKind::host);  // host work never counts as GPU time
  return t;
}

TEST(IntervalSet, MergeJoinsTouchingAndDropsEmpty) {
  const auto m = merge_intervals({{10, 20}, {0, 5}, {5, 8}, {30, 30}, {15, 25}, {40, 35}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].begin_ns, 0);
  EXPECT_EQ(m[0].end_ns, 8);
  EXPECT_EQ(m[1].begin_ns, 10);
  EXPECT_EQ(m[1].end_ns, 25);
  EXPECT_EQ(total_length(m), 23);
}

// Lists made of runs already in order (a timeline's tracks one after another) are merged run by
// run, lists of many runs sorted: either way the union a plain sort and join gives.
TEST(IntervalSet, MergeOfSortedRunsOrOfAnyOrderIsTheUnion) {
  std::mt19937 rng(11);
  for (int k = 0; k < 3000; ++k) {
    const int runs = 1 + static_cast<int>(rng() % 40);
    std::vector<Interval> list;
    for (int r = 0; r < runs; ++r) {
      std::int64_t t = static_cast<std::int64_t>(rng() % 1000);
      const int n = static_cast<int>(rng() % 12);
      for (int i = 0; i < n; ++i) {
        t += static_cast<std::int64_t>(rng() % 50) - (rng() % 7 == 0 ? 60 : 0);  // now and then out of order
        list.push_back({t, t + static_cast<std::int64_t>(rng() % 40) - 5});
      }
    }
    std::vector<Interval> plain = list;
    std::erase_if(plain, [](const Interval& i) { return i.end_ns <= i.begin_ns; });
    std::sort(plain.begin(), plain.end(), [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
    std::vector<Interval> joined;
    for (const Interval& i : plain) {
      if (!joined.empty() && i.begin_ns <= joined.back().end_ns) {
        joined.back().end_ns = std::max(joined.back().end_ns, i.end_ns);
      } else {
        joined.push_back(i);
      }
    }
    const std::vector<Interval> merged = merge_intervals(list);
    ASSERT_EQ(merged.size(), joined.size()) << "case " << k;
    for (std::size_t i = 0; i < merged.size(); ++i) {
      ASSERT_EQ(merged[i].begin_ns, joined[i].begin_ns) << "case " << k << " interval " << i;
      ASSERT_EQ(merged[i].end_ns, joined[i].end_ns) << "case " << k << " interval " << i;
    }
  }
}

TEST(IntervalSet, IntersectionSubtractClip) {
  const auto a = merge_intervals({{0, 100}, {150, 300}});
  const auto b = merge_intervals({{50, 200}, {280, 420}});
  EXPECT_EQ(intersection_length(a, b), 50 + 50 + 20);
  const auto d = subtract(b, a);  // communication not under compute
  EXPECT_EQ(total_length(d), 290 - 120);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].begin_ns, 100);
  EXPECT_EQ(d[0].end_ns, 150);
  EXPECT_EQ(total_length(clip(a, 50, 200)), 50 + 50);
}

TEST(HtaKernelType, FollowsHtaPatterns) {
  // Table from hta/common/types.py: prefix-anchored and case-sensitive like re.match.
  EXPECT_EQ(hta_kernel_type("ncclDevKernel_AllGather_RING_LL"), HtaKernelType::communication);
  EXPECT_EQ(hta_kernel_type("void ncclKernel_AllReduce(...)"), HtaKernelType::communication);
  EXPECT_EQ(hta_kernel_type("hipLaunchKernel"), HtaKernelType::communication);
  EXPECT_EQ(hta_kernel_type("Memcpy HtoD (Pageable -> Device)"), HtaKernelType::memory);
  EXPECT_EQ(hta_kernel_type("Memset (Device)"), HtaKernelType::memory);
  EXPECT_EQ(hta_kernel_type("sm90_xmma_gemm"), HtaKernelType::computation);
  EXPECT_EQ(hta_kernel_type("multimem_all_reduce_kernel"), HtaKernelType::computation);
  EXPECT_EQ(hta_kernel_type("dpsk::ep::dispatch"), HtaKernelType::computation);
  EXPECT_EQ(hta_kernel_type("Context Sync"), HtaKernelType::other);
  EXPECT_EQ(hta_kernel_type("Stream Wait Event"), HtaKernelType::other);
  EXPECT_EQ(hta_kernel_type("cudaLaunchKernel"), HtaKernelType::other);
  EXPECT_EQ(hta_kernel_type("NCCL lowercase is not HTA's"), HtaKernelType::computation);
}

TEST(HtaMetrics, HandComputedOverlapAndBreakdown) {
  const Timeline t = hand_example();
  const auto overlap = hta_comm_comp_overlap(t);
  ASSERT_EQ(overlap.size(), 1u);
  EXPECT_EQ(overlap[0].communication_ns, 290'000);
  EXPECT_EQ(overlap[0].overlap_ns, 140'000);
  EXPECT_DOUBLE_EQ(overlap[0].ratio, 140.0 / 290.0);  // 0.4827586...

  const auto b = hta_temporal_breakdown(t);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].kernel_ns, 470'000);
  EXPECT_EQ(b[0].idle_ns, 10'000);
  EXPECT_EQ(b[0].compute_ns, 300'000);
  EXPECT_EQ(b[0].non_compute_ns, 160'000);
}

TEST(HtaMetrics, NoCommunicationGivesNaNLikeHta) {
  Timeline t;
  auto& c = add_track(t, 3, Lane::compute, 7);
  add_span(t, c, "gemm", 0, 10);
  const auto o = hta_comm_comp_overlap(t);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].rank, 3);
  EXPECT_TRUE(std::isnan(o[0].ratio));
}

TEST(HtaMetrics, RoundingToWholeMicrosecondsAsHtaDoesForFloatTraces) {
  Timeline t;
  auto& c = add_track(t, 0, Lane::compute, 7);
  Span s;
  s.name_id = t.intern("gemm");
  s.start_ns = 1'250;  // 1.25 µs -> ceil 2 µs
  s.duration_ns = 3'500;  // end 4.75 µs -> floor 4 µs
  c.spans.push_back(s);
  s.start_ns = 10'100;  // 10.1 .. 10.9 µs: empty after rounding, dropped
  s.duration_ns = 800;
  c.spans.push_back(s);
  HtaOptions o;
  o.round_to_whole_us = true;
  const auto b = hta_temporal_breakdown(t, o);
  EXPECT_EQ(b[0].kernel_ns, 2'000);
  EXPECT_EQ(b[0].compute_ns, 2'000);
  EXPECT_EQ(hta_temporal_breakdown(t)[0].kernel_ns, 10'900 - 1'250);
}

TEST(RankBreakdown, OursBesideHta) {
  // Rank 1 of the multi-rank fixture: a multimem all-reduce is communication for our rules but
  // computation for HTA's patterns, so the two ratios differ by design.
  Timeline t;
  auto& c = add_track(t, 1, Lane::compute, 7);
  add_span(t, c, "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8", 0, 200);
  auto& m = add_track(t, 1, Lane::compute, 24);
  add_span(t, m, "multimem_all_reduce_kernel<c10::BFloat16, 16>", 100, 300);
  auto& n = add_track(t, 1, Lane::communication, 20);
  add_span(t, n, "ncclDevKernel_AllGather_RING_LL", 250, 350, SpanKind::collective);
  const auto rows = rank_breakdown(t);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].compute_ns, 200'000);
  EXPECT_EQ(rows[0].tensor_core_ns, 200'000);
  EXPECT_EQ(rows[0].communication_ns, 250'000);
  EXPECT_EQ(rows[0].overlap_ns, 100'000);
  EXPECT_EQ(rows[0].exposed_communication_ns, 150'000);
  EXPECT_DOUBLE_EQ(rows[0].overlap_ratio, 0.4);
  EXPECT_DOUBLE_EQ(rows[0].hta_overlap_ratio, 0.5);  // HTA: comp [0,300), comm [250,350)
}

TEST(RankBreakdown, AReceiveWaitsForItsSendAndTheKthCallsOfACollectiveMeet) {
  // Rank 1 posts its receive at 0; rank 0 sends (micro-batch 2, same bytes) from 15 to 25:
  // rank 1 waits 15 µs. An all-reduce called twice on ranks 0 and 1 of stage 0: rank 0 enters
  // both at once (30, 60), rank 1 after computing (40, 80): rank 0 waits 10 and 20 µs.
  Timeline t;
  add_track(t, 0, Lane::communication, 20);
  add_track(t, 1, Lane::communication, 20);
  add_track(t, 1, Lane::compute, 7);
  Track &c0 = t.tracks[0], &c1 = t.tracks[1], &k1 = t.tracks[2];  // taken once every track is in
  add_span(t, c0, "send", 15, 25, SpanKind::send);
  add_span(t, c1, "recv", 0, 25, SpanKind::recv);
  for (Span* s : {&c0.spans.back(), &c1.spans.back()}) s->micro_batch = 2, s->bytes = 4096;
  for (auto [track, start] : {std::pair{&c0, 30}, {&c0, 60}, {&c1, 40}, {&c1, 80}}) {
    add_span(t, *track, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", start, start < 60 ? 50 : 90, SpanKind::collective);
    track->spans.back().stage = 0;
  }
  add_span(t, k1, "gemm", 25, 40);
  add_span(t, k1, "gemm", 50, 80);
  const auto rows = rank_breakdown(t);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].waiting_ns, (10 + 20) * 1000);
  EXPECT_EQ(rows[0].exposed_communication_ns, (10 + 10 + 10) * 1000) << "the send, then each all-reduce once rank 1 came";
  EXPECT_EQ(rows[1].waiting_ns, 15'000);
  EXPECT_EQ(rows[1].exposed_communication_ns, (10 + 10 + 10) * 1000);
}

TEST(RankBreakdown, HandExample) {
  const auto rows = rank_breakdown(hand_example());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].window_ns, 470'000);
  EXPECT_EQ(rows[0].busy_ns, 460'000);
  EXPECT_EQ(rows[0].idle_ns, 10'000);
  EXPECT_EQ(rows[0].memory_ns, 10'000);
  EXPECT_DOUBLE_EQ(rows[0].overlap_ratio, rows[0].hta_overlap_ratio);
}

TEST(IdleGaps, ThresholdFiltersShortGaps) {
  const auto gaps = idle_gaps(hand_example(), 0, 5'000);
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].begin_ns, 450'000);
  EXPECT_EQ(gaps[0].end_ns, 460'000);
  EXPECT_TRUE(idle_gaps(hand_example(), 0, 20'000).empty());
}

// Two-stage GPipe-like pattern (µs): stage 0 F0 F1 then B1 B0; stage 1 waits for F0.
Timeline two_stage(bool tagged) {
  Timeline t;
  t.tracks.reserve(2);
  auto& s0 = add_track(t, 0, Lane::compute, 7);
  auto& s1 = add_track(t, 1, Lane::compute, 7);
  const Phase f = tagged ? Phase::forward : Phase::none, b = tagged ? Phase::backward : Phase::none;
  add_span(t, s0, "fwd", 0, 100, SpanKind::kernel, f);
  add_span(t, s0, "fwd", 100, 200, SpanKind::kernel, f);
  add_span(t, s0, "bwd", 400, 600, SpanKind::kernel, b);
  add_span(t, s0, "bwd", 600, 800, SpanKind::kernel, b);
  add_span(t, s0, "adam", 800, 900, SpanKind::kernel, tagged ? Phase::optimizer : Phase::none);
  add_span(t, s1, "fwd", 100, 200, SpanKind::kernel, f);
  add_span(t, s1, "fwd", 200, 300, SpanKind::kernel, f);
  add_span(t, s1, "bwd", 300, 500, SpanKind::kernel, b);
  add_span(t, s1, "bwd", 500, 700, SpanKind::kernel, b);
  if (tagged) {
    for (auto& span : t.tracks[1].spans) span.stage = 1;  // the tags say which stage ran it
    for (auto& span : t.tracks[0].spans) span.stage = 0;
  }
  return t;
}

TEST(PipelineBubbles, AnnotatedPhasesKeepTheOptimizerOut) {
  const auto rows = pipeline_bubbles(two_stage(true));  // stage tags 0 and 1: pipelined
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].from_annotations);
  // Pipeline window = [0, 800) µs; stage 0's optimizer [800,900) is outside. Stage 0 idles
  // [200,400); stage 1 fills [0,100) and drains [700,800): both 200 µs against 600 µs of work,
  // as the schedule gives every stage the same bubble (schedule_metrics.h).
  for (const auto& row : rows) {
    EXPECT_EQ(row.window_ns, 800'000);
    EXPECT_EQ(row.bubble_ns, 200'000) << "stage " << row.stage;
    EXPECT_EQ(row.busy_ns, 600'000);
    EXPECT_DOUBLE_EQ(row.fraction, 1.0 / 3.0);
  }
  EXPECT_EQ(rows[0].gaps, 1);
  EXPECT_EQ(rows[1].gaps, 2);
}

TEST(PipelineBubbles, InferredFromIdleGapsWithoutAnnotations) {
  BubbleOptions o;
  o.pipeline_ranks = {0, 1};
  const auto rows = pipeline_bubbles(two_stage(false), o);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].from_annotations);
  // Untagged, the optimizer kernel is compute too: window [0, 900), stage 1 drains to 900.
  EXPECT_EQ(rows[0].window_ns, 900'000);
  EXPECT_EQ(rows[0].bubble_ns, 200'000);
  EXPECT_EQ(rows[1].bubble_ns, 300'000);
}

// Issue 17: a data-parallel trace has no pipeline (every rank was called a stage, with an
// 18.4 ms bubble inside a 13.0 ms window). A collective between a stage's ops is exposed
// communication, not bubble; a point-to-point kernel that spins while its stage waits for the
// previous one is bubble, as idle time facing a pipeline transfer is on a predicted timeline.
TEST(PipelineBubbles, NoneWithoutAPipelineAndPointToPointWaitsAreBubble) {
  Timeline dp;
  dp.tracks.reserve(4);
  for (std::int32_t r = 0; r < 2; ++r) {
    auto& c = add_track(dp, r, Lane::compute, 7);
    auto& n = add_track(dp, r, Lane::communication, 20);
    add_span(dp, c, "sm80_gemm", 0, 100);
    add_span(dp, n, "ncclDevKernel_AllReduce_Sum_f32", 100 + 50 * r, 400, SpanKind::collective);
    add_span(dp, c, "sm80_gemm", 400, 500);
  }
  EXPECT_FALSE(is_pipelined(dp));
  EXPECT_TRUE(pipeline_bubbles(dp).empty());

  Timeline pp;
  pp.tracks.reserve(4);
  auto& c0 = add_track(pp, 0, Lane::compute, 7);
  auto& n0 = add_track(pp, 0, Lane::communication, 20);
  auto& c1 = add_track(pp, 1, Lane::compute, 7);
  auto& n1 = add_track(pp, 1, Lane::communication, 20);
  add_span(pp, c0, "fwd", 0, 300);
  add_span(pp, n0, "ncclDevKernel_AllReduce_Sum_f32", 300, 400, SpanKind::collective);  // between its ops
  add_span(pp, c0, "fwd", 600, 900);
  add_span(pp, n1, "ncclDevKernel_SendRecv", 0, 300, SpanKind::collective);  // waits for stage 0
  add_span(pp, c1, "fwd", 300, 500);
  add_span(pp, c1, "fwd", 700, 900);
  EXPECT_TRUE(is_pipelined(pp));
  const auto rows = pipeline_bubbles(pp);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].bubble_ns, 200'000);  // [400, 600); [300, 400) is exposed communication
  EXPECT_EQ(rows[1].bubble_ns, 500'000);  // [0, 300) waiting in the SendRecv, and [500, 700)
}

// On a predicted timeline the measured path gives schedule_bubbles()'s numbers: one definition.
TEST(PipelineBubbles, OnAPredictedTimelineTheyAreTheSchedulesBubbles) {
  Plan plan = default_plan();
  plan.layout.zero_stage = 1;
  for (const auto schedule : {PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}) {
    plan.layout.schedule = schedule;
    plan.layout.vpp = schedule == PipelineSchedule::interleaved ? 3 : 1;
    auto predicted = predict_time(plan, padded_vocab(plan.model.vocab, plan.layout.tp, plan.training.vocab_divisible_by));
    ASSERT_TRUE(predicted.ok()) << predicted.error_text();
    const ScheduleBubbles expected = schedule_bubbles(predicted->timeline);
    BubbleOptions exact;
    exact.min_gap_ns = 0;
    const auto rows = pipeline_bubbles(predicted->timeline, exact);
    ASSERT_EQ(rows.size(), expected.ranks.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].rank, expected.ranks[i]);
      EXPECT_EQ(rows[i].bubble_ns, expected.bubble_ns[i]) << to_string(schedule) << " stage " << i;
      EXPECT_EQ(rows[i].busy_ns, expected.busy_ns[i]);
      EXPECT_DOUBLE_EQ(rows[i].fraction, expected.fraction[i]);
    }
  }
}

TEST(Alignment, SharedOffsetMovesEarliestToZero) {
  Timeline t = hand_example();
  for (auto& tr : t.tracks) {
    for (auto& s : tr.spans) s.start_ns += 1'700'000'000'000'000'000;
  }
  const auto a = compute_alignment(t);
  ASSERT_EQ(a.offsets.size(), 1u);
  EXPECT_EQ(a.offsets[0].offset_ns, -1'700'000'000'000'000'000);
  apply_alignment(t, a);
  EXPECT_EQ(t.begin_ns(), 0);
}

TEST(Alignment, CollectiveEndAlignsTheSameCollective) {
  Timeline t;
  t.tracks.reserve(4);
  auto& r0 = add_track(t, 0, Lane::communication, 20);
  add_span(t, r0, "ncclDevKernel_AllReduce", 1'000, 1'500, SpanKind::collective);
  auto& r1 = add_track(t, 1, Lane::communication, 20);
  add_span(t, r1, "ncclDevKernel_AllReduce", 5'200, 5'800, SpanKind::collective);  // clock 4.3 ms ahead
  auto& c1 = add_track(t, 1, Lane::compute, 7);
  add_span(t, c1, "gemm", 4'000, 5'000);
  AlignOptions o;
  o.mode = AlignMode::collective_end;
  const auto a = compute_alignment(t, o);
  ASSERT_EQ(a.offsets.size(), 2u);
  EXPECT_TRUE(a.offsets[0].anchored);
  EXPECT_TRUE(a.warnings.empty());
  // Rank 1 shifted by 1500 - 5800 = -4300 µs; then the earliest event (rank 0 at 1000 µs vs
  // rank 1's gemm at 4000 - 4300 = -300 µs) goes to 0.
  EXPECT_EQ(a.offsets[1].offset_ns - a.offsets[0].offset_ns, -4'300'000);
  apply_alignment(t, a);
  EXPECT_EQ(t.tracks[0].spans[0].end_ns(), t.tracks[1].spans[0].end_ns());
  EXPECT_EQ(t.begin_ns(), 0);
}

TEST(TimelineDiff, PhaseAndClassDeltas) {
  const Timeline a = two_stage(true);
  Timeline b = two_stage(true);
  for (auto& tr : b.tracks) {
    for (auto& s : tr.spans) {
      if (s.phase == Phase::backward) s.duration_ns += 10'000;
    }
  }
  const auto d = diff_timelines(a, b);
  const auto& bwd = d.by_phase[static_cast<std::size_t>(Phase::backward)];
  EXPECT_EQ(bwd.key, "backward");
  EXPECT_EQ(bwd.a_ns, 4 * 200'000);
  EXPECT_EQ(bwd.delta_ns, 4 * 10'000);
  EXPECT_EQ(d.by_phase[static_cast<std::size_t>(Phase::forward)].delta_ns, 0);
  EXPECT_EQ(d.by_kernel_class[static_cast<std::size_t>(KernelClass::compute)].delta_ns, 40'000);
  EXPECT_EQ(d.a_ranks, 2);
  EXPECT_TRUE(std::isnan(d.by_phase[static_cast<std::size_t>(Phase::recompute)].ratio));
}

}  // namespace
}  // namespace plansight::estimator
