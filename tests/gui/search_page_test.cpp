// The Search page end to end: a search of gpt3-1.3b on 16 A100s runs on a worker, the table
// fills sorted by tokens/s (best first), the rejection summary shows, Apply gives the plan the
// selected row's layout, progress comes per tensor-parallel degree, and Cancel drops a running
// search's result. ChunkedSearch gives what one search_layouts() call gives, and stops at a
// chunk boundary when cancelled. SearchResultModel and its sort proxy under
// QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <atomic>

#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QProgressBar>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QTableView>

#include "gui_test_support.h"
#include "plansight/gui/chunked_search.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"
#include "plansight/gui/search_constraints_form.h"
#include "plansight/gui/search_page.h"
#include "plansight/gui/search_result_model.h"

namespace plansight::gui {
namespace {

namespace est = plansight::estimator;
using test::ModelTesterWarnings;

est::Plan small_plan() {
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("gpt3-1.3b");
  plan.cluster.gpus = 16;
  plan.cluster.gpus_per_node = 8;
  plan.layout = {};
  plan.layout.tp = 2;
  plan.layout.pp = 2;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 512;
  plan.training.seq_len = 2048;
  return plan;
}

bool wait_search(SearchPage& page, int timeout_ms = 60000) {
  QSignalSpy spy(&page, &SearchPage::searchFinished);
  return spy.wait(timeout_ms);
}

TEST(SearchResultModel, PassesTheModelTesterThroughResets) {
  ModelTesterWarnings warnings;
  SearchResultModel model;
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model);
  proxy.setSortRole(SearchResultModel::kSortRole);
  proxy.sort(SearchResultModel::kTokensPerS, Qt::DescendingOrder);
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Warning);
  QAbstractItemModelTester proxy_tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Warning);
  auto result = est::search_layouts(small_plan());
  ASSERT_TRUE(result.ok()) << result.error_text();
  model.setResult(std::make_shared<const est::SearchResult>(*result));
  EXPECT_EQ(model.rowCount(), static_cast<int>(result->layouts.size()));
  EXPECT_EQ(model.columnCount(), SearchResultModel::kColumnCount);
  model.setResult(nullptr);
  EXPECT_EQ(model.rowCount(), 0);
  model.setResult(std::make_shared<const est::SearchResult>(*result));
  EXPECT_EQ(warnings.count(), 0);
}

