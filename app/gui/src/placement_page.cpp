// The Placement page (placement_page.h).
#include "plansight/gui/placement_page.h"

#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <QVBoxLayout>
#include <algorithm>

#include "plansight/gui/plan_document.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

constexpr double kCellW = 92, kCellH = 44, kGap = 4, kNodeLabel = 64, kMargin = 6;
constexpr std::size_t kMaxRanks = 16384;  // beyond this the map is not drawn (the legend still is)

QColor stage_colour(std::int64_t stage) {
  static const QColor colours[] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b), QColor(0x59, 0xa1, 0x4f),
                                   QColor(0xb0, 0x7a, 0xa1), QColor(0x76, 0xb7, 0xb2), QColor(0xed, 0xc9, 0x48),
                                   QColor(0xe1, 0x57, 0x59), QColor(0x9c, 0x75, 0x5f)};
  QColor c = colours[static_cast<std::size_t>(stage) % std::size(colours)];
  c.setAlpha(90);
  return c;
}

// Outline colour and width of each kind of group, when a GPU is hovered.
struct GroupPen {
  est::Group group;
  QColor colour;
  double width;
};
const GroupPen kGroupPens[] = {{est::Group::tp, QColor(0xd6, 0x27, 0x28), 3.0},
                               {est::Group::dp, QColor(0x1f, 0x77, 0xb4), 2.2},
                               {est::Group::pp, QColor(0x2c, 0xa0, 0x2c), 1.6},
                               {est::Group::cp, QColor(0x94, 0x67, 0xbd), 1.2}};

}  // namespace

PlacementLayout layout_placement(std::int64_t ranks, std::int64_t gpus_per_node) {
  PlacementLayout out;
  const std::int64_t per_node = std::max<std::int64_t>(1, gpus_per_node);
  for (std::int64_t r = 0; r < ranks; ++r) {
    const double x = kMargin + kNodeLabel + static_cast<double>(r % per_node) * (kCellW + kGap);
    const double y = kMargin + static_cast<double>(r / per_node) * (kCellH + kGap);
    out.cells.emplace_back(x, y, kCellW, kCellH);
  }
  const std::int64_t nodes = (ranks + per_node - 1) / per_node;
  out.size = QSizeF(kMargin * 2 + kNodeLabel + static_cast<double>(per_node) * (kCellW + kGap),
                    kMargin * 2 + static_cast<double>(nodes) * (kCellH + kGap));
  return out;
}

PlacementMap::PlacementMap(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("placementMap"));
  setMouseTracking(true);
}

void PlacementMap::setPlan(const est::Plan& plan) {
  plan_ = plan;
  ranks_ = est::place_ranks(plan);
  if (ranks_.size() > kMaxRanks) ranks_.clear();
  layout_ = layout_placement(static_cast<std::int64_t>(ranks_.size()), plan.cluster.gpus_per_node);
  hovered_ = -1;
  setMinimumSize(layout_.size.toSize());
  updateGeometry();
  update();
}

void PlacementMap::clear() {
  ranks_.clear();
  layout_ = {};
  hovered_ = -1;
  update();
}

QSize PlacementMap::sizeHint() const { return layout_.size.toSize().expandedTo(QSize(400, 200)); }

QString PlacementMap::cellText(std::int64_t rank) const {
  const auto& r = ranks_.at(static_cast<std::size_t>(rank));
  QString text = QStringLiteral("TP %1  DP %2\nPP %3").arg(r.tp).arg(r.dp).arg(r.pp);
  if (plan_.layout.cp > 1) text += QStringLiteral("  CP %1").arg(r.cp);
  return text;
}

std::int64_t PlacementMap::rankAt(const QPointF& pos) const {
  for (std::size_t i = 0; i < layout_.cells.size(); ++i) {
    if (layout_.cells[i].contains(pos)) return static_cast<std::int64_t>(i);
  }
  return -1;
}

void PlacementMap::setHovered(std::int64_t rank) {
  if (rank == hovered_) return;
  hovered_ = rank;
  update();
  emit hoveredChanged(rank);
}

void PlacementMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (ranks_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No map: the plan has errors, or more than 16384 GPUs"));
    return;
  }
  const std::int64_t per_node = std::max<std::int64_t>(1, plan_.cluster.gpus_per_node);
  QFont small = font();
  small.setPointSizeF(std::max(6.5, font().pointSizeF() * 0.85));
  p.setFont(small);
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    const QRectF& cell = layout_.cells[i];
    if (static_cast<std::int64_t>(i) % per_node == 0) {
      p.setPen(palette().color(QPalette::Text));
      p.drawText(QRectF(kMargin, cell.top(), kNodeLabel - 6, cell.height()), Qt::AlignVCenter | Qt::AlignLeft,
                 tr("node %1").arg(ranks_[i].node));
    }
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(stage_colour(ranks_[i].pp));
    p.drawRoundedRect(cell, 4, 4);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(cell.adjusted(4, 2, -4, -2), Qt::AlignCenter, cellText(static_cast<std::int64_t>(i)));
  }
  if (hovered_ < 0 || hovered_ >= static_cast<std::int64_t>(ranks_.size())) return;
  p.setBrush(Qt::NoBrush);
  for (const auto& pen : kGroupPens) {
    p.setPen(QPen(pen.colour, pen.width));
    for (std::int64_t m : est::group_members(plan_, hovered_, pen.group)) {
      p.drawRoundedRect(layout_.cells[static_cast<std::size_t>(m)].adjusted(1.5, 1.5, -1.5, -1.5), 4, 4);
    }
  }
  p.setPen(QPen(palette().color(QPalette::Text), 2.5, Qt::DashLine));
  p.drawRoundedRect(layout_.cells[static_cast<std::size_t>(hovered_)].adjusted(-2, -2, 2, 2), 5, 5);
}

void PlacementMap::mouseMoveEvent(QMouseEvent* event) { setHovered(rankAt(event->position())); }
void PlacementMap::leaveEvent(QEvent*) { setHovered(-1); }

PlacementPage::PlacementPage(PlanDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
  legend_ = new QLabel(this);
  legend_->setObjectName(QStringLiteral("placementLegend"));
  legend_->setWordWrap(true);
  hover_ = new QLabel(tr("Hover a GPU to outline its groups: TP red, DP blue, PP green, CP purple."), this);
  hover_->setObjectName(QStringLiteral("placementHover"));
  hover_->setWordWrap(true);
  map_ = new PlacementMap(this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(map_);
  scroll->setWidgetResizable(false);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(legend_);
  layout->addWidget(hover_);
  layout->addWidget(scroll, 1);
  connect(document_, &PlanDocument::estimateReady, this, &PlacementPage::refresh);
  connect(map_, &PlacementMap::hoveredChanged, this, &PlacementPage::describeHovered);
}

QString PlacementPage::legend() const { return legend_->text(); }

void PlacementPage::refresh() {
  const auto outcome = document_->estimate();
  if (!outcome || !outcome->estimate) {
    legend_->setText(tr("The plan has errors (see the Plan page)."));
    map_->clear();
    return;
  }
  const est::Plan& plan = document_->plan();
  QStringList groups;
  for (const auto& g : est::group_links(plan)) {
    const QString name = QString::fromStdString(std::string(est::group_name(g.group)));
    if (g.size <= 1) continue;
    groups << tr("<b>%1</b> %2 GPUs %3 apart, %4 (%5 GB/s)")
                  .arg(name)
                  .arg(g.size)
                  .arg(g.stride)
                  .arg(g.crosses_nodes ? tr("across nodes") : tr("inside a node"))
                  .arg(g.bandwidth_bytes_per_s / 1e9, 0, 'f', 0);
  }
  legend_->setText(tr("Placement %1 (innermost first), %2 GPUs in nodes of %3. %4. Cells are coloured by pipeline stage.")
                       .arg(QString::fromStdString(est::to_string(plan.layout.placement)))
                       .arg(plan.cluster.gpus)
                       .arg(plan.cluster.gpus_per_node)
                       .arg(groups.isEmpty() ? tr("No parallel groups") : groups.join(QStringLiteral("; "))));
  map_->setPlan(plan);
}

void PlacementPage::describeHovered(std::int64_t rank) {
  if (rank < 0) {
    hover_->setText(tr("Hover a GPU to outline its groups: TP red, DP blue, PP green, CP purple."));
    return;
  }
  const auto& r = map_->ranks().at(static_cast<std::size_t>(rank));
  hover_->setText(tr("Rank %1 on node %2, GPU %3: TP %4, CP %5, DP %6, pipeline stage %7")
                      .arg(r.rank).arg(r.node).arg(r.local).arg(r.tp).arg(r.cp).arg(r.dp).arg(r.pp));
}

}  // namespace plansight::gui
