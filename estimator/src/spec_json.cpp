// JSON for the four specs. Readers check types; ranges and cross-field rules are validate()'s,
// so one plan lists every violation at once.
// Units in JSON follow the presets' conventions (GiB, GB/s, TFLOP/s,
// µs) so one reader serves presets, plan files and the CLI's --json output.
#include <cmath>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/model_derivation.h"

namespace plansight::estimator {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

nlohmann::json to_json(const ModelSpec& m) {
  nlohmann::json out = {{"name", m.name},
          {"source", m.source},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"heads", m.heads},
          {"kv_heads", m.kv_heads},
          {"head_dim", m.effective_head_dim()},
          {"ffn_hidden", m.ffn_hidden},
          {"vocab", m.vocab},
          {"max_seq_len", m.max_seq_len},
          {"gated_mlp", m.gated_mlp},
          {"tied_embeddings", m.tied_embeddings},
          {"norm", to_string(m.norm)},
          {"norm_bias", m.norm_bias},
          {"norms_per_layer", m.norms_per_layer},
          {"position", to_string(m.position)},
          {"qkv_bias", m.qkv_bias},
          {"attention_out_bias", m.attention_out_bias},
          {"mlp_bias", m.mlp_bias},
          {"dropout", m.dropout}};
  // Fields of newer architectures appear only on models that use them (dense JSON unchanged).
  if (m.qk_norm) out["qk_norm"] = true;
  if (m.attention_sinks) out["attention_sinks"] = true;
  if (m.moe.enabled()) out["moe"] = to_json(m.moe);
  if (m.mla.enabled()) out["mla"] = to_json(m.mla);
  if (m.mtp_modules > 0) out["mtp_modules"] = m.mtp_modules;
  return out;
}

void read_model(JsonReader& in, ModelSpec& m) {
  in.reject_unknown({"preset", "name", "description", "source", "layers", "hidden", "heads", "kv_heads", "head_dim",
                     "ffn_hidden", "vocab", "max_seq_len", "gated_mlp", "tied_embeddings", "norm", "norm_bias",
                     "norms_per_layer", "position", "qkv_bias", "attention_out_bias", "mlp_bias", "dropout",
                     "qk_norm", "attention_sinks", "moe", "mla", "mtp_modules"});
  const ModelSpec base = m;
  in.read("name", m.name);
  in.read("source", m.source);
  in.read("layers", m.layers);
  in.read("hidden", m.hidden);
  in.read("heads", m.heads);
  in.read("kv_heads", m.kv_heads);
  in.read("head_dim", m.head_dim);
  in.read("ffn_hidden", m.ffn_hidden);
  in.read("vocab", m.vocab);
  in.read("max_seq_len", m.max_seq_len);
  in.read("gated_mlp", m.gated_mlp);
  in.read("tied_embeddings", m.tied_embeddings);
  in.read_enum("norm", m.norm);
  in.read("norm_bias", m.norm_bias);
  in.read("norms_per_layer", m.norms_per_layer);
  in.read_enum("position", m.position);
  in.read("qkv_bias", m.qkv_bias);
  in.read("attention_out_bias", m.attention_out_bias);
  in.read("mlp_bias", m.mlp_bias);
  in.read("dropout", m.dropout);
  in.read("qk_norm", m.qk_norm);
  in.read("attention_sinks", m.attention_sinks);
  in.read("mtp_modules", m.mtp_modules);
  if (auto moe = in.child("moe")) read_moe(*moe, m.moe);
  if (auto mla = in.child("mla")) read_mla(*mla, m.mla);
  // Fields not given that derive from given ones follow them (ffn_hidden with hidden, ...),
  // and an edited model is named after its base: one rule for files, flags and the GUI.
  m = derive_model(base, m,
                   {.name = in.has("name"), .source = in.has("source"), .kv_heads = in.has("kv_heads"),
                    .head_dim = in.has("head_dim"), .ffn_hidden = in.has("ffn_hidden")});
}

