// See page_widgets.h.
#include "page_widgets.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/gui/step_through_bar.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

QTableView* make_result_table(QAbstractItemModel* model, const QString& name, QWidget* parent) {
  auto* t = new QTableView(parent);
  t->setObjectName(name);
  t->setModel(model);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  return t;
}

QWidget* stepped_timeline(const QString& title, TimelineWidget* view, const QString& bar_name, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  auto* bar = new StepThroughBar(view, box);
  bar->setObjectName(bar_name);
  auto* head = new QHBoxLayout;
  head->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title), box));
  head->addWidget(bar, 1);
  l->addLayout(head);
  l->addWidget(view, 1);
  auto* details = new QLabel(box);
  details->setObjectName(bar_name + QStringLiteral("Details"));
  details->setWordWrap(true);
  details->setVisible(false);
  QObject::connect(bar, &StepThroughBar::detailsChanged, details, [details](const QString& text) {
    details->setText(text);
    details->setVisible(!text.isEmpty());
  });
  l->addWidget(details);
  return box;
}

QWidget* titled_widget(const QString& title, QWidget* w, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  l->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title), box));
  l->addWidget(w, 1);
  return box;
}

}  // namespace plansight::gui
