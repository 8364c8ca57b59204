// One zoom/pan state shared by several timeline views: zooming or panning any attached view
// moves the others to the same time range (the Compare page's predicted and measured steps).
#pragma once

#include <QObject>
#include <QPointer>
#include <vector>

#include "plansight/gui/timeline_coordinates.h"

namespace plansight::gui {

class TimelineWidget;

class SharedTimeAxis : public QObject {
  Q_OBJECT

 public:
  explicit SharedTimeAxis(QObject* parent = nullptr) : QObject(parent) {}
  void attach(TimelineWidget* view);
  const TimeAxis& axis() const { return axis_; }
  void setAxis(const TimeAxis& axis);  // applied to every attached view

 signals:
  void changed();

 private:
  void follow(TimelineWidget* source);

  std::vector<QPointer<TimelineWidget>> views_;
  TimeAxis axis_;
  bool syncing_ = false;
};

}  // namespace plansight::gui
