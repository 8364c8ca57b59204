// The Timeline page: the predicted iteration, one row per rank and lane, with zoom and pan
// controls, a legend, the bubble and overlap figures, hover details, and a step-through mode
// that reveals the schedule one event at a time (with a play button for live teaching).
#pragma once

#include <QWidget>

#include "plansight/gui/chart_export.h"
#include "plansight/gui/step_through_bar.h"

class QLabel;
class QToolBar;

namespace plansight::gui {

class PlanDocument;
class TimelineWidget;

class TimelinePage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit TimelinePage(PlanDocument* document, QWidget* parent = nullptr);
  TimelineWidget* timeline() const { return view_; }
  const StepThrough& stepThrough() const { return steps_->stepThrough(); }
  void setStepMode(bool on);
  void setStep(std::size_t k);

  QString exportTitle() const override { return QStringLiteral("timeline"); }
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 private:
  void refresh();
  QString figuresText() const;
  QString legendHtml() const;

  PlanDocument* document_;
  TimelineWidget* view_;
  QToolBar* toolbar_;
  StepThroughBar* steps_;
  QLabel* figures_;
  QLabel* legend_;
  QLabel* details_;
};

}  // namespace plansight::gui
