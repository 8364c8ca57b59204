// The Placement page: cells laid out one row per node (rank 13 of nodes of 8 sits in row 1,
// column 5), the labels of the ranks' TP/DP/PP coordinates, hovering a GPU names it, and the
// legend says which groups cross nodes — for TP 4 x PP 2 x DP 4 on 32 GPUs in Megatron's order.
#include <gtest/gtest.h>

#include <QImage>
#include <QLabel>

#include "gui_test_support.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/placement_page.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

TEST(PlacementLayout, OneRowPerNode) {
  const auto layout = layout_placement(32, 8);
  ASSERT_EQ(layout.cells.size(), 32u);
  EXPECT_DOUBLE_EQ(layout.cells[13].top(), layout.cells[8].top()) << "ranks 8..15 share node 1's row";
  EXPECT_GT(layout.cells[13].top(), layout.cells[7].top());
  EXPECT_DOUBLE_EQ(layout.cells[13].left(), layout.cells[5].left()) << "GPU 5 of its node";
  EXPECT_GE(layout.size.height(), layout.cells[31].bottom());
  EXPECT_GE(layout.size.width(), layout.cells[7].right());
}

TEST(PlacementPage, LabelsHoverAndLegend) {
  PlanDocument document;
  est::Plan p = est::default_plan();
  p.cluster.gpus = 32;
  p.layout.tp = 4;
  p.layout.pp = 2;
  p.training.global_batch = 64;
  document.replacePlan(p);
  ASSERT_TRUE(test::wait_idle(document));
  PlacementPage page(&document);
  page.resize(1000, 600);
  document.editPlan(p);  // the page listens from now on
  ASSERT_TRUE(test::wait_idle(document));
  PlacementMap* map = page.map();
  ASSERT_EQ(map->ranks().size(), 32u);
  EXPECT_EQ(map->cellText(13), QStringLiteral("TP 1  DP 3\nPP 0"));
  EXPECT_EQ(map->cellText(29), QStringLiteral("TP 1  DP 3\nPP 1"));
  const auto cell = layout_placement(32, 8).cells[13];
  EXPECT_EQ(map->rankAt(cell.center()), 13);
  EXPECT_EQ(map->rankAt(QPointF(1, 1)), -1);
  map->setHovered(13);
  EXPECT_EQ(map->hovered(), 13);
  EXPECT_TRUE(page.findChild<QLabel*>(QStringLiteral("placementHover"))->text().startsWith(QStringLiteral("Rank 13 on node 1, GPU 5")));
  EXPECT_TRUE(page.legend().contains(QStringLiteral("<b>TP</b> 4 GPUs 1 apart, inside a node"))) << page.legend().toStdString();
  EXPECT_TRUE(page.legend().contains(QStringLiteral("<b>PP</b> 2 GPUs 16 apart, across nodes"))) << page.legend().toStdString();
  EXPECT_FALSE(page.legend().contains(QStringLiteral("<b>CP</b>"))) << "CP 1 has no group to show";
  const QImage image = map->grab().toImage();
  ASSERT_FALSE(image.isNull());
  EXPECT_GE(image.width(), static_cast<int>(layout_placement(32, 8).size.width()));

  est::Plan broken = p;
  broken.layout.tp = 3;
  document.editPlan(broken);
  ASSERT_TRUE(test::wait_idle(document));
  EXPECT_TRUE(map->ranks().empty());
  EXPECT_TRUE(page.legend().contains(QStringLiteral("errors")));
}

}  // namespace
}  // namespace plansight::gui
