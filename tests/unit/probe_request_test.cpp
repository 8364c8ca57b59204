// Probe requests: the named models' sizes, defaults, a JSON round trip, and error paths that
// must each name the request field (the CLI and GUI show these to users as they are).
#include <gtest/gtest.h>

#include <algorithm>

#include "plansight/probe/engine.h"
#include "plansight/probe/protocol/request.h"

namespace plansight::probe {
namespace {

std::vector<std::string> fields_of(const Result<ProbeRequest>& r) {
  std::vector<std::string> out;
  for (const auto& e : r.errors()) out.push_back(e.field);
  return out;
}

bool names(const Result<ProbeRequest>& r, const std::string& field) {
  auto f = fields_of(r);
  return std::find(f.begin(), f.end(), field) != f.end();
}

TEST(ProbeModel, NamedSizes) {
  auto tiny = probe_model("tiny");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->layers, 2);
  EXPECT_EQ(tiny->hidden, 64);
  EXPECT_EQ(tiny->heads, 4);
  EXPECT_EQ(tiny->vocab, 256);
  EXPECT_EQ(tiny->max_seq_len, 64);
  EXPECT_EQ(tiny->ffn_hidden, 256);
  EXPECT_FALSE(tiny->dropout) << "the probe's kernels have no dropout";
  auto small = probe_model("small");
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->layers, 4);
  EXPECT_EQ(small->hidden, 128);
  EXPECT_EQ(small->max_seq_len, 128);
  auto gpt2 = probe_model("gpt2-124m");
  ASSERT_TRUE(gpt2.ok()) << gpt2.error_text();
  EXPECT_EQ(gpt2->layers, 12);
  EXPECT_EQ(gpt2->hidden, 768);
  EXPECT_EQ(gpt2->vocab, 50257);
  EXPECT_FALSE(probe_model("huge").ok());
}

TEST(ProbeRequestJson, DefaultsFollowTheModelAndLayout) {
  auto r = probe_request_from_json({{"model", "small"}, {"layout", {{"tp", 2}, {"pp", 2}}}});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->seq_len, 128);
  EXPECT_EQ(r->layout.dp, 1);
  EXPECT_EQ(r->global_batch, 4) << "two micro-batches per pipeline stage";
  auto plain = probe_request_from_json(nlohmann::json::object());
  ASSERT_TRUE(plain.ok()) << plain.error_text();
  EXPECT_EQ(plain->model.name, "tiny");
  EXPECT_EQ(plain->global_batch, 1);
  EXPECT_EQ(plain->device, Device::cpu);
}

TEST(ProbeRequestJson, RoundTrip) {
  auto r = probe_request_from_json({{"model", "small"},
                                    {"layout", {{"tp", 2}, {"pp", 2}, {"vpp", 2}, {"schedule", "interleaved"}, {"zero_stage", 1}}},
                                    {"micro_batch", 2},
                                    {"global_batch", 8},
                                    {"seq_len", 32},
                                    {"steps", 7},
                                    {"device", "auto"},
                                    {"precision", "bf16"},
                                    {"calibrate", true},
                                    {"learning_rate", 1e-3},
                                    {"lr_warmup_steps", 5},
                                    {"data", "corpus"}});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->lr_warmup_steps, 5);
  const auto j = to_json(*r);
  auto again = probe_request_from_json(j);
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_EQ(to_json(*again), j);
  EXPECT_EQ(again->layout.vpp, 2);
  EXPECT_EQ(again->device, Device::automatic);
  EXPECT_EQ(again->precision, Precision::bf16);
  EXPECT_TRUE(again->calibrate);
}

