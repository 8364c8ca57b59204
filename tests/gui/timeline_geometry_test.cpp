// Geometry of a timeline frame without painting: wide spans drawn one by one with labels,
// sub-pixel spans folded to about one rectangle per fold width, only the visible index range
// walked, the step-through limit honoured, bubbles placed where the schedule idles.
#include <gtest/gtest.h>

#include <numeric>

#include "plansight/gui/timeline_geometry.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

est::Span span(std::int64_t start, std::int64_t duration, est::Phase phase) {
  est::Span s;
  s.start_ns = start;
  s.duration_ns = duration;
  s.phase = phase;
  return s;
}

// One compute track of n back-to-back spans of `duration`, phases alternating F/B.
TimelineIndex back_to_back(std::size_t n, std::int64_t duration) {
  est::Timeline t;
  est::Track track;
  for (std::size_t i = 0; i < n; ++i) {
    track.spans.push_back(span(static_cast<std::int64_t>(i) * duration, duration,
                               i % 2 ? est::Phase::backward : est::Phase::forward));
  }
  t.tracks.push_back(std::move(track));
  return TimelineIndex(std::move(t));
}

double covered_px(const TimelineGeometry& g) {
  double w = 0;
  for (const auto& f : g.fills) for (const auto& r : f) w += r.width();
  return w;
}

TEST(TimelineGeometry, WideSpansAreSeparateRectanglesWithLabels) {
  const TimelineIndex index = back_to_back(10, 100);
  TimelineGeometry g;
  GeometryOptions options;
  options.x_offset = 150;
  build_geometry(index, TimeAxis{0, 1000, 1000}, {{0, 30, 20}}, options, g);
  EXPECT_EQ(g.spans_visited, 10u);
  ASSERT_EQ(g.fills[static_cast<std::size_t>(SpanStyle::forward)].size(), 5u);
  ASSERT_EQ(g.fills[static_cast<std::size_t>(SpanStyle::backward)].size(), 5u);
  const QRectF& second = g.fills[static_cast<std::size_t>(SpanStyle::backward)][0];
  EXPECT_DOUBLE_EQ(second.left(), 250.0);   // x_offset + 100 ns at 1 ns/px
  EXPECT_DOUBLE_EQ(second.width(), 99.0);   // one device pixel apart from its neighbour
  EXPECT_DOUBLE_EQ(second.top(), 31.0);     // row top + inset
  EXPECT_DOUBLE_EQ(second.height(), 18.0);
  EXPECT_EQ(g.labels.size(), 10u);
}

