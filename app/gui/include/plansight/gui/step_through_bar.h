// StepThroughBar: the step-through controls of a TimelineWidget, for any timeline it shows —
// predicted (Timeline page) or measured (Probe and Compare pages): a Step-through toggle, first
// / previous / next / last event, Play at a chosen pace (1 to 2,000 events per second), a
// slider and the step count. It follows the widget's timeline (timelineChanged) and says what
// the last revealed event is (detailsChanged), for a details line beside the view.
#pragma once

#include <QToolBar>

#include "plansight/gui/step_through.h"

class QAction;
class QComboBox;
class QLabel;
class QSlider;
class QTimer;

namespace plansight::gui {

class TimelineWidget;

class StepThroughBar : public QToolBar {
  Q_OBJECT

 public:
  explicit StepThroughBar(TimelineWidget* view, QWidget* parent = nullptr);

  const StepThrough& stepThrough() const { return steps_; }
  bool stepMode() const;
  void setStepMode(bool on);
  void setStep(std::size_t k);

 signals:
  // The revealed event's details (span_details), a prompt at step 0, empty when stepping ends.
  void detailsChanged(const QString& details);

 private:
  void reset();  // the view's timeline changed
  void apply();

  TimelineWidget* view_;
  StepThrough steps_;
  QAction* mode_;
  QAction* play_;
  QComboBox* speed_;
  QSlider* slider_;
  QLabel* label_;
  QTimer* timer_;
  std::vector<QAction*> controls_;  // shown only in step mode
};

}  // namespace plansight::gui
