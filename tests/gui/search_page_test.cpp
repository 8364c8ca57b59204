// The Search page end to end: a search of gpt3-1.3b on 16 A100s runs on a worker, the table
// fills sorted by tokens/s (best first), the rejection summary shows, Apply gives the plan the
// selected row's layout, and Cancel drops a running search's result. SearchResultModel and its
// sort proxy under QAbstractItemModelTester.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>

#include "gui_test_support.h"
#include "plansight/estimator/presets.h"
#include "plansight/gui/plan_document.h"
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
