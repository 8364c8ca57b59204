// See page_widgets.h.
#include "page_widgets.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

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

QWidget* titled_widget(const QString& title, QWidget* w, QWidget* parent) {
  auto* box = new QWidget(parent);
  auto* l = new QVBoxLayout(box);
  l->setContentsMargins(0, 0, 0, 0);
  l->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title), box));
  l->addWidget(w, 1);
  return box;
}

}  // namespace plansight::gui
