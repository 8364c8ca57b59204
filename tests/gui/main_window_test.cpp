// The main window end to end: typing TP and PP into the Plan page shows exactly what
// estimator::estimate() says for the same plan on the Memory and Time & cost pages; invalid
// input is marked inline; the last plan comes back on the next start; files open, save and
// export; a config.json imports; the timeline steps through the schedule.
#include <gtest/gtest.h>

#include <QTimer>

#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include "gui_test_support.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/gui/chart_export.h"
#include "plansight/gui/format.h"
#include "plansight/gui/main_window.h"
#include "plansight/gui/plan_form.h"
#include "plansight/gui/timeline_page.h"
#include "plansight/gui/timeline_widget.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;

struct Window {
  QTemporaryDir dir;
  std::unique_ptr<MainWindow> window;
  explicit Window(bool restore = false, QString settings = {}) {
    MainWindowOptions options;
    options.settings_path = settings.isEmpty() ? dir.filePath(QStringLiteral("settings.ini")) : settings;
    options.store_path = dir.filePath(QStringLiteral("runs.sqlite"));  // never the user's store
    options.restore_last_plan = restore;
    window = std::make_unique<MainWindow>(options);
    window->show();
    EXPECT_TRUE(test::wait_idle(*window->document()));
  }
  template <class T>
  T* find(const char* name) const {
    T* w = window->findChild<T*>(QString::fromLatin1(name));
    EXPECT_NE(w, nullptr) << name;
    return w;
  }
  // Types a number into a spin box as a user would: select all, type the digits.
  void type(const char* field, int value) {
    auto* spin = find<QSpinBox>(field);
    spin->setFocus();
    QTest::keyClick(spin, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClicks(spin, QString::number(value));
    EXPECT_EQ(spin->value(), value) << field;
  }
};

TEST(MainWindow, TypingTpAndPpShowsTheEstimatorsMemoryAndTime) {
  Window w;
  w.type("layout.tp", 4);
  w.type("layout.pp", 4);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));

  est::Plan plan = est::default_plan();
  plan.layout.tp = 4;
  plan.layout.pp = 4;
  auto e = est::estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_EQ(w.find<QLabel>("memoryTotal")->text(), format_gib(e->memory.peak.total_bytes()));
  EXPECT_EQ(w.find<QLabel>("iterationTime")->text(), format_seconds(e->time.iteration_s));
  EXPECT_EQ(w.find<QLabel>("mfu")->text(), format_percent(e->time.mfu));
  EXPECT_EQ(w.find<QLabel>("dataParallel")->text(), QStringLiteral("64"));
  // And they differ from the default plan's, so the test would notice a page that did not update.
  auto d = est::estimate(est::default_plan());
  EXPECT_NE(format_gib(d->memory.peak.total_bytes()), format_gib(e->memory.peak.total_bytes()));
}

TEST(MainWindow, InvalidFieldsAreMarkedInlineWithTheValidatorsMessage) {
  Window w;
  w.type("layout.tp", 5);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  est::Plan plan = est::default_plan();
  plan.layout.tp = 5;
  const auto errors = est::validate(plan);
  std::string tp_message;
  for (const auto& d : errors) {
    if (d.field == "layout.tp" && d.severity == Severity::error) tp_message = d.message;
  }
  ASSERT_FALSE(tp_message.empty());
  const QString shown = w.window->planForm()->messageFor(QStringLiteral("layout.tp"));
  EXPECT_TRUE(shown.contains(QString::fromStdString(tp_message).toHtmlEscaped())) << shown.toStdString();
  EXPECT_EQ(w.find<QLabel>("memoryTotal")->text(), QStringLiteral("—"));
  // Fixing it clears the mark.
  w.type("layout.tp", 8);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_TRUE(w.window->planForm()->messageFor(QStringLiteral("layout.tp")).isEmpty());
  EXPECT_EQ(w.window->planForm()->editorFor(QStringLiteral("cluster.gpu.memory_gib"))->objectName(), QStringLiteral("cluster.gpu"));
}

TEST(MainWindow, RestoresTheLastPlanOnTheNextStart) {
  QTemporaryDir dir;
  const QString settings = dir.filePath(QStringLiteral("settings.ini"));
  {
    Window first(true, settings);
    first.type("layout.pp", 4);
    ASSERT_TRUE(test::wait_idle(*first.window->document()));
    first.window->close();
  }
  Window second(true, settings);
  EXPECT_EQ(second.window->document()->plan().layout.pp, 4);
  EXPECT_EQ(second.find<QSpinBox>("layout.pp")->value(), 4);
  Window fresh(false, settings);
  EXPECT_EQ(fresh.window->document()->plan().layout.pp, 8);
}

