// The Plan page as a user meets it: a live summary beside the form that says what an edit does,
// a field being typed in that stays put when messages appear above it, File > New that asks
// before it throws edits away, and a slow estimate that says so and can be cancelled.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QTabWidget>
#include <QApplication>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QTest>
#include <QTimer>

#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan_fields.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/chart_export.h"
#include "plansight/gui/format.h"
#include "plansight/gui/memory_page.h"
#include "plansight/gui/plan_caption.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/run_repository.h"
#include "plansight/store/store.h"
#include "plansight/gui/plan_form.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

struct Window {
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> window;
  // busy_delay_ms: MainWindowOptions's (-1: its default).
  explicit Window(int busy_delay_ms = -1) {
    MainWindowOptions options = test::isolated_window_options(dir);
    if (busy_delay_ms >= 0) options.busy_delay_ms = busy_delay_ms;
    window = std::make_unique<MainWindow>(options);
    window->resize(1280, 700);
    window->show();
    EXPECT_TRUE(test::wait_idle(*window->document()));
  }
  template <class T>
  T* find(const char* name) const {
    T* w = window->findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(w, nullptr) << name;
    return w;
  }
  void edit(const std::function<void(est::Plan&)>& change) {
    est::Plan plan = window->document()->plan();
    change(plan);
    window->document()->replacePlan(plan);
    EXPECT_TRUE(test::wait_idle(*window->document()));
  }
};

// A plan whose estimate takes seconds: 1000 pipeline stages of 1000 micro-batches each.
// 1000 stages x 2000 micro-batches: 4 million ops, too few micro-batches per stage for the
// steady state's skip (a simulation of about half a second on a 2-core CI machine, 64 MB of
// arrays per simulation).
est::Plan slow_plan() {
  est::Plan plan = est::default_plan();
  plan.model.layers = 1000;
  plan.layout.pp = 1000;
  plan.layout.tp = 8;
  plan.layout.dp = 0;
  plan.cluster.gpus = 8000;
  plan.training.global_batch = 2000;
  return plan;
}

TEST(PlanPage, SummaryBesideTheFormShowsWhatTheEstimateSays) {
  Window w;
  const auto outcome = w.window->document()->estimate();
  ASSERT_TRUE(outcome && outcome->estimate);
  const est::Estimate& e = *outcome->estimate;
  const QString memory = w.find<QLabel>("summaryMemory")->text();
  EXPECT_TRUE(memory.contains(format_gib(e.memory.peak.total_bytes()))) << memory.toStdString();
  EXPECT_TRUE(memory.contains(QStringLiteral("fits"))) << memory.toStdString();
  EXPECT_TRUE(w.find<QLabel>("summaryIteration")->text().startsWith(format_seconds(e.time.iteration_s)));
  EXPECT_EQ(w.find<QLabel>("summaryMfu")->text(), format_percent(e.time.mfu));
  EXPECT_TRUE(w.find<QLabel>("summaryDays")->text().startsWith(format_fixed(e.time.training_days, 1) + QStringLiteral(" days")));
  EXPECT_EQ(w.find<QLabel>("summaryGpuHours")->text(), format_count(e.time.gpu_hours));
  EXPECT_TRUE(w.find<QLabel>("summaryCost")->text().endsWith(QStringLiteral(" USD")));
  // The summary is on the Plan page itself, beside the form.
  EXPECT_TRUE(w.window->planForm()->isAncestorOf(w.find<QWidget>("planSummary")));

  // No pipeline, no tensor parallelism: GPT-3 175B does not fit, and the summary says so at once.
  w.edit([](est::Plan& p) { p.layout.tp = 1, p.layout.pp = 1, p.layout.dp = 0, p.cluster.gpus = 512; });
  EXPECT_TRUE(w.find<QLabel>("summaryMemory")->text().contains(QStringLiteral("does not fit")));
  EXPECT_EQ(w.find<QProgressBar>("summaryMemoryBar")->value(), 1000) << "clamped at the capacity";
  w.edit([](est::Plan& p) { p.model.heads = 0; });
  EXPECT_EQ(w.find<QLabel>("summaryMemory")->text(), QStringLiteral("—"));
  EXPECT_TRUE(w.find<QLabel>("summaryStatus")->text().contains(QStringLiteral("errors")));
}

