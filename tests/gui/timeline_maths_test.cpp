// Timeline coordinate maths with data tables, no painting: time <-> x, zoom about an anchor, pan,
// clamping, ruler ticks and their labels, visible index ranges and hit testing on overlapping
// spans, pipeline bubbles, and the step-through's per-track prefixes.
#include <gtest/gtest.h>

#include "plansight/gui/format.h"
#include "plansight/gui/step_through.h"
#include "plansight/gui/timeline_coordinates.h"
#include "plansight/gui/timeline_index.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

TEST(TimeAxis, MapsTimeToXAndBack) {
  struct Row { std::int64_t begin, end; double width; std::int64_t t; double x; };
  const Row rows[] = {
      {0, 1000, 100, 0, 0},          {0, 1000, 100, 500, 50},       {0, 1000, 100, 1000, 100},
      {0, 1000, 100, -100, -10},     {1000, 3000, 200, 2000, 100},  {1000, 3000, 200, 3500, 250},
      {-500, 500, 1000, 0, 500},     {0, 30'000'000'000, 1500, 15'000'000'000, 750},
  };
  for (const Row& r : rows) {
    const TimeAxis axis{r.begin, r.end, r.width};
    EXPECT_DOUBLE_EQ(axis.x_of(r.t), r.x) << r.t;
    EXPECT_EQ(axis.ns_at(r.x), r.t) << r.x;
  }
}

TEST(TimeAxis, ZoomKeepsTheTimeUnderTheAnchor) {
  struct Row { double factor, anchor_x; std::int64_t begin, end; };
  const Row rows[] = {
      {2, 0, 0, 500},      {2, 100, 500, 1000},  {2, 50, 250, 750},
      {0.5, 50, -500, 1500}, {4, 25, 187, 437},  // anchor 25 px = 250 ns stays at 25 px
  };
  const TimeAxis axis{0, 1000, 100};
  for (const Row& r : rows) {
    const TimeAxis z = axis.zoomed(r.factor, r.anchor_x);
    EXPECT_NEAR(static_cast<double>(z.begin_ns), static_cast<double>(r.begin), 1.0) << r.factor << " " << r.anchor_x;
    EXPECT_NEAR(static_cast<double>(z.end_ns), static_cast<double>(r.end), 1.0) << r.factor << " " << r.anchor_x;
    EXPECT_NEAR(static_cast<double>(z.ns_at(r.anchor_x)), static_cast<double>(axis.ns_at(r.anchor_x)), 1.0);
  }
  // Never below the minimum span, whatever the factor.
  EXPECT_EQ(axis.zoomed(1e9, 50, 100).span_ns(), 100);
  EXPECT_EQ(axis.zoomed(0, 50).span_ns(), 1000);  // invalid factor: unchanged
}

TEST(TimeAxis, PansAndClampsToTheData) {
  const TimeAxis axis{100, 200, 100};
  EXPECT_EQ(axis.panned(10).begin_ns, 110);
  EXPECT_EQ(axis.panned(-10).end_ns, 190);
  struct Row { std::int64_t begin, end, data_begin, data_end, want_begin, want_end; };
  const Row rows[] = {
      {100, 200, 0, 1000, 100, 200},   // inside: unchanged
      {-50, 50, 0, 1000, 0, 100},      // before the data: moved, not resized
      {950, 1050, 0, 1000, 900, 1000}, // after the data
      {-10, 2000, 0, 1000, 0, 1000},   // wider than the data: the data
  };
  for (const Row& r : rows) {
    const TimeAxis c = TimeAxis{r.begin, r.end, 100}.clamped(r.data_begin, r.data_end);
    EXPECT_EQ(c.begin_ns, r.want_begin);
    EXPECT_EQ(c.end_ns, r.want_end);
  }
  EXPECT_EQ(fit_axis(5, 5, 0).span_ns(), 1);
  EXPECT_EQ(fit_axis(5, 5, 0).width_px, 1);
}

