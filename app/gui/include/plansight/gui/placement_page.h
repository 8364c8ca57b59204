// The Placement page: one row per node, one cell per GPU, each labelled with the TP/CP/DP/PP
// rank it holds (estimator/placement.h) and filled with its pipeline stage's colour; hovering a
// GPU outlines the members of its TP, CP, DP and PP groups, and the legend says which link each
// kind of group crosses. Follows the plan being edited.
#pragma once

#include <QRectF>
#include <QWidget>
#include <vector>

#include "plansight/estimator/placement.h"

class QLabel;
class QScrollArea;

namespace plansight::gui {

class PlanDocument;

struct PlacementLayout {
  std::vector<QRectF> cells;  // by rank
  QSizeF size;                // the whole map
};
PlacementLayout layout_placement(std::int64_t ranks, std::int64_t gpus_per_node);

class PlacementMap : public QWidget {
  Q_OBJECT

 public:
  explicit PlacementMap(QWidget* parent = nullptr);
  void setPlan(const estimator::Plan& plan);
  void clear();  // no map (the plan is invalid)
  // The hovered rank (-1: none) and, for it, each group's members (tests read them).
  void setHovered(std::int64_t rank);
  std::int64_t hovered() const { return hovered_; }
  std::int64_t rankAt(const QPointF& pos) const;
  const std::vector<estimator::RankPlace>& ranks() const { return ranks_; }
  QString cellText(std::int64_t rank) const;
  QSize sizeHint() const override;

 signals:
  void hoveredChanged(std::int64_t rank);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  estimator::Plan plan_;
  std::vector<estimator::RankPlace> ranks_;
  PlacementLayout layout_;
  std::int64_t hovered_ = -1;
};

class PlacementPage : public QWidget {
  Q_OBJECT

 public:
  explicit PlacementPage(PlanDocument* document, QWidget* parent = nullptr);
  PlacementMap* map() const { return map_; }
  QString legend() const;

 private:
  void refresh();
  void describeHovered(std::int64_t rank);

  PlanDocument* document_;
  QLabel* legend_;
  QLabel* hover_;
  PlacementMap* map_;
};

}  // namespace plansight::gui
