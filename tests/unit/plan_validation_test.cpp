// validate(): every rule reports its field, the value and what would be valid, and all
// violations are reported at once.
#include <gtest/gtest.h>

#include <algorithm>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

const Diagnostic* find_field(const std::vector<Diagnostic>& ds, const std::string& field, Severity severity) {
  auto it = std::find_if(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.field == field && d.severity == severity; });
  return it == ds.end() ? nullptr : &*it;
}

void expect_error(const Plan& plan, const std::string& field, const std::string& fragment) {
  const auto ds = validate(plan);
  const auto* d = find_field(ds, field, Severity::error);
  ASSERT_NE(d, nullptr) << "no error for " << field << "; got:\n" << join_messages(ds);
  EXPECT_NE(d->message.find(fragment), std::string::npos) << d->message;
  EXPECT_FALSE(estimate(plan).ok());
}

void expect_warning(const Plan& plan, const std::string& field) {
  const auto ds = validate(plan);
  EXPECT_NE(find_field(ds, field, Severity::warning), nullptr) << join_messages(ds);
  EXPECT_FALSE(has_errors(ds)) << join_messages(ds);
}

TEST(Validate, DefaultPlanIsValid) { EXPECT_FALSE(has_errors(validate(default_plan()))); }

TEST(Validate, TensorParallelMustDivideHeadsKvHeadsAndFfn) {
  Plan p = default_plan();
  p.layout.tp = 5;
  p.cluster.gpus = 5 * 8 * 16;
  expect_error(p, "layout.tp", "must divide model.heads (96)");
  p = default_plan();
  p.model = *find_model("llama-2-70b");
  p.layout.tp = 16;
  p.layout.pp = 4;
  expect_error(p, "layout.tp", "model.kv_heads (8)");
  p.model.ffn_hidden = 28670;  // 2 mod 4
  p.layout.tp = 4;
  p.model.kv_heads = 8;
  expect_error(p, "layout.tp", "model.ffn_hidden");
}

TEST(Validate, PipelineMustDivideLayersUnlessStageLayersGiven) {
  Plan p = default_plan();
  p.layout.pp = 7;
  p.cluster.gpus = 8 * 7 * 16;
  expect_error(p, "layout.pp", "must divide model.layers (96)");
  p.layout.stage_layers = {14, 14, 14, 14, 14, 13, 13};
  EXPECT_FALSE(has_errors(validate(p))) << join_messages(validate(p));
  p.layout.stage_layers = {14, 14, 14, 14, 14, 13, 12};
  expect_error(p, "layout.stage_layers", "sums to 95");
  p.layout.stage_layers = {48, 48};
  expect_error(p, "layout.stage_layers", "pp * vpp = 7");
}

TEST(Validate, GpuCountMustEqualProductOfParallelism) {
  Plan p = default_plan();
  p.layout.dp = 8;
  expect_error(p, "layout.dp", "cluster.gpus = 1024");
  p.layout.dp = 0;
  p.cluster.gpus = 1000;
  expect_error(p, "cluster.gpus", "multiple of 64");
}

TEST(Validate, GlobalBatchDivisibleByMicroBatchTimesDp) {
  Plan p = default_plan();
  p.training.global_batch = 1000;
  p.training.micro_batch = 2;
  expect_error(p, "training.global_batch", "micro_batch * dp = 32");
}

TEST(Validate, SequenceDivisibleByTwiceContextParallel) {
  Plan p = default_plan();
  p.layout.cp = 3;
  p.cluster.gpus = 64 * 3 * 8;
  p.training.global_batch = 8 * 64;
  expect_error(p, "layout.cp", "divisible by 2*cp = 6");
}

TEST(Validate, ScheduleAndVirtualStagesAgree) {
  Plan p = default_plan();
  p.layout.vpp = 2;
  expect_error(p, "layout.vpp", "needs schedule interleaved");
  p.layout.schedule = PipelineSchedule::interleaved;
  EXPECT_FALSE(has_errors(validate(p)));
  p.layout.vpp = 1;
  expect_error(p, "layout.vpp", "valid: vpp >= 2");
  p.layout.vpp = 4;
  p.training.global_batch = 16 * 12;  // 12 micro-batches, not a multiple of pp = 8
  expect_error(p, "training.global_batch", "divisible by pp");
}

TEST(Validate, ZeroTwoOrThreeWithPipelineIsFlagged) {
  Plan p = default_plan();
  p.layout.zero_stage = 3;
  expect_warning(p, "layout.zero_stage");
  const auto ds = validate(p);
  EXPECT_NE(find_field(ds, "layout.zero_stage", Severity::warning)->message.find("DeepSpeed"), std::string::npos);
  p.layout.zero_stage = 4;
  expect_error(p, "layout.zero_stage", "valid: 0, 1, 2 or 3");
}

TEST(Validate, ModelShapeRules) {
  Plan p = default_plan();
  p.model.kv_heads = 7;
  expect_error(p, "model.kv_heads", "must divide heads (96)");
  p = default_plan();
  p.model.heads = 100;
  p.model.kv_heads = 100;
  p.layout.tp = 4;
  p.cluster.gpus = 4 * 8 * 32;
  expect_error(p, "model.heads", "does not divide hidden");
  p = default_plan();
  p.model.layers = 0;
  expect_error(p, "model.layers", "from 1 to");
}

TEST(Validate, TrainingRules) {
  Plan p = default_plan();
  p.training.seq_len = 4096;
  expect_error(p, "training.seq_len", "learned positions (2048)");
  p = default_plan();
  p.training.achieved_tflops = 400;
  expect_error(p, "training.achieved_tflops", "exceeds");
  p = default_plan();
  p.training.achieved_tflops = 140;
  p.training.mfu = 0.5;
  expect_error(p, "training.mfu", "not both");
  p = default_plan();
  p.training.precision = Precision::fp8;
  expect_error(p, "training.precision", "no fp8 support");
  p = default_plan();
  p.training.micro_batch = 0;
  expect_error(p, "training.micro_batch", "from 1 to");
}

TEST(Validate, AllViolationsAtOnce) {
  Plan p = default_plan();
  p.layout.tp = 5;
  p.training.micro_batch = 0;
  p.model.kv_heads = 7;
  p.training.mfu = 2;
  const auto ds = validate(p);
  EXPECT_NE(find_field(ds, "layout.tp", Severity::error), nullptr);
  EXPECT_NE(find_field(ds, "training.micro_batch", Severity::error), nullptr);
  EXPECT_NE(find_field(ds, "model.kv_heads", Severity::error), nullptr);
  EXPECT_NE(find_field(ds, "training.mfu", Severity::error), nullptr);
}

TEST(Validate, WarningsDoNotBlockAnEstimate) {
  Plan p = default_plan();
  p.layout.sequence_parallel = true;
  p.layout.tp = 1;
  p.layout.pp = 8;
  p.training.global_batch = 1536;
  expect_warning(p, "layout.sequence_parallel");
  EXPECT_TRUE(estimate(p).ok());
}

}  // namespace
}  // namespace plansight::estimator