TEST(NiceTicks, StepsAreOneTwoFiveAndCoverTheView) {
  struct Row { std::int64_t span_ns; double width, min_px; std::int64_t step; };
  const Row rows[] = {
      {1000, 100, 10, 100},  {1000, 100, 11, 200},  {1000, 100, 25, 500},
      {1000, 100, 60, 1000}, {30'000'000'000, 1200, 90, 5'000'000'000},
      {7, 700, 90, 1},
  };
  for (const Row& r : rows) {
    const Ticks t = nice_ticks(TimeAxis{0, r.span_ns, r.width}, r.min_px);
    EXPECT_EQ(t.step_ns, r.step) << r.span_ns << " " << r.min_px;
    ASSERT_FALSE(t.at_ns.empty());
    EXPECT_EQ(t.at_ns.front(), 0);
    EXPECT_LE(t.at_ns.back(), r.span_ns);
  }
  // Ticks count from the origin, not from absolute zero.
  const Ticks shifted = nice_ticks(TimeAxis{1030, 2030, 100}, 10, 1030);
  EXPECT_EQ(shifted.at_ns.front(), 1030);
  const Ticks negative = nice_ticks(TimeAxis{-250, 750, 100}, 10, 0);
  EXPECT_EQ(negative.at_ns.front(), -200);
}

