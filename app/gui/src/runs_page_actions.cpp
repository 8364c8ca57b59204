// Runs page actions (see runs_page.h): rename, delete after a confirmation, compare two,
// import a trace, keep the current plan, open a run's plan. The dialogs only ask; the store
// work is the repository's worker's.
#include <QFileDialog>
#include <QInputDialog>
#include <QMessageBox>
#include <QTableView>

#include "plansight/estimator/json_io.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_list_model.h"
#include "plansight/gui/run_repository.h"
#include "plansight/gui/runs_page.h"

namespace plansight::gui {

namespace est = plansight::estimator;

namespace {

const RunEntry* only_selected(const RunsPage& page, const RunListModel& model) {
  const auto ids = page.selectedRunIds();
  return ids.size() == 1 ? model.entry(model.rowOf(ids.front())) : nullptr;
}

}  // namespace

void RunsPage::renameSelected() {
  const RunEntry* e = only_selected(*this, *model_);
  if (!e) {
    setMessage(tr("Select one run to rename."), true);
    return;
  }
  const std::int64_t id = e->run.id;
  bool ok = false;
  const QString name = QInputDialog::getText(this, tr("Rename run"), tr("New name of run %1:").arg(id), QLineEdit::Normal,
                                             QString::fromStdString(e->run.name), &ok);
  if (!ok) return;
  if (name.trimmed().isEmpty()) {
    setMessage(tr("Run %1 keeps its name: a run name must not be blank.").arg(id), true);
    return;
  }
  repository_->renameRun(id, name);
}

void RunsPage::deleteSelected() {
  const RunEntry* e = only_selected(*this, *model_);
  if (!e) {
    setMessage(tr("Select one run to delete."), true);
    return;
  }
  const std::int64_t id = e->run.id;
  const QString question = tr("Delete run %1, \"%2\", with its %n timeline(s)? This cannot be undone.", "",
                              static_cast<int>(e->timelines.size()))
                               .arg(id)
                               .arg(QString::fromStdString(e->run.name));
  if (QMessageBox::question(this, tr("Delete run"), question, QMessageBox::Yes | QMessageBox::No, QMessageBox::No) !=
      QMessageBox::Yes) {
    return;
  }
  repository_->deleteRun(id);
}

void RunsPage::compareSelected() {
  const auto ids = selectedRunIds();
  if (ids.size() != 2) {
    setMessage(tr("Select exactly two runs to compare (Ctrl+click the second)."), true);
    return;
  }
  repository_->diffRuns(ids[0], ids[1]);
}

void RunsPage::importTraceFile() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Import trace"), {},
      tr("Traces (*.json *.json.gz *.gz *.sqlite *.db);;All files (*)"));
  if (!path.isEmpty()) importTrace(path);
}

void RunsPage::importTraceFolder() {
  const QString path = QFileDialog::getExistingDirectory(this, tr("Import a folder of per-rank Kineto traces"));
  if (!path.isEmpty()) importTrace(path);
}

void RunsPage::importTrace(const QString& path) {
  setMessage(tr("Importing %1…").arg(path), false);
  repository_->importTrace(path);
}

void RunsPage::openPlan() {
  const RunEntry* e = only_selected(*this, *model_);
  if (!e || !e->run.plan) {
    setMessage(tr("The selected run has no plan."), true);
    return;
  }
  auto plan = est::plan_from_json(*e->run.plan);
  if (!plan) {
    setMessage(tr("Run %1's plan cannot be read: %2").arg(e->run.id).arg(QString::fromStdString(plan.error_text())), true);
    return;
  }
  document_->replacePlan(*plan);
  emit planOpened();
}

void RunsPage::savePlan() {
  const est::Plan& p = document_->plan();
  const QString name = QStringLiteral("%1 · TP%2 PP%3 · %4 GPUs")
                           .arg(QString::fromStdString(p.model.name))
                           .arg(p.layout.tp)
                           .arg(p.layout.pp)
                           .arg(p.cluster.gpus);
  repository_->savePlan(p, name);
  setMessage(tr("Kept the plan as run \"%1\"").arg(name), false);
}

}  // namespace plansight::gui
