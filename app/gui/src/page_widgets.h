// Small building blocks the result pages share: a read-only table over a model and a widget
// under a bold title.
#pragma once

#include <QString>

class QAbstractItemModel;
class QTableView;
class QWidget;

namespace plansight::gui {

// A table view of `model` named `name` (for tests and stylesheets): no row header, columns sized
// to their contents with the last one stretched, no selection.
QTableView* make_result_table(QAbstractItemModel* model, const QString& name, QWidget* parent);

// `w` under a bold `title`, with no margins around the pair; `w` takes the spare height.
QWidget* titled_widget(const QString& title, QWidget* w, QWidget* parent);

class TimelineWidget;
// A titled timeline with its step-through bar (step_through_bar.h, object name `bar_name`) and
// a line under it saying what the last revealed event is: measured timelines step as the
// predicted one does.
QWidget* stepped_timeline(const QString& title, TimelineWidget* view, const QString& bar_name, QWidget* parent);

}  // namespace plansight::gui