TEST(TimelineGeometry, SubPixelSpansFoldIntoAtMostOneRectanglePerFoldWidth) {
  struct Row { double dpr; std::size_t max_rects; };
  // 100,000 spans of 1 ns over 1000 px: 0.01 px each. Fold cells are 2 device px.
  const Row rows[] = {{1.0, 500}, {2.0, 1000}};
  for (const bool alternate : {false, true}) {
    est::Timeline t;
    est::Track track;
    for (std::int64_t i = 0; i < 100'000; ++i) {
      // Alternating phases; or stretches of 400 spans (4 px) of one phase, so that cells differ.
      const bool backward = alternate ? i % 2 == 1 : (i / 400) % 2 == 1;
      track.spans.push_back(span(i, 1, backward ? est::Phase::backward : est::Phase::forward));
    }
    t.tracks.push_back(std::move(track));
    const TimelineIndex index(std::move(t));
    for (const Row& r : rows) {
      TimelineGeometry g;
      GeometryOptions options;
      options.device_pixel_ratio = r.dpr;
      build_geometry(index, TimeAxis{0, 100'000, 1000}, {{0, 0, 20}}, options, g);
      // Whole fold cells are jumped by binary search: a few spans per cell are looked at, not all.
      EXPECT_LE(g.spans_visited, 4 * r.max_rects) << r.dpr;
      EXPECT_GE(g.rect_count(), 1u);
      EXPECT_LE(g.rect_count(), r.max_rects) << r.dpr;
      EXPECT_NEAR(covered_px(g), 1000.0, 2.5) << "folded runs leave no holes where spans are back to back";
      EXPECT_TRUE(g.labels.empty());
      if (!alternate) {
        // 4-px stretches of one phase: both colours show, in roughly equal shares.
        double backward_px = 0;
        for (const auto& rect : g.fills[static_cast<std::size_t>(SpanStyle::backward)]) backward_px += rect.width();
        EXPECT_NEAR(backward_px, 500.0, 60.0) << r.dpr;
      }
    }
  }
}

TEST(TimelineGeometry, ShortStretchesInAFoldCellAreWalkedAndTakeTheWidestColour) {
  // Every 3 px: one 1.5-px backward span, nine 0.05-px forward spans, then a 1-px gap.
  est::Timeline t;
  est::Track track;
  std::int64_t now = 0;
  for (int cell = 0; cell < 10; ++cell) {
    track.spans.push_back(span(now, 150, est::Phase::backward));
    now += 150;
    for (int k = 0; k < 9; ++k, now += 5) track.spans.push_back(span(now, 5, est::Phase::forward));
    now = (cell + 1) * 300;
  }
  t.tracks.push_back(std::move(track));
  const TimelineIndex index(std::move(t));
  TimelineGeometry g;
  build_geometry(index, TimeAxis{0, 3000, 30}, {{0, 0, 20}}, GeometryOptions{}, g);
  EXPECT_EQ(g.spans_visited, 100u);
  EXPECT_EQ(g.fills[static_cast<std::size_t>(SpanStyle::backward)].size(), 10u);
  EXPECT_EQ(g.bubbles.size(), 9u);  // the 1-px gaps between cells
  EXPECT_TRUE(g.fills[static_cast<std::size_t>(SpanStyle::forward)].empty());
  EXPECT_FALSE(g.fills[static_cast<std::size_t>(SpanStyle::backward)].empty());
}

TEST(TimelineGeometry, OnlyTheVisibleRangeIsWalked) {
  const TimelineIndex index = back_to_back(100'000, 10);
  TimelineGeometry g;
  build_geometry(index, TimeAxis{500'000, 501'000, 1000}, {{0, 0, 20}}, GeometryOptions{}, g);
  EXPECT_LE(g.spans_visited, 102u);
  EXPECT_GE(g.spans_visited, 100u);
  EXPECT_EQ(g.rect_count(), 100u);  // 10 px each: drawn one by one
}

TEST(TimelineGeometry, StepThroughShowsOnlyTheRevealedPrefix) {
  const TimelineIndex index = back_to_back(10, 100);
  const std::vector<std::size_t> reveal = {3};
  TimelineGeometry g;
  GeometryOptions options;
  options.reveal = &reveal;
  build_geometry(index, TimeAxis{0, 1000, 1000}, {{0, 0, 20}}, options, g);
  EXPECT_EQ(g.spans_visited, 3u);
  EXPECT_EQ(g.rect_count(), 3u);
}

TEST(TimelineGeometry, BubblesSitWhereTheComputeLaneIdles) {
  est::Timeline t;
  t.tracks.push_back({0, est::Lane::compute, -1, "", {span(0, 100, est::Phase::forward), span(300, 100, est::Phase::backward)}});
  t.tracks.push_back({1, est::Lane::compute, -1, "", {span(100, 200, est::Phase::forward)}});
  const TimelineIndex index(std::move(t));
  TimelineGeometry g;
  build_geometry(index, TimeAxis{0, 400, 400}, {{0, 0, 20}, {1, 30, 20}}, GeometryOptions{}, g);
  ASSERT_EQ(g.bubbles.size(), 3u);  // rank 0: [100,300); rank 1: [0,100) and [300,400)
  EXPECT_DOUBLE_EQ(g.bubbles[0].left(), 100.0);
  EXPECT_DOUBLE_EQ(g.bubbles[0].width(), 200.0);
  EXPECT_DOUBLE_EQ(g.bubbles[1].top(), 30.0);
  EXPECT_DOUBLE_EQ(g.bubbles[2].left(), 300.0);
  // With a step-through at 150 ns, the bubbles stop there.
  GeometryOptions options;
  options.bubbles_until_ns = 150;
  build_geometry(index, TimeAxis{0, 400, 400}, {{0, 0, 20}, {1, 30, 20}}, options, g);
  ASSERT_EQ(g.bubbles.size(), 2u);
  EXPECT_DOUBLE_EQ(g.bubbles[0].width(), 50.0);
}

}  // namespace
}  // namespace plansight::gui
