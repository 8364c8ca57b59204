// Kernel classification rules, collective kinds, nccl-tests bus-bandwidth factors and
// annotation tags.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "plansight/estimator/collective_bandwidth.h"
#include "plansight/estimator/kernel_rules.h"
#include "plansight/estimator/timeline_annotations.h"

namespace plansight::estimator {
namespace {

TEST(KernelRules, DefaultRulesParseAndRoundTrip) {
  const auto& rules = default_kernel_rules();
  EXPECT_EQ(rules.name, "plansight-default");
  EXPECT_GE(rules.rules.size(), 10u);
  auto again = parse_kernel_rules(kernel_rules_to_json(rules));
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_EQ(again->rules.size(), rules.rules.size());
  EXPECT_EQ(kernel_rules_to_json(*again), kernel_rules_to_json(rules));
}

struct Case {
  const char* name;
  KernelClass expected;
};

class DefaultClassification : public ::testing::TestWithParam<Case> {};

TEST_P(DefaultClassification, Classifies) {
  static const KernelClassifier classifier;
  EXPECT_EQ(classifier.classify(GetParam().name), GetParam().expected) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Names, DefaultClassification,
    ::testing::Values(
        Case{"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", KernelClass::communication},
        Case{"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::communication},
        Case{"NCCL_custom", KernelClass::communication},
        Case{"void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>", KernelClass::communication},
        Case{"void dpsk::ep::internode::dispatch<true, 8>(int4*)", KernelClass::communication},
        Case{"void deep_ep::intranode::combine<8>()", KernelClass::communication},
        Case{"rcclGenericKernel", KernelClass::communication},
        Case{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", KernelClass::tensor_core_gemm},
        Case{"sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize256x128x32", KernelClass::tensor_core_gemm},
        Case{"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8", KernelClass::compute},  // SIMT fp32
        Case{"nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", KernelClass::tensor_core_gemm},
        Case{"nvjet_sss_tf32_128x256_TNT", KernelClass::tensor_core_gemm},      // fp32 data on TF32 tensor cores
        Case{"nvjet_sss_128x128_64x4_2x1_v_bz_TNT", KernelClass::compute},       // strict fp32: no tensor core
        Case{"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>", KernelClass::tensor_core_gemm},
        Case{"void cutlass::device_kernel<dpsk::grouped_gemm::cuda::fp8_ptp128c::GemmKernel>", KernelClass::tensor_core_gemm},
        Case{"void moe::dev::finalize::finalizeKernelVecLoad<cutlass::bfloat16_t>", KernelClass::compute},
        Case{"void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>", KernelClass::compute},
        Case{"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", KernelClass::tensor_core_gemm},
        Case{"cijk_lowercase_is_not_tensile", KernelClass::compute},
        Case{"volta_h884gemm_64x64_ldg8_nn", KernelClass::tensor_core_gemm},
        Case{"turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", KernelClass::tensor_core_gemm},
        Case{"ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_nn", KernelClass::tensor_core_gemm},
        Case{"volta_sgemm_64x64_nt", KernelClass::compute},
        Case{"Memcpy HtoD (Pageable -> Device)", KernelClass::memory},
        Case{"Memset (Device)", KernelClass::memory},
        Case{"void at::native::vectorized_elementwise_kernel<4>", KernelClass::compute}));

// The classifier's byte-set tests only pass over patterns that cannot be in a name: every name
// gets the rule a plain search of every pattern gives (the rule set's documented semantics, with
// case folded where the rule says so). Names: real kernel names, their pieces recombined, a
// predicted timeline's op names, mixed case, digits and non-ASCII bytes.
int plain_matching_rule(const KernelRules& rules, const std::string& name) {
  const auto fold = [](std::string s) {
    for (char& c : s) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
  };
  for (std::size_t i = 0; i < rules.rules.size(); ++i) {
    const KernelRule& r = rules.rules[i];
    const std::string n = r.case_sensitive ? name : fold(name);
    const auto pat = [&](const std::string& p) { return r.case_sensitive ? p : fold(p); };
    const auto has = [&](const std::string& p) { return n.find(pat(p)) != std::string::npos; };
    bool ok = std::all_of(r.all_of.begin(), r.all_of.end(), has) && std::none_of(r.none_of.begin(), r.none_of.end(), has);
    if (!r.any_of.empty()) ok = ok && std::any_of(r.any_of.begin(), r.any_of.end(), has);
    if (!r.starts_with.empty()) {
      ok = ok && std::any_of(r.starts_with.begin(), r.starts_with.end(),
                             [&](const std::string& p) { return n.rfind(pat(p), 0) == 0; });
    }
    if (ok) return static_cast<int>(i);
  }
  return -1;
}

TEST(KernelRules, TheClassifierMatchesAPlainSearchOfEveryPattern) {
  const KernelRules& rules = default_kernel_rules();
  const KernelClassifier classifier(rules);
  std::vector<std::string> pieces = {"ncclDevKernel_", "AllGather", "sm90_xmma_gemm_", "bf16", "nvjet_sss_", "tf32",
                                     "Memcpy HtoD", "cutlass_80_tensorop_", "s16816gemm", "Cijk_Ailk", "volta_",
                                     "h884", "simt_sgemm", "F3.17", "send B2.5 \xc2\xb7 pp 8", "TP all-reduce", "_",
                                     "MEMSET", "Deep_EP", "dispatch", "multimem", "xMMa", "16816", "NCCL", ""};
  for (const KernelRule& r : rules.rules) {
    for (const auto* list : {&r.any_of, &r.all_of, &r.starts_with, &r.none_of}) pieces.insert(pieces.end(), list->begin(), list->end());
  }
  std::mt19937 rng(7);
  int matched = 0;
  for (int k = 0; k < 20000; ++k) {
    std::string name;
    const int parts = 1 + static_cast<int>(rng() % 4);
    for (int j = 0; j < parts; ++j) name += pieces[rng() % pieces.size()];
    if (rng() % 3 == 0 && !name.empty()) name[rng() % name.size()] ^= 0x20;  // a case flipped
    const int expected = plain_matching_rule(rules, name);
    matched += expected >= 0 ? 1 : 0;
    ASSERT_EQ(classifier.matching_rule(name), expected) << name;
  }
  EXPECT_GT(matched, 5000);  // the names reach most rules, not just the fall-through
}

TEST(KernelRules, LoadsUserRulesFirstMatchWins) {
  auto rules = parse_kernel_rules(R"({"format": "plansight-kernel-rules", "version": 1, "name": "site", "revision": "r7",
    "rules": [
      {"class": "communication", "any_of": ["my_allreduce"], "note": "in-house collective"},
      {"class": "tensor_core_gemm", "all_of": ["gemm"], "none_of": ["fp32"], "architecture": "sm90"},
      {"class": "memory", "starts_with": ["copy_"], "case_sensitive": true}
    ]})");
  ASSERT_TRUE(rules.ok()) << rules.error_text();
  const KernelClassifier c(*rules);
  EXPECT_EQ(c.classify("My_AllReduce_v2"), KernelClass::communication);
  EXPECT_EQ(c.classify("bf16_gemm"), KernelClass::tensor_core_gemm);
  EXPECT_EQ(c.classify("fp32_gemm"), KernelClass::compute);
  EXPECT_EQ(c.classify("copy_tensor"), KernelClass::memory);
  EXPECT_EQ(c.classify("Copy_tensor"), KernelClass::compute);
  EXPECT_EQ(c.classify("ncclKernel"), KernelClass::compute);  // user rules replace the defaults
  EXPECT_EQ(c.matching_rule("fp32_gemm"), -1);
  EXPECT_EQ(rules->revision, "r7");
}

TEST(KernelRules, ErrorsNameTheField) {
  auto bad = parse_kernel_rules(R"({"version": 2, "rules": [{"class": "gpu", "any_of": "nccl"}, {"class": "memory"}, {"class": "compute", "any_of": ["x"], "colour": 1}]})");
  ASSERT_FALSE(bad.ok());
  const std::string text = bad.error_text();
  EXPECT_NE(text.find("version: expected 1, got 2"), std::string::npos) << text;
  EXPECT_NE(text.find("rules[0].class: expected one of communication|tensor_core_gemm|compute|memory"), std::string::npos) << text;
  EXPECT_NE(text.find("rules[0].any_of: expected an array of strings"), std::string::npos) << text;
  EXPECT_NE(text.find("rules[1]: a rule needs at least one of"), std::string::npos) << text;
  EXPECT_NE(text.find("rules[2].colour: unknown key"), std::string::npos) << text;
  EXPECT_FALSE(parse_kernel_rules("not json").ok());
}

TEST(KernelRules, LoadsFromFile) {
  const auto path = std::filesystem::path(::testing::TempDir()) / ("rules." + std::to_string(::getpid()) + ".json");
  {
    std::ofstream f(path);
    f << default_kernel_rules_json();
  }
  auto rules = load_kernel_rules_file(path);
  ASSERT_TRUE(rules.ok()) << rules.error_text();
  EXPECT_EQ(rules->rules.size(), default_kernel_rules().rules.size());
  auto missing = load_kernel_rules_file("/nonexistent/rules.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error_text().find("/nonexistent/rules.json"), std::string::npos);
}

TEST(CollectiveKind, FromKernelAndPyTorchNames) {
  EXPECT_EQ(collective_kind_from_name("ncclDevKernel_AllGather_RING_LL"), CollectiveKind::all_gather);
  EXPECT_EQ(collective_kind_from_name("ncclKernel_ReduceScatter_RING_LL_Sum_bf16"), CollectiveKind::reduce_scatter);
  EXPECT_EQ(collective_kind_from_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t"), CollectiveKind::send_recv);
  EXPECT_EQ(collective_kind_from_name("ncclDevKernel_Broadcast_RING_LL"), CollectiveKind::broadcast);
  EXPECT_EQ(collective_kind_from_name("ncclDevKernel_Reduce_Sum_f32_RING_LL"), CollectiveKind::reduce);
  EXPECT_EQ(collective_kind_from_name("_allgather_base"), CollectiveKind::all_gather);
  EXPECT_EQ(collective_kind_from_name("reduce_scatter_tensor_coalesced"), CollectiveKind::reduce_scatter);
  EXPECT_EQ(collective_kind_from_name("all_to_all"), CollectiveKind::all_to_all);
  EXPECT_EQ(collective_kind_from_name("dpsk::ep::internode::combine<8>"), CollectiveKind::all_to_all);
  EXPECT_EQ(collective_kind_from_name("ncclDevKernel_Generic"), CollectiveKind::unknown);
}

TEST(BusBandwidth, NcclTestsFactors) {
  // nccl-tests doc/PERFORMANCE.md, "Summary".
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_reduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_gather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::reduce_scatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::send_recv, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::all_reduce, 0), 0.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(CollectiveKind::unknown, 8), 0.0);

  CollectiveCall c;
  c.kind = CollectiveKind::all_reduce;
  c.group_size = 8;
  c.bytes = 1e9;
  c.duration_ns = 10'000'000;  // 1 GB in 10 ms: algbw 100 GB/s, busbw 175 GB/s
  const auto bw = collective_bandwidth(c);
  EXPECT_DOUBLE_EQ(bw.algbw_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(bw.busbw_bytes_per_s, 175e9);
  c.group_size = 0;
  EXPECT_DOUBLE_EQ(collective_bandwidth(c).busbw_bytes_per_s, 0.0);

  const auto sums = summarize_collectives({c, c});
  ASSERT_EQ(sums.size(), 1u);
  EXPECT_EQ(sums[0].count, 2);
  EXPECT_DOUBLE_EQ(sums[0].algbw_bytes_per_s, 100e9);
}

TEST(BusBandwidth, DtypeSizes) {
  EXPECT_EQ(dtype_size_bytes("Float"), 4);
  EXPECT_EQ(dtype_size_bytes("BFloat16"), 2);
  EXPECT_EQ(dtype_size_bytes("Half"), 2);
  EXPECT_EQ(dtype_size_bytes("Float8_e4m3fn"), 1);
  EXPECT_EQ(dtype_size_bytes("Long"), 8);
  EXPECT_EQ(dtype_size_bytes("Quaternion"), 0);
}

TEST(AnnotationTags, ParsesCommonSpellings) {
  auto t = parse_annotation_tags("## forward ##");
  EXPECT_EQ(t.phase, Phase::forward);
  t = parse_annotation_tags("stage 1 microbatch 3 backward");
  EXPECT_EQ(t.phase, Phase::backward);
  EXPECT_EQ(t.stage, 1);
  EXPECT_EQ(t.micro_batch, 3);
  t = parse_annotation_tags("pp_stage=2/mb=5/fwd");
  EXPECT_EQ(t.phase, Phase::forward);
  EXPECT_EQ(t.stage, 2);
  EXPECT_EQ(t.micro_batch, 5);
  t = parse_annotation_tags("backward_w chunk");
  EXPECT_EQ(t.phase, Phase::weight_grad);
  t = parse_annotation_tags("Optimizer.step#Adam.step");
  EXPECT_EQ(t.phase, Phase::optimizer);
  t = parse_annotation_tags("ProfilerStep#3");  // not a stage, no phase
  EXPECT_FALSE(t.any());
  t = parse_annotation_tags("aten::embedding 7");  // "mb" inside a word is not a micro-batch
  EXPECT_FALSE(t.any());
}

TEST(AnnotationTags, PropagateFromEnclosingDeviceAnnotations) {
  Timeline tl;
  Track gpu;
  gpu.lane = Lane::compute;
  Span outer;
  outer.kind = SpanKind::annotation;
  outer.name_id = tl.intern("stage 1");
  outer.start_ns = 0;
  outer.duration_ns = 1000;
  Span inner = outer;
  inner.name_id = tl.intern("mb 4 forward");
  inner.start_ns = 100;
  inner.duration_ns = 200;
  Span k1;
  k1.name_id = tl.intern("gemm");
  k1.start_ns = 150;
  k1.duration_ns = 50;
  Span k2 = k1;
  k2.start_ns = 500;
  gpu.spans = {outer, inner, k1, k2};
  Track host;
  host.lane = Lane::host;
  Span hk = k1;
  host.spans = {hk};
  tl.tracks = {gpu, host};
  EXPECT_EQ(propagate_annotation_tags(tl), 2);
  const auto& s = tl.tracks[0].spans;
  EXPECT_EQ(s[2].phase, Phase::forward);
  EXPECT_EQ(s[2].stage, 1);
  EXPECT_EQ(s[2].micro_batch, 4);
  EXPECT_EQ(s[3].phase, Phase::none);
  EXPECT_EQ(s[3].stage, 1);
  EXPECT_EQ(tl.tracks[1].spans[0].stage, -1);  // host spans are not tagged
}

}  // namespace
}  // namespace plansight::estimator