TEST(ProbeRequestJson, PrecisionIsFp32ByDefaultAndNamedWhenWrong) {
  auto r = probe_request_from_json({{"model", "tiny"}});
  ASSERT_TRUE(r.ok()) << r.error_text();
  EXPECT_EQ(r->precision, Precision::fp32);
  for (const char* p : {"fp32", "tf32", "bf16", "fp16"}) {
    auto ok = probe_request_from_json({{"model", "tiny"}, {"device", "cuda"}, {"precision", p}});
    ASSERT_TRUE(ok.ok()) << p << ": " << ok.error_text();
    EXPECT_EQ(std::string(to_string(ok->precision)), p);
  }
  auto unknown = probe_request_from_json({{"model", "tiny"}, {"device", "cuda"}, {"precision", "fp8"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(names(unknown, "precision")) << unknown.error_text();
  EXPECT_NE(unknown.error_text().find("fp32, tf32, bf16, fp16"), std::string::npos) << unknown.error_text();
  // The CPU computes in fp32 only: a 16-bit request for it is refused before anything runs.
  auto cpu = probe_request_from_json({{"model", "tiny"}, {"device", "cpu"}, {"precision", "bf16"}});
  ASSERT_FALSE(cpu.ok());
  EXPECT_TRUE(names(cpu, "precision")) << cpu.error_text();
}

TEST(ProbeRequestJson, TensorCoreCountersNeedAGpuAndNoTrace) {
  auto off = probe_request_from_json({{"model", "tiny"}});
  ASSERT_TRUE(off.ok()) << off.error_text();
  EXPECT_FALSE(off->tensor_core_counters) << "off unless asked for: profiling slows a step 10-100x";
  EXPECT_FALSE(to_json(*off).contains("tensor_core_counters")) << "readers built before the field still read it";
  auto on = probe_request_from_json({{"model", "tiny"}, {"device", "cuda"}, {"trace", false}, {"tensor_core_counters", true}});
  ASSERT_TRUE(on.ok()) << on.error_text();
  EXPECT_TRUE(on->tensor_core_counters);
  EXPECT_FALSE(on->trace);
  auto again = probe_request_from_json(to_json(*on));
  ASSERT_TRUE(again.ok()) << again.error_text();
  EXPECT_TRUE(again->tensor_core_counters);
  EXPECT_FALSE(again->trace);
  auto text = probe_request_from_json({{"device", "cuda"}, {"trace", false}, {"tensor_core_counters", "yes"}});
  ASSERT_FALSE(text.ok());
  EXPECT_TRUE(names(text, "tensor_core_counters")) << text.error_text();
  EXPECT_NE(text.error_text().find("expected true or false"), std::string::npos) << text.error_text();
  auto cpu = probe_request_from_json({{"device", "cpu"}, {"trace", false}, {"tensor_core_counters", true}});
  ASSERT_FALSE(cpu.ok());
  EXPECT_TRUE(names(cpu, "tensor_core_counters")) << cpu.error_text();
  EXPECT_NE(cpu.error_text().find("device cuda or auto"), std::string::npos) << cpu.error_text();
  // The range profiler and the activity tracer never share a process: trace true (also the
  // default) with counters is a bad request that says why and what to do.
  for (const nlohmann::json& traced : {nlohmann::json{{"device", "cuda"}, {"trace", true}, {"tensor_core_counters", true}},
                                       nlohmann::json{{"device", "cuda"}, {"tensor_core_counters", true}}}) {
    auto r = probe_request_from_json(traced);
    ASSERT_FALSE(r.ok()) << traced.dump();
    EXPECT_TRUE(names(r, "tensor_core_counters")) << r.error_text();
    EXPECT_NE(r.error_text().find("runs with trace false: the counters' kernel replay and the CUPTI activity tracer are "
                                  "not used in one process; run the traced step and the counters as two runs"),
              std::string::npos)
        << r.error_text();
  }
}

TEST(ProbeRequestJson, EveryErrorNamesItsField) {
  auto r = probe_request_from_json({{"steps", 0}, {"layout", {{"tp", "two"}}}, {"micro_bacth", 1}, {"device", "tpu"}});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(names(r, "steps")) << r.error_text();
  EXPECT_TRUE(names(r, "layout.tp")) << r.error_text();
  EXPECT_TRUE(names(r, "micro_bacth")) << "a typo is an error, not silently ignored: " << r.error_text();
  EXPECT_TRUE(names(r, "device")) << r.error_text();
  EXPECT_NE(r.error_text().find("cpu, cuda, auto"), std::string::npos) << "the message lists what is valid";
  // Type and range errors do not hide layout errors: one reply lists all of them.
  auto both = probe_request_from_json({{"model", "small"}, {"layout", {{"tp", 3}}}, {"steps", 0}});
  EXPECT_TRUE(names(both, "layout.tp")) << both.error_text();
  EXPECT_TRUE(names(both, "steps")) << both.error_text();
}

TEST(ProbeRequestJson, CoresDefaultToWhatTheProcessMayUse) {
  auto all = probe_request_from_json(nlohmann::json::object());
  ASSERT_TRUE(all.ok()) << all.error_text();
  EXPECT_EQ(all->cores, 0) << "reading a request is machine-free: the app and the probe read it alike";
  const ProbeRequest resolved = resolved_for_this_process(*all);
  EXPECT_GE(resolved.cores, 1);  // resolved: the stored request says how many cores the ranks shared
  EXPECT_EQ(to_json(resolved)["cores"], resolved.cores);
  EXPECT_EQ(resolved_for_this_process(resolved).cores, resolved.cores);
  auto one = probe_request_from_json({{"cores", 1}});
  ASSERT_TRUE(one.ok()) << one.error_text();
  EXPECT_EQ(one->cores, 1);
  auto bad = probe_request_from_json({{"cores", -2}});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(names(bad, "cores")) << bad.error_text();
}

TEST(ProbeRequestJson, LayoutRulesAreTheEstimators) {
  // small has 4 heads: tp 3 does not divide them (Megatron's rule, estimator::validate).
  auto tp = probe_request_from_json({{"model", "small"}, {"layout", {{"tp", 3}}}});
  ASSERT_FALSE(tp.ok());
  EXPECT_TRUE(names(tp, "layout.tp")) << tp.error_text();
  auto pp = probe_request_from_json({{"model", "small"}, {"layout", {{"pp", 3}}}});
  EXPECT_TRUE(names(pp, "layout.pp")) << pp.error_text();
  auto batch = probe_request_from_json({{"layout", {{"dp", 2}}}, {"global_batch", 3}});
  EXPECT_TRUE(names(batch, "global_batch")) << "named as in the request, not training.global_batch: " << batch.error_text();
  auto seq = probe_request_from_json({{"model", "tiny"}, {"seq_len", 65}});
  EXPECT_TRUE(names(seq, "seq_len")) << seq.error_text();
  auto cp = probe_request_from_json({{"layout", {{"cp", 2}}}});
  EXPECT_TRUE(names(cp, "layout.cp")) << cp.error_text();
  auto world = probe_request_from_json({{"model", "small"}, {"layout", {{"tp", 4}, {"pp", 4}, {"dp", 8}}}, {"global_batch", 64}});
  EXPECT_TRUE(names(world, "layout")) << "128 rank threads are refused: " << world.error_text();
}

TEST(ProbeRequestJson, ModelObjectsAndTheirLimits) {
  auto custom = probe_request_from_json({{"model", {{"preset", "tiny"}, {"layers", 4}}}});
  ASSERT_TRUE(custom.ok()) << custom.error_text();
  EXPECT_EQ(custom->model.layers, 4);
  EXPECT_EQ(custom->model.hidden, 64);
  auto gated = probe_request_from_json({{"model", {{"preset", "tiny"}, {"gated_mlp", true}}}});
  EXPECT_TRUE(names(gated, "model.gated_mlp")) << gated.error_text();
  auto unknown = probe_request_from_json({{"model", "huge"}});
  EXPECT_TRUE(names(unknown, "model")) << unknown.error_text();
  auto bad_preset = probe_request_from_json({{"model", {{"preset", "huge"}}}});
  EXPECT_TRUE(names(bad_preset, "model.preset")) << bad_preset.error_text();
  EXPECT_FALSE(probe_request_from_json(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace plansight::probe
