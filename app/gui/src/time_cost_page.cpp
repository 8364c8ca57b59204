// Time & cost page (see time_cost_page.h).
#include "plansight/gui/time_cost_page.h"

#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/gui/breakdown_chart.h"
#include "plansight/gui/breakdown_model.h"
#include "plansight/gui/diagnostic_model.h"
#include "plansight/gui/figure_grid.h"
#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui {

namespace {

QTableView* make_table(QAbstractItemModel* model, const QString& name, QWidget* parent) {
  auto* table = new QTableView(parent);
  table->setObjectName(name);
  table->setModel(model);
  table->verticalHeader()->hide();
  table->setAlternatingRowColors(true);
  table->setSelectionBehavior(QAbstractItemView::SelectRows);
  table->setWordWrap(true);
  table->horizontalHeader()->setStretchLastSection(true);
  return table;
}

}  // namespace

TimeCostPage::TimeCostPage(PlanDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      chart_(new BreakdownChart(this)),
      breakdown_(new BreakdownModel(this)),
      warnings_(new DiagnosticModel(this)),
      figures_(new FigureGrid(4, this)) {
  chart_->setObjectName(QStringLiteral("breakdownChart"));
  iteration_ = figures_->add(QStringLiteral("iterationTime"), tr("Iteration"));
  tokens_per_s_ = figures_->add(QStringLiteral("tokensPerSecond"), tr("Tokens/s"));
  mfu_ = figures_->add(QStringLiteral("mfu"), tr("MFU"), tr("Model FLOPs utilisation: model FLOPs / (time x peak)"));
  hfu_ = figures_->add(QStringLiteral("hfu"), tr("HFU"), tr("Hardware FLOPs utilisation, recomputation included"));
  tflops_ = figures_->add(QStringLiteral("tflopsPerGpu"), tr("Per GPU"));
  days_ = figures_->add(QStringLiteral("trainingDays"), tr("Training time"));
  gpu_hours_ = figures_->add(QStringLiteral("gpuHours"), tr("GPU-hours"));
  cost_ = figures_->add(QStringLiteral("cost"), tr("Cost"));
  bubble_ =
      figures_->add(QStringLiteral("bubbleFraction"), tr("Bubble"),
                    tr("Pipeline bubble: per stage, idle pipeline time / its work; mean over stages and the worst "
                       "stage, as on the Timeline page"));
  micro_batches_ = figures_->add(QStringLiteral("microBatches"), tr("Micro-batches"), tr("Per pipeline per iteration"));
  dp_ = figures_->add(QStringLiteral("dataParallel"), tr("Data parallel"));
  flops_ = figures_->add(QStringLiteral("modelFlops"), tr("Model FLOPs/iter"));
  source_ = new QLabel(this);
  source_->setObjectName(QStringLiteral("timeSource"));
  source_->setWordWrap(true);

  auto* breakdown_table = make_table(breakdown_, QStringLiteral("breakdownTable"), this);
  // The numbers as wide as they need, the part's name the rest; the splitter starts the table as
  // wide as its contents (equal stretched columns cut "574.88 GiB" off behind a scroll bar).
  breakdown_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  breakdown_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  breakdown_table->setSizeAdjustPolicy(QAbstractScrollArea::AdjustToContents);
  auto* warnings_table = make_table(warnings_, QStringLiteral("warningsTable"), this);
  warnings_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  warnings_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  connect(warnings_table, &QTableView::doubleClicked, this,
          [this](const QModelIndex& index) { emit fieldActivated(index.data(DiagnosticModel::FieldRole).toString()); });
  connect(warnings_, &QAbstractItemModel::modelReset, warnings_table, &QTableView::resizeRowsToContents);
  connect(warnings_table->horizontalHeader(), &QHeaderView::sectionResized, warnings_table,
          [warnings_table] { warnings_table->resizeRowsToContents(); });

  auto* warnings_box = new QGroupBox(tr("Advisor"), this);
  auto* warnings_layout = new QVBoxLayout(warnings_box);
  warnings_layout->addWidget(warnings_table);
  auto* splitter = new QSplitter(Qt::Horizontal, this);
  splitter->addWidget(breakdown_table);
  splitter->addWidget(warnings_box);
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 2);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(figures_);
  layout->addWidget(source_);
  layout->addWidget(chart_);
  layout->addWidget(splitter, 1);

  connect(document_, &PlanDocument::estimateReady, this, &TimeCostPage::refresh);
  refresh();
}

void TimeCostPage::refresh() {
  const auto outcome = document_->estimate();
  if (!outcome || !outcome->estimate) {
    breakdown_->clear();
    chart_->setBreakdown({}, false);
    figures_->clearValues();
    warnings_->setDiagnostics(outcome ? outcome->errors : std::vector<Diagnostic>{});
    source_->setText(outcome ? tr("The plan has errors; fix them on the Plan page.") : tr("Estimating…"));
    return;
  }
  const auto& e = *outcome->estimate;
  const auto& t = e.time;
  breakdown_->setTime(t);
  chart_->setBreakdown(t.breakdown, t.available && t.predicted);
  warnings_->setDiagnostics(e.warnings);
  micro_batches_->setText(QString::number(e.micro_batches));
  dp_->setText(QString::number(e.dp));
  flops_->setText(format_flops(e.flops.model_per_iteration));
  if (!t.available) {
    for (QLabel* l : {iteration_, tokens_per_s_, mfu_, hfu_, tflops_, days_, gpu_hours_, cost_, bubble_})
      l->setText(QStringLiteral("—"));
    source_->setText(tr("No time estimate."));
    return;
  }
  iteration_->setText(format_seconds(t.iteration_s));
  iteration_->setToolTip(format_fixed(t.iteration_s, 6) + QStringLiteral(" s"));
  tokens_per_s_->setText(format_count(t.tokens_per_s));
  mfu_->setText(format_percent(t.mfu));
  hfu_->setText(format_percent(t.hfu));
  tflops_->setText(format_tflops(t.achieved_tflops_per_gpu));
  const bool budget = outcome->plan.training.tokens > 0;
  days_->setText(budget ? format_fixed(t.training_days, 1) + tr(" days") : tr("no token budget"));
  gpu_hours_->setText(budget ? format_count(t.gpu_hours) : QStringLiteral("—"));
  cost_->setText(budget && outcome->plan.cluster.price_per_gpu_hour > 0
                     ? format_money(t.cost) + QLatin1Char(' ') + QString::fromStdString(outcome->plan.cluster.currency)
                     : tr("no price"));
  bubble_->setText(t.predicted ? tr("%1 mean, %2 max").arg(format_percent(t.bubble_fraction), format_percent(t.bubble_fraction_max))
                               : QStringLiteral("—"));
  source_->setText(t.predicted
                       ? tr("Predicted by the time model (kernel and collective costs through the schedule simulator).")
                       : tr("From the given throughput (training.achieved_tflops or training.mfu)."));
}

QSize TimeCostPage::exportSize() const { return size().isEmpty() ? QSize(1000, 700) : size(); }

void TimeCostPage::renderExport(QPainter& painter, const QSize&) const { render_widget(*this, painter); }

}  // namespace plansight::gui
