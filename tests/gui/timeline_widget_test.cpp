// The timeline widget checked through its pixels and its input: spans in their phase colours,
// bubbles drawn exactly where the schedule idles (hand-made and the predicted default plan),
// zoom about the cursor, keyboard zoom and pan, hit testing.
#include <gtest/gtest.h>

#include <QImage>
#include <QKeyEvent>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

est::Span span(std::int64_t start_us, std::int64_t duration_us, est::Phase phase, int mb) {
  est::Span s;
  s.start_ns = start_us * 1000;
  s.duration_ns = duration_us * 1000;
  s.phase = phase;
  s.micro_batch = mb;
  return s;
}

// Rank 0: F 0-100 us, idle 100-300, B 300-400. Rank 1: idle 0-100, F 100-300, idle 300-400.
std::shared_ptr<const TimelineIndex> two_ranks() {
  est::Timeline t;
  t.tracks.push_back({0, est::Lane::compute, -1, "", {span(0, 100, est::Phase::forward, 0), span(300, 100, est::Phase::backward, 0)}});
  t.tracks.push_back({1, est::Lane::compute, -1, "", {span(100, 200, est::Phase::forward, 0)}});
  return std::make_shared<const TimelineIndex>(std::move(t));
}

QColor blend(const QColor& under, const QColor& over) {
  const double a = over.alphaF();
  return QColor::fromRgbF(static_cast<float>(under.redF() * (1 - a) + over.redF() * a),
                          static_cast<float>(under.greenF() * (1 - a) + over.greenF() * a),
                          static_cast<float>(under.blueF() * (1 - a) + over.blueF() * a));
}

void expect_colour(const QImage& image, double x, double y, const QColor& want, const char* what) {
  const QColor got = image.pixelColor(static_cast<int>(x), static_cast<int>(y));
  EXPECT_NEAR(got.red(), want.red(), 3) << what;
  EXPECT_NEAR(got.green(), want.green(), 3) << what;
  EXPECT_NEAR(got.blue(), want.blue(), 3) << what;
}

struct Fixture {
  TimelineWidget view;
  Fixture(std::shared_ptr<const TimelineIndex> index, int height) {
    view.resize(static_cast<int>(TimelineWidget::kLabelWidth) + 600, height);
    view.show();
    view.setTimeline(std::move(index), {});
    view.fitAll();
  }
  double x_at(std::int64_t t_ns) const { return TimelineWidget::kLabelWidth + view.axis().x_of(t_ns); }
  QImage image() const { return view.viewport()->grab().toImage(); }
};

