// Captioned headline figures (see figure_grid.h).
#include "plansight/gui/figure_grid.h"

#include <QGridLayout>
#include <QLabel>

namespace plansight::gui {

FigureGrid::FigureGrid(int columns, QWidget* parent)
    : QWidget(parent), grid_(new QGridLayout(this)), columns_(columns) {
  grid_->setHorizontalSpacing(18);
  grid_->setVerticalSpacing(4);
}

QLabel* FigureGrid::add(const QString& object_name, const QString& caption, const QString& tooltip) {
  const int row = count_ / columns_;
  const int column = (count_ % columns_) * 2;
  ++count_;
  auto* name = new QLabel(caption, this);
  name->setForegroundRole(QPalette::PlaceholderText);
  auto* value = new QLabel(QStringLiteral("—"), this);
  value->setObjectName(object_name);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont bold = value->font();
  bold.setBold(true);
  value->setFont(bold);
  if (!tooltip.isEmpty()) name->setToolTip(tooltip), value->setToolTip(tooltip);
  grid_->addWidget(name, row, column);
  grid_->addWidget(value, row, column + 1);
  grid_->setColumnStretch(column + 1, 1);
  return value;
}

void FigureGrid::clearValues() {
  for (int i = 0; i < grid_->count(); ++i) {
    auto* label = qobject_cast<QLabel*>(grid_->itemAt(i)->widget());
    if (label && !label->objectName().isEmpty()) label->setText(QStringLiteral("—"));
  }
}

}  // namespace plansight::gui
