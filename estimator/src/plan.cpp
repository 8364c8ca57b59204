// Plan helpers and validate(): every violated rule at once, each naming the field, the value
// and what would be valid. Rules come from what Megatron-LM/DeepSpeed accept (cited inline).
#include "plansight/estimator/plan.h"

#include <algorithm>
#include <string>

#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "moe_validation.h"
#include "offload_validation.h"

namespace plansight::estimator {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

class Rules {
 public:
  explicit Rules(std::vector<Diagnostic>& out) : out_(out) {}
  void error(const char* field, std::string message) { out_.push_back(make_error(field, std::move(message))); }
  void warning(const char* field, std::string message) { out_.push_back(make_warning(field, std::move(message))); }
  // A count that must lie in [min, max]; returns whether it does. The upper bounds are far
  // beyond any real plan and keep every product of counts inside int64.
  bool at_least(const char* field, std::int64_t value, std::int64_t min, std::int64_t max = kMaxCount) {
    if (value >= min && value <= max) return true;
    error(field, "value " + str(value) + " is invalid; valid: a whole number from " + str(min) + " to " + str(max));
    return false;
  }
  static constexpr std::int64_t kMaxCount = std::int64_t{1} << 30;

 private:
  std::vector<Diagnostic>& out_;
};

// Parallel degrees up to 2^20 each: products of three stay below 2^60.
constexpr std::int64_t kMaxDegree = std::int64_t{1} << 20;

bool layout_counts_in_range(const LayoutSpec& l) {
  auto in = [](std::int64_t v, std::int64_t lo) { return v >= lo && v <= kMaxDegree; };
  return in(l.tp, 1) && in(l.pp, 1) && in(l.vpp, 1) && in(l.cp, 1) && in(l.dp, 0);
}

std::string divisors_up_to(std::int64_t n, std::int64_t limit) {
  std::string out;
  for (std::int64_t d = 1; d <= n && d <= limit; ++d) {
    if (n % d == 0) out += (out.empty() ? "" : ", ") + str(d);
  }
  return out;
}

void validate_model(const ModelSpec& m, Rules& r) {
  bool dims = r.at_least("model.layers", m.layers, 1, 1 << 20);
  dims &= r.at_least("model.hidden", m.hidden, 1);
  dims &= r.at_least("model.heads", m.heads, 1);
  dims &= r.at_least("model.kv_heads", m.kv_heads, 1);
  r.at_least("model.ffn_hidden", m.ffn_hidden, 1);
  r.at_least("model.vocab", m.vocab, 1);
  r.at_least("model.max_seq_len", m.max_seq_len, 1);
  if (m.head_dim < 0) r.error("model.head_dim", "value " + str(m.head_dim) + " is invalid; valid: 0 (hidden / heads) or a positive size");
  if (m.norms_per_layer < 1 || m.norms_per_layer > 2) {
    r.error("model.norms_per_layer", "value " + str(m.norms_per_layer) + " is invalid; valid: 1 or 2");
  }
  if (!dims) return;
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    r.error("model.kv_heads", "value " + str(m.kv_heads) + " must divide heads (" + str(m.heads) +
                                  "); valid: " + divisors_up_to(m.heads, m.heads));
  }
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    r.error("model.heads", "value " + str(m.heads) + " does not divide hidden (" + str(m.hidden) +
                               "); give model.head_dim or use heads that divide hidden");
  }
}

void validate_cluster(const Plan& p, Rules& r) {
  const auto& c = p.cluster;
  r.at_least("cluster.gpus", c.gpus, 1, kMaxDegree * 16);
  r.at_least("cluster.gpus_per_node", c.gpus_per_node, 1, 1 << 16);
  if (c.gpu.memory_bytes <= 0) r.error("cluster.gpu.memory_gib", "the GPU's memory must be positive");
  if (c.price_per_gpu_hour < 0) r.error("cluster.price_per_gpu_hour", "value must be >= 0");
  if (c.currency.empty() || c.currency.size() > 8 || c.currency.find_first_of(" \t\n") != std::string::npos) {
    r.error("cluster.currency", "value \"" + c.currency + "\" is invalid; valid: a currency code of 1 to 8 characters, e.g. USD or EUR");
  }
  if (c.gpu.peak_flops(p.training.precision) <= 0) {
    std::string valid;
    for (Precision q : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
      if (c.gpu.peak_flops(q) > 0) valid += (valid.empty() ? "" : "|") + std::string(to_string(q));
    }
    r.error("training.precision", "the " + (c.gpu.name.empty() ? std::string("GPU") : c.gpu.name) + " has no " +
                                      std::string(to_string(p.training.precision)) + " support; valid: " + valid);
  }
}