TEST(PlanPage, TheFieldBeingTypedInStaysPutWhenAMessageAppearsAboveIt) {
  Window w;
  auto* seq_len = w.find<QSpinBox>("training.seq_len");  // in the lower half of the form
  auto* viewport = w.window->planForm()->findChild<QScrollArea*>()->viewport();
  seq_len->setFocus();
  QTest::qWait(50);  // the first layout settles
  ASSERT_EQ(QApplication::focusWidget(), seq_len);
  const int before = seq_len->mapTo(viewport, QPoint()).y();
  // An error on the model's heads: its message opens a row in the Model group, above.
  w.edit([](est::Plan& p) { p.model.heads = 0; });
  ASSERT_FALSE(w.window->planForm()->messageFor(QStringLiteral("model.heads")).isEmpty());
  EXPECT_EQ(seq_len->mapTo(viewport, QPoint()).y(), before);
  w.edit([](est::Plan& p) { p.model.heads = 96; });
  ASSERT_TRUE(w.window->planForm()->messageFor(QStringLiteral("model.heads")).isEmpty());
  EXPECT_EQ(seq_len->mapTo(viewport, QPoint()).y(), before);
  // Both directions, any number of times: messages above come and go, the field stays.
  for (int heads : {0, 96, 7, 96}) {
    w.edit([heads](est::Plan& p) { p.model.heads = heads; });
    EXPECT_EQ(seq_len->mapTo(viewport, QPoint()).y(), before) << "heads " << heads;
  }
}

// The form applies the estimator's rules as flags and plan files do: typing 2 virtual stages
// picks the interleaved schedule, and a precision brings its gradient precision along.
TEST(PlanPage, FieldsFollowTheEstimatorsRules) {
  Window w;
  auto* vpp = w.find<QSpinBox>("layout.vpp");
  vpp->setFocus();
  QTest::keyClick(vpp, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(vpp, QStringLiteral("2"));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().layout.schedule, est::PipelineSchedule::interleaved);
  EXPECT_EQ(w.find<QComboBox>("layout.schedule")->currentData().toInt(), static_cast<int>(est::PipelineSchedule::interleaved));
  auto* precision = w.find<QComboBox>("training.precision");
  precision->setCurrentIndex(precision->findData(static_cast<int>(est::Precision::fp8)));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().training.grad_precision, est::gradient_precision_for(est::Precision::fp8));
}

// Choosing DualPipeV sets its two virtual stages (as "schedule": "dualpipev" does in a plan
// file); going back to 1F1B sets one again, and the estimate follows each time.
// Picks a two-chunk schedule (DualPipeV or DualPipe) in the form, as a user does, and checks that
// the plan and the form both take its two virtual stages and that the plan estimates.
void choose_two_chunk_schedule(Window& w, est::PipelineSchedule kind, const QString& label) {
  auto* schedule = w.find<QComboBox>("layout.schedule");
  auto* vpp = w.find<QSpinBox>("layout.vpp");
  ASSERT_TRUE(schedule && vpp);
  const int index = schedule->findData(static_cast<int>(kind));
  ASSERT_GE(index, 0);
  EXPECT_EQ(schedule->itemText(index), label);
  schedule->setCurrentIndex(index);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().layout.schedule, kind);
  EXPECT_EQ(w.window->document()->plan().layout.vpp, 2);
  EXPECT_EQ(vpp->value(), 2);
  ASSERT_TRUE(w.window->document()->estimate() && w.window->document()->estimate()->estimate.has_value());
}

TEST(PlanPage, DualPipeVBringsItsTwoVirtualStages) {
  Window w;
  choose_two_chunk_schedule(w, est::PipelineSchedule::dualpipev, QStringLiteral("dualpipev"));
  auto* schedule = w.find<QComboBox>("layout.schedule");
  auto* vpp = w.find<QSpinBox>("layout.vpp");
  schedule->setCurrentIndex(schedule->findData(static_cast<int>(est::PipelineSchedule::one_f_one_b)));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().layout.vpp, 1);
  EXPECT_EQ(vpp->value(), 1);
}

