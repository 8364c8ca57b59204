// The Plan page's live summary beside the form: what an edit does, where it is typed — memory of
// the most loaded GPU against its capacity (a bar that turns red past it), iteration time, MFU,
// training days, GPU-hours and cost with its currency. The numbers are the estimate the other
// pages show (PlanDocument's latest outcome), so the summary and the Memory and Time & cost pages
// never disagree.
#pragma once

#include <QGroupBox>

class QLabel;
class QProgressBar;

namespace plansight::gui {

class PlanDocument;

class PlanSummary : public QGroupBox {
  Q_OBJECT

 public:
  explicit PlanSummary(PlanDocument* document, QWidget* parent = nullptr);

 private:
  void refresh();

  PlanDocument* document_;
  QLabel* memory_;
  QProgressBar* memory_bar_;
  QLabel* iteration_;
  QLabel* mfu_;
  QLabel* days_;
  QLabel* gpu_hours_;
  QLabel* cost_;
  QLabel* status_;
};

}  // namespace plansight::gui