void validate_layout(const Plan& p, Rules& r) {
  const auto& l = p.layout;
  const auto& m = p.model;
  if (!layout_counts_in_range(l)) {
    r.at_least("layout.tp", l.tp, 1, kMaxDegree);
    r.at_least("layout.pp", l.pp, 1, kMaxDegree);
    r.at_least("layout.vpp", l.vpp, 1, kMaxDegree);
    r.at_least("layout.cp", l.cp, 1, kMaxDegree);
    r.at_least("layout.dp", l.dp, 0, kMaxDegree);
  }
  const bool ok = layout_counts_in_range(l);
  if (l.zero_stage < 0 || l.zero_stage > 3) {
    r.error("layout.zero_stage", "value " + str(l.zero_stage) + " is invalid; valid: 0, 1, 2 or 3");
  }
  if (!ok) return;

  // Megatron-LM splits heads, KV groups and the MLP over TP ranks (arguments.py asserts).
  if (m.heads > 0 && m.heads % l.tp != 0) {
    r.error("layout.tp", "value " + str(l.tp) + " must divide model.heads (" + str(m.heads) +
                             "); valid: " + divisors_up_to(m.heads, 1024));
  }
  if (m.kv_heads > 0 && m.kv_heads % l.tp != 0) {
    r.error("layout.tp", "value " + str(l.tp) + " must divide model.kv_heads (" + str(m.kv_heads) +
                             "); valid: " + divisors_up_to(m.kv_heads, 1024));
  }
  if (m.ffn_hidden > 0 && m.ffn_hidden % l.tp != 0) {
    r.error("layout.tp", "value " + str(l.tp) + " must divide model.ffn_hidden (" + str(m.ffn_hidden) + ")");
  }

  // DualPipe's two copies each hold every layer over pp stages.
  const bool two_copies = two_pipelines(l.schedule);
  const std::int64_t chunks = two_copies ? l.pp : l.pp * l.vpp;
  if (!l.stage_layers.empty()) {
    std::int64_t sum = 0;
    for (auto n : l.stage_layers) sum += n;
    if (static_cast<std::int64_t>(l.stage_layers.size()) != chunks) {
      r.error("layout.stage_layers", "has " + str(static_cast<std::int64_t>(l.stage_layers.size())) + " entries; valid: " +
                                         (two_copies ? "pp = " + str(chunks) + " entries (one model copy's stages; the other mirrors them)"
                                                     : "pp * vpp = " + str(chunks) + " entries"));
    } else if (sum != m.layers) {
      r.error("layout.stage_layers", "sums to " + str(sum) + " layers; valid: model.layers = " + str(m.layers));
    }
  } else if (two_copies && m.layers > 0 && m.layers % chunks != 0) {
    r.error("layout.pp", "pp = " + str(chunks) + " must divide model.layers (" + str(m.layers) +
                             ") with schedule dualpipe (each model copy spans the pp stages), or give "
                             "layout.stage_layers (pp entries: one copy's split); valid pp: " +
                             divisors_up_to(m.layers, 4096));
  } else if (m.layers > 0 && m.layers % chunks != 0) {
    r.error("layout.pp", "pp * vpp = " + str(chunks) + " must divide model.layers (" + str(m.layers) +
                             "), or give layout.stage_layers; valid pp*vpp: " + divisors_up_to(m.layers, 4096));
  }

  if (l.schedule == PipelineSchedule::interleaved) {
    if (l.vpp < 2) r.error("layout.vpp", "value " + str(l.vpp) + " with schedule interleaved; valid: vpp >= 2");
    if (l.pp < 2) r.error("layout.pp", "value " + str(l.pp) + " with schedule interleaved; valid: pp >= 2");
  } else if (l.schedule == PipelineSchedule::dualpipev) {
    // Two chunks per rank, one each way of the V (pipeline_schedule.h).
    if (l.vpp != 2) r.error("layout.vpp", "value " + str(l.vpp) + " with schedule dualpipev; valid: vpp = 2");
  } else if (l.schedule == PipelineSchedule::dualpipe) {
    // One stage of each model copy per rank, half the ranks feeding each direction.
    if (l.vpp != 2) r.error("layout.vpp", "value " + str(l.vpp) + " with schedule dualpipe; valid: vpp = 2");
    if (l.pp % 2 != 0) r.error("layout.pp", "value " + str(l.pp) + " with schedule dualpipe; valid: an even pp");
  } else if (l.vpp > 1) {
    r.error("layout.vpp", "value " + str(l.vpp) + " needs schedule interleaved (schedule is " +
                              std::string(to_string(l.schedule)) + "); valid: vpp = 1 or schedule interleaved");
  }

  const std::int64_t model_parallel = l.tp * l.pp * l.cp;
  if (p.cluster.gpus >= 1) {
    if (l.dp > 0 && model_parallel * l.dp != p.cluster.gpus) {
      r.error("layout.dp", "tp*pp*dp*cp = " + str(model_parallel * l.dp) + " but cluster.gpus = " +
                               str(p.cluster.gpus) + "; valid dp: gpus / (tp*pp*cp)" +
                               (p.cluster.gpus % model_parallel == 0 ? " = " + str(p.cluster.gpus / model_parallel) : ""));
    } else if (l.dp == 0 && p.cluster.gpus % model_parallel != 0) {
      r.error("cluster.gpus", "value " + str(p.cluster.gpus) + " is not a multiple of tp*pp*cp = " +
                                  str(model_parallel) + "; valid: a multiple of " + str(model_parallel));
    }
  }

  if (l.cp > 1) {
    // Megatron-LM splits the sequence into 2*cp chunks for load-balanced causal attention.
    if (p.training.seq_len % (2 * l.cp) != 0) {
      r.error("layout.cp", "value " + str(l.cp) + ": training.seq_len (" + str(p.training.seq_len) +
                               ") must be divisible by 2*cp = " + str(2 * l.cp));
    }
    if (p.training.attention != AttentionKernel::flash) {
      r.warning("layout.cp", "context parallelism is implemented on flash attention kernels; attention is standard");
    }
  }
  if (l.sequence_parallel && l.tp == 1) {
    r.warning("layout.sequence_parallel", "has no effect with tp = 1");
  }
  // Megatron-LM refuses --tp-comm-overlap without --sequence-parallel (arguments.py): the
  // overlapped collectives are sequence parallelism's all-gathers and reduce-scatters.
  if (l.tp_overlap && l.tp == 1) {
    r.error("layout.tp_overlap", "true with tp = 1: there is no tensor-parallel communication to overlap; valid: tp > 1");
  } else if (l.tp_overlap && !l.sequence_parallel) {
    r.error("layout.tp_overlap", "true without sequence_parallel: the overlap splits sequence parallelism's "
                                 "all-gathers and reduce-scatters; valid: sequence_parallel true");
  }
  if ((l.zero_stage == 2 || l.zero_stage == 3) && l.pp > 1) {
    r.warning("layout.zero_stage", "value " + str(l.zero_stage) +
                                       " with pp > 1: DeepSpeed does not support ZeRO-2/3 with pipeline parallelism "
                                       "(Megatron's distributed optimizer is ZeRO-1; FSDP2 + PP exists in torchtitan)");
  }
}

