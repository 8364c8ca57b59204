// Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models":
// Table 2 per-layer activation bytes (16-bit activations, 1-byte dropout masks), Sec. 4.2.3's
// first-stage count of layers, and the abstract's "reduces activation memory by 5x" on Table 3's
// models. Figure 1 (and Figure 7) are bar charts that print no values, so no GiB are quoted
// from them: the first-stage bytes are checked against Table 2 x Sec. 4.2.3 written out here.
#include <gtest/gtest.h>

#include <string_view>

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

struct Table3Row {
  const char* name;
  std::int64_t heads, hidden, layers, tp, pp, global_batch, vpp;
};

// Table 3 configurations (A100-80GB, fp16, s = 2048, micro-batch 4 for 22B else 1; 175B and
// 530B interleave 3 chunks per stage).
const Table3Row kTable3[] = {
    {"22B", 64, 6144, 48, 8, 1, 4, 1},
    {"175B", 96, 12288, 96, 8, 8, 64, 3},
    {"530B", 128, 20480, 105, 8, 35, 280, 3},
    {"1T", 160, 25600, 128, 8, 64, 512, 1},
};

std::int64_t micro_batch(const Table3Row& row) { return row.pp == 1 ? 4 : 1; }

double first_stage_activation_bytes(const Table3Row& row, bool sp, Recompute recompute) {
  auto plan = testing::a100_plan(gpt_model(row.layers, row.hidden, row.heads), row.tp * row.pp);
  plan.layout.tp = row.tp;
  plan.layout.pp = row.pp;
  plan.layout.vpp = row.vpp;
  plan.layout.schedule = row.vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  plan.layout.sequence_parallel = sp;
  plan.layout.recompute = recompute;
  plan.training.micro_batch = micro_batch(row);
  plan.training.global_batch = row.global_batch;
  return layer_activation_bytes(plan) * in_flight_layer_equivalents(plan, 0, chunk_layers(plan));
}

// Sec. 4.2.3: under 1F1B the first stage holds p micro-batches of L/p layers, L layers' worth,
// and the interleaved schedule (m chunks per stage) L (1 + (p - 1)/(p m)); times Table 2's bytes
// per layer (tensor parallel: sbh(10 + 24/t + 5as/(ht)); with sequence parallelism and selective
// recomputation: 34sbh/t).
TEST(Korthikanti2022, TableThreeFirstStageActivationsAreTableTwoTimesSectionFourPointTwoPointThree) {
  for (const auto& row : kTable3) {
    const double s = 2048, b = static_cast<double>(micro_batch(row)), h = static_cast<double>(row.hidden);
    const double a = static_cast<double>(row.heads), t = static_cast<double>(row.tp), p = static_cast<double>(row.pp);
    const double layers = static_cast<double>(row.layers) * (row.vpp > 1 ? 1 + (p - 1) / (p * static_cast<double>(row.vpp)) : 1);
    EXPECT_DOUBLE_EQ(first_stage_activation_bytes(row, false, Recompute::none),
                     layers * s * b * h * (10 + 24 / t + 5 * a * s / (h * t)))
        << row.name;
    EXPECT_DOUBLE_EQ(first_stage_activation_bytes(row, true, Recompute::selective), layers * 34 * s * b * h / t) << row.name;
  }
}

// Abstract: "our method reduces activation memory by 5x" (tensor parallelism alone against
// tensor + sequence parallelism + selective recomputation). Printed to one figure, so [4.5, 5.5)
// for 175B, 530B and 1T (Table 2 gives 5.41, 4.94, 4.94). The 22B model's reduction is larger
// (Table 2: 6.2; at least the printed 5x is checked): its a s / h (21.3) is the largest of the
// four, and the attention term is what selective recomputation drops.
TEST(Korthikanti2022, AbstractFiveFoldActivationMemoryReduction) {
  for (const auto& row : kTable3) {
    const double reduction =
        first_stage_activation_bytes(row, false, Recompute::none) / first_stage_activation_bytes(row, true, Recompute::selective);
    EXPECT_GE(reduction, 4.5) << row.name;
    if (std::string_view(row.name) != "22B") {
      EXPECT_LT(reduction, 5.5) << row.name;
    }
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