// Issue 17: fields a plan file did not give but opening it changed (a replaced model starts
// from plain data parallelism) are said in the status bar, never changed unseen.
TEST(MainWindow, OpeningAPlanSaysWhatItChangedForTheUser) {
  Window w;
  const QString path = w.dir.filePath(QStringLiteral("llama.json"));
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write(R"({"model": "llama-2-7b", "cluster": {"gpus": 64}, "layout": {"pp": 2}})");
  file.close();
  ASSERT_TRUE(w.window->openPlan(path).isEmpty());
  const QString message = w.window->statusBar()->currentMessage();
  EXPECT_TRUE(message.contains(QStringLiteral("changed for you: ")) &&
              message.contains(QStringLiteral("layout.tp: set to 1 (was 8): the model was replaced")) &&
              message.contains(QStringLiteral("layout.recompute: set to \"none\" (was \"full\")")))
      << message.toStdString();
  EXPECT_FALSE(message.contains(QStringLiteral("layout.pp:"))) << "the file gave pp";
  EXPECT_EQ(w.window->document()->plan().layout.pp, 2);
}

TEST(MainWindow, SavesOpensAndExports) {
  Window w;
  w.type("training.global_batch", 512);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  const QString plan_path = w.dir.filePath(QStringLiteral("plan.json"));
  ASSERT_TRUE(w.window->savePlan(plan_path).isEmpty());
  w.window->document()->replacePlan(est::default_plan());
  ASSERT_TRUE(w.window->openPlan(plan_path).isEmpty());
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.find<QSpinBox>("training.global_batch")->value(), 512);
  EXPECT_TRUE(w.window->openPlan(w.dir.filePath(QStringLiteral("missing.json"))).contains(QStringLiteral("missing.json")));

  for (int page = 0; page < 4; ++page) {
    w.window->findChild<QTabWidget*>(QStringLiteral("pages"))->setCurrentIndex(page);
    const QString png = w.dir.filePath(QStringLiteral("page%1.png").arg(page));
    EXPECT_TRUE(w.window->exportCurrentPage(png).isEmpty());
    EXPECT_GT(QFileInfo(png).size(), 1000) << page;
    if (svg_export_available()) {
      const QString svg = w.dir.filePath(QStringLiteral("page%1.svg").arg(page));
      EXPECT_TRUE(w.window->exportCurrentPage(svg).isEmpty());
      EXPECT_GT(QFileInfo(svg).size(), 1000) << page;
    }
  }
}

// The Plan page sets model fields one by one; typing a width must still carry the fields derived
// from it, by the estimator's rule (derive_model), as `plansight estimate --layers 30 --hidden
// 3072 --heads 32 --pp 2` does: d_ff 4h = 12288, 3,559,271,424 parameters (Narayanan et al.
// 2021 eq. (2) + the final LayerNorm; see tests/unit/model_derivation_test.cpp).
TEST(MainWindow, TypedWidthsCarryTheDerivedFieldsAndNameTheModel) {
  Window w;
  w.type("layout.pp", 2);
  w.type("model.layers", 30);
  w.type("model.hidden", 3072);
  w.type("model.heads", 32);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  const est::ModelSpec& m = w.window->document()->plan().model;
  EXPECT_EQ(m.ffn_hidden, 12288);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.name, "custom (based on gpt3-175b)");
  EXPECT_EQ(w.find<QSpinBox>("model.ffn_hidden")->value(), 12288) << "the derived width is shown";
  EXPECT_EQ(w.find<QSpinBox>("model.kv_heads")->value(), 32);
  EXPECT_EQ(w.find<QComboBox>("model")->currentIndex(), -1);
  auto e = w.window->document()->estimate();
  ASSERT_TRUE(e && e->estimate);
  EXPECT_EQ(e->estimate->parameters, 3559271424.0);

  // A width the user typed stays theirs when the hidden size changes again.
  w.type("model.ffn_hidden", 10000);
  w.type("model.hidden", 4096);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().model.ffn_hidden, 10000);
  // Back to the preset's numbers: the preset shows again.
  w.type("model.ffn_hidden", 49152);
  w.type("model.hidden", 12288);
  w.type("model.heads", 96);
  w.type("model.layers", 96);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().model.name, "gpt3-175b");
  EXPECT_EQ(w.find<QComboBox>("model")->currentText(), QStringLiteral("gpt3-175b"));
}

