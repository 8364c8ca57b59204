// SharedTimeAxis: keeps attached timeline views on one time range (see shared_time_axis.h).
#include "plansight/gui/shared_time_axis.h"

#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {

void SharedTimeAxis::attach(TimelineWidget* view) {
  views_.emplace_back(view);
  connect(view, &TimelineWidget::axisChanged, this, [this, view] { follow(view); });
}

void SharedTimeAxis::follow(TimelineWidget* source) {
  if (syncing_) return;
  setAxis(source->axis());
}

void SharedTimeAxis::setAxis(const TimeAxis& axis) {
  if (syncing_) return;
  syncing_ = true;  // each view's setAxis emits axisChanged; do not echo it back
  axis_ = axis;
  for (const auto& v : views_) {
    if (v && (v->axis().begin_ns != axis.begin_ns || v->axis().end_ns != axis.end_ns)) v->setAxis(axis);
  }
  syncing_ = false;
  emit changed();
}

}  // namespace plansight::gui
