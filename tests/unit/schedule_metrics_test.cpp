// schedule_bubbles() and render_ascii() on hand-built timelines, where every number can be
// checked by eye: the common window, optimizer exclusion, collectives vs sends facing idle
// compute, merged compute streams of one rank, and the ASCII majority rule.
#include "plansight/estimator/schedule_metrics.h"

#include <gtest/gtest.h>

namespace plansight::estimator {
namespace {

Span make_span(std::int64_t start, std::int64_t duration, Phase phase,
               SpanKind kind = SpanKind::kernel) {
  Span s;
  s.start_ns = start;
  s.duration_ns = duration;
  s.phase = phase;
  s.kind = kind;
  return s;
}

Track make_track(std::int32_t rank, Lane lane, std::vector<Span> spans) {
  Track t;
  t.rank = rank;
  t.lane = lane;
  t.spans = std::move(spans);
  return t;
}

// Rank 0 computes [0,10) and [20,30); rank 1 computes [10,20) and [25,30), then an optimizer
// [30,40) that must stay out of the window [0,30). Rank 1's communication lane: a collective
// covering [20,23) (exposed comm, not bubble) and a send covering [23,25) (still bubble).
Timeline two_stages() {
  Timeline t;
  t.tracks.push_back(make_track(
      0, Lane::compute, {make_span(0, 10, Phase::forward), make_span(20, 10, Phase::backward)}));
  t.tracks.push_back(
      make_track(1, Lane::compute,
                 {make_span(10, 10, Phase::forward), make_span(25, 5, Phase::backward),
                  make_span(30, 10, Phase::optimizer)}));
  t.tracks.push_back(make_track(1, Lane::communication,
                                {make_span(20, 3, Phase::communication, SpanKind::collective),
                                 make_span(23, 2, Phase::communication, SpanKind::send)}));
  return t;
}

TEST(ScheduleMetrics, BubbleIsIdleInTheCommonWindowOverIdealCompute) {
  const Timeline t = two_stages();
  const ScheduleBubbles b = schedule_bubbles(t);
  EXPECT_EQ(b.window_begin_ns, 0);
  EXPECT_EQ(b.window_end_ns, 30);
  ASSERT_EQ(b.ranks, (std::vector<std::int32_t>{0, 1}));
  // Busy: the rest of the window, rank 1's exposed collective [20,23) included.
  EXPECT_EQ(b.busy_ns, (std::vector<std::int64_t>{20, 18}));
  EXPECT_EQ(b.bubble_ns, (std::vector<std::int64_t>{10, 12}));  // rank 1: [0,10) + [23,25)
  EXPECT_DOUBLE_EQ(b.fraction[0], 0.5);
  EXPECT_DOUBLE_EQ(b.fraction[1], 12.0 / 18.0);
  EXPECT_DOUBLE_EQ(b.mean_fraction, (0.5 + 12.0 / 18.0) / 2);
  EXPECT_DOUBLE_EQ(b.max_fraction, 12.0 / 18.0);
}

TEST(ScheduleMetrics, AnOptimizerStepInsideTheWindowHidesNoBubble) {
  // Rank 1 ends its backward at 10 and steps its optimizer over [12,20) while rank 0 computes
  // until 30: a real run's step waits for every stage (the gradient-norm clip is global), so
  // rank 1's [10,30) is bubble all the same.
  Timeline t;
  t.tracks.push_back(make_track(0, Lane::compute, {make_span(0, 30, Phase::forward)}));
  t.tracks.push_back(
      make_track(1, Lane::compute, {make_span(0, 10, Phase::backward), make_span(12, 8, Phase::optimizer)}));
  const ScheduleBubbles b = schedule_bubbles(t);
  ASSERT_EQ(b.ranks.size(), 2u);
  EXPECT_EQ(b.bubble_ns[1], 20);
  EXPECT_EQ(b.busy_ns[1], 10);
  EXPECT_DOUBLE_EQ(b.fraction[1], 2.0);
}

TEST(ScheduleMetrics, ActivityAndTimelineGiveTheSameBubble) {
  // Rank 0: occupied [0,10) and [14,30), a DP collective [10,12) in the gap; rank 1: compute
  // [5,25), nothing else. Window [0,30).
  std::vector<RankActivity> ranks(2);
  ranks[0].rank = 0;
  ranks[0].compute_begin_ns = 0, ranks[0].compute_end_ns = 30;
  ranks[0].occupied_begin_ns = 0, ranks[0].occupied_end_ns = 30;
  ranks[0].gaps = {{10, 14}};
  ranks[0].collectives = {{10, 12}, {40, 50}};
  ranks[1].rank = 1;
  ranks[1].compute_begin_ns = 5, ranks[1].compute_end_ns = 25;
  ranks[1].occupied_begin_ns = 5, ranks[1].occupied_end_ns = 25;
  // In place (the simulator's, which keeps the lists): the same report, rank 0's collectives
  // left merged and sorted, the rest as it was; then by value, as the timeline's is.
  std::vector<RankActivity> copy = ranks;
  copy[0].collectives = {{40, 50}, {11, 12}, {10, 11}};
  const ScheduleBubbles in_place = schedule_bubbles_in_place(copy);
  EXPECT_EQ(copy[0].collectives.size(), 2u);
  EXPECT_EQ(copy[0].collectives[0].begin_ns, 10);
  EXPECT_EQ(copy[0].collectives[0].end_ns, 12);
  EXPECT_EQ(copy[0].gaps.size(), 1u);
  const ScheduleBubbles a = schedule_bubbles(std::move(ranks));
  EXPECT_EQ(in_place.bubble_ns, a.bubble_ns);
  EXPECT_EQ(in_place.busy_ns, a.busy_ns);
  Timeline t;
  t.tracks.push_back(make_track(0, Lane::compute, {make_span(0, 10, Phase::forward), make_span(14, 16, Phase::backward)}));
  t.tracks.push_back(make_track(0, Lane::communication,
                                {make_span(10, 2, Phase::communication, SpanKind::collective),
                                 make_span(40, 10, Phase::communication, SpanKind::collective)}));
  t.tracks.push_back(make_track(1, Lane::compute, {make_span(5, 20, Phase::forward)}));
  const ScheduleBubbles b = schedule_bubbles(t);
  EXPECT_EQ(a.bubble_ns, (std::vector<std::int64_t>{2, 10}));
  EXPECT_EQ(a.bubble_ns, b.bubble_ns);
  EXPECT_EQ(a.busy_ns, b.busy_ns);
  EXPECT_EQ(a.window_begin_ns, b.window_begin_ns);
  EXPECT_EQ(a.window_end_ns, b.window_end_ns);
}

// What the Timeline page draws is what it counts: the intervals of bubble_intervals() add up to
// schedule_bubbles()' bubble on every rank (the example above: rank 1's [0,10) and [23,25)).
TEST(ScheduleMetrics, DrawnBubbleIntervalsAddUpToTheBubble) {
  const Timeline t = two_stages();
  const auto drawn = bubble_intervals(t);
  ASSERT_EQ(drawn.size(), 2u);
  EXPECT_EQ(drawn[0].intervals.size(), 1u);  // rank 0: [10,20)
  ASSERT_EQ(drawn[1].intervals.size(), 2u);
  EXPECT_EQ(drawn[1].intervals[0].begin_ns, 0);
  EXPECT_EQ(drawn[1].intervals[0].end_ns, 10);
  EXPECT_EQ(drawn[1].intervals[1].begin_ns, 23);
  EXPECT_EQ(drawn[1].intervals[1].end_ns, 25);
  const ScheduleBubbles b = schedule_bubbles(t);
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    EXPECT_EQ(drawn[i].rank, b.ranks[i]);
    EXPECT_EQ(total_length(drawn[i].intervals), b.bubble_ns[i]) << "rank " << drawn[i].rank;
  }
}

TEST(ScheduleMetrics, ComputeStreamsOfOneRankCountOnce) {
  Timeline t;
  t.tracks.push_back(make_track(0, Lane::compute, {make_span(0, 10, Phase::forward)}));
  t.tracks.push_back(make_track(0, Lane::compute, {make_span(5, 10, Phase::none)}));
  const ScheduleBubbles b = schedule_bubbles(t);
  ASSERT_EQ(b.ranks.size(), 1u);
  EXPECT_EQ(b.busy_ns[0], 15);
  EXPECT_EQ(b.bubble_ns[0], 0);
  EXPECT_TRUE(schedule_bubbles(Timeline{}).ranks.empty());
}

TEST(ScheduleMetrics, AsciiTakesTheMajorityPhaseOfEachBucket) {
  Timeline t;
  // 8 ns timeline at width 4: buckets of 2 ns.
  t.tracks.push_back(make_track(0, Lane::compute,
                                {make_span(0, 3, Phase::forward), make_span(3, 1, Phase::backward),
                                 make_span(6, 2, Phase::optimizer)}));
  t.tracks.push_back(
      make_track(12, Lane::compute,
                 {make_span(0, 1, Phase::recompute), make_span(2, 2, Phase::weight_grad),
                  make_span(4, 1, Phase::none)}));
  t.tracks.push_back(make_track(12, Lane::communication,
                                {make_span(0, 8, Phase::communication, SpanKind::collective)}));
  // Rank 0: [0,2) F; [2,4) F 1 + B 1 -> tie, F first; [4,6) idle; [6,8) O.
  // Rank 12: [0,2) R covers half -> R; [2,4) W; [4,6) # covers half -> #; [6,8) idle.
  EXPECT_EQ(render_ascii(t, 4),
            "r0  |FF.O|\n"
            "r12 |RW#.|\n");
  EXPECT_EQ(render_ascii(t, 8),
            "r0  |FFFB..OO|\n"
            "r12 |R.WW#...|\n");
  // width < 1 -> 1 bucket [0,8): rank 0 busy 6 of 8, mostly F; rank 12 busy 4 of 8, mostly W.
  EXPECT_EQ(render_ascii(t, 0), "r0  |F|\nr12 |W|\n");
  EXPECT_EQ(render_ascii(Timeline{}, 10), "");
}

}  // namespace
}  // namespace plansight::estimator
