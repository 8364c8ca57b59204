// Search page (see search_page.h). Cancel sets the running search's stop flag (the worker stops
// before its next chunk) and bumps the generation, so the page is idle at once and anything the
// cancelled search still posts is dropped. A new search may start while the cancelled one
// finishes its current chunk (one more thread).
#include "plansight/gui/search_page.h"

#include <algorithm>

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "plansight/gui/chunked_search.h"
#include "plansight/gui/format.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/search_constraints_form.h"
#include "plansight/gui/search_result_model.h"

namespace plansight::gui {

namespace est = plansight::estimator;

SearchPage::SearchPage(PlanDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), model_(new SearchResultModel(this)),
      proxy_(new QSortFilterProxyModel(this)), table_(new QTableView(this)), ticker_(new QTimer(this)),
      jobs_(this, 2) {  // a cancelled search may still be running beside a new one
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(SearchResultModel::kSortRole);
  table_->setObjectName(QStringLiteral("searchResults"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(SearchResultModel::kTokensPerS, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->verticalHeader()->hide();

  start_ = new QPushButton(tr("&Search layouts"), this);
  start_->setObjectName(QStringLiteral("startSearch"));
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setObjectName(QStringLiteral("cancelSearch"));
  apply_ = new QPushButton(tr("&Apply to plan"), this);
  apply_->setObjectName(QStringLiteral("applyLayout"));
  busy_ = new QProgressBar(this);
  busy_->setObjectName(QStringLiteral("searchProgress"));
  busy_->setMaximumWidth(160);
  constraints_ = new SearchConstraintsForm(this);
  constraints_->setObjectName(QStringLiteral("searchConstraints"));
  elapsed_label_ = new QLabel(this);
  status_ = new QLabel(tr("Searches every layout of the current plan's model, cluster and batch."), this);
  status_->setWordWrap(true);
  summary_ = new QPlainTextEdit(this);
  summary_->setObjectName(QStringLiteral("rejectionSummary"));
  summary_->setReadOnly(true);
  summary_->setPlaceholderText(tr("Why candidates were rejected appears here after a search."));

  auto* bar = new QHBoxLayout;
  bar->addWidget(start_);
  bar->addWidget(cancel_);
  bar->addWidget(busy_);
  bar->addWidget(elapsed_label_);
  bar->addStretch(1);
  bar->addWidget(apply_);
  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(summary_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(constraints_);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(split, 1);

  ticker_->setInterval(100);
  connect(ticker_, &QTimer::timeout, this, &SearchPage::updateElapsed);
  connect(start_, &QPushButton::clicked, this, &SearchPage::startSearch);
  connect(cancel_, &QPushButton::clicked, this, &SearchPage::cancelSearch);
  connect(apply_, &QPushButton::clicked, this, [this] { applySelected(); });
  connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) { applySelected(i.row()); });
  setRunning(false);
}

// The job runner's destructor stops a running search at its next chunk and waits for it.
SearchPage::~SearchPage() = default;

void SearchPage::startSearch() {
  auto constraints = constraints_->options();
  if (!constraints) {
    // Nothing starts: the previous result stays, and the status names the bad field.
    status_->setText(tr("The search could not run: %1").arg(QString::fromStdString(constraints.error_text())));
    return;
  }
  est::Plan plan = document_->plan();
  if (const auto attention = constraints_->attention()) plan.training.attention = *attention;
  searched_attention_ = plan.training.attention;
  chunks_done_ = chunks_total_ = 0;
  busy_->setRange(0, 0);  // until the first chunk says how many there are
  // A search still running is not wanted any more: starting this one makes it stale, which
  // stops it before its next chunk (its cancel flag) and drops what it still posts.
  jobs_.start([this, plan, options = *constraints](const JobRunner::Job& job) mutable {
    options.threads = 0;  // all cores
    auto result = run_chunked_search(plan, options, *job.cancel_flag(), [&](std::size_t done, std::size_t total, std::int64_t next_tp) {
      job.post([this, done, total, next_tp] { onChunkDone(static_cast<int>(done), static_cast<int>(total), next_tp); });
    });
    if (result && !*result) return;  // cancelled: the page has moved on
    std::shared_ptr<const est::SearchResult> out;
    QString error;
    if (result) {
      out = std::make_shared<const est::SearchResult>(std::move(**result));
    } else {
      error = QString::fromStdString(result.error_text());
    }
    job.post([this, out, error] { deliver(out, error); });
  });
  elapsed_.start();
  setRunning(true);
  status_->setText(tr("Searching layouts of %1 on %n GPU(s)…", "", static_cast<int>(plan.cluster.gpus))
                       .arg(QString::fromStdString(plan.model.name)));
}

void SearchPage::cancelSearch() {
  if (!running_) return;
  jobs_.cancel();  // the worker stops before its next chunk, and what it still posts is dropped
  setRunning(false);
  const QString searched = chunks_total_ > 0
                               ? tr("%1 of %2 tensor-parallel degrees searched").arg(chunks_done_).arg(chunks_total_)
                               : tr("before the first tensor-parallel degree was searched");
  status_->setText(tr("Search cancelled after %1, %2 (the table shows the previous result, if any).")
                       .arg(format_seconds(static_cast<double>(elapsed_.elapsed()) / 1000.0), searched));
}

void SearchPage::onChunkDone(int done, int total, qint64 next_tp) {
  chunks_done_ = done;
  chunks_total_ = total;
  busy_->setRange(0, total);
  busy_->setValue(done);
  if (next_tp > 0) {
    status_->setText(tr("Searching layouts with TP %1 (%2 of %3 tensor-parallel degrees done)…").arg(next_tp).arg(done).arg(total));
  }
  emit chunkDone(done, total);
}

QString SearchPage::statusText() const { return status_->text(); }

void SearchPage::deliver(std::shared_ptr<const est::SearchResult> result, QString error) {
  setRunning(false);
  if (!result) {
    model_->setResult(nullptr);
    summary_->setPlainText(error);
    status_->setText(tr("The search could not run: %1").arg(error));
  } else {
    model_->setResult(result);
    summary_->setPlainText(QString::fromStdString(est::rejection_summary(*result)));
    status_->setText(tr("%1 layouts enumerated, %2 fit; best %n shown, %3 (%4 threads).", "",
                        static_cast<int>(result->layouts.size()))
                         .arg(format_count(static_cast<double>(result->enumerated)))
                         .arg(format_count(static_cast<double>(result->fitting)))
                         .arg(format_seconds(result->seconds))
                         .arg(result->threads));
    const auto closed_form = std::count_if(result->layouts.begin(), result->layouts.end(),
                                           [](const est::RankedLayout& l) { return !l.estimate.time.simulated; });
    if (closed_form > 0) {
      status_->setText(status_->text() + tr(" %n of them timed by the closed form: their schedules have more than %1 ops to simulate.", "",
                                            static_cast<int>(closed_form))
                                             .arg(format_count(static_cast<double>(est::SearchOptions{}.max_simulated_ops))));
    }
    for (auto precision : result->skipped_precisions) {
      const auto name = QString::fromUtf8(est::to_string(precision).data(), static_cast<int>(est::to_string(precision).size()));
      status_->setText(status_->text() + tr(" %1 not searched: this GPU has no %1 peak.").arg(name));
    }
    if (proxy_->rowCount() > 0) table_->selectRow(0);
  }
  emit searchFinished();
}

bool SearchPage::applySelected(int proxy_row) {
  if (proxy_row < 0) {
    const auto rows = table_->selectionModel() ? table_->selectionModel()->selectedRows() : QModelIndexList{};
    if (rows.isEmpty()) return false;
    proxy_row = rows.first().row();
  }
  const QModelIndex source = proxy_->mapToSource(proxy_->index(proxy_row, 0));
  const est::RankedLayout* layout = model_->layoutAt(source.row());
  if (!layout) return false;
  // The current plan with the row's layout, so edits made since the search are kept.
  // The attention searched comes along: a CP layout found with flash attention needs it.
  const est::Plan before = document_->plan();
  est::Plan plan = est::apply_candidate(before, layout->candidate);
  plan.training.attention = searched_attention_;
  document_->replacePlan(plan);
  QString text = tr("Applied %1 to the plan").arg(QString::fromStdString(est::describe(layout->candidate)));
  // What else Apply changes, said rather than done silently (apply_candidate's rules).
  QStringList changed;
  if (before.training.achieved_tflops > 0) {
    changed << tr("training.achieved_tflops %1 dropped (the layout's time is predicted)").arg(before.training.achieved_tflops);
  }
  if (before.training.mfu > 0) changed << tr("training.mfu %1 dropped (the layout's time is predicted)").arg(before.training.mfu);
  if (before.training.attention != plan.training.attention) {
    changed << tr("training.attention set to %1 (searched with it)")
                   .arg(QString::fromLatin1(est::to_string(plan.training.attention).data()));
  }
  if (before.layout.placement != plan.layout.placement) {
    changed << tr("layout.placement set to %1").arg(QString::fromStdString(est::to_string(plan.layout.placement)));
  }
  if (!before.layout.stage_layers.empty()) changed << tr("layout.stage_layers cleared (uniform stages)");
  if (!changed.isEmpty()) text += tr("; also changed: %1").arg(changed.join(QStringLiteral("; ")));
  status_->setText(text);
  emit statusMessage(text);
  return true;
}

QString SearchPage::summaryText() const { return summary_->toPlainText(); }

void SearchPage::setRunning(bool running) {
  running_ = running;
  start_->setEnabled(!running);
  cancel_->setEnabled(running);
  busy_->setVisible(running);
  if (running) {
    ticker_->start();
    updateElapsed();
  } else {
    ticker_->stop();
  }
  elapsed_label_->setVisible(running);
}

void SearchPage::updateElapsed() {
  elapsed_label_->setText(tr("%1 elapsed").arg(format_seconds(static_cast<double>(elapsed_.elapsed()) / 1000.0)));
}

}  // namespace plansight::gui