nlohmann::json to_json(const GpuSpec& g) {
  return {{"name", g.name},
          {"source", g.source},
          {"memory_gib", static_cast<double>(g.memory_bytes) / kGiB},
          {"hbm_bandwidth_gb_per_s", g.hbm_bandwidth_bytes_per_s / 1e9},
          {"peak_tflops",
           {{"fp32", g.peak_fp32_flops / 1e12},
            {"tf32", g.peak_tf32_flops / 1e12},
            {"fp16", g.peak_fp16_flops / 1e12},
            {"bf16", g.peak_bf16_flops / 1e12},
            {"fp8", g.peak_fp8_flops / 1e12}}},
          {"nvlink_gb_per_s", g.nvlink_bandwidth_bytes_per_s / 1e9},
          {"sm_count", g.sm_count},
          {"efficiency",
           {{"gemm_peak_fraction", g.efficiency.gemm_peak_fraction},
            {"flash_forward_fraction", g.efficiency.flash_forward_fraction},
            {"flash_backward_fraction", g.efficiency.flash_backward_fraction},
            {"nvlink_fraction", g.efficiency.nvlink_fraction},
            {"in_step_slowdown", g.efficiency.in_step_slowdown},
            {"source", g.efficiency.source}}}};
}

void read_gpu(JsonReader& in, GpuSpec& g) {
  in.reject_unknown({"preset", "name", "description", "source", "memory_gib", "hbm_bandwidth_gb_per_s", "peak_tflops",
                     "nvlink_gb_per_s", "sm_count", "efficiency"});
  in.read("name", g.name);
  in.read("source", g.source);
  double memory_gib = static_cast<double>(g.memory_bytes) / kGiB;
  in.read("memory_gib", memory_gib, 0.0, 1e6);
  g.memory_bytes = static_cast<std::int64_t>(std::llround(memory_gib * kGiB));
  double hbm = g.hbm_bandwidth_bytes_per_s / 1e9;
  in.read("hbm_bandwidth_gb_per_s", hbm, 0.0, 1e6);
  g.hbm_bandwidth_bytes_per_s = hbm * 1e9;
  double nvlink = g.nvlink_bandwidth_bytes_per_s / 1e9;
  in.read("nvlink_gb_per_s", nvlink, 0.0, 1e6);
  g.nvlink_bandwidth_bytes_per_s = nvlink * 1e9;
  in.read("sm_count", g.sm_count, 0);
  if (auto peaks = in.child("peak_tflops")) {
    peaks->reject_unknown({"fp32", "tf32", "fp16", "bf16", "fp8"});
    double* fields[] = {&g.peak_fp32_flops, &g.peak_tf32_flops, &g.peak_fp16_flops, &g.peak_bf16_flops, &g.peak_fp8_flops};
    const char* keys[] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
    for (int i = 0; i < 5; ++i) {
      double tflops = *fields[i] / 1e12;
      peaks->read(keys[i], tflops, 0.0, 1e6);
      *fields[i] = tflops * 1e12;
    }
  }
  if (auto e = in.child("efficiency")) {
    e->reject_unknown({"gemm_peak_fraction", "flash_forward_fraction", "flash_backward_fraction", "nvlink_fraction",
                       "in_step_slowdown", "source"});
    // Fractions of a peak: above 0 (a GPU that reaches nothing would take forever) and at most 1.
    e->read("gemm_peak_fraction", g.efficiency.gemm_peak_fraction, 0.01, 1.0);
    e->read("flash_forward_fraction", g.efficiency.flash_forward_fraction, 0.01, 1.0);
    e->read("flash_backward_fraction", g.efficiency.flash_backward_fraction, 0.01, 1.0);
    e->read("nvlink_fraction", g.efficiency.nvlink_fraction, 0.01, 1.0);
    // A factor on kernel time: 1 is a kernel as fast as alone; above 5 no published step is that slow.
    e->read("in_step_slowdown", g.efficiency.in_step_slowdown, 1.0, 5.0);
    e->read("source", g.efficiency.source);
  }
}

