// `plansight compare RUN --plan FILE.json` end to end on a temporary store: an imported Kineto
// fixture and a measured run beside a plan's prediction, with every number checked against
// step_phases() and estimate()/predict_time() called directly; a run without a measured or
// imported timeline and a bad plan are errors naming the field. Also `plansight import DIR/`
// (a trailing slash) naming the run after the folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../support/cli_run.h"
#include "plansight/cli/commands.h"
#include "plansight/core/plan_run_comparison.h"
#include "plansight/core/step_phases.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/presets.h"
#include "plansight/estimator/time_model.h"
#include "plansight/store/store.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;
namespace fs = std::filesystem;

// A plan small enough to predict quickly: gpt3-1.3b, TP 2 on two H100s.
est::Plan small_plan() {
  est::Plan plan = est::default_plan();
  plan.model = *est::find_model("gpt3-1.3b");
  plan.cluster.gpus = 2;
  plan.cluster.gpus_per_node = 2;
  plan.layout = {};
  plan.layout.tp = 2;
  plan.training.micro_batch = 1;
  plan.training.global_batch = 4;
  plan.training.seq_len = 2048;
  return plan;
}

class ComparePlanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("compare_plan_cli_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = dir_ / "runs.sqlite";
    plan_path_ = dir_ / "plan.json";
    std::ofstream(plan_path_) << est::to_json(small_plan()).dump(2);
  }
  void TearDown() override { fs::remove_all(dir_); }
  testing::CliRun cli(std::vector<std::string> args) {
    args.push_back("--db");
    args.push_back(db_.string());
    return testing::run_cli(args);
  }
  static std::string fixture(const std::string& name) { return std::string(PLANSIGHT_TEST_DATA_DIR) + "/traces/" + name; }

  // The plan's prediction, computed here as the command should.
  static est::TimePrediction predicted() {
    const est::Plan plan = small_plan();
    auto e = est::estimate(plan);
    EXPECT_TRUE(e.ok()) << e.error_text();
    auto p = est::predict_time(plan, e->padded_vocab);
    EXPECT_TRUE(p.ok()) << p.error_text();
    return std::move(*p);
  }

  fs::path dir_, db_, plan_path_;
};

const nlohmann::json& phase(const nlohmann::json& j, const std::string& name) {
  for (const auto& p : j["phases"]) {
    if (p["phase"] == name) return p;
  }
  static const nlohmann::json none;
  ADD_FAILURE() << "no phase " << name;
  return none;
}

