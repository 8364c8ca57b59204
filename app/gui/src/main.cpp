// plansight-gui: the desktop app. A thin main over plansight::gui: options, palette, window.
// --plan FILE opens a plan; --screenshots DIR renders every page to PNG and exits (used by
// scripts/screenshots under Xvfb); --dark applies a dark palette where the desktop gives none.
#include <QApplication>
#include <QCommandLineParser>
#include <QPalette>
#include <QStyleFactory>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/gui/main_window.h"
#include "plansight/store/store.h"

namespace {

QPalette dark_palette() {
  QPalette p;
  p.setColor(QPalette::Window, QColor(0x2B2B2B));
  p.setColor(QPalette::WindowText, QColor(0xE6E6E6));
  p.setColor(QPalette::Base, QColor(0x1E1E1E));
  p.setColor(QPalette::AlternateBase, QColor(0x262626));
  p.setColor(QPalette::Text, QColor(0xE6E6E6));
  p.setColor(QPalette::Button, QColor(0x333333));
  p.setColor(QPalette::ButtonText, QColor(0xE6E6E6));
  p.setColor(QPalette::Highlight, QColor(0x3D7BD9));
  p.setColor(QPalette::HighlightedText, QColor(Qt::white));
  p.setColor(QPalette::ToolTipBase, QColor(0x333333));
  p.setColor(QPalette::ToolTipText, QColor(0xE6E6E6));
  p.setColor(QPalette::PlaceholderText, QColor(0x9A9A9A));
  p.setColor(QPalette::Mid, QColor(0x555555));
  return p;
}

// Screenshot runs use a scratch store holding the default plan with its predicted timeline,
// so that the Runs page has something to show without touching the user's store.
QString seed_demo_store(const QString& path) {
  namespace est = plansight::estimator;
  auto db = plansight::store::Store::open(path.toStdString());
  if (!db) return QString::fromStdString(db.error_text());
  const est::Plan plan = est::default_plan();
  plansight::store::NewRun run;
  run.kind = plansight::store::RunKind::plan;
  run.name = "GPT-3 175B on 1024 A100 (default plan)";
  run.status = plansight::store::RunStatus::complete;
  run.plan = est::to_json(plan);
  run.notes = "Seeded by plansight-gui --screenshots: the predicted timeline of the default plan.";
  auto id = db->create_run(run);
  if (!id) return QString::fromStdString(id.error_text());
  est::TimePrediction predicted;
  auto e = est::estimate_with_prediction(plan, nullptr, predicted);
  if (!e) return QString::fromStdString(e.error_text());
  if (auto appended = db->append_timeline(*id, predicted.timeline); !appended) {
    return QString::fromStdString(appended.error_text());
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName(QStringLiteral("plansight-gui"));
  QApplication::setOrganizationName(QStringLiteral("Plansight"));

  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("Plan, predict and check parallel training of transformer models."));
  parser.addHelpOption();
  const QCommandLineOption plan({QStringLiteral("plan")}, QStringLiteral("Open a plan JSON file."),
                                QStringLiteral("FILE"));
  const QCommandLineOption shots({QStringLiteral("screenshots")},
                                 QStringLiteral("Save every page as PNG into DIR and exit."), QStringLiteral("DIR"));
  const QCommandLineOption dark({QStringLiteral("dark")}, QStringLiteral("Use a dark palette."));
  const QCommandLineOption fresh({QStringLiteral("default-plan")},
                                 QStringLiteral("Start on the default plan, not the last one."));
  parser.addOptions({plan, shots, dark, fresh});
  parser.process(app);

  if (parser.isSet(dark)) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(dark_palette());
  }
  plansight::gui::MainWindowOptions options;
  options.restore_last_plan = !parser.isSet(fresh) && !parser.isSet(shots);
  QTemporaryDir scratch;  // screenshot runs never touch the user's settings
  if (parser.isSet(shots)) {
    options.settings_path = scratch.filePath(QStringLiteral("settings.ini"));
    options.store_path = scratch.filePath(QStringLiteral("runs.sqlite"));
    if (const QString error = seed_demo_store(options.store_path); !error.isEmpty()) {
      std::fprintf(stderr, "plansight-gui: %s\n", qPrintable(error));
      return 1;
    }
  }
  plansight::gui::MainWindow window(options);
  if (parser.isSet(plan)) {
    if (const QString error = window.openPlan(parser.value(plan)); !error.isEmpty()) {
      std::fprintf(stderr, "plansight-gui: %s\n", qPrintable(error));
      return 2;
    }
  }
  window.show();
  if (parser.isSet(shots)) {
    int status = 0;
    QTimer::singleShot(0, &window, [&] {
      const QString error = window.saveScreenshots(parser.value(shots));
      if (!error.isEmpty()) std::fprintf(stderr, "plansight-gui: %s\n", qPrintable(error)), status = 1;
      QApplication::exit(status);
    });
  }
  return QApplication::exec();
}
