// Shared helpers of the GUI tests: wait for the estimator worker, run a model through
// QAbstractItemModelTester while counting the warnings it reports.
#pragma once

#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtGlobal>
#include <functional>

#include "plansight/gui/main_window.h"
#include "plansight/gui/plan_document.h"

namespace plansight::gui::test {

// A main window's options that keep its settings and run store in `dir` and start from the
// default plan, so no test reads or changes the user's.
inline MainWindowOptions isolated_window_options(const QTemporaryDir& dir) {
  MainWindowOptions options;
  options.settings_path = dir.filePath(QStringLiteral("settings.ini"));
  options.store_path = dir.filePath(QStringLiteral("runs.sqlite"));
  options.restore_last_plan = false;
  return options;
}

// Blocks the test (not the app) until the document's worker has delivered everything.
inline bool wait_idle(PlanDocument& document, int timeout_ms = 20000) {
  if (document.isIdle()) return true;
  QSignalSpy spy(&document, &PlanDocument::idle);
  return spy.wait(timeout_ms) || document.isIdle();
}

// Answers the next modal dialog of type Dialog from inside its own event loop (QMessageBox,
// QInputDialog): polls until it is the active modal widget, then calls `answer` on it once.
// Gives up after `timeout_ms`, so a dialog that never comes fails the test's own checks.
template <class Dialog>
void answer_next_dialog(std::function<void(Dialog*)> answer, int timeout_ms = 10000) {
  auto* timer = new QTimer;
  auto* clock = new QElapsedTimer;
  clock->start();
  timer->setInterval(10);
  QObject::connect(timer, &QTimer::timeout, [timer, clock, answer, timeout_ms] {
    auto* dialog = qobject_cast<Dialog*>(QApplication::activeModalWidget());
    if (!dialog && clock->elapsed() < timeout_ms) return;
    timer->stop();
    timer->deleteLater();
    delete clock;
    if (dialog) answer(dialog);
  });
  timer->start();
}

// Counts the model tester's complaints (it reports through qWarning in Warning mode).
class ModelTesterWarnings {
 public:
  ModelTesterWarnings() {
    count_ = 0;
    previous_ = qInstallMessageHandler(&ModelTesterWarnings::handler);
  }
  ~ModelTesterWarnings() { qInstallMessageHandler(previous_); }
  int count() const { return count_; }

 private:
  static void handler(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type != QtDebugMsg && type != QtInfoMsg && context.category && QByteArray(context.category) == "qt.modeltest") {
      ++count_;
      ADD_FAILURE() << "QAbstractItemModelTester: " << message.toStdString();
    }
  }
  static inline int count_ = 0;
  QtMessageHandler previous_ = nullptr;
};

}  // namespace plansight::gui::test