TEST(MainWindow, ImportsAHuggingFaceConfig) {
  Window w;
  ASSERT_TRUE(w.window->planForm()->importHfConfig(QStringLiteral(PLANSIGHT_TEST_DATA_DIR "/hf/Llama-3.1-8B/config.json")));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().model.layers, 32);
  EXPECT_EQ(w.find<QSpinBox>("model.layers")->value(), 32);
  EXPECT_EQ(w.find<QSpinBox>("model.kv_heads")->value(), 8);
  // Its structure is the llama-3.1-8b preset's, so the preset shows; Qwen2 has no preset.
  EXPECT_EQ(w.find<QComboBox>("model")->currentText(), QStringLiteral("llama-3.1-8b"));
  ASSERT_TRUE(w.window->planForm()->importHfConfig(QStringLiteral(PLANSIGHT_TEST_DATA_DIR "/hf/Qwen2-7B/config.json")));
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.find<QComboBox>("model")->currentIndex(), -1);
  EXPECT_EQ(w.window->document()->plan().model.name, "Qwen2-7B");
  EXPECT_FALSE(w.window->planForm()->importHfConfig(QStringLiteral(PLANSIGHT_TEST_DATA_DIR "/hf/missing/config.json")));
}

TEST(MainWindow, MoeFieldsEditTheModelAndExpertParallelism) {
  Window w;
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("mixtral-8x7b");
  plan.cluster.gpus = 64;
  plan.layout = est::LayoutSpec{};
  plan.layout.pp = 4;
  plan.layout.zero_stage = 1;
  plan.training.global_batch = 256;
  plan.training.seq_len = 4096;
  plan.training.achieved_tflops = 0;
  w.window->document()->replacePlan(plan);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.find<QSpinBox>("model.moe.experts")->value(), 8);
  EXPECT_EQ(w.find<QSpinBox>("model.moe.top_k")->value(), 2);
  EXPECT_EQ(w.find<QSpinBox>("layout.etp")->specialValueText(), QStringLiteral("= TP"));

  w.type("layout.ep", 8);
  w.type("layout.etp", 1);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  plan.layout.ep = 8;
  plan.layout.etp = 1;
  EXPECT_EQ(w.window->document()->plan().layout.ep, 8);
  auto e = est::estimate(plan);
  ASSERT_TRUE(e.ok()) << e.error_text();
  EXPECT_EQ(w.find<QLabel>("memoryTotal")->text(), format_gib(e->memory.peak.total_bytes()));
  EXPECT_TRUE(w.find<QLabel>("modelSummary")->text().contains(format_large_count(e->active_parameters)))
      << w.find<QLabel>("modelSummary")->text().toStdString();

  // Top-3 routing is another model: named as a custom one, more active parameters.
  w.type("model.moe.top_k", 3);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_EQ(w.window->document()->plan().model.moe.top_k, 3);
  EXPECT_EQ(w.window->document()->plan().model.name, "custom (based on mixtral-8x7b)");
  EXPECT_EQ(w.window->document()->plan().model.moe.experts, 8) << "the other expert fields stay";

  // An EP that does not divide the experts is marked on the EP box with the validator's words.
  w.type("layout.ep", 3);
  ASSERT_TRUE(test::wait_idle(*w.window->document()));
  EXPECT_TRUE(w.window->planForm()->messageFor(QStringLiteral("layout.ep")).contains(QStringLiteral("must divide model.moe.experts (8)")))
      << w.window->planForm()->messageFor(QStringLiteral("layout.ep")).toStdString();
}

// The View menu lists each page by its tab's name: "Time & cost", never "Time  cost" (the menu
// once stripped every '&', the escaped one included).
TEST(MainWindow, ViewMenuNamesEachPageAsItsTab) {
  Window w;
  QMenu* view = nullptr;
  for (QAction* a : w.window->menuBar()->actions()) {
    if (a->menu() && a->text() == QStringLiteral("&View")) view = a->menu();
  }
  ASSERT_NE(view, nullptr);
  // What a menu shows: a single '&' marks the mnemonic and is not drawn, "&&" draws one '&'.
  auto shown = [](QString text) {
    QString out;
    for (qsizetype i = 0; i < text.size(); ++i) {
      if (text[i] == QLatin1Char('&') && i + 1 < text.size()) ++i;
      out += text[i];
    }
    return out;
  };
  QStringList names;
  for (QAction* a : view->actions()) names << shown(a->text());
  EXPECT_TRUE(names.contains(QStringLiteral("Time & cost"))) << names.join(QStringLiteral(" | ")).toStdString();
  for (const QString& n : names) EXPECT_FALSE(n.contains(QStringLiteral("  "))) << n.toStdString();
}

TEST(MainWindow, TimelineStepsThroughTheSchedule) {
  Window w;
  TimelinePage* page = w.window->timelinePage();
  ASSERT_TRUE(page->stepThrough().available());
  page->setStepMode(true);
  EXPECT_EQ(page->stepThrough().step(), 0u);
  page->setStep(10);
  std::size_t revealed = 0;
  for (std::size_t n : page->stepThrough().revealed()) revealed += n;
  EXPECT_EQ(revealed, 10u);
  EXPECT_FALSE(w.find<QLabel>("timelineDetails")->text().isEmpty());
  page->setStepMode(false);
  EXPECT_EQ(page->stepThrough().step(), page->stepThrough().size());
}

