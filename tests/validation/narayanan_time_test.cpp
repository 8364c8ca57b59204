// The time model against published end-to-end throughput, without a given TFLOP/s, on points
// that did not set any of its constants: Narayanan et al. 2021 Table 1 (achieved TFLOP/s per
// GPU, all ten rows, within 10%) and Korthikanti et al. 2022 (abstract: 530B on 2240 A100 with
// selective recomputation and sequence parallelism, 54.2% MFU, "29% faster" than with full
// recomputation). The one calibration point, the same 530B run at 42.1% MFU with full
// recomputation (estimator/src/device_model.cpp sets the A100 in-step slowdown from it), is
// kept apart as Korthikanti2022Calibration: it shows the calibration holds, it validates nothing.
#include <gtest/gtest.h>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

struct Row {
  const char* model;
  std::int64_t gpus, tp, pp, micro_batch, vpp, batch;
  double published_tflops;
  bool pytorch_ddp;  // rows 1-4 used PyTorch DDP (overlapped), the rest Megatron's local DDP
};

// Table 1 with the layouts of the paper's run scripts (Megatron-LM examples/sc21).
const Row kTable1[] = {
    {"narayanan-1.7b", 32, 1, 1, 16, 1, 512, 137, true},       {"narayanan-3.6b", 64, 2, 1, 16, 1, 512, 138, true},
    {"narayanan-7.5b", 128, 4, 1, 16, 1, 512, 142, true},      {"narayanan-18.4b", 256, 8, 1, 8, 1, 1024, 135, true},
    {"narayanan-39.1b", 512, 8, 2, 4, 1, 1536, 138, false},    {"narayanan-76.1b", 1024, 8, 4, 2, 3, 1792, 140, false},
    {"narayanan-145.6b", 1536, 8, 8, 2, 2, 2304, 148, false},  {"narayanan-310.1b", 1920, 8, 16, 1, 2, 2160, 155, false},
    {"narayanan-529.6b", 2520, 8, 35, 1, 3, 2520, 163, false}, {"narayanan-1008b", 3072, 8, 64, 1, 1, 3072, 163, false},
};

Plan selene_plan(const char* model, std::int64_t gpus, std::int64_t tp, std::int64_t pp, std::int64_t vpp,
                 std::int64_t micro_batch, std::int64_t batch) {
  Plan p = default_plan();
  p.model = *find_model(model);
  p.cluster = find_system("selene")->cluster;
  p.cluster.gpus = gpus;
  p.layout = LayoutSpec{};
  p.layout.tp = tp;
  p.layout.pp = pp;
  p.layout.vpp = vpp;
  p.layout.schedule = vpp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  p.layout.recompute = Recompute::full;
  p.training.micro_batch = micro_batch;
  p.training.global_batch = batch;
  p.training.seq_len = 2048;
  p.training.precision = Precision::fp16;
  p.training.grad_precision = Precision::fp16;
  p.training.attention = AttentionKernel::standard;
  p.training.achieved_tflops = 0;
  p.training.mfu = 0;
  return p;
}

TEST(NarayananTable1, PredictedThroughputWithinTenPercentOnEveryRow) {
  for (const auto& row : kTable1) {
    Plan p = selene_plan(row.model, row.gpus, row.tp, row.pp, row.vpp, row.micro_batch, row.batch);
    p.layout.dp_overlap = row.pytorch_ddp;
    auto e = estimate(p);
    ASSERT_TRUE(e.ok()) << row.model << ": " << e.error_text();
    ASSERT_TRUE(e->time.predicted);
    const double error = e->time.achieved_tflops_per_gpu / row.published_tflops - 1;
    EXPECT_LT(std::abs(error), 0.10) << row.model << ": predicted " << e->time.achieved_tflops_per_gpu << " vs "
                                     << row.published_tflops << " TFLOP/s";
    // The breakdown adds up to the iteration.
    EXPECT_NEAR(e->time.breakdown.total_s(), e->time.iteration_s, 1e-6 * e->time.iteration_s) << row.model;
  }
}

// 530B (TP 8, PP 35, 3 chunks per stage, micro-batch 1) on 2240 A100, batch 2240: the run of
// Korthikanti et al. 2022's abstract.
Plan korthikanti_530b(Recompute recompute, bool sequence_parallel) {
  Plan p = selene_plan("narayanan-529.6b", 2240, 8, 35, 3, 1, 2240);
  p.layout.dp_overlap = false;
  p.layout.recompute = recompute;
  p.layout.sequence_parallel = sequence_parallel;
  return p;
}

// Not validation: device_model.cpp chose the A100's in-step slowdown (1.15) so that this run
// comes out at the abstract's 42.1% MFU. Fails when a change to the model moves it off its own
// calibration point (then the slowdown must be re-derived).
TEST(Korthikanti2022Calibration, FullRecomputationRunReproducesTheCalibrationPoint) {
  auto full = estimate(korthikanti_530b(Recompute::full, false));
  ASSERT_TRUE(full.ok()) << full.error_text();
  EXPECT_NEAR(full->time.mfu, 0.421, 0.0015) << "42.1% printed; 1.15 gives 42.2%";
}

// Validation: nothing in the model was fitted to the selective + sequence-parallel run.
TEST(Korthikanti2022, SelectiveRecomputationWithSequenceParallelMfu) {
  auto selective = estimate(korthikanti_530b(Recompute::selective, true));
  ASSERT_TRUE(selective.ok()) << selective.error_text();
  EXPECT_LT(std::abs(selective->time.mfu / 0.542 - 1), 0.10) << "abstract: 54.2%, predicted " << selective->time.mfu;
}

// Validation of the speed-up (abstract: 54.2% is "29% faster" than 42.1%, 54.2 / 42.1 = 1.287):
// the ratio of the two predictions, within 10% of the printed 29% gain's 1.29.
TEST(Korthikanti2022, SelectiveRecomputationSpeedUpOverFullRecomputation) {
  auto full = estimate(korthikanti_530b(Recompute::full, false));
  auto selective = estimate(korthikanti_530b(Recompute::selective, true));
  ASSERT_TRUE(full.ok() && selective.ok());
  const double speed_up = full->time.iteration_s / selective->time.iteration_s;
  EXPECT_LT(std::abs(speed_up / 1.29 - 1), 0.10) << "predicted speed-up " << speed_up;
}

}  // namespace
}  // namespace plansight::estimator