// DualPipe (two model copies) also runs two virtual stages.
TEST(PlanPage, DualPipeBringsItsTwoVirtualStages) {
  Window w;
  choose_two_chunk_schedule(w, est::PipelineSchedule::dualpipe, QStringLiteral("dualpipe"));
}

// The offload checkboxes edit the plan's layout, and the rule that parameter offloading needs
// ZeRO-3 shows under its own field until ZeRO-3 is chosen.
TEST(PlanPage, OffloadCheckboxesEditThePlan) {
  Window w;
  w.edit([](est::Plan& p) { p.layout.zero_stage = 1; });
  auto* params = w.find<QCheckBox>("layout.offload_params");
  auto* optimizer = w.find<QCheckBox>("layout.offload_optimizer");
  auto* activations = w.find<QCheckBox>("layout.offload_activations");
  ASSERT_TRUE(params && optimizer && activations);
  EXPECT_FALSE(params->isChecked());
  params->setChecked(true);
  optimizer->setChecked(true);
  activations->setChecked(true);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  const est::Plan& plan = w.window->document()->plan();
  EXPECT_TRUE(plan.layout.offload_params && plan.layout.offload_optimizer && plan.layout.offload_activations);
  EXPECT_TRUE(w.window->planForm()->messageFor(QStringLiteral("layout.offload_params")).contains(QStringLiteral("zero_stage")))
      << w.window->planForm()->messageFor(QStringLiteral("layout.offload_params")).toStdString();
  auto* zero = w.find<QComboBox>("layout.zero_stage");
  zero->setCurrentIndex(zero->findData(3));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_TRUE(w.window->planForm()->messageFor(QStringLiteral("layout.offload_params")).isEmpty());
  // A plan opened with offloading shows it checked; the host link comes from the system preset.
  w.edit([](est::Plan& p) { p.layout.offload_activations = false; });
  EXPECT_FALSE(activations->isChecked());
  EXPECT_DOUBLE_EQ(w.find<QDoubleSpinBox>("cluster.host_link_gb_per_s")->value(), 32.0) << "selene: PCIe Gen4 x16";
}

// Presses `button` on the message box that opens next, and says whether one opened.
struct AnswerNextBox {
  bool asked = false;
  QString text;
  explicit AnswerNextBox(QMessageBox::StandardButton button) {
    QTimer::singleShot(50, [this, button] {
      auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
      if (!box) return;
      asked = true;
      text = box->text();
      box->button(button)->click();
    });
  }
};

TEST(PlanPage, NewAsksBeforeDiscardingEdits) {
  Window w;
  EXPECT_FALSE(w.window->hasUnsavedEdits()) << "the default plan is not an edit";
  {
    AnswerNextBox answer(QMessageBox::Cancel);
    w.window->newPlan();
    QTest::qWait(100);
    EXPECT_FALSE(answer.asked) << "nothing to lose: no question";
  }
  w.edit([](est::Plan& p) { p.layout.tp = 4; });
  EXPECT_TRUE(w.window->hasUnsavedEdits());
  EXPECT_TRUE(w.window->windowTitle().endsWith(QStringLiteral(" *"))) << w.window->windowTitle().toStdString();
  {
    AnswerNextBox answer(QMessageBox::Cancel);
    w.window->newPlan();
    EXPECT_TRUE(answer.asked);
    EXPECT_TRUE(answer.text.contains(QStringLiteral("not saved"))) << answer.text.toStdString();
    EXPECT_EQ(w.window->document()->plan().layout.tp, 4) << "Cancel keeps the edits";
  }
  {
    AnswerNextBox answer(QMessageBox::Discard);
    w.window->newPlan();
    EXPECT_TRUE(answer.asked);
    ASSERT_TRUE(test::wait_idle(*w.window->document()));
    EXPECT_EQ(w.window->document()->plan().layout.tp, est::default_plan().layout.tp) << "Discard starts anew";
    EXPECT_FALSE(w.window->hasUnsavedEdits());
  }
  // A saved plan is no longer an edit.
  w.edit([](est::Plan& p) { p.layout.tp = 2; });
  ASSERT_TRUE(w.window->savePlan(w.dir.filePath(QStringLiteral("saved.json"))).isEmpty());
  EXPECT_FALSE(w.window->hasUnsavedEdits());
}