TEST_F(ComparePlanCli, ImportedTraceBesideThePlansPrediction) {
  // A trailing slash: the run is still named after the folder.
  auto imported = cli({"import", fixture("kineto_multirank") + "/"});
  ASSERT_EQ(imported.status, Status::ok) << imported.err;
  auto db = store::Store::open(db_);
  ASSERT_TRUE(db.ok()) << db.error_text();
  auto run = db->get_run(1);
  ASSERT_TRUE(run.ok()) << run.error_text();
  EXPECT_EQ(run->name, "kineto_multirank");

  auto r = cli({"compare", "1", "--plan", plan_path_.string(), "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["run_id"], 1);
  EXPECT_EQ(j["measured_source"], "imported");

  auto measured = db->load_timeline(1, est::TimelineSource::imported);
  ASSERT_TRUE(measured.ok()) << measured.error_text();
  const core::StepPhases m = core::step_phases(*measured);
  const est::TimePrediction p = predicted();
  const core::StepPhases ps = core::step_phases(p.timeline);
  EXPECT_DOUBLE_EQ(phase(j, "forward")["predicted_s"].get<double>(), ps.forward_s);
  EXPECT_DOUBLE_EQ(phase(j, "forward")["measured_s"].get<double>(), m.forward_s);
  EXPECT_DOUBLE_EQ(phase(j, "backward")["measured_s"].get<double>(), m.backward_s);
  EXPECT_DOUBLE_EQ(phase(j, "communication")["measured_s"].get<double>(), m.communication_s);
  EXPECT_DOUBLE_EQ(phase(j, "idle")["measured_s"].get<double>(), m.idle_s);
  EXPECT_DOUBLE_EQ(phase(j, "forward")["error"].get<double>(), ps.forward_s / m.forward_s - 1);
  // The fixture's NCCL kernels are communication, not hidden under its ProfilerStep annotation.
  EXPECT_GT(m.communication_s, 0);
  EXPECT_GT(m.forward_s, 0);
  // An import has no median step: its traced window stands for one.
  EXPECT_DOUBLE_EQ(j["step"]["predicted_s"].get<double>(), p.iteration_s);
  EXPECT_DOUBLE_EQ(j["step"]["measured_s"].get<double>(), m.step_s);
  EXPECT_DOUBLE_EQ(j["step"]["measured_s"].get<double>(), static_cast<double>(measured->end_ns() - measured->begin_ns()) * 1e-9);
  EXPECT_FALSE(j["step"]["measured_is_median"].get<bool>());
  EXPECT_TRUE(j["memory"].empty()) << "a trace measures no memory";

  auto table = cli({"compare", "1", "--plan", plan_path_.string()});
  ASSERT_EQ(table.status, Status::ok) << table.err;
  // The legend says what the sign means and what each phase measures.
  EXPECT_NE(table.out.find("of step"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("error = predicted / measured - 1: + the estimator predicted more"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("idle: time a rank is idle inside the step"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("kineto_multirank (imported timeline)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("the traced window"), std::string::npos) << table.out;
}

TEST_F(ComparePlanCli, MeasuredRunUsesItsMedianStepAndMemory) {
  auto db = store::Store::open(db_);
  ASSERT_TRUE(db.ok()) << db.error_text();
  store::NewRun spec{store::RunKind::probe, "measured", "cpu", store::RunStatus::complete, std::nullopt, ""};
  auto id = db->create_run(spec);
  ASSERT_TRUE(id.ok()) << id.error_text();
  est::Timeline measured = predicted().timeline;  // "measured": the prediction at half speed
  measured.source = est::TimelineSource::measured;
  for (auto& t : measured.tracks) {
    for (auto& s : t.spans) s.start_ns *= 2, s.duration_ns *= 2;
  }
  ASSERT_TRUE(db->append_timeline(*id, measured).ok());
  store::RunSummary summary;
  summary.step_time_s = 0.5;
  summary.memory_bytes = {{"weights", 3 << 20}, {"total", 64 << 20}};
  ASSERT_TRUE(db->update_summary(*id, summary).ok());

  auto r = cli({"compare", std::to_string(*id), "--plan", plan_path_.string(), "--json"});
  ASSERT_EQ(r.status, Status::ok) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["measured_source"], "measured");
  EXPECT_DOUBLE_EQ(j["step"]["measured_s"].get<double>(), 0.5);
  EXPECT_TRUE(j["step"]["measured_is_median"].get<bool>());
  EXPECT_NEAR(phase(j, "forward")["error"].get<double>(), -0.5, 1e-6) << "twice as long measured";
  ASSERT_EQ(j["memory"].size(), 7u);
  EXPECT_EQ(j["memory"][0]["category"], "weights");
  EXPECT_EQ(j["memory"][0]["measured_bytes"].get<double>(), double(3 << 20));
  auto e = est::estimate(small_plan());
  ASSERT_TRUE(e.ok());
  EXPECT_DOUBLE_EQ(j["memory"][6]["predicted_bytes"].get<double>(), e->memory.stages.front().memory.total_bytes());
}

// A phase under 5% of the step has no relative error of its own (1 us of communication against
// 0 predicted read -100 %): its part in the step's error, "of step", says how much it matters.
TEST(ComparedValue, SmallPhasesAreJudgedByTheirShareOfTheStep) {
  core::ComparedValue comm{"communication", 0.0, 1e-6, true};
  comm.step_s = 2e-3;
  EXPECT_TRUE(comm.small());
  EXPECT_FALSE(comm.error().has_value());
  ASSERT_TRUE(comm.of_step().has_value());
  EXPECT_NEAR(*comm.of_step(), -0.0005, 1e-12);
  core::ComparedValue forward{"forward", 0.9e-3, 1e-3, true};
  forward.step_s = 2e-3;
  EXPECT_FALSE(forward.small());
  EXPECT_NEAR(*forward.error(), -0.1, 1e-12);
  EXPECT_NEAR(*forward.of_step(), -0.05, 1e-12);
  core::ComparedValue memory{"weights", 2.0, 1.0, true};  // no step: a plain relative error
  EXPECT_FALSE(memory.of_step().has_value());
  EXPECT_NEAR(*memory.error(), 1.0, 1e-12);
  EXPECT_EQ(core::percent_text(-0.0005), "-0.1%");
  EXPECT_EQ(core::percent_text(0.123), "+12.3%");
  EXPECT_EQ(core::percent_text(std::nullopt), "-");
}

// The plan and the run must describe one job, or the comparison says they do not: a probe run of
// the tiny model beside GPT-3 1.3B read +2294 % without a word.
TEST(RunPlanMismatch, NamesEveryFieldWhereTheRunAndThePlanDiffer) {
  const est::Plan plan = small_plan();
  auto e = est::estimate(plan);
  ASSERT_TRUE(e.ok());
  store::RunRecord run;
  run.kind = store::RunKind::probe;
  run.plan = nlohmann::json{{"model", est::to_json(plan.model)},
                            {"layout", {{"tp", 2}, {"pp", 1}, {"dp", 1}}},
                            {"seq_len", plan.training.seq_len},
                            {"micro_batch", plan.training.micro_batch},
                            {"global_batch", plan.training.global_batch}};
  EXPECT_TRUE(core::run_plan_mismatches(run, plan, *e, 1.0, 1.1).empty()) << "the same job, a step 10 % apart";
  (*run.plan)["model"]["layers"] = 2;
  (*run.plan)["layout"]["tp"] = 1;
  auto differ = core::run_plan_mismatches(run, plan, *e, 1.0, 1.1);
  ASSERT_EQ(differ.size(), 1u);
  EXPECT_NE(differ[0].find("layers 2 vs 24, tp 1 vs 2"), std::string::npos) << differ[0];
  auto far = core::run_plan_mismatches(run, plan, *e, 24.0, 1.0);
  ASSERT_EQ(far.size(), 2u);
  EXPECT_NE(far[1].find("is 24.0x longer than the measured one"), std::string::npos) << far[1];
  store::RunRecord trace;
  trace.kind = store::RunKind::import;
  trace.summary = store::RunSummary{};
  trace.summary->metrics["ranks"] = 8;
  auto ranks = core::run_plan_mismatches(trace, plan, *e, 1.0, 1.0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_NE(ranks[0].find("the trace holds 8 ranks but the plan has 2 GPUs"), std::string::npos) << ranks[0];
}

TEST_F(ComparePlanCli, ErrorsNameTheRunAndThePlan) {
  auto db = store::Store::open(db_);
  ASSERT_TRUE(db.ok()) << db.error_text();
  store::NewRun plan_run{store::RunKind::plan, "only a prediction", "", store::RunStatus::complete, std::nullopt, ""};
  auto id = db->create_run(plan_run);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(db->append_timeline(*id, predicted().timeline).ok());

  auto r = cli({"compare", std::to_string(*id), "--plan", plan_path_.string()});
  EXPECT_EQ(r.status, Status::invalid_input);
  // The run is named by its id; never by the usage placeholder "RUN".
  EXPECT_NE(r.err.find("error: run " + std::to_string(*id) + ": "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("RUN"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no measured or imported timeline"), std::string::npos) << r.err;

  auto missing = cli({"compare", "99", "--plan", plan_path_.string()});
  EXPECT_EQ(missing.status, Status::invalid_input);

  // compare printed the usage placeholder as a field: "error: RUN: give exactly one run id".
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compare"}, {"compare", "x"}, {"compare", std::to_string(*id)}}) {
    auto bad = cli(args);
    EXPECT_EQ(bad.status, Status::invalid_input) << args.back();
    EXPECT_EQ(bad.err.find("RUN"), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.err.starts_with("error: run")) << bad.err;
  }
  auto not_probe = cli({"compare", std::to_string(*id)});
  EXPECT_NE(not_probe.err.find("is not a finished probe run; to set it beside a plan's prediction: plansight compare " +
                               std::to_string(*id) + " --plan FILE.json"),
            std::string::npos)
      << not_probe.err;

  auto no_file = cli({"compare", std::to_string(*id), "--plan", (dir_ / "absent.json").string()});
  EXPECT_EQ(no_file.status, Status::invalid_input);
  EXPECT_NE(no_file.err.find("--plan"), std::string::npos) << no_file.err;

  const fs::path bad = dir_ / "bad.json";
  nlohmann::json bad_plan = est::to_json(small_plan());
  bad_plan["layout"]["tp"] = 3;
  std::ofstream(bad) << bad_plan.dump();
  ASSERT_EQ(cli({"import", fixture("kineto_legacy_2021.json")}).status, Status::ok);
  auto invalid = cli({"compare", std::to_string(*id + 1), "--plan", bad.string(), "--json"});
  EXPECT_EQ(invalid.status, Status::invalid_input);
  EXPECT_NE(invalid.err.find("layout.tp"), std::string::npos) << invalid.err;
  EXPECT_TRUE(nlohmann::json::parse(invalid.out).contains("errors"));
}

}  // namespace
}  // namespace plansight::cli