nlohmann::json to_json(const ClusterSpec& c) {
  return {{"system", c.name},
          {"source", c.source},
          {"gpu", to_json(c.gpu)},
          {"gpus", c.gpus},
          {"gpus_per_node", c.gpus_per_node},
          {"intra_node_gb_per_s", c.intra_node_bandwidth_bytes_per_s / 1e9},
          {"inter_node_gb_per_s", c.inter_node_bandwidth_bytes_per_s / 1e9},
          {"intra_node_latency_us", c.intra_node_latency_s * 1e6},
          {"inter_node_latency_us", c.inter_node_latency_s * 1e6},
          {"price_per_gpu_hour", c.price_per_gpu_hour},
          {"currency", c.currency},
          {"shared_processors", c.shared_processors},
          {"host_link_gb_per_s", c.host_link_bandwidth_bytes_per_s / 1e9},
          {"host_memory_gib", static_cast<double>(c.host_memory_bytes) / kGiB},
          {"host_memory_gb_per_s", c.host_memory_bandwidth_bytes_per_s / 1e9}};
}

// Reads the cluster's own numbers; "system" and "gpu" names are resolved by plan_from_json.
void read_cluster(JsonReader& in, ClusterSpec& c) {
  in.read("gpus", c.gpus);
  in.read("gpus_per_node", c.gpus_per_node);
  // Unit conversions only for keys present, and by division on read / multiplication on
  // write, so a plan written by to_json reads back bit for bit.
  auto scaled = [&](const char* key, double& out_si, double multiply, double divide, double max) {
    if (!in.has(key)) return;
    double v = 0;
    in.read(key, v, 0.0, max);
    out_si = v * multiply / divide;
  };
  scaled("intra_node_gb_per_s", c.intra_node_bandwidth_bytes_per_s, 1e9, 1, 1e6);
  scaled("inter_node_gb_per_s", c.inter_node_bandwidth_bytes_per_s, 1e9, 1, 1e6);
  scaled("intra_node_latency_us", c.intra_node_latency_s, 1, 1e6, 1e9);
  scaled("inter_node_latency_us", c.inter_node_latency_s, 1, 1e6, 1e9);
  in.read("price_per_gpu_hour", c.price_per_gpu_hour, 0.0, 1e9);
  in.read("currency", c.currency);
  in.read("shared_processors", c.shared_processors, std::int64_t{0}, std::int64_t{1} << 20);
  scaled("host_link_gb_per_s", c.host_link_bandwidth_bytes_per_s, 1e9, 1, 1e6);
  scaled("host_memory_gb_per_s", c.host_memory_bandwidth_bytes_per_s, 1e9, 1, 1e6);
  if (in.has("host_memory_gib")) {
    double gib = 0;
    in.read("host_memory_gib", gib, 0.0, 1e9);
    c.host_memory_bytes = static_cast<std::int64_t>(std::llround(gib * kGiB));
  }
}

nlohmann::json to_json(const LayoutSpec& l) {
  nlohmann::json out = {{"tp", l.tp},
          {"pp", l.pp},
          {"vpp", l.vpp},
          {"dp", l.dp},
          {"cp", l.cp},
          {"sequence_parallel", l.sequence_parallel},
          {"zero_stage", l.zero_stage},
          {"recompute", to_string(l.recompute)},
          {"schedule", to_string(l.schedule)},
          {"dp_overlap", l.dp_overlap},
          {"placement", to_string(l.placement)},
          {"stage_layers", l.stage_layers}};
  // Expert parallelism only when used, so dense plans keep their JSON.
  if (l.ep != 1) out["ep"] = l.ep;
  if (l.etp != 0) out["etp"] = l.etp;
  if (l.ep_overlap) out["ep_overlap"] = true;
  // TP communication overlap only when on, for the same reason.
  if (l.tp_overlap) out["tp_overlap"] = true;
  // Offloading only when on, for the same reason.
  if (l.offload_optimizer) out["offload_optimizer"] = true;
  if (l.offload_params) out["offload_params"] = true;
  if (l.offload_activations) out["offload_activations"] = true;
  return out;
}

