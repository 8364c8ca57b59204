// The Operators page (operators_page.h). The report is a few dozen DeviceModel calls (tens of
// microseconds), so it is made on the GUI thread when an estimate arrives.
#include "plansight/gui/operators_page.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include "plansight/estimator/operator_report.h"
#include "plansight/gui/format.h"
#include "plansight/gui/operator_table_model.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/roofline_chart.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

QString ms(double seconds) { return QStringLiteral("%1 ms").arg(seconds * 1e3, 0, 'f', 3); }

QString block_text(const est::PassCost& c, double operators_s) {
  QString s = QObject::tr("operators %1 = the time model's compute (forward %2").arg(ms(operators_s), ms(c.forward.compute_s));
  if (c.recompute.compute_s > 0) s += QObject::tr(", recompute %1").arg(ms(c.recompute.compute_s));
  s += QObject::tr(", backward %1)").arg(ms(c.backward_input.compute_s + c.backward_weight.compute_s));
  const double comm = c.forward.tp_comm_s + c.backward_input.tp_comm_s + c.recompute.tp_comm_s + c.forward.cp_comm_s +
                      c.backward_input.cp_comm_s + c.recompute.cp_comm_s + c.forward.ep_comm_s + c.backward_input.ep_comm_s +
                      c.recompute.ep_comm_s;
  if (comm > 0) s += QObject::tr(", plus %1 of TP/CP/EP communication it waits on").arg(ms(comm));
  return s;
}

}  // namespace

OperatorsPage::OperatorsPage(PlanDocument* document, QWidget* parent) : QWidget(parent), document_(document) {
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("operatorsSummary"));
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::RichText);
  layer_ = new QComboBox(this);
  layer_->setObjectName(QStringLiteral("operatorsLayer"));
  layer_->addItem(tr("MoE layer"), static_cast<int>(est::LayerKind::moe));
  layer_->addItem(tr("Dense layer"), static_cast<int>(est::LayerKind::dense));
  layer_->setToolTip(tr("Which layer of a mixture-of-experts model to show"));
  chart_ = new RooflineChart(this);
  model_ = new OperatorTableModel(this);
  table_ = new QTableView(this);
  table_->setObjectName(QStringLiteral("operatorsTable"));
  table_->setModel(model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(OperatorTableModel::OperatorColumn, QHeaderView::Stretch);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setAlternatingRowColors(true);

  auto* head = new QHBoxLayout;
  head->addWidget(summary_, 1);
  head->addWidget(layer_, 0, Qt::AlignTop);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(chart_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({440, 300});  // the table shows about ten rows under the chart at 1280 x 860
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(head);
  layout->addWidget(split, 1);

  connect(document_, &PlanDocument::estimateReady, this, &OperatorsPage::refresh);
  connect(layer_, &QComboBox::currentIndexChanged, this, &OperatorsPage::refresh);
  connect(chart_, &RooflineChart::hoveredChanged, this, &OperatorsPage::showHovered);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { chart_->setHighlighted(current.isValid() ? current.row() : -1); });
  refresh();
}

QString OperatorsPage::summary() const { return summary_->text(); }

void OperatorsPage::refresh() {
  const auto outcome = document_->estimate();
  if (!outcome || !outcome->estimate) {
    summary_->setText(outcome ? tr("The plan has errors (see the Plan page).") : tr("Estimating…"));
    model_->clear();
    chart_->clear();
    return;
  }
  const est::Plan& plan = outcome->plan;
  const bool moe = plan.model.moe.enabled();
  layer_->setVisible(moe);
  est::OperatorReportOptions options;
  if (moe) options.layer = static_cast<est::LayerKind>(layer_->currentData().toInt());
  auto report = est::operator_report(plan, options);
  if (!report) {
    summary_->setText(QString::fromStdString(report.error_text()).toHtmlEscaped());
    model_->clear();
    chart_->clear();
    return;
  }
  const auto& roof = report->roofline;
  const auto& l = plan.layout;
  QString text =
      tr("<b>%1</b> on <b>%2</b> in %3: peak %4 TFLOP/s, HBM %5 GB/s, ridge point %6 FLOP/byte. One micro-batch of %7 × %8 "
         "tokens on one GPU: TP %9")
          .arg(QString::fromStdString(plan.model.name).toHtmlEscaped(), QString::fromStdString(plan.cluster.gpu.name).toHtmlEscaped(),
               QString::fromUtf8(est::to_string(plan.training.precision).data()))
          .arg(roof.peak_flops_per_s / 1e12, 0, 'f', 1)
          .arg(roof.memory_bytes_per_s / 1e9, 0, 'f', 0)
          .arg(roof.ridge_flops_per_byte(), 0, 'f', 1)
          .arg(plan.training.micro_batch)
          .arg(plan.training.seq_len)
          .arg(l.tp);
  if (l.cp > 1) text += tr(", CP %1").arg(l.cp);
  text += tr(", sequence parallelism %1, %2 attention, recomputation %3.")
              .arg(l.sequence_parallel && l.tp > 1 ? tr("on") : tr("off"),
                   QString::fromUtf8(est::to_string(plan.training.attention).data()),
                   QString::fromUtf8(est::to_string(l.recompute).data()));
  text += tr("<br><b>%1</b>: %2.<br><b>LM head</b> (last stage, vocabulary %3 / TP %4): %5.")
              .arg(report->layer_kind == est::LayerKind::moe ? tr("MoE layer") : tr("Layer"),
                   block_text(report->layer, report->layer_operator_s))
              .arg(report->padded_vocab)
              .arg(l.tp)
              .arg(block_text(report->lm_head, report->lm_head_operator_s));
  if (plan.training.achieved_tflops > 0 || plan.training.mfu > 0) {
    text += tr("<br>The estimate takes its time from the plan's given throughput; these are the time model's predictions.");
  }
  summary_->setText(text);
  chart_->setReport(roof, report->rows);
  model_->setRows(std::move(report->rows));
}

void OperatorsPage::showHovered(int row) {
  if (row < 0 || row >= model_->rowCount()) return;
  table_->selectRow(row);
  table_->scrollTo(model_->index(row, 0));
}

QSize OperatorsPage::exportSize() const { return chart_->size().isEmpty() ? QSize(900, 560) : chart_->size(); }

void OperatorsPage::renderExport(QPainter& painter, const QSize& size) const {
  chart_->paintChart(painter, QRectF(QPointF(0, 0), QSizeF(size)));
}

}  // namespace plansight::gui