TEST(FormatTick, UnitFollowsTheStep) {
  struct Row { std::int64_t t, step; const char* text; };
  const Row rows[] = {
      {5'000'000'000, 5'000'000'000, "5 s"}, {11'500'000'000, 500'000'000, "11.5 s"},
      {250'000'000, 50'000'000, "250 ms"},   {1'500'000, 500'000, "1.5 ms"},
      {20'000, 10'000, "20 µs"},             {300, 100, "0.3 µs"}, {40, 10, "40 ns"},
  };
  for (const Row& r : rows) EXPECT_EQ(format_tick(r.t, r.step), QString::fromUtf8(r.text)) << r.t;
}

est::Span span(std::int64_t start, std::int64_t duration, est::Phase phase = est::Phase::forward, int micro_batch = 0) {
  est::Span s;
  s.start_ns = start;
  s.duration_ns = duration;
  s.phase = phase;
  s.micro_batch = micro_batch;
  return s;
}

TEST(TimelineIndex, VisibleRangeFindsOverlappingSpansByBinarySearch) {
  est::Timeline t;
  est::Track track;
  // A long span overlapping later short ones: its end keeps the running max high.
  track.spans = {span(0, 1000), span(100, 10), span(200, 10), span(1500, 100), span(2000, 10)};
  t.tracks.push_back(track);
  const TimelineIndex index(std::move(t));
  EXPECT_FALSE(index.track_index(0).ends_sorted);
  struct Row { std::int64_t begin, end; std::size_t first, last; };
  const Row rows[] = {
      {500, 600, 0, 3},     // only the long span intersects; 1 and 2 are candidates
      {1000, 1500, 3, 3},   // the gap: nothing
      {1000, 1501, 3, 4},   // touches span 3
      {1599, 1600, 3, 4},
      {1600, 2000, 4, 4},   // half-open: span 3 ends at 1600, span 4 starts at 2000
      {-100, 5000, 0, 5},
      {3000, 4000, 5, 5},
  };
  for (const Row& r : rows) {
    const auto [first, last] = index.visible(0, r.begin, r.end);
    EXPECT_EQ(first, r.first) << r.begin << ".." << r.end;
    EXPECT_EQ(last, r.last) << r.begin << ".." << r.end;
  }
  EXPECT_EQ(index.begin_ns(), 0);
  EXPECT_EQ(index.end_ns(), 2010);
}

TEST(TimelineIndex, SpanAtPrefersTheShortestCoveringSpan) {
  est::Timeline t;
  est::Track track;
  track.spans = {span(0, 1000), span(100, 10), span(200, 10), span(1500, 100)};
  t.tracks.push_back(track);
  const TimelineIndex index(std::move(t));
  struct Row { std::int64_t t, tolerance; std::ptrdiff_t want; };
  const Row rows[] = {{50, 0, 0}, {105, 0, 1}, {205, 0, 2}, {1200, 0, -1}, {1495, 10, 3}, {1700, 50, -1}, {1650, 60, 3}};
  for (const Row& r : rows) EXPECT_EQ(index.span_at(0, r.t, r.tolerance), r.want) << r.t;
}

TEST(TimelineIndex, BubblesAreIdleComputeNotFacingACollective) {
  est::Timeline t;
  est::Track r0{0, est::Lane::compute, -1, "", {span(0, 100), span(300, 100, est::Phase::backward)}};
  est::Track r0c{0, est::Lane::communication, -1, "", {}};
  est::Span ar = span(150, 50, est::Phase::communication);
  ar.kind = est::SpanKind::collective;
  r0c.spans.push_back(ar);
  est::Track r1{1, est::Lane::compute, -1, "", {span(100, 100), span(200, 100, est::Phase::backward)}};
  t.tracks = {r1, r0c, r0};  // display order sorts them by rank, then lane
  const TimelineIndex index(std::move(t));
  ASSERT_EQ(index.display_order().size(), 3u);
  EXPECT_EQ(index.track(index.display_order()[0]).rank, 0);
  EXPECT_EQ(index.track(index.display_order()[0]).lane, est::Lane::compute);
  const auto& b0 = index.track_index(2).bubbles;  // rank 0 compute: [100,150) and [200,300)
  ASSERT_EQ(b0.size(), 2u);
  EXPECT_EQ(b0[0].begin_ns, 100);
  EXPECT_EQ(b0[0].end_ns, 150);
  EXPECT_EQ(b0[1].begin_ns, 200);
  EXPECT_EQ(b0[1].end_ns, 300);
  const auto& b1 = index.track_index(0).bubbles;  // rank 1: [0,100) and [300,400)
  ASSERT_EQ(b1.size(), 2u);
  EXPECT_EQ(b1[0].end_ns, 100);
  EXPECT_EQ(b1[1].begin_ns, 300);
  const auto [f, l] = index.visible_bubbles(2, 120, 210);
  EXPECT_EQ(f, 0u);
  EXPECT_EQ(l, 2u);
}

TEST(StepThrough, RevealsEventsInStartOrderAsPerTrackPrefixes) {
  est::Timeline t;
  t.tracks.push_back({0, est::Lane::compute, -1, "", {span(0, 10), span(20, 10), span(40, 10)}});
  t.tracks.push_back({1, est::Lane::compute, -1, "", {span(10, 10), span(20, 10)}});
  const TimelineIndex index(std::move(t));
  StepThrough steps(index);
  ASSERT_EQ(steps.size(), 5u);
  // Order: (0,0)@0, (1,0)@10, (0,1)@20, (1,1)@20, (0,2)@40.
  struct Row { std::size_t k, track0, track1; std::int64_t until; };
  const Row rows[] = {{0, 0, 0, 0}, {1, 1, 0, 0}, {2, 1, 1, 10}, {3, 2, 1, 20}, {4, 2, 2, 20}, {5, 3, 2, 40}, {9, 3, 2, 40}, {2, 1, 1, 10}};
  for (const Row& r : rows) {
    steps.set_step(r.k);
    EXPECT_EQ(steps.revealed()[0], r.track0) << r.k;
    EXPECT_EQ(steps.revealed()[1], r.track1) << r.k;
    EXPECT_EQ(steps.revealed_until_ns(), r.until) << r.k;
  }
  EXPECT_EQ(steps.event(1).track, 1u);
  EXPECT_EQ(steps.event(3).track, 1u);
}

}  // namespace
}  // namespace plansight::gui
