// PlanSummary: see plan_summary.h.
#include "plansight/gui/plan_summary.h"

#include <QFormLayout>
#include <QLabel>
#include <QProgressBar>
#include <algorithm>
#include <cmath>

#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

namespace {

QLabel* value_label(const char* name, QWidget* parent) {
  auto* label = new QLabel(QStringLiteral("—"), parent);
  label->setObjectName(QString::fromLatin1(name));
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setWordWrap(true);
  return label;
}

}  // namespace

PlanSummary::PlanSummary(PlanDocument* document, QWidget* parent)
    : QGroupBox(tr("Summary"), parent), document_(document) {
  setObjectName(QStringLiteral("planSummary"));
  auto* form = new QFormLayout(this);
  memory_ = value_label("summaryMemory", this);
  memory_bar_ = new QProgressBar(this);
  memory_bar_->setObjectName(QStringLiteral("summaryMemoryBar"));
  memory_bar_->setRange(0, 1000);  // per mille of the capacity, clamped
  memory_bar_->setTextVisible(false);
  memory_bar_->setMaximumHeight(10);
  iteration_ = value_label("summaryIteration", this);
  mfu_ = value_label("summaryMfu", this);
  days_ = value_label("summaryDays", this);
  gpu_hours_ = value_label("summaryGpuHours", this);
  cost_ = value_label("summaryCost", this);
  status_ = value_label("summaryStatus", this);
  form->addRow(tr("Memory per GPU"), memory_);
  form->addRow(QString(), memory_bar_);
  form->addRow(tr("Iteration"), iteration_);
  form->addRow(tr("MFU"), mfu_);
  form->addRow(tr("Training"), days_);
  form->addRow(tr("GPU-hours"), gpu_hours_);
  form->addRow(tr("Cost"), cost_);
  form->addRow(status_);
  connect(document_, &PlanDocument::estimateReady, this, &PlanSummary::refresh);
  refresh();
}

void PlanSummary::refresh() {
  const auto outcome = document_->estimate();
  if (!outcome || !outcome->estimate) {
    for (QLabel* l : {memory_, iteration_, mfu_, days_, gpu_hours_, cost_}) l->setText(QStringLiteral("—"));
    memory_bar_->setValue(0);
    status_->setText(!outcome ? tr("estimating…")
                     : document_->wasCancelled() ? tr("estimate cancelled")
                                                 : tr("the plan has errors: see the fields marked in red"));
    return;
  }
  const auto& e = *outcome->estimate;
  const double total = e.memory.peak.total_bytes();
  const double capacity = e.memory.capacity_bytes;
  memory_->setText(tr("%1 of %2 (%3)")
                       .arg(format_gib(total), format_gib(capacity),
                            e.memory.fits ? tr("fits") : tr("does not fit")));
  const double share = capacity > 0 ? total / capacity : 0;
  memory_bar_->setValue(static_cast<int>(std::lround(std::clamp(share, 0.0, 1.0) * 1000)));
  QPalette bar = memory_bar_->palette();
  if (!e.memory.fits) bar.setColor(QPalette::Highlight, alert_colour(palette()));
  memory_bar_->setPalette(e.memory.fits ? QPalette() : bar);
  const auto& t = e.time;
  iteration_->setText(t.available ? format_seconds(t.iteration_s) + (t.predicted ? tr(" (predicted)") : QString())
                                  : QStringLiteral("—"));
  mfu_->setText(t.available ? format_percent(t.mfu) : QStringLiteral("—"));
  const bool budget = outcome->plan.training.tokens > 0 && t.available;
  days_->setText(budget ? tr("%1 days").arg(format_fixed(t.training_days, 1)) : tr("no token budget"));
  gpu_hours_->setText(budget ? format_count(t.gpu_hours) : QStringLiteral("—"));
  cost_->setText(budget && outcome->plan.cluster.price_per_gpu_hour > 0
                     ? format_money(t.cost) + QLatin1Char(' ') + QString::fromStdString(outcome->plan.cluster.currency)
                     : tr("no price"));
  status_->setText(e.warnings.empty() ? QString() : tr("%n warning(s): see the messages in the form", "",
                                                        static_cast<int>(e.warnings.size())));
}

}  // namespace plansight::gui