void validate_training(const Plan& p, Rules& r) {
  const auto& t = p.training;
  bool ok = r.at_least("training.micro_batch", t.micro_batch, 1);
  ok &= r.at_least("training.global_batch", t.global_batch, 1, std::int64_t{1} << 40);
  r.at_least("training.seq_len", t.seq_len, 1);
  // Megatron-LM's --make-vocab-size-divisible-by; 1 is no padding beyond TP.
  r.at_least("training.vocab_divisible_by", t.vocab_divisible_by, 1, std::int64_t{1} << 20);
  if (t.tokens < 0) r.error("training.tokens", "value must be >= 0");
  if (t.achieved_tflops < 0) r.error("training.achieved_tflops", "value must be >= 0");
  if (t.mfu < 0 || t.mfu > 1) r.error("training.mfu", "value " + describe_number(t.mfu) + " is invalid; valid: 0 < mfu <= 1");
  if (t.achieved_tflops > 0 && t.mfu > 0) {
    r.error("training.mfu", "give either training.achieved_tflops or training.mfu, not both");
  }
  const double peak_tflops = p.cluster.gpu.peak_flops(t.precision) / 1e12;
  if (t.achieved_tflops > 0 && peak_tflops > 0 && t.achieved_tflops > peak_tflops) {
    r.error("training.achieved_tflops", "value " + describe_number(t.achieved_tflops) + " exceeds the GPU's " +
                                            std::string(to_string(t.precision)) + " peak of " +
                                            describe_number(peak_tflops) + " TFLOP/s");
  }
  if (t.fragmentation < 0 || t.fragmentation >= 1) r.error("training.fragmentation", "valid: 0 <= fragmentation < 1");
  if (t.reserve_fixed_bytes < 0) r.error("training.reserve_gib", "value must be >= 0");
  if (t.dp_bucket_bytes < 0) r.error("training.dp_bucket_mib", "value must be >= 0");
  if (p.model.position == PositionKind::learned && p.model.max_seq_len > 0 && t.seq_len > p.model.max_seq_len) {
    r.error("training.seq_len", "value " + str(t.seq_len) + " exceeds the model's learned positions (" +
                                    str(p.model.max_seq_len) + "); valid: <= " + str(p.model.max_seq_len));
  } else if (p.model.max_seq_len > 0 && t.seq_len > p.model.max_seq_len) {
    r.warning("training.seq_len", "value " + str(t.seq_len) + " is longer than the model's max_seq_len (" +
                                      str(p.model.max_seq_len) + ")");
  }
  if ((t.precision == Precision::fp16) && t.master_precision == MasterPrecision::none) {
    r.warning("training.master_precision", "fp16 training without fp32 master weights loses small updates");
  }
  if (!ok || !layout_counts_in_range(p.layout)) return;
  const std::int64_t dp = p.dp();
  if (dp >= 1 && t.global_batch % (t.micro_batch * dp) != 0) {
    // The multiples of micro_batch * dp on either side; the nearer one is offered (both on a tie).
    const std::int64_t unit = t.micro_batch * dp;
    const std::int64_t above = (t.global_batch / unit + 1) * unit;
    const std::int64_t below = t.global_batch / unit * unit;
    std::string nearest = str(above);
    if (below >= unit && t.global_batch - below < above - t.global_batch) nearest = str(below);
    if (below >= unit && t.global_batch - below == above - t.global_batch) nearest = str(below) + " or " + str(above);
    r.error("training.global_batch", "value " + str(t.global_batch) + " must be divisible by micro_batch * dp = " +
                                         str(unit) + "; nearest valid: " + nearest);
  } else if (dp >= 1 && p.layout.pp > 1) {
    const std::int64_t m = p.micro_batches();
    if (p.layout.schedule == PipelineSchedule::interleaved && m % p.layout.pp != 0) {
      // Megatron-LM's interleaved schedule runs micro-batches in groups of pp.
      r.error("training.global_batch", "interleaved schedule needs micro-batches per pipeline (" + str(m) +
                                           ") divisible by pp (" + str(p.layout.pp) + ")");
    }
    if (p.layout.schedule == PipelineSchedule::dualpipev && m < 2 * p.layout.pp) {
      // DualPipe's dualpipev.py asserts num_chunks >= 2 * num_ranks.
      r.error("training.global_batch", "value " + str(t.global_batch) + " gives " + str(m) +
                                           " micro-batches per pipeline; dualpipev needs at least 2 * pp = " +
                                           str(2 * p.layout.pp) + "; valid: global_batch >= " +
                                           str(2 * p.layout.pp * t.micro_batch * dp));
    } else if (p.layout.schedule == PipelineSchedule::dualpipe && (m < 2 * p.layout.pp || m % 2 != 0)) {
      // DualPipe's dualpipe.py asserts num_chunks % 2 == 0 and num_chunks >= 2 * num_ranks.
      r.error("training.global_batch", "value " + str(t.global_batch) + " gives " + str(m) +
                                           " micro-batches per pipeline; dualpipe needs an even number, at least 2 * pp = " +
                                           str(2 * p.layout.pp) + "; valid: global_batch a multiple of " +
                                           str(2 * t.micro_batch * dp) + " and >= " + str(2 * p.layout.pp * t.micro_batch * dp));
    } else if (m < p.layout.pp) {
      r.warning("training.global_batch", str(m) + " micro-batches per pipeline for pp = " + str(p.layout.pp) +
                                             ": fewer micro-batches than stages leaves most of the pipeline idle");
    }
  }
}

}  // namespace

