// The Sweep page (sweep_page.h).
#include "plansight/gui/sweep_page.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPainter>
#include <QPointer>
#include <QPushButton>
#include <QVBoxLayout>

#include "plansight/estimator/plan_metrics.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/sweep_chart.h"

namespace plansight::gui {

namespace est = plansight::estimator;

SweepPage::SweepPage(PlanDocument* document, QWidget* parent) : QWidget(parent), document_(document), jobs_(this) {
  field_ = new QComboBox(this);
  field_->setObjectName(QStringLiteral("sweepField"));
  field_->setEditable(true);  // any numeric plan-file path, e.g. training.seq_len
  for (auto name : est::sweep_field_names()) field_->addItem(QString::fromStdString(std::string(name)));
  field_->setCurrentText(QStringLiteral("micro_batches"));
  field_->setToolTip(tr("A plan field by its short name or its plan-file path (layout.pp, training.seq_len)"));
  values_ = new QLineEdit(QStringLiteral("4..64*2"), this);
  values_->setObjectName(QStringLiteral("sweepValues"));
  values_->setToolTip(tr("A..B every integer, A..B*F geometric (4..64*2: 4, 8, ..., 64), or a list a,b,c"));
  metrics_ = new QListWidget(this);
  metrics_->setObjectName(QStringLiteral("sweepMetrics"));
  for (const auto& m : est::plan_metrics()) {
    auto* item = new QListWidgetItem(QString::fromStdString(std::string(m.name)), metrics_);
    item->setToolTip(QString::fromStdString(std::string(m.description)));
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(m.name == "bubble_fraction" || m.name == "iteration_s" ? Qt::Checked : Qt::Unchecked);
  }
  metrics_->setMaximumWidth(300);
  run_ = new QPushButton(tr("S&weep the plan"), this);
  run_->setObjectName(QStringLiteral("runSweep"));
  csv_ = new QPushButton(tr("Export &CSV…"), this);
  csv_->setObjectName(QStringLiteral("sweepCsv"));
  csv_->setEnabled(false);
  status_ = new QLabel(tr("Sweeps one field of the current plan; the other fields stay as they are."), this);
  status_->setObjectName(QStringLiteral("sweepStatus"));
  status_->setWordWrap(true);
  chart_ = new SweepChart(this);

  auto* form = new QFormLayout;
  form->addRow(tr("Field"), field_);
  form->addRow(tr("Values"), values_);
  form->addRow(tr("Metrics"), metrics_);
  form->addRow(run_);
  form->addRow(csv_);
  auto* left = new QVBoxLayout;
  left->addLayout(form);
  left->addStretch(1);
  auto* right = new QVBoxLayout;
  right->addWidget(status_);
  right->addWidget(chart_, 1);
  auto* layout = new QHBoxLayout(this);
  layout->addLayout(left);
  layout->addLayout(right, 1);

  connect(run_, &QPushButton::clicked, this, [this] { startSweep(); });
  connect(values_, &QLineEdit::returnPressed, this, [this] { startSweep(); });
  connect(csv_, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export sweep as CSV"), QStringLiteral("sweep.csv"),
                                                      tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    if (const QString error = exportCsv(path); !error.isEmpty()) status_->setText(error);
  });
}

SweepPage::~SweepPage() = default;

void SweepPage::setSweep(const QString& field, const QString& values, const QStringList& metrics) {
  field_->setCurrentText(field);
  values_->setText(values);
  for (int i = 0; i < metrics_->count(); ++i) {
    metrics_->item(i)->setCheckState(metrics.contains(metrics_->item(i)->text()) ? Qt::Checked : Qt::Unchecked);
  }
}

QString SweepPage::status() const { return status_->text(); }

QString SweepPage::planDescription() const {
  const est::Plan& p = document_->plan();
  return tr("%1 on %2 x %3, TP %4 x PP %5, micro-batch %6, global batch %7")
      .arg(QString::fromStdString(p.model.name), QString::number(p.cluster.gpus), QString::fromStdString(p.cluster.gpu.name))
      .arg(p.layout.tp)
      .arg(p.layout.pp)
      .arg(p.training.micro_batch)
      .arg(p.training.global_batch);
}

bool SweepPage::startSweep() {
  auto field = est::sweep_field(field_->currentText().trimmed().toStdString());
  auto values = est::parse_sweep_values(values_->text().trimmed().toStdString());
  std::vector<std::string> metrics;
  for (int i = 0; i < metrics_->count(); ++i) {
    if (metrics_->item(i)->checkState() == Qt::Checked) metrics.push_back(metrics_->item(i)->text().toStdString());
  }
  QString problem;
  if (!field) problem = QString::fromStdString(field.error_text());
  else if (!values) problem = QString::fromStdString(values.error_text());
  else if (metrics.empty()) problem = tr("Tick at least one metric.");
  if (!problem.isEmpty()) {
    status_->setText(problem);
    return false;
  }
  const est::Plan plan = document_->plan();
  running_ = true;
  run_->setEnabled(false);
  status_->setText(tr("Sweeping %1 over %n value(s)…", "", static_cast<int>(values->size())).arg(field_->currentText()));
  const QString description = planDescription();
  jobs_.start([this, plan, field = *field, values = *values, metrics, description](const JobRunner::Job& job) {
    auto result = std::make_shared<Result<est::SweepResult>>(est::sweep(plan, field, values, metrics));
    // Dropped when a newer sweep replaced this one.
    job.post([self = this, result, description] {
          self->running_ = false;
          self->run_->setEnabled(true);
          if (!*result) {
            self->status_->setText(QString::fromStdString(result->error_text()));
          } else {
            std::size_t invalid = 0;
            for (const auto& p : (*result)->points) invalid += !p.error.empty();
            self->result_ = **result;
            self->swept_plan_ = description;
            self->chart_->setResult(**result);
            self->csv_->setEnabled(true);
            self->status_->setText(
                tr("%1 — %n value(s)", "", static_cast<int>((*result)->points.size())).arg(description) +
                (invalid > 0 ? tr("; %n invalid (marked x; hover for why)", "", static_cast<int>(invalid)) : QString()));
          }
          emit self->sweepFinished();
        });
  });
  return true;
}

QString SweepPage::exportCsv(const QString& path) const {
  if (!result_) return tr("No sweep to export yet");
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return tr("Cannot write %1").arg(path);
  file.write(QByteArray::fromStdString(est::to_csv(*result_)));
  return file.error() == QFile::NoError ? QString() : tr("Cannot write %1").arg(path);
}

QString SweepPage::exportTitle() const {
  return result_ ? tr("Sweep of %1").arg(QString::fromStdString(result_->field.name)) : tr("Sweep");
}

QSize SweepPage::exportSize() const { return chart_->size().expandedTo(QSize(640, 420)); }

void SweepPage::renderExport(QPainter& painter, const QSize& size) const {
  static const est::SweepResult kEmpty;
  paint_sweep_chart(painter, result_ ? *result_ : kEmpty, QRectF(QPointF(0, 0), QSizeF(size)), palette(), font(),
                    exportTitle() + QStringLiteral(" — ") + swept_plan_);
}

}  // namespace plansight::gui