// The button shows at once (busy_delay_ms 0), so the click lands while the estimate runs on a
// machine of any speed; the 300 ms default is the window's, not what is tested here.
TEST(PlanPage, ASlowEstimateSaysSoAndCanBeCancelled) {
  Window w(0);
  w.window->document()->replacePlan(slow_plan());
  auto* cancel = w.find<QPushButton>("cancelEstimate");
  QTRY_VERIFY_WITH_TIMEOUT(cancel->isVisible(), 5000);
  EXPECT_EQ(w.find<QLabel>("estimateStatus")->text(), QStringLiteral("estimating…"));
  cancel->click();
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_TRUE(w.window->document()->wasCancelled());
  EXPECT_FALSE(cancel->isVisible());
  EXPECT_TRUE(w.find<QLabel>("estimateStatus")->text().contains(QStringLiteral("cancelled")));
  EXPECT_EQ(w.window->document()->plan().layout.pp, 1000) << "the plan stays as edited";
  // The next edit estimates again.
  w.edit([](est::Plan& p) { p = est::default_plan(); });
  EXPECT_FALSE(w.window->document()->wasCancelled());
  ASSERT_TRUE(w.window->document()->estimate()->estimate.has_value());
}

// An exported chart says what it is of: the page's name and the plan, in a band above it.
TEST(PlanPage, ExportedPagesCarryATitleAndThePlan) {
  Window w;
  const QString caption = plan_caption(w.window->document()->plan());
  EXPECT_TRUE(caption.startsWith(QStringLiteral("gpt3-175b on 1024 x a100-80gb-sxm"))) << caption.toStdString();
  EXPECT_TRUE(caption.contains(QStringLiteral("TP 8 · PP 8 · DP 16"))) << caption.toStdString();
  auto* tabs = w.window->findChild<QTabWidget*>();
  tabs->setCurrentWidget(w.window->memoryPage());
  QApplication::processEvents();
  const QString png = w.dir.filePath(QStringLiteral("memory.png"));
  ASSERT_TRUE(w.window->exportCurrentPage(png).isEmpty());
  const QImage image(png);
  const auto* page = dynamic_cast<const ExportablePage*>(w.window->memoryPage());
  ASSERT_NE(page, nullptr);
  EXPECT_EQ(image.height(), 2 * (page->exportSize().height() + CaptionedPage::kBandHeight)) << "2x: HiDPI";
  int dark = 0;  // the band's text
  for (int y = 0; y < 2 * CaptionedPage::kBandHeight; ++y) {
    for (int x = 0; x < image.width(); ++x) dark += qGray(image.pixel(x, y)) < 128 ? 1 : 0;
  }
  EXPECT_GT(dark, 200);
  if (svg_export_available()) {
    const QString svg = w.dir.filePath(QStringLiteral("memory.svg"));
    ASSERT_TRUE(w.window->exportCurrentPage(svg).isEmpty());
    QFile file(svg);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    EXPECT_TRUE(text.contains(QStringLiteral("Plansight — Memory"))) << "the page's name";
    EXPECT_TRUE(text.contains(QStringLiteral("gpt3-175b on 1024 x a100-80gb-sxm"))) << "the plan";
  }
}

