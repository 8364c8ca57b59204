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

// "nearest valid" offered the multiple below even when the one above was nearer: 1536 with
// micro_batch * dp = 42 lies between 1512 (24 below) and 1554 (18 above).
TEST(Validate, NearestValidGlobalBatchIsTheNearerMultiple) {
  Plan p = default_plan();
  p.layout.tp = 1;
  p.layout.pp = 1;
  p.cluster.gpus = 42;  // dp = 42
  p.training.global_batch = 1536;
  expect_error(p, "training.global_batch", "nearest valid: 1554");
  p.training.global_batch = 1520;  // 8 above 1512, 34 below 1554
  expect_error(p, "training.global_batch", "nearest valid: 1512");
  p.training.global_batch = 1533;  // 21 from each
  expect_error(p, "training.global_batch", "nearest valid: 1512 or 1554");
  p.training.global_batch = 10;  // below one step: the first valid batch
  expect_error(p, "training.global_batch", "nearest valid: 42");
  p.training.global_batch = 1000;  // and the existing case: 992 (8 below) before 1024
  p.cluster.gpus = 16;
  p.training.micro_batch = 2;
  expect_error(p, "training.global_batch", "nearest valid: 992");
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
  // An invalid stage is an error only: no advice about what DeepSpeed does with it.
  EXPECT_EQ(find_field(validate(p), "layout.zero_stage", Severity::warning), nullptr);
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

namespace plansight::estimator {
namespace {

// Every remaining rule of validate(): the mutation, the field that must be named, and a
// fragment of the message (value or what is valid).
TEST(Validate, EveryRuleNamesItsField) {
  struct Case {
    const char* field;
    const char* fragment;
    void (*mutate)(Plan&);
  };
  const Case cases[] = {
      {"model.hidden", "from 1 to", [](Plan& p) { p.model.hidden = 0; }},
      {"model.heads", "from 1 to", [](Plan& p) { p.model.heads = -2; }},
      {"model.ffn_hidden", "from 1 to", [](Plan& p) { p.model.ffn_hidden = 0; }},
      {"model.vocab", "from 1 to", [](Plan& p) { p.model.vocab = 0; }},
      {"model.max_seq_len", "from 1 to", [](Plan& p) { p.model.max_seq_len = 0; }},
      {"model.head_dim", "positive", [](Plan& p) { p.model.head_dim = -64; }},
      {"model.norms_per_layer", "1 or 2", [](Plan& p) { p.model.norms_per_layer = 3; }},
      {"model.kv_heads", "must divide heads", [](Plan& p) { p.model.kv_heads = 192; }},
      {"cluster.gpus", "from 1 to", [](Plan& p) { p.cluster.gpus = 0; }},
      {"cluster.gpus_per_node", "from 1 to", [](Plan& p) { p.cluster.gpus_per_node = 0; }},
      {"cluster.gpu.memory_gib", "positive", [](Plan& p) { p.cluster.gpu.memory_bytes = 0; }},
      {"cluster.price_per_gpu_hour", ">= 0", [](Plan& p) { p.cluster.price_per_gpu_hour = -1; }},
      {"layout.pp", "from 1 to", [](Plan& p) { p.layout.pp = 0; }},
      {"layout.vpp", "from 1 to", [](Plan& p) { p.layout.vpp = 0; }},
      {"layout.cp", "from 1 to", [](Plan& p) { p.layout.cp = 0; }},
      {"layout.dp", "from 0 to", [](Plan& p) { p.layout.dp = -1; }},
      {"layout.pp", "with schedule interleaved", [](Plan& p) { p.layout.pp = 1; p.layout.vpp = 2; p.layout.schedule = PipelineSchedule::interleaved; p.cluster.gpus = 128; }},
      {"training.global_batch", "from 1 to", [](Plan& p) { p.training.global_batch = 0; }},
      {"training.seq_len", "from 1 to", [](Plan& p) { p.training.seq_len = 0; }},
      {"training.tokens", ">= 0", [](Plan& p) { p.training.tokens = -5; }},
      {"training.achieved_tflops", ">= 0", [](Plan& p) { p.training.achieved_tflops = -1; }},
      {"training.mfu", "0 < mfu <= 1", [](Plan& p) { p.training.mfu = 1.5; }},
      {"training.fragmentation", "0 <= fragmentation < 1", [](Plan& p) { p.training.fragmentation = 1.0; }},
      {"training.reserve_gib", ">= 0", [](Plan& p) { p.training.reserve_fixed_bytes = -1; }},
      {"training.dp_bucket_mib", ">= 0", [](Plan& p) { p.training.dp_bucket_bytes = -1; }},
  };
  for (const auto& c : cases) {
    Plan p = default_plan();
    c.mutate(p);
    const auto ds = validate(p);
    const auto* d = find_field(ds, c.field, Severity::error);
    ASSERT_NE(d, nullptr) << c.field << ": no error; got\n" << join_messages(ds);
    EXPECT_NE(d->message.find(c.fragment), std::string::npos) << c.field << ": " << d->message;
  }
}

TEST(Validate, WarningsNameTheirField) {
  Plan p = default_plan();
  p.layout.cp = 2;  // standard attention with context parallelism
  p.cluster.gpus = 2048;
  expect_warning(p, "layout.cp");
  p = default_plan();
  p.training.master_precision = MasterPrecision::none;
  expect_warning(p, "training.master_precision");
  p = default_plan();
  p.model.position = PositionKind::rope;
  p.training.seq_len = 4096;
  expect_warning(p, "training.seq_len");
  p = default_plan();
  p.training.global_batch = 16 * 4;  // 4 micro-batches for 8 stages
  expect_warning(p, "training.global_batch");
}

}  // namespace
}  // namespace plansight::estimator
