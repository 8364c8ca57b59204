// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models":
// Table 2 per-layer activation bytes (16-bit activations, 1-byte dropout masks) and Figure 1's
// per-GPU activation memory of the first pipeline stage, which Table 2 reproduces exactly.
#include <gtest/gtest.h>

#include "../support/published.h"
#include "plansight/estimator/memory.h"

namespace plansight::estimator {
namespace {

using testing::gpt_model;

struct Config {
  std::int64_t s, b, h, a, t;
};

Plan layer_plan(const Config& c, bool sp, Recompute recompute) {
  auto plan = testing::a100_plan(gpt_model(1, c.h, c.a, 51200, c.s), c.t);
  plan.layout.tp = c.t;
  plan.layout.sequence_parallel = sp;
  plan.layout.recompute = recompute;
  plan.training.seq_len = c.s;
  plan.training.micro_batch = c.b;
  plan.training.global_batch = c.b;
  return plan;
}

TEST(Korthikanti2022, TableTwoPerLayerBytes) {
  const Config configs[] = {{2048, 4, 6144, 64, 8}, {2048, 1, 12288, 96, 8}, {2048, 1, 20480, 128, 8},
                            {2048, 1, 25600, 160, 8}, {1024, 2, 4096, 32, 4}, {4096, 1, 8192, 64, 2}};
  for (const auto& c : configs) {
    const double s = static_cast<double>(c.s), b = static_cast<double>(c.b), h = static_cast<double>(c.h);
    const double a = static_cast<double>(c.a), t = static_cast<double>(c.t);
    const double sbh = s * b * h;
    // No parallelism: sbh(34 + 5as/h).
    {
      auto plan = layer_plan(c, false, Recompute::none);
      plan.layout.tp = 1;
      EXPECT_DOUBLE_EQ(layer_activation_bytes(plan), sbh * (34 + 5 * a * s / h));
    }
    EXPECT_DOUBLE_EQ(layer_activation_bytes(layer_plan(c, false, Recompute::none)),
                     sbh * (10 + 24 / t + 5 * a * s / (h * t)));
    EXPECT_DOUBLE_EQ(layer_activation_bytes(layer_plan(c, true, Recompute::none)), sbh / t * (34 + 5 * a * s / h));
    EXPECT_DOUBLE_EQ(layer_activation_bytes(layer_plan(c, false, Recompute::selective)), sbh * (10 + 24 / t));
    EXPECT_DOUBLE_EQ(layer_activation_bytes(layer_plan(c, true, Recompute::selective)), 34 * sbh / t);
    EXPECT_DOUBLE_EQ(layer_activation_bytes(layer_plan(c, false, Recompute::full)), 2 * sbh);
  }
}

struct Figure1Row {
  const char* name;
  std::int64_t heads, hidden, layers, tp, pp, global_batch, vpp;
  double tp_only_gib, tp_sp_selective_gib;
};

// Table 3 configurations (A100-80GB, fp16, s = 2048, micro-batch 4 for 22B else 1; 175B and
// 530B interleave 3 chunks per stage) and Figure 1's GiB.
const Figure1Row kFigure1[] = {
    {"22B", 64, 6144, 48, 8, 1, 4, 1, 59.25, 9.5625},
    {"175B", 96, 12288, 96, 8, 8, 64, 3, 66.84375, 12.3515625},
    {"530B", 128, 20480, 105, 8, 35, 280, 3, 114.0234375, 23.076171875},
    {"1T", 160, 25600, 128, 8, 64, 512, 1, 131.25, 26.5625},
};

double first_stage_layer_activations_gib(const Figure1Row& row, bool sp, Recompute recompute) {
  auto plan = testing::a100_plan(gpt_model(row.layers, row.hidden, row.heads), row.tp * row.pp);
  plan.layout.tp = row.tp;
  plan.layout.pp = row.pp;
  plan.layout.vpp = row.vpp;
  plan.layout.schedule = row.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  plan.layout.sequence_parallel = sp;
  plan.layout.recompute = recompute;
  plan.training.micro_batch = row.pp == 1 ? 4 : 1;
  plan.training.global_batch = row.global_batch;
  const double bytes = layer_activation_bytes(plan) * in_flight_layer_equivalents(plan, 0, chunk_layers(plan));
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

TEST(Korthikanti2022, FigureOneFirstStageActivationMemoryExactly) {
  for (const auto& row : kFigure1) {
    EXPECT_DOUBLE_EQ(first_stage_layer_activations_gib(row, false, Recompute::none), row.tp_only_gib) << row.name;
    EXPECT_DOUBLE_EQ(first_stage_layer_activations_gib(row, true, Recompute::selective), row.tp_sp_selective_gib)
        << row.name;
  }
}

TEST(Korthikanti2022, InterleavingFactorOnFirstStage) {
  // Sec. 4.2.3: the interleaved schedule's first stage holds L(1 + (p - 1)/(p m)) layers.
  auto plan = testing::a100_plan(gpt_model(96, 12288, 96), 64);
  plan.layout.tp = 8;
  plan.layout.pp = 8;
  plan.layout.vpp = 3;
  plan.layout.schedule = PipelineSchedule::interleaved;
  plan.training.global_batch = 64;
  EXPECT_DOUBLE_EQ(in_flight_layer_equivalents(plan, 0, chunk_layers(plan)), 96 * (1 + 7.0 / 24.0));
  plan.layout.vpp = 1;
  plan.layout.schedule = PipelineSchedule::one_f_one_b;
  for (std::int64_t r = 0; r < 8; ++r) {
    // 1F1B: rank r stores min(p - r, m) micro-batches of its 12 layers.
    EXPECT_DOUBLE_EQ(in_flight_layer_equivalents(plan, r, chunk_layers(plan)), 12.0 * static_cast<double>(8 - r));
  }
  plan.layout.schedule = PipelineSchedule::gpipe;
  EXPECT_DOUBLE_EQ(in_flight_layer_equivalents(plan, 3, chunk_layers(plan)), 12.0 * 64);
}

}  // namespace
}  // namespace plansight::estimator