// The app can choose its run database: File > Open run database switches the Runs, Compare and
// Probe pages to it, and the next start opens it again.
TEST(PlanPage, TheRunDatabaseCanBeChosenAndIsRemembered) {
  QTemporaryDir dir;
  const QString other = dir.filePath(QStringLiteral("other.sqlite"));
  {
    auto db = store::Store::open(other.toStdString());
    ASSERT_TRUE(db.ok()) << db.error_text();
    ASSERT_TRUE(db->create_run({store::RunKind::import, "from the other database", "cpu", store::RunStatus::complete,
                                std::nullopt, ""})
                    .ok());
  }
  const QString settings = dir.filePath(QStringLiteral("settings.ini"));
  {
    MainWindowOptions options;
    options.settings_path = settings;
    options.store_path = dir.filePath(QStringLiteral("first.sqlite"));
    options.restore_last_plan = false;
    MainWindow window(options);
    window.setRunDatabase(other);
    EXPECT_EQ(window.runs()->databasePath(), other);
    QTRY_VERIFY_WITH_TIMEOUT(window.runs()->isIdle() && window.runs()->runs().size() == 1, 10000);
    EXPECT_EQ(window.runs()->runs().front().run.name, "from the other database");
  }
  MainWindowOptions next;
  next.settings_path = settings;  // no store_path: the remembered one
  next.restore_last_plan = false;
  MainWindow again(next);
  EXPECT_EQ(again.runs()->databasePath(), other);
}

TEST(PlanDocument, AnEditCancelsTheEstimateOfTheOlderPlan) {
  PlanDocument document;
  ASSERT_TRUE(test::wait_idle(document));
  document.replacePlan(slow_plan());
  QTest::qWait(50);  // the slow job is running
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document, 60000));
  ASSERT_TRUE(document.estimate() && document.estimate()->estimate) << "the newest plan's estimate";
  EXPECT_EQ(document.estimate()->plan.layout.pp, est::default_plan().layout.pp);
}

// Every plan field the form shows, set in its editor, lands at its plan-file path with the value
// the plan file and the flag give it (tests/unit/plan_fields_test.cpp,
// tests/integration/plan_fields_cli_test.cpp): the form, the flags and the file are one plan.
// Its label and tooltip are the field table's.
TEST(PlanPage, EveryFieldOnTheFormMeansItsPlanFileField) {
  Window w;
  int shown = 0;
  for (const auto& f : est::plan_fields()) {
    const std::string path(f.path);
    QWidget* editor = w.window->findChild<QWidget*>(QString::fromStdString(path));
    if (!editor) continue;  // a field only plan files and flags set
    ++shown;
    const bool moe = path.rfind("model.moe.", 0) == 0 || path.rfind("model.mla.", 0) == 0 ||
                     path == "model.mtp_modules" || path == "layout.ep" || path == "layout.etp";
    auto base = est::plan_from_json({{"model", {{"preset", moe ? "deepseek-v3" : "gpt3-175b"}}}});
    ASSERT_TRUE(base) << base.error_text();
    w.window->document()->replacePlan(*base);
    ASSERT_TRUE(test::wait_idle(*w.window->document()));

    const nlohmann::json example = nlohmann::json::parse(f.example);
    if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
      spin->setValue(example.get<int>());
    } else if (auto* real = qobject_cast<QDoubleSpinBox*>(editor)) {
      real->setValue(example.get<double>() / (path == "training.tokens" ? 1e9 : 1.0));  // shown in B tokens
    } else if (auto* box = qobject_cast<QCheckBox*>(editor)) {
      box->setChecked(example.get<bool>());
    } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
      const int row = example.is_string() ? combo->findText(QString::fromStdString(example.get<std::string>()))
                                          : combo->findData(example.get<int>());
      ASSERT_GE(row, 0) << path << ": the form offers no " << example.dump();
      combo->setCurrentIndex(row);
    } else {
      ADD_FAILURE() << path << ": an editor of an unknown kind";
      continue;
    }
    ASSERT_TRUE(test::wait_idle(*w.window->document()));
    EXPECT_EQ(est::field_value(est::to_json(w.window->document()->plan()), f), example) << path;
    EXPECT_TRUE(editor->toolTip().contains(QString::fromUtf8(f.help.data(), static_cast<qsizetype>(f.help.size()))))
        << path << ": " << editor->toolTip().toStdString();
  }
  EXPECT_GE(shown, 35) << "the form shows most plan fields";
}

}  // namespace
}  // namespace plansight::gui
