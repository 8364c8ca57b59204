// Expert parallelism in the memory model: model states of routed experts split over EP x ETP
// and ZeRO-sharded over the expert-data-parallel group (Megatron-Core's folding), MoE layer
// activations in every recomputation mode, all-to-all buffers, MTP on the last stage, and the
// validation rules naming what must divide what.
#include <gtest/gtest.h>

#include "../support/moe_models.h"
#include "../support/published.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"

namespace plansight::estimator {
namespace {

// DeepSeek-V3's training layout (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.2: "16-way
// Pipeline Parallelism (PP), 64-way Expert Parallelism (EP) spanning 8 nodes, and ZeRO-1 Data
// Parallelism (DP)" on 2048 H800 GPUs; no tensor parallelism). The report gives no split of
// the 61 layers; we give stage 0 the 3 dense layers and one MoE layer, then 4 layers per stage
// and 1 on the last (with the MTP module).
Plan deepseek_v3_plan() {
  Plan p = testing::a100_plan(testing::deepseek_v3(), 2048);
  p.cluster.gpu.memory_bytes = 80LL << 30;  // H800: 80 GB HBM3, as the H100 SXM
  p.layout.pp = 16;
  p.layout.ep = 64;
  p.layout.etp = 1;
  p.layout.zero_stage = 1;
  p.layout.recompute = Recompute::none;
  p.layout.stage_layers = {4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 1};
  p.training.precision = Precision::bf16;
  p.training.grad_precision = Precision::fp32;
  p.training.seq_len = 4096;
  p.training.micro_batch = 1;
  p.training.global_batch = 15360;  // the report's batch size at the end of its schedule
  p.training.attention = AttentionKernel::flash;
  p.training.achieved_tflops = 150;  // memory only: no time prediction needed
  return p;
}

TEST(MoeMemory, ExpertStatesAreShardedOverTheExpertDataParallelGroup) {
  const Plan p = deepseek_v3_plan();
  ASSERT_FALSE(has_errors(validate(p))) << join_messages(validate(p));
  EXPECT_EQ(p.dp(), 128);
  EXPECT_EQ(p.expert_dp(), 2) << "128 ranks per stage / (ep 64 x etp 1)";
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  // Stage 1 holds 4 MoE layers. Dense part 4 x 232,997,120 = 931,988,480 parameters (tp 1),
  // routed experts 4 x 256/64 x 44,040,192 = 704,643,072. bf16 weights, fp32 gradients, fp32
  // master + Adam (12 B) sharded by ZeRO-1 over dp 128 (dense) and expert-dp 2 (experts): the
  // byte model Megatron Bridge documents for its memory estimator, "6 + 12 / shard_size bytes
  // per parameter when the distributed optimizer is enabled", shard_size dp*cp for dense
  // parameters (docs.nvidia.com/nemo/megatron-bridge, Training > Theoretical Memory Estimator).
  const double dense = 931'988'480, experts = 704'643'072;
  const MemoryBreakdown& m = e->memory.stages[1].memory;
  EXPECT_DOUBLE_EQ(e->memory.stages[1].parameters, dense + experts);
  EXPECT_DOUBLE_EQ(m.weights_bytes, 2 * (dense + experts));
  EXPECT_DOUBLE_EQ(m.gradients_bytes, 4 * (dense + experts));
  EXPECT_DOUBLE_EQ(m.optimizer_bytes, 12 * dense / 128 + 12 * experts / 2);
  // 14,135,232,040 bytes = 13.16 GiB of model states on a middle stage.
  EXPECT_NEAR((m.weights_bytes + m.gradients_bytes + m.optimizer_bytes) / (1 << 30), 13.16, 0.01);
}

TEST(MoeMemory, DoublingEpHalvesTheExpertWeights) {
  Plan p = deepseek_v3_plan();
  const auto a = estimate(p);
  p.layout.ep = 128;  // expert-dp 1
  const auto b = estimate(p);
  ASSERT_TRUE(a.ok() && b.ok()) << a.error_text() << b.error_text();
  const double experts_a = 704'643'072;
  EXPECT_DOUBLE_EQ(a->memory.stages[1].memory.weights_bytes - b->memory.stages[1].memory.weights_bytes, experts_a);
  // Optimizer states: experts/2 shards before, experts/2 on one shard now: the same bytes.
  EXPECT_DOUBLE_EQ(a->memory.stages[1].memory.optimizer_bytes, b->memory.stages[1].memory.optimizer_bytes);
}

TEST(MoeMemory, MtpModuleLivesOnTheLastStage) {
  Plan p = deepseek_v3_plan();
  const auto with = estimate(p);
  p.model.mtp_modules = 0;
  const auto without = estimate(p);
  ASSERT_TRUE(with.ok() && without.ok());
  const std::size_t last = 15;
  // 2*7168^2 + 3*7168 + one MoE layer (232,997,120) + 4 experts of 44,040,192 per GPU.
  EXPECT_DOUBLE_EQ(with->memory.stages[last].parameters - without->memory.stages[last].parameters,
                   102'760'448.0 + 21'504 + 232'997'120 + 4 * 44'040'192.0);
  EXPECT_DOUBLE_EQ(with->memory.stages[1].parameters, without->memory.stages[1].parameters);
  EXPECT_GT(with->memory.stages[last].memory.activations_bytes, without->memory.stages[last].memory.activations_bytes);
}

// A single expert of the MLP's width, top-1, balanced: the MoE layer stores what the dense
// layer stores plus the router's logits and fp32 scores ((e + 4) E per token) and, per routed
// copy, the permuted input and the expert output (2eh).
TEST(MoeMemory, OneExpertLayerStoresTheDenseLayerPlusRouterAndPermutedTokens) {
  ModelSpec dense = testing::llama_style(4, 1024, 16, 4, 2816, 32000);
  ModelSpec moe = dense;
  moe.moe = {.experts = 1, .top_k = 1, .expert_ffn_hidden = 2816};
  Plan pd = testing::a100_plan(dense, 8);
  pd.training.seq_len = 2048;
  pd.training.global_batch = 8;
  pd.training.achieved_tflops = 150;
  Plan pm = pd;
  pm.model = moe;
  const double tokens = 2048, e = 2, h = 1024;
  for (Recompute r : {Recompute::none, Recompute::selective}) {
    pd.layout.recompute = pm.layout.recompute = r;
    const double d = layer_activation_bytes(pd, r);
    const auto a = estimate(pd), b = estimate(pm);
    ASSERT_TRUE(a.ok() && b.ok()) << b.error_text();
    const double per_layer_extra = tokens * ((e + 4) * 1 + 2 * e * h);
    const double layers_in_flight = 4;  // 1F1B, pp 1: one micro-batch, 4 layers
    // The backward working set is the LM head's on this single stage, the same for both.
    EXPECT_NEAR(b->memory.peak.activations_bytes - a->memory.peak.activations_bytes,
                layers_in_flight * per_layer_extra, 1e-9 * d)
        << to_string(r);
  }
}

TEST(MoeMemory, FullRecomputationKeepsOnlyLayerInputs) {
  Plan p = deepseek_v3_plan();
  p.layout.recompute = Recompute::full;
  const auto e = estimate(p);
  ASSERT_TRUE(e.ok()) << e.error_text();
  Plan none = deepseek_v3_plan();
  const auto n = estimate(none);
  ASSERT_TRUE(n.ok());
  EXPECT_LT(e->memory.stages[1].memory.activations_bytes, n->memory.stages[1].memory.activations_bytes / 4);
  // Stage 1 holds 16 micro-batches x 4 layers x s*h*e of inputs, plus one layer's full working set.
  EXPECT_GE(e->memory.stages[1].memory.activations_bytes, 15.0 * 4 * 4096 * 7168 * 2);
}

TEST(MoeMemory, CapacityFactorCapsTheAssumedImbalance) {
  Plan a = deepseek_v3_plan();
  a.model.moe.load_imbalance = 2.0;
  a.model.moe.capacity_factor = 1.25;
  Plan b = deepseek_v3_plan();
  b.model.moe.load_imbalance = 1.25;
  const auto ea = estimate(a), eb = estimate(b);
  ASSERT_TRUE(ea.ok() && eb.ok());
  EXPECT_DOUBLE_EQ(ea->memory.peak.activations_bytes, eb->memory.peak.activations_bytes);
  Plan c = deepseek_v3_plan();
  c.model.moe.load_imbalance = 2.0;
  const auto ec = estimate(c);
  ASSERT_TRUE(ec.ok());
  EXPECT_GT(ec->memory.peak.activations_bytes, ea->memory.peak.activations_bytes);
  EXPECT_GT(ec->memory.peak.buffers_bytes, ea->memory.peak.buffers_bytes);
}

TEST(MoeMemory, AllToAllBuffersNeedExpertParallelism) {
  Plan p = deepseek_v3_plan();
  const auto with = estimate(p);
  ASSERT_TRUE(with.ok());
  // Two buffers (dispatch, combine) of s*b x top_k x h elements, bf16: 2 x 4096 x 8 x 7168 x 2,
  // besides the pipeline's receive buffer of one activation (4096 x 7168 x 2).
  const double pipeline = 4096.0 * 7168 * 2;
  EXPECT_DOUBLE_EQ(with->memory.stages[1].memory.buffers_bytes, 2.0 * 4096 * 8 * 7168 * 2 + pipeline);
  p.layout.ep = 1;
  p.cluster.gpus = 2048;
  const auto without = estimate(p);
  ASSERT_TRUE(without.ok()) << without.error_text();
  EXPECT_DOUBLE_EQ(without->memory.stages[1].memory.buffers_bytes, pipeline);
}

std::string message_of(const Plan& p, const std::string& field) {
  for (const auto& d : validate(p)) {
    if (d.severity == Severity::error && d.field == field) return d.message;
  }
  return "<no error on " + field + ">";
}

TEST(MoeLayoutValidation, RulesNameWhatDividesWhat) {
  Plan p = deepseek_v3_plan();
  p.layout.ep = 48;
  EXPECT_NE(message_of(p, "layout.ep").find("value 48 must divide model.moe.experts (256); valid: 1, 2, 4, 8, 16, 32, 64, 128, 256"),
            std::string::npos)
      << message_of(p, "layout.ep");
  p = deepseek_v3_plan();
  p.layout.ep = 256;  // 256 > 128 ranks per stage
  EXPECT_EQ(message_of(p, "layout.ep"),
            "ep*etp = 256 must divide tp*cp*dp = 128 (the ranks of one pipeline stage, regrouped for the experts); "
            "valid ep with etp 1: 1, 2, 4, 8, 16, 32, 64, 128");
  p = deepseek_v3_plan();
  p.layout.etp = 3;
  EXPECT_EQ(message_of(p, "layout.etp"), "value 3 must divide model.moe.expert_ffn_hidden (2048)");
  p = deepseek_v3_plan();
  p.layout.tp = 2;
  p.layout.ep = 32;
  p.layout.sequence_parallel = false;
  EXPECT_NE(message_of(p, "layout.sequence_parallel").find("Megatron-Core requires sequence parallelism"), std::string::npos);
  Plan dense = testing::a100_plan(testing::gpt_model(4, 1024, 16), 8);
  dense.layout.ep = 2;
  EXPECT_EQ(message_of(dense, "layout.ep"), "value 2 needs a model with routed experts (model.moe.experts is 0); valid: 1");
}

TEST(MoeLayoutJson, EpAndEtpRoundTripAndStayOutOfDensePlans) {
  Plan p = deepseek_v3_plan();
  const auto json = to_json(p);
  EXPECT_EQ(json["layout"]["ep"], 64);
  EXPECT_EQ(json["layout"]["etp"], 1);
  auto back = plan_from_json(json);
  ASSERT_TRUE(back.ok()) << back.error_text();
  EXPECT_EQ(back->layout.ep, 64);
  EXPECT_EQ(back->layout.etp, 1);
  EXPECT_EQ(to_json(*back)["layout"], json["layout"]);
  EXPECT_EQ(to_json(*back)["model"], json["model"]);
  const auto dense = to_json(testing::a100_plan(testing::gpt_model(4, 1024, 16), 8));
  EXPECT_FALSE(dense["layout"].contains("ep"));
  EXPECT_FALSE(dense["layout"].contains("etp"));
}

}  // namespace
}  // namespace plansight::estimator