std::int64_t Plan::dp() const {
  if (layout.dp > 0) return layout.dp;
  const std::int64_t model_parallel = layout.tp * layout.pp * layout.cp;
  return model_parallel > 0 ? std::max<std::int64_t>(cluster.gpus / model_parallel, 1) : 1;
}

std::int64_t Plan::expert_dp() const {
  const std::int64_t expert_group = layout.ep * layout.expert_tp();
  const std::int64_t stage_ranks = layout.tp * layout.cp * dp();
  return expert_group > 0 ? std::max<std::int64_t>(stage_ranks / expert_group, 1) : 1;
}

std::int64_t Plan::micro_batches() const {
  const std::int64_t per_step = training.micro_batch * dp();
  return per_step > 0 ? std::max<std::int64_t>(training.global_batch / per_step, 1) : 1;
}

std::vector<Diagnostic> validate(const Plan& plan) {
  std::vector<Diagnostic> out;
  Rules rules(out);
  validate_model(plan.model, rules);
  validate_moe_model(plan.model, out);
  if (layout_counts_in_range(plan.layout)) validate_expert_layout(plan, out);
  validate_cluster(plan, rules);
  validate_layout(plan, rules);
  validate_training(plan, rules);
  validate_offload(plan, out);
  return out;
}

}  // namespace plansight::estimator