// "Per layer" shows every collective of the default plan's layers (GPT-3 175B, TP 8, 12 layers
// per stage) as its own span, with the same iteration and bubble; off again, the ops.
TEST(MainWindow, TimelinePerLayerShowsEachCollective) {
  Window w;
  TimelinePage* page = w.window->timelinePage();
  auto* figures = w.find<QLabel>("timelineFigures");
  const auto ops = page->timeline()->timeline();
  ASSERT_NE(ops, nullptr);
  const QString before = figures->text();
  page->setPerLayer(true);
  const auto layered = page->timeline()->timeline();
  ASSERT_NE(layered, nullptr);
  EXPECT_GT(layered->span_count(), 10 * ops->span_count());
  EXPECT_EQ(layered->end_ns() - layered->begin_ns(), ops->end_ns() - ops->begin_ns());
  std::size_t all_reduces = 0;
  const auto& t = layered->timeline();
  for (const auto& track : t.tracks) {
    for (const auto& s : track.spans) {
      all_reduces += s.stage == 1 && s.micro_batch == 0 && t.name_of(s).find("TP all-reduce") != std::string::npos;
    }
  }
  // Stage 1's 12 layers: two all-reduces per layer in the forward, two in the backward, and full
  // recomputation's forward again.
  EXPECT_EQ(all_reduces, 12u * 2 * 3);
  EXPECT_TRUE(figures->text().contains(QStringLiteral("per layer"))) << figures->text().toStdString();
  EXPECT_TRUE(figures->text().contains(format_percent(est::schedule_bubbles(ops->timeline()).mean_fraction)));
  const QImage image = page->grab().toImage();
  EXPECT_FALSE(image.isNull());
  page->setPerLayer(false);
  EXPECT_EQ(page->timeline()->timeline(), ops);
  EXPECT_EQ(figures->text(), before);
}

// A plan too long to lay out per layer in the view (here 5,000 micro-batches x 8 stages x 12
// layers): the page says why and keeps showing its ops.
TEST(MainWindow, TimelinePerLayerPastItsBoundSaysWhyAndShowsTheOps) {
  Window w;
  est::Plan plan = est::default_plan();
  plan.training.global_batch = plan.dp() * 5000;
  w.window->document()->editPlan(plan);
  ASSERT_TRUE(test::wait_idle(*w.window->document(), 60000));
  TimelinePage* page = w.window->timelinePage();
  const auto ops = page->timeline()->timeline();
  ASSERT_NE(ops, nullptr);
  page->setPerLayer(true);
  EXPECT_EQ(page->timeline()->timeline(), ops);
  const QString figures = w.find<QLabel>("timelineFigures")->text();
  EXPECT_TRUE(figures.contains(QStringLiteral("not per layer"))) << figures.toStdString();
  EXPECT_TRUE(figures.contains(QString::number(TimelinePage::kMaxLayerSpans))) << figures.toStdString();
}

// Play reveals events at the chosen pace: 2,000 events per second reveals a whole schedule in a
// blink (several per 16 ms frame); 1 per second waits a second between events.
TEST(MainWindow, TimelinePlaysAtTheChosenSpeed) {
  Window w;
  TimelinePage* page = w.window->timelinePage();
  ASSERT_TRUE(page->stepThrough().available());
  page->setStepMode(true);
  auto* speed = page->findChild<QComboBox*>(QStringLiteral("stepSpeed"));
  ASSERT_NE(speed, nullptr);
  auto* timer = page->findChild<QTimer*>(QStringLiteral("playTimer"));
  ASSERT_NE(timer, nullptr);
  speed->setCurrentIndex(speed->findData(2000));
  QAction* play = nullptr;
  for (QAction* a : page->findChildren<QAction*>()) {
    if (a->text() == QStringLiteral("Play")) play = a;
  }
  ASSERT_NE(play, nullptr);
  play->setChecked(true);
  EXPECT_EQ(timer->interval(), 16);
  const std::size_t total = page->stepThrough().size();
  ASSERT_GT(total, 100u);
  QTRY_VERIFY_WITH_TIMEOUT(page->stepThrough().step() >= 100, 5000);
  speed->setCurrentIndex(speed->findData(1));
  EXPECT_EQ(timer->interval(), 1000) << "a running Play takes the new pace at once";
  play->setChecked(false);
  EXPECT_FALSE(timer->isActive());
}

}  // namespace
}  // namespace plansight::gui
