// The plan's editable fields (see plan_fields.h). Ranges are what an editor offers (from 0, so
// that a form can take a value validate() then explains); the rules a value must obey (tp >= 1,
// tp divides heads, ...) are validate()'s. Labels and help name the quantity
// and, where one exists, the rule that fills the field when a plan leaves it out.
#include "plansight/estimator/plan_fields.h"

#include <optional>
#include <sstream>

#include "plansight/estimator/enums.h"
#include "plansight/estimator/layout_spec.h"

namespace plansight::estimator {
namespace {

constexpr double kCount = 2e9;   // whole-number fields: what a 32-bit editor holds
constexpr double kDegree = 1 << 20;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using K = FieldKind;

// Accessors: the plan member behind a field, in the plan file's unit (`scale` plan units per
// file unit: 1e9 bytes/s per GB/s). ACCESSORS expands to the {get, set} pair of a table entry:
// `read` is the file value of plan `p`; set() takes JSON `v` when `valid` holds, by `write`.
#define ACCESSORS(read, valid, write)                                       \
  [](const Plan& p) -> nlohmann::json { return read; },                     \
  [](Plan& p, const nlohmann::json& v) {                                    \
    if (!(valid)) return false;                                             \
    write;                                                                  \
    return true;                                                            \
  }
#define INT(o, m) ACCESSORS(p.o.m, v.is_number_integer(), p.o.m = v.get<std::int64_t>())
#define REAL(o, m, scale) ACCESSORS(p.o.m / (scale), v.is_number(), p.o.m = v.get<double>() * (scale))
#define GIB_INT(o, m) \
  ACCESSORS(static_cast<double>(p.o.m) / kGiB, v.is_number(), p.o.m = static_cast<std::int64_t>(v.get<double>() * kGiB))
#define FLAG(o, m) ACCESSORS(p.o.m, v.is_boolean(), p.o.m = v.get<bool>())
#define TEXT(o, m) ACCESSORS(p.o.m, v.is_string(), p.o.m = v.get<std::string>())
#define CHOICE(o, m, Enum)                                                                   \
  ACCESSORS(std::string(to_string(p.o.m)), v.is_string() && parse_enum<Enum>(v.get<std::string>()), \
            p.o.m = *parse_enum<Enum>(v.get<std::string>()))
#define PLACEMENT                                                                        \
  [](const Plan& p) -> nlohmann::json { return to_string(p.layout.placement); },         \
  [](Plan& p, const nlohmann::json& v) { return v.is_string() && parse_placement(v.get<std::string>(), p.layout.placement); }

const std::vector<PlanField> kFields = {
    // Model: overrides of the chosen model (a preset, a config.json or --params); the MLP width
    // follows a typed hidden size unless it is typed too (estimator/model_derivation.h).
    {"model.layers", "--layers", K::integer, "Layers", "", "transformer layers", 0, kDegree, "", "48", INT(model, layers)},
    {"model.hidden", "--hidden", K::integer, "Hidden size", "", "model width d_model; the MLP width follows it unless given", 0, kCount, "", "6144", INT(model, hidden)},
    {"model.heads", "--heads", K::integer, "Attention heads", "", "query heads", 0, kCount, "", "48", INT(model, heads)},
    {"model.kv_heads", "--kv-heads", K::integer, "KV heads", "", "key/value heads (GQA; = heads for multi-head attention)", 0, kCount, "", "8", INT(model, kv_heads)},
    {"model.ffn_hidden", "--ffn-hidden", K::integer, "FFN hidden", "", "MLP inner width", 0, kCount, "", "32768", INT(model, ffn_hidden)},
    {"model.vocab", "--vocab", K::integer, "Vocabulary", "tokens", "vocabulary size before padding", 0, kCount, "", "51200", INT(model, vocab)},
    {"model.moe.experts", "--experts", K::integer, "Routed experts", "", "routed experts per MoE layer; 0: a dense model", 0, kDegree, "", "128", INT(model.moe, experts)},
    {"model.moe.top_k", "--top-k", K::integer, "Experts per token (top-k)", "", "routed experts each token goes to", 0, kDegree, "", "6", INT(model.moe, top_k)},
    {"model.moe.expert_ffn_hidden", "--expert-ffn-hidden", K::integer, "Expert FFN hidden", "", "inner width of one routed expert", 0, kCount, "", "1536", INT(model.moe, expert_ffn_hidden)},
    {"model.moe.shared_experts", "--shared-experts", K::integer, "Shared experts", "", "experts every token goes through", 0, 1024, "", "2", INT(model.moe, shared_experts)},
    {"model.moe.shared_expert_ffn_hidden", "--shared-expert-ffn-hidden", K::integer, "Shared expert FFN hidden", "", "inner width of one shared expert", 0, kCount, "", "4096", INT(model.moe, shared_expert_ffn_hidden)},
    {"model.moe.first_dense_layers", "--first-dense-layers", K::integer, "First dense layers", "", "leading layers with a dense MLP", 0, kDegree, "", "1", INT(model.moe, first_dense_layers)},
    {"model.moe.layer_interval", "--moe-layer-interval", K::integer, "MoE every n-th layer", "", "1: every layer after the dense ones is MoE", 0, kDegree, "", "2", INT(model.moe, layer_interval)},
    {"model.moe.capacity_factor", "--capacity-factor", K::number, "Capacity factor", "", "tokens an expert takes, x the mean; 0: dropless", 0, 1e6, "", "1.25", REAL(model.moe, capacity_factor, 1)},
    {"model.moe.load_imbalance", "--load-imbalance", K::number, "Load imbalance (max/mean)", "", "tokens of the busiest expert over the mean", 0, 1e6, "", "1.2", REAL(model.moe, load_imbalance, 1)},
    {"model.mla.q_lora_rank", "--q-lora-rank", K::integer, "MLA query rank", "", "multi-head latent attention: query compression rank", 0, kCount, "", "1024", INT(model.mla, q_lora_rank)},
    {"model.mla.kv_lora_rank", "--kv-lora-rank", K::integer, "MLA KV rank", "", "multi-head latent attention: key/value compression rank; 0: no MLA", 0, kCount, "", "256", INT(model.mla, kv_lora_rank)},
    {"model.mla.qk_nope_head_dim", "--qk-nope-head-dim", K::integer, "MLA QK head dim (no RoPE)", "", "per-head query/key width without rotary embedding", 0, kCount, "", "64", INT(model.mla, qk_nope_head_dim)},
    {"model.mla.qk_rope_head_dim", "--qk-rope-head-dim", K::integer, "MLA QK head dim (RoPE)", "", "per-head query/key width with rotary embedding", 0, kCount, "", "32", INT(model.mla, qk_rope_head_dim)},
    {"model.mla.v_head_dim", "--v-head-dim", K::integer, "MLA V head dim", "", "per-head value width", 0, kCount, "", "64", INT(model.mla, v_head_dim)},
    {"model.mtp_modules", "--mtp-modules", K::integer, "MTP modules", "", "multi-token prediction modules (DeepSeek-V3)", 0, 16, "", "2", INT(model, mtp_modules)},
    // Cluster.
    {"cluster.gpus", "--gpus", K::integer, "GPUs", "GPUs", "GPUs in the job; the layout stays when tp x pp x cp divides it", 0, kCount, "", "512", INT(cluster, gpus)},
    {"cluster.gpus_per_node", "--gpus-per-node", K::integer, "GPUs per node", "GPUs", "GPUs joined by the node's fast link", 0, 1024, "", "4", INT(cluster, gpus_per_node)},
    {"cluster.price_per_gpu_hour", "--price-per-gpu-hour", K::number, "Price per GPU-hour", "currency", "what one GPU-hour costs; 0: unknown", 0, 1e6, "", "2.5", REAL(cluster, price_per_gpu_hour, 1)},
    {"cluster.currency", "--currency", K::text, "Currency", "", "the price's currency code (USD, EUR, ...)", 0, 0, "", "\"EUR\"", TEXT(cluster, currency)},
    {"cluster.host_link_gb_per_s", "--host-link-gb-per-s", K::number, "Host link per GPU", "GB/s", "GPU to host memory, one direction (offloading)", 0, 1e4, "", "64", REAL(cluster, host_link_bandwidth_bytes_per_s, 1e9)},
    {"cluster.host_memory_gib", "--host-memory-gib", K::number, "Host memory per node", "GiB", "CPU memory of one node (offloading)", 0, 1e9, "", "2048", GIB_INT(cluster, host_memory_bytes)},
    {"cluster.host_memory_gb_per_s", "--host-memory-gb-per-s", K::number, "Host memory bandwidth per node", "GB/s", "CPU DRAM bandwidth of one node (CPU optimizer step)", 0, 1e6, "", "800", REAL(cluster, host_memory_bandwidth_bytes_per_s, 1e9)},
    // Layout.
    {"layout.tp", "--tp", K::integer, "Tensor parallel (TP)", "GPUs", "tensor-parallel size (Megatron)", 0, kDegree, "", "4", INT(layout, tp)},
    {"layout.pp", "--pp", K::integer, "Pipeline parallel (PP)", "GPUs", "pipeline stages", 0, kDegree, "", "4", INT(layout, pp)},
    {"layout.vpp", "--vpp", K::integer, "Virtual stages (VPP)", "", "model chunks per pipeline stage; above 1 the schedule is interleaved (dualpipev: 2)", 0, kDegree, "", "2", INT(layout, vpp)},
    {"layout.dp", "--dp", K::integer, "Data parallel (DP)", "GPUs", "data-parallel size; 0: the GPUs left over by tp x pp x cp", 0, kDegree, "", "8", INT(layout, dp)},
    {"layout.cp", "--cp", K::integer, "Context parallel (CP)", "GPUs", "context-parallel size (sequence split across GPUs)", 0, kDegree, "", "2", INT(layout, cp)},
    {"layout.ep", "--ep", K::integer, "Expert parallel (EP)", "GPUs", "expert-parallel size of MoE layers", 0, kDegree, "", "8", INT(layout, ep)},
    {"layout.etp", "--etp", K::integer, "Expert tensor parallel (ETP)", "GPUs", "tensor-parallel size inside an expert; 0: = tp", 0, kDegree, "", "1", INT(layout, etp)},
    {"layout.zero_stage", "--zero", K::integer, "ZeRO stage", "", "0 none, 1 optimizer states, 2 + gradients, 3 + parameters sharded over DP", 0, 3, "", "1", INT(layout, zero_stage)},
    {"layout.sequence_parallel", "--sequence-parallel", K::toggle, "sequence parallel", "", "shard norms and dropout activations over TP (Korthikanti et al.)", 0, 0, "", "true", FLAG(layout, sequence_parallel)},
    {"layout.recompute", "--recompute", K::choice, "Recomputation", "", "activation recomputation", 0, 0, "none|selective|full", "\"selective\"", CHOICE(layout, recompute, Recompute)},
    {"layout.schedule", "--schedule", K::choice, "Schedule", "", "pipeline schedule", 0, 0, "gpipe|1f1b|interleaved|zb-h1|dualpipev|dualpipe", "\"gpipe\"", CHOICE(layout, schedule, PipelineSchedule)},
    {"layout.dp_overlap", "--no-dp-overlap", K::toggle_off, "overlap DP communication", "", "reduce gradients after the backward pass instead of during it", 0, 0, "", "false", FLAG(layout, dp_overlap)},
    {"layout.ep_overlap", "--ep-overlap", K::toggle, "overlap expert all-to-all", "", "MoE: hide a micro-batch's dispatch/combine under an adjacent micro-batch's compute (Megatron-Core's combined 1F1B)", 0, 0, "", "true", FLAG(layout, ep_overlap)},
    {"layout.tp_overlap", "--tp-overlap", K::toggle, "overlap TP communication", "", "hide TP all-gathers/reduce-scatters under the linear GEMMs (Megatron-Core's --tp-comm-overlap; needs sequence parallelism)", 0, 0, "", "true", FLAG(layout, tp_overlap)},
    {"layout.placement", "--placement", K::text, "Rank placement", "", "rank order, innermost first: tp-cp-dp-pp", 0, 0, "", "\"tp-dp-cp-pp\"", PLACEMENT},
    {"layout.offload_optimizer", "--offload-optimizer", K::toggle, "offload optimizer to CPU", "", "ZeRO-Offload: optimizer states and step on the host (ZeRO >= 1)", 0, 0, "", "true", FLAG(layout, offload_optimizer)},
    {"layout.offload_params", "--offload-params", K::toggle, "offload parameters to CPU", "", "ZeRO-Infinity: parameters on the host (ZeRO 3)", 0, 0, "", "true", FLAG(layout, offload_params)},
    {"layout.offload_activations", "--offload-activations", K::toggle, "offload activations to CPU", "", "stored activations on the host", 0, 0, "", "true", FLAG(layout, offload_activations)},
    // Training.
    {"training.micro_batch", "--micro-batch", K::integer, "Micro-batch", "sequences", "sequences per micro-batch per GPU", 0, kCount, "", "2", INT(training, micro_batch)},
    {"training.global_batch", "--global-batch", K::integer, "Global batch", "sequences", "sequences per iteration", 0, kCount, "", "768", INT(training, global_batch)},
    {"training.seq_len", "--seq-len", K::integer, "Sequence length", "tokens", "tokens per sequence", 0, kCount, "", "4096", INT(training, seq_len)},
    {"training.tokens", "--tokens", K::number, "Token budget", "tokens", "training tokens, for days and cost; 0: none", 0, 1e18, "", "1e12", REAL(training, tokens, 1)},
    {"training.precision", "--precision", K::choice, "Precision", "", "compute precision", 0, 0, "fp32|tf32|fp16|bf16|fp8", "\"bf16\"", CHOICE(training, precision, Precision)},
    {"training.grad_precision", "--grad-precision", K::choice, "Gradient precision", "", "gradients and their reduction; default: the compute precision (bf16 for fp8)", 0, 0, "fp32|tf32|fp16|bf16|fp8", "\"fp32\"", CHOICE(training, grad_precision, Precision)},
    {"training.master_precision", "--master-precision", K::choice, "Master weights", "", "an fp32 master copy of the weights", 0, 0, "none|fp32", "\"none\"", CHOICE(training, master_precision, MasterPrecision)},
    {"training.optimizer", "--optimizer", K::choice, "Optimizer", "", "optimizer and its states", 0, 0, "adam|adam8bit|sgd-momentum|sgd", "\"sgd\"", CHOICE(training, optimizer, Optimizer)},
    {"training.attention", "--attention", K::choice, "Attention kernel", "", "standard keeps the score matrix; flash does not", 0, 0, "standard|flash", "\"flash\"", CHOICE(training, attention, AttentionKernel)},
    {"training.causal_attention_flops", "--causal-flops", K::toggle, "count causal attention FLOPs", "", "count half the attention score FLOPs (causal mask)", 0, 0, "", "true", FLAG(training, causal_attention_flops)},
    {"training.achieved_tflops", "--achieved-tflops", K::number, "Achieved TFLOP/s", "TFLOP/s", "per GPU, instead of the time model; 0: predicted", 0, 1e6, "", "140", REAL(training, achieved_tflops, 1)},
    {"training.mfu", "--mfu", K::number, "MFU", "", "model FLOPs utilisation instead of the time model; 0: predicted", 0, 1, "", "0.4", REAL(training, mfu, 1)},
    {"training.reserve_gib", "--reserve-gib", K::number, "Framework reserve", "GiB", "memory the framework and CUDA context hold per GPU", 0, 1e6, "", "2", REAL(training, reserve_fixed_bytes, kGiB)},
    {"training.fragmentation", "--fragmentation", K::number, "Fragmentation", "", "share of allocated memory lost to fragmentation", 0, 0.99, "", "0.1", REAL(training, fragmentation, 1)},
    {"training.vocab_divisible_by", "--vocab-divisible-by", K::integer, "Pad vocabulary to (× TP)", "", "pad the vocabulary to a multiple of this x tp (Megatron's 128; 1: unpadded)", 0, kDegree, "", "64", INT(training, vocab_divisible_by)},
};

#undef ACCESSORS
#undef INT
#undef REAL
#undef GIB_INT
#undef FLAG
#undef TEXT
#undef CHOICE
#undef PLACEMENT

}  // namespace

std::string_view PlanField::section() const {
  return path.substr(0, path.find('.'));
}

std::string_view PlanField::key() const { return path.substr(path.rfind('.') + 1); }

std::vector<std::string> PlanField::path_parts() const {
  std::vector<std::string> parts;
  std::string_view rest = path;
  for (std::size_t dot; (dot = rest.find('.')) != std::string_view::npos; rest.remove_prefix(dot + 1)) {
    parts.emplace_back(rest.substr(0, dot));
  }
  parts.emplace_back(rest);
  return parts;
}

std::string PlanField::value_hint() const {
  switch (kind) {
    case FieldKind::integer: return "N";
    case FieldKind::number: return "X";
    case FieldKind::choice: return std::string(choices);
    case FieldKind::text: return "TEXT";
    case FieldKind::toggle:
    case FieldKind::toggle_off: return "";
  }
  return "";
}

const std::vector<PlanField>& plan_fields() { return kFields; }

const PlanField* find_plan_field(std::string_view path_or_flag) {
  for (const auto& f : kFields) {
    if (f.path == path_or_flag || f.flag == path_or_flag) return &f;
  }
  return nullptr;
}

nlohmann::json field_value(const nlohmann::json& plan_json, const PlanField& field) {
  const nlohmann::json* at = &plan_json;
  for (const auto& part : field.path_parts()) {
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
  }
  return *at;
}

void set_field_value(nlohmann::json& plan_json, const PlanField& field, nlohmann::json value) {
  nlohmann::json* at = &plan_json;
  for (const auto& part : field.path_parts()) at = &(*at)[part];
  *at = std::move(value);
}

std::string plan_fields_help() {
  std::ostringstream out;
  std::string_view section;
  for (const auto& f : kFields) {
    if (f.section() != section) {
      section = f.section();
      out << "  " << section << ":\n";
    }
    std::string left = "    " + std::string(f.flag);
    if (const std::string hint = f.value_hint(); !hint.empty()) left += " " + hint;
    if (left.size() < 34) left.resize(34, ' ');
    else left += "  ";
    out << left << f.help;
    if (!f.unit.empty() && f.unit != "currency") out << " [" << f.unit << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace plansight::estimator
