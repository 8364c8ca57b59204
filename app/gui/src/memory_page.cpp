// Memory page (see memory_page.h).
#include "plansight/gui/memory_page.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/gui/figure_grid.h"
#include "plansight/gui/format.h"
#include "plansight/gui/memory_chart.h"
#include "plansight/gui/memory_model.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/theme.h"

namespace plansight::gui {

MemoryPage::MemoryPage(PlanDocument* document, QWidget* parent)
    : QWidget(parent),
      document_(document),
      chart_(new MemoryChart(this)),
      model_(new MemoryModel(this)),
      table_(new QTableView(this)),
      figures_(new FigureGrid(4, this)) {
  chart_->setObjectName(QStringLiteral("memoryChart"));
  total_ = figures_->add(QStringLiteral("memoryTotal"), tr("Most loaded GPU"),
                         tr("Memory of one GPU in the most loaded pipeline stage: it decides whether the plan fits"));
  capacity_ = figures_->add(QStringLiteral("memoryCapacity"), tr("GPU capacity"));
  headroom_ = figures_->add(QStringLiteral("memoryHeadroom"), tr("Headroom"));
  params_ = figures_->add(QStringLiteral("memoryParameters"), tr("Parameters per GPU"));
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("memoryStatus"));
  status_->setWordWrap(true);

  table_->setModel(model_);
  table_->setObjectName(QStringLiteral("memoryTable"));
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);

  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(chart_);
  splitter->addWidget(table_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(figures_);
  layout->addWidget(status_);
  layout->addWidget(splitter, 1);

  connect(document_, &PlanDocument::estimateReady, this, &MemoryPage::refresh);
  refresh();
}

void MemoryPage::refresh() {
  const auto outcome = document_->estimate();
  if (!outcome || !outcome->estimate) {
    model_->clear();
    chart_->setMemory({}, {});
    figures_->clearValues();
    status_->setText(outcome ? tr("The plan has errors; fix them on the Plan page.") : tr("Estimating…"));
    return;
  }
  const auto& memory = outcome->estimate->memory;
  model_->setMemory(memory);
  chart_->setMemory(memory, QString::fromStdString(outcome->plan.cluster.gpu.name));
  const double total = memory.peak.total_bytes();
  total_->setText(format_gib(total));
  total_->setToolTip(format_bytes_exact(total));
  capacity_->setText(format_gib(memory.capacity_bytes));
  headroom_->setText(format_gib(memory.capacity_bytes - total));
  const auto stage = static_cast<std::size_t>(memory.most_loaded_stage);
  params_->setText(stage < memory.stages.size() ? format_large_count(memory.stages[stage].parameters)
                                                : QStringLiteral("—"));
  const QColor colour = memory.fits ? palette().color(QPalette::WindowText) : alert_colour(palette());
  status_->setText(QStringLiteral("<span style=\"color:%1\">%2</span>")
                       .arg(colour.name(), memory.fits
                                               ? tr("Fits: stage %1 is the most loaded.").arg(memory.most_loaded_stage)
                                               : tr("Does not fit: stage %1 needs %2 of %3.")
                                                     .arg(memory.most_loaded_stage)
                                                     .arg(format_gib(total), format_gib(memory.capacity_bytes))));
}

QSize MemoryPage::exportSize() const { return chart_->size().isEmpty() ? QSize(900, 500) : chart_->size(); }

void MemoryPage::renderExport(QPainter& painter, const QSize& size) const {
  chart_->paintChart(painter, QRectF(QPointF(0, 0), QSizeF(size)));
}

}  // namespace plansight::gui
