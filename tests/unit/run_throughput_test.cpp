// Tokens per second and MFU of a probe run (run_throughput.h): the CUDA device names map to the
// datasheet presets, MFU is the estimator's model FLOPs over step x physical GPUs x datasheet
// peak, and virtual ranks sharing one GPU count as one GPU.
#include <gtest/gtest.h>

#include "plansight/core/run_throughput.h"
#include "probe_plan_fixture.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

std::string preset_of(std::string_view device) {
  const auto gpu = datasheet_gpu(device);
  return gpu ? gpu->name : "none";
}

// Names as cudaGetDeviceProperties().name gives them (nvidia-smi -L prints the same), and as the
// probe stores them ("cuda: " prefix, " (...)" tail).
TEST(DatasheetGpu, CudaDeviceNamesMapToTheirPresets) {
  EXPECT_EQ(preset_of("NVIDIA H200"), "h200");
  EXPECT_EQ(preset_of("cuda: NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"), "h200");
  EXPECT_EQ(preset_of("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(preset_of("NVIDIA H100 PCIe"), "h100-pcie");
  EXPECT_EQ(preset_of("NVIDIA A100-SXM4-80GB"), "a100-80gb-sxm");
  EXPECT_EQ(preset_of("NVIDIA A100-SXM4-40GB"), "a100-40gb-sxm");
  EXPECT_EQ(preset_of("NVIDIA A100-PCIE-40GB"), "a100-40gb-pcie");
  EXPECT_EQ(preset_of("NVIDIA A100 80GB PCIe"), "a100-80gb-pcie");
  EXPECT_EQ(preset_of("Tesla V100-SXM2-32GB"), "v100-32gb-sxm");
  EXPECT_EQ(preset_of("Tesla V100-SXM2-16GB"), "v100-16gb-sxm");
  EXPECT_EQ(preset_of("NVIDIA L4"), "l4");
  EXPECT_EQ(preset_of("Tesla T4"), "t4");
  EXPECT_EQ(preset_of("NVIDIA B200"), "b200");
  // Variants no preset describes, and CPUs: no datasheet, so no MFU rather than a wrong one.
  EXPECT_EQ(preset_of("NVIDIA H100 NVL"), "none");
  EXPECT_EQ(preset_of("NVIDIA L40S"), "none");
  EXPECT_EQ(preset_of("NVIDIA GeForce RTX 4090"), "none");
  EXPECT_EQ(preset_of("Tesla V100-PCIE-16GB"), "none");
  EXPECT_EQ(preset_of("cpu: AMD EPYC 7B13, 2 cores"), "none");
  EXPECT_EQ(preset_of(""), "none");
}

using testing::gpt2_run;
using testing::kH200;

nlohmann::json gpt2_request(const nlohmann::json& layout, std::int64_t micro_batch, std::int64_t global_batch) {
  return {{"micro_batch", micro_batch}, {"global_batch", global_batch}, {"seq_len", 1024},
          {"layout", layout},           {"device", "cuda"},             {"precision", "bf16"}};
}

TEST(RunThroughput, MfuIsModelFlopsOverStepTimesTheDatasheetPeak) {
  const testing::Gpt2Run run = gpt2_run(gpt2_request(nlohmann::json::object(), 8, 8), kH200);
  // GPT-2 124M's model FLOPs per token, 6N + 12 L s h (Chowdhery et al. 2022, PaLM, App. B), with
  // N = 124,475,904 (vocabulary padded to 50,304, tied head), L = 12, s = 1,024, h = 768:
  // 746,855,424 + 113,246,208 = 860,101,632. The estimator may count the position table and the
  // layer norms differently: within 1%.
  const double tokens = 8.0 * 1024.0;
  EXPECT_NEAR(run.estimate.flops.model_per_iteration / tokens, 860101632.0, 860101632.0 * 0.01);

  const RunThroughput t = run_throughput(run.plan, run.estimate, 0.030, 0.041, run.plan.cluster.gpu.name);
  EXPECT_EQ(t.gpus, 1);
  EXPECT_DOUBLE_EQ(t.peak_flops_per_gpu, 989.4e12);  // H100 whitepaper's dense bf16, the H200's too (gpus.json)
  EXPECT_NEAR(t.measured_tokens_per_s, tokens / 0.041, 1e-6);
  EXPECT_NEAR(t.predicted_tokens_per_s, tokens / 0.030, 1e-6);
  ASSERT_TRUE(t.measured_mfu && t.predicted_mfu) << t.mfu_note;
  EXPECT_NEAR(*t.measured_mfu, run.estimate.flops.model_per_iteration / (0.041 * 989.4e12), 1e-12);
  EXPECT_NEAR(*t.predicted_mfu / *t.measured_mfu, 0.041 / 0.030, 1e-9) << "one scale for both sides";
  EXPECT_NE(t.peak_source.find("h200 datasheet, bf16 dense 989.4 TFLOP/s x 1 GPU"), std::string::npos) << t.peak_source;
}

TEST(RunThroughput, VirtualRanksSharingOneGpuCountOnce) {
  const testing::Gpt2Run run = gpt2_run(gpt2_request({{"tp", 2}, {"pp", 2}, {"dp", 2}, {"schedule", "1f1b"}}, 2, 16), kH200);
  ASSERT_EQ(run.plan.cluster.gpus, 8);
  const RunThroughput t = run_throughput(run.plan, run.estimate, 0.05, 0.0647, run.plan.cluster.gpu.name);
  EXPECT_EQ(t.gpus, 1) << "eight virtual ranks on one GPU: the GPU's peak once, not eight times";
  ASSERT_TRUE(t.measured_mfu);
  EXPECT_NEAR(*t.measured_mfu, run.estimate.flops.model_per_iteration / (0.0647 * 989.4e12), 1e-12);
}

TEST(RunThroughput, NoDatasheetMeansNoMfuAndSaysWhy) {
  const testing::Gpt2Run run = gpt2_run(gpt2_request(nlohmann::json::object(), 8, 8), kH200);
  const RunThroughput t = run_throughput(run.plan, run.estimate, 0.030, 0.041, "cpu: AMD EPYC, 2 cores");
  EXPECT_FALSE(t.measured_mfu);
  EXPECT_FALSE(t.predicted_mfu);
  EXPECT_NE(t.mfu_note.find("no datasheet peak"), std::string::npos) << t.mfu_note;
  EXPECT_GT(t.measured_tokens_per_s, 0) << "tokens/s need no peak";
  const RunThroughput none = run_throughput(run.plan, run.estimate, 0, 0, run.plan.cluster.gpu.name);
  EXPECT_FALSE(none.measured_mfu) << "no step, no MFU";
  EXPECT_EQ(none.measured_tokens_per_s, 0);
}

}  // namespace
}  // namespace plansight::core
