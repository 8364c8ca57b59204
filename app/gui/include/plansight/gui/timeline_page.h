// The Timeline page: the predicted iteration, one row per rank and lane, with zoom and pan
// controls, a legend, the bubble and overlap figures, hover details, and a step-through mode
// that reveals the schedule one event at a time (with a play button for live teaching). "Per
// layer" lays every op out layer by layer, each collective its own span (timeline_layers.h).
#pragma once

#include <QWidget>
#include <cstdint>
#include <memory>

#include "plansight/gui/chart_export.h"
#include "plansight/gui/step_through_bar.h"

class QAction;
class QLabel;
class QToolBar;

namespace plansight::gui {

class PlanDocument;
class TimelineIndex;
class TimelineWidget;

class TimelinePage : public QWidget, public ExportablePage {
  Q_OBJECT

 public:
  explicit TimelinePage(PlanDocument* document, QWidget* parent = nullptr);
  TimelineWidget* timeline() const { return view_; }
  const StepThrough& stepThrough() const { return steps_->stepThrough(); }
  void setStepMode(bool on);
  void setStep(std::size_t k);
  // The layer-by-layer view (the toolbar's "Per layer"); off by default.
  void setPerLayer(bool on);
  bool perLayer() const;
  // Spans laid out per layer allowed in the view: a few hundred thousand ops' worth draws at
  // interactive speed; past it the page says so and shows the ops.
  static constexpr std::size_t kMaxLayerSpans = 1'500'000;

  QString exportTitle() const override { return QStringLiteral("timeline"); }
  QSize exportSize() const override;
  void renderExport(QPainter& painter, const QSize& size) const override;

 private:
  void refresh();
  // The index shown: the layer-by-layer one when asked for and made, else the document's.
  std::shared_ptr<const TimelineIndex> shownIndex();
  QString figuresText() const;
  QString legendHtml() const;

  PlanDocument* document_;
  TimelineWidget* view_;
  QToolBar* toolbar_;
  StepThroughBar* steps_;
  QLabel* figures_;
  QLabel* legend_;
  QLabel* details_;
  QAction* per_layer_;
  std::shared_ptr<const TimelineIndex> layered_;  // of generation layered_generation_
  std::uint64_t layered_generation_ = 0;
  QString layered_message_;  // why there is no layer view for it
};

}  // namespace plansight::gui