TEST(SearchPage, SearchesSortsAndAppliesTheSelectedLayout) {
  PlanDocument document;
  document.replacePlan(small_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  ModelTesterWarnings warnings;
  QAbstractItemModelTester tester(page.proxy(), QAbstractItemModelTester::FailureReportingMode::Warning);
  page.startSearch();
  EXPECT_TRUE(page.isRunning());
  ASSERT_TRUE(wait_search(page));
  EXPECT_FALSE(page.isRunning());
  const int rows = page.proxy()->rowCount();
  ASSERT_GT(rows, 0);
  for (int r = 1; r < rows; ++r) {
    const double above = page.proxy()->index(r - 1, SearchResultModel::kTokensPerS).data(SearchResultModel::kSortRole).toDouble();
    const double below = page.proxy()->index(r, SearchResultModel::kTokensPerS).data(SearchResultModel::kSortRole).toDouble();
    EXPECT_GE(above, below) << "row " << r;
  }
  EXPECT_FALSE(page.summaryText().isEmpty());

  // Sort by TP ascending, pick the last row (the largest TP), apply it.
  page.table()->sortByColumn(SearchResultModel::kTp, Qt::AscendingOrder);
  const int pick = rows - 1;
  page.table()->selectRow(pick);
  const qlonglong tp = page.proxy()->index(pick, SearchResultModel::kTp).data(SearchResultModel::kSortRole).toLongLong();
  const qlonglong pp = page.proxy()->index(pick, SearchResultModel::kPp).data(SearchResultModel::kSortRole).toLongLong();
  const qlonglong mb = page.proxy()->index(pick, SearchResultModel::kMicroBatch).data(SearchResultModel::kSortRole).toLongLong();
  ASSERT_TRUE(page.applySelected());
  EXPECT_EQ(document.plan().layout.tp, tp);
  EXPECT_EQ(document.plan().layout.pp, pp);
  EXPECT_EQ(document.plan().training.micro_batch, mb);
  EXPECT_EQ(document.plan().model.name, "gpt3-1.3b");
  ASSERT_TRUE(test::wait_idle(document));
  ASSERT_TRUE(document.estimate() && document.estimate()->estimate) << "the applied layout is re-estimated";
  EXPECT_EQ(document.estimate()->plan.layout.tp, tp);
  EXPECT_EQ(warnings.count(), 0);
}

// Types the constraints into the page's form, asks for the top `top`, runs the search to its end.
bool search_with(SearchPage& page, int top, std::initializer_list<std::pair<const char*, const char*>> fields) {
  SearchConstraintsForm* form = page.constraints();
  if (!form) return false;
  form->topBox()->setValue(top);
  for (const auto& [name, text] : fields) {
    if (!form->field(name)) return false;
    form->field(name)->setText(QString::fromUtf8(text));
  }
  page.startSearch();
  return wait_search(page);
}

// A precision list searches each precision; the table says each layout's, and a precision the
// GPU lacks (the default plan's A100 has no fp8) is named in the status.
TEST(SearchPage, PrecisionListShowsEachLayoutsPrecision) {
  PlanDocument document;
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  ASSERT_TRUE(search_with(page, 6, {{"tp", "8"}, {"precision", "bf16,fp16,fp8"}}));
  ASSERT_EQ(page.model()->rowCount(), 6) << page.statusText().toStdString();
  for (int r = 0; r < 6; ++r) {
    const QString shown = page.model()->index(r, SearchResultModel::kPrecision).data().toString();
    EXPECT_TRUE(shown == QStringLiteral("bf16") || shown == QStringLiteral("fp16")) << shown.toStdString();
    EXPECT_EQ(shown.toStdString(), est::to_string(page.model()->layoutAt(r)->plan.training.precision));
    EXPECT_EQ(page.model()->index(r, SearchResultModel::kOffload).data().toString(), QStringLiteral("none"));
  }
  EXPECT_TRUE(page.statusText().contains(QStringLiteral("fp8 not searched"))) << page.statusText().toStdString();
}

// Issue 17: the page shows as many layouts as asked for, within the constraints typed, and
// never one the plan page would then warn about (CP without flash attention, ZeRO-2/3 with PP).
TEST(SearchPage, ShowsTheTopNWithinTheConstraints) {
  PlanDocument document;
  document.replacePlan(est::default_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  ASSERT_TRUE(search_with(page, 12, {{"tp", "2..8"}, {"zero_stage", "0,1,2"}}));
  ASSERT_EQ(page.model()->rowCount(), 12) << page.statusText().toStdString();
  for (int r = 0; r < 12; ++r) {
    const est::RankedLayout* l = page.model()->layoutAt(r);
    ASSERT_TRUE(l);
    EXPECT_GE(l->candidate.tp, 2);
    EXPECT_LE(l->candidate.tp, 8);
    EXPECT_EQ(l->candidate.cp, 1) << "standard attention";
    EXPECT_TRUE(l->candidate.pp == 1 || l->candidate.zero_stage < 2) << est::describe(l->candidate);
  }
  ASSERT_TRUE(page.applySelected(0));
  ASSERT_TRUE(test::wait_idle(document));
  for (const auto& d : est::validate(document.plan())) {
    EXPECT_NE(d.field, "layout.cp");
    EXPECT_NE(d.field, "layout.zero_stage") << d.message;
  }

  // Flash attention chosen on the page lets CP in, and Apply takes the attention along.
  SearchConstraintsForm* form = page.constraints();
  form->field("cp")->setText(QStringLiteral("2"));
  form->attentionBox()->setCurrentIndex(2);
  page.startSearch();
  ASSERT_TRUE(wait_search(page));
  ASSERT_GT(page.model()->rowCount(), 0) << page.statusText().toStdString();
  EXPECT_EQ(page.model()->layoutAt(0)->candidate.cp, 2);
  ASSERT_TRUE(page.applySelected(0));
  EXPECT_EQ(document.plan().training.attention, est::AttentionKernel::flash);
  EXPECT_EQ(document.plan().layout.cp, 2);
}

TEST(SearchPage, ApplySaysWhatElseItChanged) {
  est::Plan plan = small_plan();
  plan.training.mfu = 0.4;  // a given throughput: the applied layout's time is predicted instead
  PlanDocument document;
  document.replacePlan(plan);
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  QSignalSpy messages(&page, &SearchPage::statusMessage);
  page.startSearch();
  ASSERT_TRUE(wait_search(page));
  ASSERT_TRUE(page.applySelected(0));
  ASSERT_EQ(messages.count(), 1);
  const QString text = messages.last().at(0).toString();
  EXPECT_TRUE(text.contains(QStringLiteral("also changed: training.mfu 0.4 dropped"))) << text.toStdString();
  EXPECT_EQ(document.plan().training.mfu, 0.0);
}

TEST(SearchPage, ABadConstraintNamesItsFieldAndStartsNothing) {
  PlanDocument document;
  document.replacePlan(small_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  page.constraints()->field("pp")->setText(QStringLiteral("two"));
  page.startSearch();
  EXPECT_FALSE(page.isRunning());
  EXPECT_TRUE(page.statusText().contains(QStringLiteral("PP: \"two\" is not a whole number"))) << page.statusText().toStdString();
  page.constraints()->frameworkRules()->setChecked(false);
  page.constraints()->field("pp")->setText(QStringLiteral("2"));
  page.constraints()->field("zero_stage")->setText(QStringLiteral("3"));
  page.startSearch();
  ASSERT_TRUE(wait_search(page));
  ASSERT_GT(page.model()->rowCount(), 0) << "rules off: ZeRO-3 with PP 2 is searched";
  EXPECT_EQ(page.model()->layoutAt(0)->candidate.zero_stage, 3);
}

// Everything search_layouts() returns except timings, as text, so a mismatch prints readably.
std::vector<std::string> facts(const est::SearchResult& r) {
  std::vector<std::string> out = {"enumerated " + std::to_string(r.enumerated), "evaluated " + std::to_string(r.evaluated),
                                  "fitting " + std::to_string(r.fitting)};
  for (const auto& l : r.layouts) {
    out.push_back("layout " + est::describe(l.candidate) + " " + std::to_string(l.estimate.time.iteration_s) + " s, closed form " +
                  std::to_string(l.closed_form_iteration_s));
  }
  for (const auto& j : r.rejections) {
    out.push_back("rejected " + std::string(est::to_string(j.reason)) + " x" + std::to_string(j.count) + " first " +
                  est::describe(j.first) + ": " + j.detail);
    if (j.reason == est::RejectReason::memory) {
      out.push_back("closest " + est::describe(j.closest) + " " + std::to_string(j.closest_bytes));
    }
  }
  return out;
}

// Returns how many layouts the search found.
std::size_t expect_chunks_equal_one_search(const est::Plan& plan, const est::SearchOptions& options) {
  auto whole = est::search_layouts(plan, options);
  EXPECT_TRUE(whole.ok()) << whole.error_text();
  if (!whole) return 0;
  std::atomic<bool> cancel{false};
  std::size_t calls = 0, chunks = 0;
  auto chunked = run_chunked_search(plan, options, cancel, [&](std::size_t done, std::size_t total, std::int64_t) {
    ++calls;
    chunks = total;
    EXPECT_EQ(done, calls);
  });
  EXPECT_TRUE(chunked.ok()) << chunked.error_text();
  if (!chunked || !chunked->has_value()) return 0;
  EXPECT_EQ(calls, chunks);
  EXPECT_GT(chunks, 2u);
  EXPECT_EQ(facts(**chunked), facts(*whole));
  return whole->layouts.size();
}

TEST(ChunkedSearch, GivesWhatOneSearchGives) {
  EXPECT_EQ(expect_chunks_equal_one_search(small_plan(), {}), 5u);
  est::SearchOptions options;
  options.top = 10;
  options.simulate = 2;
  EXPECT_EQ(expect_chunks_equal_one_search(small_plan(), options), 10u);
  EXPECT_EQ(expect_chunks_equal_one_search(est::default_plan(), {}), 5u);  // GPT-3 175B on 1024 GPUs: 11 chunks
  // A sweep of models and cluster sizes: counts, rejections and rankings of other shapes.
  std::size_t found = 0;
  for (const char* name : {"gpt3-13b", "llama-3.1-70b", "narayanan-145.6b"}) {
    for (std::int64_t gpus : {32, 128, 512}) {
      SCOPED_TRACE(std::string(name) + " on " + std::to_string(gpus) + " GPUs");
      est::Plan plan = small_plan();
      plan.model = *est::find_model(name);
      plan.cluster.gpus = gpus;
      plan.training.global_batch = 1024;
      plan.training.seq_len = 2048;
      found += expect_chunks_equal_one_search(plan, {});
    }
  }
  EXPECT_GT(found, 30u) << "most of the sweep's plans fit somewhere";
}

TEST(ChunkedSearch, StopsAtTheNextChunkWhenCancelled) {
  std::atomic<bool> cancel{false};
  std::size_t calls = 0;
  auto r = run_chunked_search(est::default_plan(), {}, cancel, [&](std::size_t, std::size_t, std::int64_t) {
    ++calls;
    cancel = true;  // as the page's Cancel would, while the first chunk's progress is reported
  });
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_FALSE(r->has_value()) << "cancelled: no result";
  EXPECT_EQ(calls, 1u) << "no chunk after the cancel";

  // The base plan's own problems come back as the search's errors.
  est::Plan broken = small_plan();
  broken.model.heads = 0;
  cancel = false;
  auto bad = run_chunked_search(broken, {}, cancel, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error_text(), est::search_layouts(broken).error_text());
}

TEST(SearchPage, ReportsProgressPerTensorParallelDegree) {
  PlanDocument document;
  document.replacePlan(small_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  QSignalSpy chunks(&page, &SearchPage::chunkDone);
  page.startSearch();
  ASSERT_TRUE(wait_search(page));
  auto plan = ChunkedSearch::plan(small_plan());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(chunks.count(), static_cast<int>(plan->chunk_count()));
  EXPECT_EQ(chunks.last().at(0).toInt(), chunks.last().at(1).toInt());
  auto* bar = page.findChild<QProgressBar*>(QStringLiteral("searchProgress"));
  ASSERT_TRUE(bar);
  EXPECT_EQ(bar->maximum(), static_cast<int>(plan->chunk_count()));
  EXPECT_EQ(bar->value(), bar->maximum());
}

TEST(SearchPage, CancelDropsTheRunningSearchsResult) {
  PlanDocument document;
  document.replacePlan(small_plan());
  ASSERT_TRUE(test::wait_idle(document));
  SearchPage page(&document);
  page.startSearch();
  page.cancelSearch();
  EXPECT_FALSE(page.isRunning());
  QSignalSpy spy(&page, &SearchPage::searchFinished);
  EXPECT_FALSE(spy.wait(3000)) << "a cancelled search delivers nothing";
  EXPECT_EQ(page.model()->rowCount(), 0);
}

}  // namespace
}  // namespace plansight::gui
