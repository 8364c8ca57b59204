// The memory chart checked through its pixels: every segment of every stage's bar is as many
// pixels tall as its bytes times the chart's scale, the capacity line is drawn at the capacity,
// and the tooltip gives exact bytes.
#include <gtest/gtest.h>

#include <QImage>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/format.h"
#include "plansight/gui/memory_chart.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

// Pixels of `colour` in column x of the plot (the legend above it has swatches of the same colours).
int count_in_column(const QImage& image, int x, const QRectF& plot, const QColor& colour) {
  int n = 0;
  for (int y = static_cast<int>(plot.top()); y <= static_cast<int>(plot.bottom()) + 1 && y < image.height(); ++y) {
    n += image.pixelColor(x, y).rgb() == colour.rgb();
  }
  return n;
}

void expect_bars_match_bytes(const est::MemoryEstimate& memory) {
  MemoryChart chart;
  chart.resize(900, 520);
  chart.setMemory(memory, QStringLiteral("test-gpu"));
  const QImage image = chart.grab().toImage();
  ASSERT_EQ(image.width(), 900);
  const MemoryChartLayout layout = chart.currentLayout();
  ASSERT_EQ(layout.bars.size(), memory.stages.size());
  for (std::size_t i = 0; i < memory.stages.size(); ++i) {
    const int x = static_cast<int>(layout.bars[i].center().x());
    for (std::size_t p = 0; p < kMemoryPartCount; ++p) {
      const auto part = static_cast<MemoryPart>(p);
      const double bytes = memory_part_bytes(memory.stages[i].memory, part);
      const double want_px = bytes * layout.px_per_byte;
      // Edges land on whole pixels: each segment is within a pixel and a half of exact.
      EXPECT_NEAR(count_in_column(image, x, layout.plot, memory_part_colour(part)), want_px, 1.5)
          << "stage " << i << " " << memory_part_name(part).toStdString();
    }
  }
}

TEST(MemoryChart, BarHeightsAreProportionalToBytes) {
  auto e = est::estimate(est::default_plan());
  ASSERT_TRUE(e.ok());
  expect_bars_match_bytes(e->memory);
}

TEST(MemoryChart, APlanThatDoesNotFitRisesAboveTheCapacityLine) {
  est::Plan plan = est::default_plan();
  plan.layout.tp = 2;
  plan.layout.pp = 2;
  auto e = est::estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  ASSERT_FALSE(e->memory.fits);
  expect_bars_match_bytes(e->memory);

  MemoryChart chart;
  chart.resize(900, 520);
  chart.setMemory(e->memory, QStringLiteral("test-gpu"));
  const MemoryChartLayout layout = chart.currentLayout();
  EXPECT_LT(layout.bars[0].top(), layout.capacity_y);
  EXPECT_NEAR(layout.plot.bottom() - layout.capacity_y, e->memory.capacity_bytes * layout.px_per_byte, 1e-9);
  // The dashed line is drawn in the alert colour on its row, between the bars.
  const QImage image = chart.grab().toImage();
  const QColor alert = alert_colour(chart.palette());
  int hits = 0;
  for (int x = static_cast<int>(layout.plot.left()); x < static_cast<int>(layout.bars[0].left()); ++x) {
    for (int dy = -1; dy <= 1; ++dy) hits += image.pixelColor(x, static_cast<int>(layout.capacity_y) + dy).rgb() == alert.rgb();
  }
  EXPECT_GT(hits, 5);
}

TEST(MemoryChart, TooltipGivesExactBytes) {
  auto e = est::estimate(est::default_plan());
  ASSERT_TRUE(e.ok());
  MemoryChart chart;
  chart.resize(900, 520);
  chart.setMemory(e->memory, QString());
  const MemoryChartLayout layout = chart.currentLayout();
  for (const auto& s : layout.segments) {
    if (s.part != MemoryPart::optimizer || s.stage != 1) continue;
    const QString tip = chart.toolTipAt(s.rect.center());
    EXPECT_TRUE(tip.contains(format_bytes_exact(s.bytes))) << tip.toStdString();
    EXPECT_TRUE(tip.contains(QStringLiteral("Stage 1"))) << tip.toStdString();
  }
  EXPECT_TRUE(chart.toolTipAt(QPointF(2, 2)).isEmpty());
}

}  // namespace
}  // namespace plansight::gui