TEST(TimelineWidget, DrawsSpansInPhaseColoursAndBubblesWhereTheScheduleIdles) {
  Fixture f(two_ranks(), 200);
  const QImage image = f.image();
  const QPalette& pal = f.view.palette();
  const double r0 = TimelineWidget::kRulerHeight + kComputeRowPx / 2;
  const double r1 = TimelineWidget::kRulerHeight + kComputeRowPx + kRankGapPx + kComputeRowPx / 2;
  const QColor bubble0 = blend(pal.color(QPalette::Base), bubble_colour());
  const QColor bubble1 = blend(pal.color(QPalette::AlternateBase), bubble_colour());  // odd ranks are striped
  // Probes avoid the 100 us grid lines and the micro-batch labels in the middle of spans.
  expect_colour(image, f.x_at(20'000), r0, style_colour(SpanStyle::forward), "rank 0 forward");
  expect_colour(image, f.x_at(170'000), r0, bubble0, "rank 0 bubble");
  expect_colour(image, f.x_at(320'000), r0, style_colour(SpanStyle::backward), "rank 0 backward");
  expect_colour(image, f.x_at(50'000), r1, bubble1, "rank 1 warm-up bubble");
  expect_colour(image, f.x_at(130'000), r1, style_colour(SpanStyle::forward), "rank 1 forward");
  expect_colour(image, f.x_at(350'000), r1, bubble1, "rank 1 drain bubble");
}

TEST(TimelineWidget, PredictedDefaultPlanShowsTheWarmUpBubbleOnTheLastStage) {
  const TimelineOutcome outcome = compute_timeline(compute_estimate(est::default_plan()));
  ASSERT_TRUE(outcome.index) << outcome.message.toStdString();
  Fixture f(outcome.index, 480);
  const QImage image = f.image();
  const auto rows = layout_rows(*outcome.index, TimelineWidget::kRulerHeight);
  const TimelineRow* first = nullptr;
  const TimelineRow* last = nullptr;
  for (const auto& r : rows) {
    const auto& track = outcome.index->track(r.track);
    if (track.lane != est::Lane::compute) continue;
    if (!first) first = &r;
    last = &r;
  }
  ASSERT_TRUE(first && last && first != last);
  const auto& first_span = outcome.index->track(first->track).spans.front();
  const auto& last_span = outcome.index->track(last->track).spans.front();
  ASSERT_GT(last_span.start_ns, first_span.end_ns()) << "the last stage waits for the first forward passes";
  // Halfway through the last stage's wait: idle there, bubble-tinted; the first stage is busy.
  const std::int64_t t = last_span.start_ns / 2;
  const QColor got = image.pixelColor(static_cast<int>(f.x_at(t)), static_cast<int>(last->y + last->height / 2));
  const QColor base = outcome.index->track(last->track).rank % 2 ? f.view.palette().color(QPalette::AlternateBase)
                                                                 : f.view.palette().color(QPalette::Base);
  const QColor want = blend(base, bubble_colour());
  EXPECT_NEAR(got.red(), want.red(), 3);
  EXPECT_NEAR(got.green(), want.green(), 3);
  expect_colour(image, f.x_at(first_span.start_ns + first_span.duration_ns / 4), first->y + first->height / 2,
                style_colour(style_of(first_span)), "first stage starts at once");
}

TEST(TimelineWidget, ZoomsAboutTheCursorAndPansWithKeys) {
  Fixture f(two_ranks(), 200);
  const TimeAxis before = f.view.axis();
  ASSERT_EQ(before.begin_ns, 0);
  ASSERT_EQ(before.end_ns, 400'000);
  // One wheel notch at plot x = 150 zooms by 1.25 keeping the time under the cursor.
  const QPointF at(TimelineWidget::kLabelWidth + 150, 60);
  const std::int64_t t_under = before.ns_at(150);
  QWheelEvent wheel(at, f.view.viewport()->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(f.view.viewport(), &wheel);
  EXPECT_NEAR(static_cast<double>(f.view.axis().span_ns()), 400'000 / 1.25, 2);
  EXPECT_NEAR(static_cast<double>(f.view.axis().ns_at(150)), static_cast<double>(t_under), 700);  // 1 px
  // '+' zooms by 1.5 about the centre; Right pans by a tenth of the plot.
  const std::int64_t span = f.view.axis().span_ns();
  QTest::keyClick(&f.view, Qt::Key_Plus);
  EXPECT_NEAR(static_cast<double>(f.view.axis().span_ns()), static_cast<double>(span) / 1.5, 2);
  const std::int64_t begin = f.view.axis().begin_ns;
  QTest::keyClick(&f.view, Qt::Key_Right);
  EXPECT_NEAR(static_cast<double>(f.view.axis().begin_ns - begin), 0.1 * static_cast<double>(f.view.axis().span_ns()), 2);
  // Panning stops at the data; '0' fits again.
  for (int i = 0; i < 50; ++i) QTest::keyClick(&f.view, Qt::Key_Left);
  EXPECT_EQ(f.view.axis().begin_ns, 0);
  QTest::keyClick(&f.view, Qt::Key_0);
  EXPECT_EQ(f.view.axis().span_ns(), 400'000);
}

TEST(TimelineWidget, HitTestingFindsTheSpanUnderThePointer) {
  Fixture f(two_ranks(), 200);
  const int r0 = static_cast<int>(TimelineWidget::kRulerHeight + kComputeRowPx / 2);
  const auto [track, span] = f.view.spanAt(QPoint(static_cast<int>(f.x_at(350'000)), r0));
  EXPECT_EQ(track, 0);
  EXPECT_EQ(span, 1);
  EXPECT_EQ(f.view.spanAt(QPoint(static_cast<int>(f.x_at(200'000)), r0)).first, -1);
  EXPECT_EQ(f.view.spanAt(QPoint(10, r0)).first, -1);  // the label column
  QSignalSpy hovered(&f.view, &TimelineWidget::hovered);
  QTest::mouseMove(f.view.viewport(), QPoint(static_cast<int>(f.x_at(20'000)), r0));
  ASSERT_GE(hovered.count(), 1);
  EXPECT_TRUE(hovered.last().at(0).toString().contains(QStringLiteral("forward")));
}

// A CPU probe span says how much of it its thread ran on a core; a span without the clock says
// nothing of it.
TEST(TimelineWidget, SpanDetailsGiveTheThreadsCpuTimeWhereMeasured) {
  est::Timeline t;
  auto waited = span(0, 100, est::Phase::forward, 0);
  waited.cpu_ns = 25'000;
  t.tracks.push_back({0, est::Lane::compute, -1, "", {waited, span(100, 50, est::Phase::backward, 0)}});
  const TimelineIndex index(std::move(t));
  const QString clocked = span_details(index, 0, 0);
  EXPECT_TRUE(clocked.contains(QStringLiteral("on a core (25%)"))) << clocked.toStdString();
  EXPECT_FALSE(span_details(index, 0, 1).contains(QStringLiteral("on a core")));
}

}  // namespace
}  // namespace plansight::gui