void read_layout(JsonReader& in, LayoutSpec& l) {
  in.reject_unknown({"tp", "pp", "vpp", "dp", "cp", "sequence_parallel", "zero_stage", "fsdp", "recompute", "schedule",
                     "dp_overlap", "placement", "stage_layers", "ep", "etp", "ep_overlap", "tp_overlap",
                     "offload_optimizer", "offload_params", "offload_activations"});
  in.read("tp", l.tp);
  in.read("ep", l.ep);
  in.read("etp", l.etp);
  in.read("pp", l.pp);
  in.read("vpp", l.vpp);
  in.read("dp", l.dp);
  in.read("cp", l.cp);
  in.read("sequence_parallel", l.sequence_parallel);
  in.read("zero_stage", l.zero_stage);
  bool fsdp = false;
  in.read("fsdp", fsdp);
  if (fsdp) l.zero_stage = 3;  // FSDP FULL_SHARD partitions like ZeRO-3
  in.read_enum("recompute", l.recompute);
  in.read_enum("schedule", l.schedule);
  in.read("dp_overlap", l.dp_overlap);
  in.read("ep_overlap", l.ep_overlap);
  in.read("tp_overlap", l.tp_overlap);
  if (in.has("placement")) {
    std::string text;
    in.read("placement", text);
    if (!text.empty() && !parse_placement(text, l.placement)) {
      in.error("placement", "value \"" + text + "\" is not an order of tp, cp, dp and pp; valid: e.g. tp-cp-dp-pp (innermost first)");
    }
  }
  in.read("stage_layers", l.stage_layers, 0);
  in.read("offload_optimizer", l.offload_optimizer);
  in.read("offload_params", l.offload_params);
  in.read("offload_activations", l.offload_activations);
}

nlohmann::json to_json(const TrainingSpec& t) {
  return {{"micro_batch", t.micro_batch},
          {"global_batch", t.global_batch},
          {"seq_len", t.seq_len},
          {"tokens", t.tokens},
          {"precision", to_string(t.precision)},
          {"grad_precision", to_string(t.grad_precision)},
          {"master_precision", to_string(t.master_precision)},
          {"optimizer", to_string(t.optimizer)},
          {"attention", to_string(t.attention)},
          {"causal_attention_flops", t.causal_attention_flops},
          {"achieved_tflops", t.achieved_tflops},
          {"mfu", t.mfu},
          {"reserve_gib", t.reserve_fixed_bytes / kGiB},
          {"fragmentation", t.fragmentation},
          {"dp_bucket_mib", t.dp_bucket_bytes / kMiB},
          {"zero3_prefetch", t.zero3_prefetch},
          {"loss_in_place", t.loss_in_place},
          {"vocab_divisible_by", t.vocab_divisible_by}};
}

void read_training(JsonReader& in, TrainingSpec& t) {
  in.reject_unknown({"micro_batch", "global_batch", "seq_len", "tokens", "precision", "grad_precision",
                     "master_precision", "optimizer", "attention", "causal_attention_flops", "achieved_tflops", "mfu",
                     "reserve_gib", "fragmentation", "dp_bucket_mib", "zero3_prefetch", "loss_in_place",
                     "vocab_divisible_by"});
  in.read("micro_batch", t.micro_batch);
  in.read("global_batch", t.global_batch);
  in.read("seq_len", t.seq_len);
  in.read("tokens", t.tokens, 0.0);
  in.read_enum("precision", t.precision);
  if (in.has("precision") && !in.has("grad_precision")) {
    t.grad_precision = gradient_precision_for(t.precision);
  }
  in.read_enum("grad_precision", t.grad_precision);
  in.read_enum("master_precision", t.master_precision);
  in.read_enum("optimizer", t.optimizer);
  in.read_enum("attention", t.attention);
  in.read("causal_attention_flops", t.causal_attention_flops);
  in.read("achieved_tflops", t.achieved_tflops, 0.0);
  in.read("mfu", t.mfu);
  double reserve_gib = t.reserve_fixed_bytes / kGiB;
  in.read("reserve_gib", reserve_gib, 0.0, 1e6);
  t.reserve_fixed_bytes = reserve_gib * kGiB;
  in.read("fragmentation", t.fragmentation, 0.0, 0.99);
  double bucket_mib = t.dp_bucket_bytes / kMiB;
  in.read("dp_bucket_mib", bucket_mib, 0.0, 1e9);
  t.dp_bucket_bytes = bucket_mib * kMiB;
  in.read("zero3_prefetch", t.zero3_prefetch);
  in.read("loss_in_place", t.loss_in_place);
  in.read("vocab_divisible_by", t.vocab_divisible_by);
}

}  // namespace plansight::estimator
