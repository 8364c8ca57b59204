// Per-GPU memory for every pipeline rank.
// - Model states: bytes per parameter by precision and optimizer, partitioned over the
//   data-parallel group (DP x CP, as Megatron's distributed optimizer does) by ZeRO stage
//   (Rajbhandari et al. 2020, Sec. 5.1, Fig. 1).
// - Activations: Korthikanti et al. 2022 Sec. 4 / Table 2, generalised (see layer_activation_bytes).
// - In-flight micro-batches per schedule: GPipe all m; 1F1B min(p - r, m) (Narayanan 2021 Sec. 2.2.1);
//   interleaved 1F1B per Megatron-LM's warm-up count 2(p - r - 1) + (v - 1)p, plus one
//   (Korthikanti 2022 Sec. 4.2.3: the first stage holds L(1 + (p - 1)/(pv)) layers' activations).
// - Buffers and the framework reserve are documented at their definitions below.
// - Offloading (offload.h) moves the offloaded states and activations to StageMemory::host_bytes
//   and keeps on the GPU the buffers the frameworks keep for the transfers.
#include "plansight/estimator/memory.h"

#include <algorithm>

#include "head_memory.h"
#include "moe_memory.h"
#include "plansight/estimator/offload.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/pipeline_schedule.h"

namespace plansight::estimator {
namespace {

double activation_element_bytes(Precision p) {
  // fp8 training keeps activations in bf16 between GEMMs (Transformer Engine casts per GEMM).
  return p == Precision::fp32 || p == Precision::tf32 ? 4.0 : 2.0;
}

// Megatron's interleaved schedule runs forwards in groups of p micro-batches per chunk:
// forward k uses chunk (k / p) mod v (schedules.py, get_model_chunk_id). Counts how many of the
// first `n` forwards belong to `chunk`.
double interleaved_forwards_of_chunk(std::int64_t n, std::int64_t p, std::int64_t v, std::int64_t chunk) {
  const std::int64_t group = p * v;
  const std::int64_t full_rounds = n / group;
  const std::int64_t rest = n % group;
  const std::int64_t in_rest = std::clamp<std::int64_t>(rest - chunk * p, 0, p);
  return static_cast<double>(full_rounds * p + in_rest);
}

// Forward passes of `chunk` on rank `r` that are stored (forward done, backward pending) at the
// rank's activation peak.
double in_flight_of_chunk(const Plan& plan, std::int64_t r, std::int64_t chunk) {
  const std::int64_t p = plan.layout.pp;
  const std::int64_t v = plan.layout.vpp;
  const std::int64_t m = plan.micro_batches();
  switch (plan.layout.schedule) {
    case PipelineSchedule::gpipe: return static_cast<double>(m);
    case PipelineSchedule::one_f_one_b:
    case PipelineSchedule::zb_h1:  // ZB-H1 keeps 1F1B's peak (Qi et al. 2023, Sec. 3.1)
      return static_cast<double>(std::min(p - r, m));
    case PipelineSchedule::interleaved: {
      const std::int64_t warmup = 2 * (p - r - 1) + (v - 1) * p;
      const std::int64_t n = std::min(warmup + 1, m * v);
      return interleaved_forwards_of_chunk(n, p, v, chunk);
    }
    case PipelineSchedule::dualpipe: {
      // DualPipeV's count on each half of the ranks (pipeline_schedule.cpp plays its rank h of
      // p/2 there): 2(p/2) - h of the pipeline that starts at the rank's own end, h + 1 of the
      // other, together p + 1 (the DualPipe README's "PP+1" activations per device).
      const std::int64_t half = p / 2;
      const bool lower = r < half;
      const std::int64_t h = lower ? r : p - 1 - r;
      const bool own_end = (chunk == 0) == lower;
      return static_cast<double>(own_end ? 2 * half - h : h + 1);
    }
    case PipelineSchedule::dualpipev:
      // pipeline_schedule.cpp's phases: 2(p-r-1) + (r+1) forwards of chunk 0 and r+1 of chunk 1
      // before the first backward, and the main phase's F0 before its first release: 2p-r and
      // r+1, together 2p+1 chunk-micro-batches on every rank (the DualPipe README's "PP+1"
      // activations per device with PP = 2p stages). A deferred W keeps its micro-batch stored,
      // but no forward runs while Ws are deferred after that point (m >= 2p by the schedule).
      return static_cast<double>(chunk == 0 ? 2 * p - r : r + 1);
  }
  return static_cast<double>(m);
}

}  // namespace

StateBytesPerParameter state_bytes_per_parameter(const TrainingSpec& t) {
  StateBytesPerParameter b;
  const Precision stored = t.precision == Precision::fp8 ? Precision::bf16 : t.precision;
  b.weights = bytes_per_element(stored);
  b.gradients = bytes_per_element(t.grad_precision);
  const bool full_precision = stored == Precision::fp32 || stored == Precision::tf32;
  const double master = full_precision ? 0.0 : bytes_per_element(t.master_precision);
  double states = 0;
  switch (t.optimizer) {
    case Optimizer::adam: states = 8; break;          // fp32 momentum + variance
    case Optimizer::adam8bit: states = 2; break;      // 1 B each (Dettmers et al. 2022), block stats ignored
    case Optimizer::sgd_momentum: states = 4; break;  // fp32 momentum
    case Optimizer::sgd: states = 0; break;
  }
  b.optimizer = master + states;
  return b;
}

MemoryBreakdown model_state_bytes(double parameters, const StateBytesPerParameter& per_param,
                                  std::int64_t zero_stage, std::int64_t shards) {
  const double n = static_cast<double>(std::max<std::int64_t>(shards, 1));
  MemoryBreakdown m;
  m.optimizer_bytes = parameters * per_param.optimizer / (zero_stage >= 1 ? n : 1.0);
  m.gradients_bytes = parameters * per_param.gradients / (zero_stage >= 2 ? n : 1.0);
  m.weights_bytes = parameters * per_param.weights / (zero_stage >= 3 ? n : 1.0);
  return m;
}

Fp8SavedInputs fp8_saved_gemm_input_bytes(const Plan& plan) {
  const double e = activation_element_bytes(plan.training.precision);
  if (plan.training.precision != Precision::fp8) return {e, e};
  // Transformer Engine saves a GEMM's input for the weight gradient as its fp8 columnwise copy,
  // not in 16 bits (TE docs, "Performance Considerations", Memory usage: "By default, TE saves the
  // columnwise quantized input for the backward pass"). The attention output is saved in 16 bits
  // anyway when flash attention's backward needs it, so the fp8 copy comes on top there (the
  // same page: "if it is the attention output which is saved anyway").
  const bool flash = plan.training.attention == AttentionKernel::flash;
  return {1.0, flash ? e + 1.0 : 1.0};
}

// Bytes kept for the backward pass by one layer for one micro-batch, per token of the GPU's
// sequence shard, then times tokens. Korthikanti Table 2 terms with e = activation bytes
// (2 for 16-bit), q/k = query/key-value widths, f = ffn width, a = heads:
//   on every TP rank (split by t only with sequence parallelism): the two norms' inputs, the
//   QKV and MLP GEMM inputs (4eh) and two dropout masks (2h)        -> 10h for GPT
//   split by t: Q, K, V (e(q + 2k)), attention output (eq), MLP inner activations
//   (2ef, or 3ef for gated MLPs whose fused kernel keeps gate and up)  -> 24h for GPT
//   attention scores, split by t: softmax output e*a*s, plus with dropout its mask a*s and
//   output e*a*s                                                  -> 5as for GPT
// Flash attention keeps no scores, only the fp32 log-sum-exp (4a bytes per token).
// Selective recomputation drops the scores (recomputed); full recomputation keeps only the
// layer's input (2sbh; divided by t with sequence parallelism, as Megatron stores it sharded).
double layer_activation_bytes(const Plan& plan, Recompute recompute) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  const double e = activation_element_bytes(plan.training.precision);
  const double t = static_cast<double>(l.tp);
  const bool sp = l.sequence_parallel && l.tp > 1;
  const double tokens = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp) *
                        static_cast<double>(plan.training.micro_batch);
  const double h = static_cast<double>(m.hidden);
  if (recompute == Recompute::full) return tokens * e * h / (sp ? t : 1.0);

  const double mask = m.dropout ? 1.0 : 0.0;
  const double q = static_cast<double>(m.q_width());
  const double k = static_cast<double>(m.kv_width());
  const double f = static_cast<double>(m.ffn_hidden);
  const double a = static_cast<double>(m.heads);
  const double keys = static_cast<double>(plan.training.seq_len);  // each query sees the full key length

  // Per token: the two norms' inputs (e h each) and outputs (the QKV and MLP-up GEMMs' inputs),
  // Q, K, V, the attention output (the output projection's input), the MLP-up output(s) (the
  // activation's input) and the MLP-down input (Korthikanti et al. 2022, Sec. 4.1). Under fp8 the
  // GEMM inputs are saved as fp8 copies (fp8_saved_gemm_input_bytes).
  const Fp8SavedInputs g = fp8_saved_gemm_input_bytes(plan);
  const double replicated = 2 * e * h + 2 * g.input * h + 2 * mask * h;
  const double sharded = e * (q + 2 * k) + g.attention_output * q + e * f * (m.gated_mlp ? 2 : 1) + g.input * f;
  double scores = 0;
  if (plan.training.attention == AttentionKernel::flash) {
    scores = 4 * a;
  } else if (recompute != Recompute::selective) {
    scores = e * a * keys + (m.dropout ? (1 + e) * a * keys : 0);
  }
  return tokens * (replicated / (sp ? t : 1.0) + (sharded + scores) / t);
}

// Backward working set (not in Korthikanti et al., who count what is stored): while a layer runs
// its backward, the gradients of its activations are alive besides everything stored. Per token,
// e bytes each: the gradient arriving from the layer above and the one being built for the layer
// below, the residual branch's and the norm output's gradients (4h, sharded by t with sequence
// parallelism), plus the larger of the MLP's (the activation's output and input gradients,
// (gate + 1) f / t) and the attention's (the core output's and Q, K, V's gradients, (2q + 2k) / t,
// and without flash attention the scores' gradient, a / t per key). Measured against the CPU
// probe, whose backward allocates exactly these (probe/src/transformer_block.cpp): without it the
// activation peak was 8-16% low, 31% with full recomputation.
double backward_working_bytes(const Plan& plan) {
  const auto& m = plan.model;
  const auto& l = plan.layout;
  const double e = activation_element_bytes(plan.training.precision);
  const double t = static_cast<double>(l.tp);
  const bool sp = l.sequence_parallel && l.tp > 1;
  const double tokens = static_cast<double>(plan.training.seq_len) / static_cast<double>(l.cp) *
                        static_cast<double>(plan.training.micro_batch);
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn_hidden);
  const double q = static_cast<double>(m.q_width()), k = static_cast<double>(m.kv_width());
  const double keys = static_cast<double>(plan.training.seq_len);
  const double scores = plan.training.attention == AttentionKernel::flash ? 0.0 : static_cast<double>(m.heads) * keys;
  const double mlp = ((m.gated_mlp ? 2.0 : 1.0) + 1.0) * f / t;
  const double attention = (2 * q + 2 * k + scores) / t;
  return tokens * e * (4 * h / (sp ? t : 1.0) + std::max(mlp, attention));
}

std::vector<std::int64_t> chunk_layers(const Plan& plan) {
  const std::int64_t chunks = plan.layout.pp * plan.layout.vpp;
  if (two_pipelines(plan.layout.schedule)) {
    // DualPipe: each model copy spreads every layer over the pp stages of its pipeline, as
    // stage_layers says (one copy's stages) or evenly.
    const std::int64_t stages = std::max<std::int64_t>(plan.layout.pp, 1);
    if (static_cast<std::int64_t>(plan.layout.stage_layers.size()) == stages) {
      std::vector<std::int64_t> out(static_cast<std::size_t>(chunks));
      for (std::int64_t g = 0; g < chunks; ++g) out[static_cast<std::size_t>(g)] = plan.layout.stage_layers[static_cast<std::size_t>(g % stages)];
      return out;
    }
    std::vector<std::int64_t> out(static_cast<std::size_t>(chunks), plan.model.layers / stages);
    for (std::int64_t i = 0; i < plan.model.layers % stages; ++i) {
      ++out[static_cast<std::size_t>(i)];
      if (i + stages < chunks) ++out[static_cast<std::size_t>(i + stages)];
    }
    return out;
  }
  if (static_cast<std::int64_t>(plan.layout.stage_layers.size()) == chunks) return plan.layout.stage_layers;
  std::vector<std::int64_t> out(static_cast<std::size_t>(chunks), plan.model.layers / chunks);
  // Uneven remainders (only reachable without validation) go to the earliest chunks.
  for (std::int64_t i = 0; i < plan.model.layers % chunks; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

double in_flight_layer_equivalents(const Plan& plan, std::int64_t stage, const std::vector<std::int64_t>& chunks) {
  const std::int64_t p = plan.layout.pp;
  double total = 0;
  for (std::int64_t c = 0; c < plan.layout.vpp; ++c) {
    const auto g = static_cast<std::size_t>(global_chunk_of(plan.layout.schedule, p, stage, c));
    total += in_flight_of_chunk(plan, stage, c) * static_cast<double>(chunks[g]);
  }
  return total;
}

MemoryEstimate estimate_memory(const Plan& plan, std::int64_t vocab_padded) {
  const auto& l = plan.layout;
  const auto& tr = plan.training;
  const auto& model = plan.model;
  const double t = static_cast<double>(l.tp);
  const bool sp = l.sequence_parallel && l.tp > 1;
  const double e = activation_element_bytes(tr.precision);
  const double h = static_cast<double>(model.hidden);
  const double tokens = static_cast<double>(tr.seq_len) / static_cast<double>(l.cp) * static_cast<double>(tr.micro_batch);
  const std::int64_t shards = plan.dp() * l.cp;

  const ParameterCounts counts = count_parameters(model, vocab_padded);
  const double layer_params = counts.layer.per_tp_rank(l.tp);
  const StateBytesPerParameter per_param = state_bytes_per_parameter(tr);
  const std::vector<std::int64_t> chunks = chunk_layers(plan);
  // MoE/MLA/MTP models cost each layer by its kind (moe_memory.cpp); dense models keep the
  // single per-layer term, so their numbers are exactly what they were.
  const bool kinds = needs_layer_kinds(model);
  const double act_per_layer = kinds ? layer_activation_bytes_by_kind(plan, l.recompute, false)
                                     : layer_activation_bytes(plan, l.recompute);
  const double act_per_moe_layer = kinds ? layer_activation_bytes_by_kind(plan, l.recompute, true) : 0.0;
  // Working set while one layer is recomputed during its backward.
  const double full_layer_activation =
      kinds ? std::max(layer_activation_bytes_by_kind(plan, Recompute::none, false),
                       model.moe.enabled() ? layer_activation_bytes_by_kind(plan, Recompute::none, true) : 0.0)
            : layer_activation_bytes(plan, Recompute::none);
  // An MoE layer's expert FFN gradients take the place of the dense MLP's in the working set.
  const double backward_working =
      kinds ? std::max(backward_working_bytes(plan), moe_backward_working_bytes(plan)) : backward_working_bytes(plan);
  // Routed experts: split over ep x etp, their states over the expert-data-parallel group
  // (Megatron-Core's distributed optimizer shards expert and dense states separately).
  const std::vector<std::int64_t> moe_chunks = chunk_moe_layers(plan, chunks);
  const double moe_layer_params = counts.moe_layer.per_tp_rank(l.tp);
  const double experts_per_gpu_per_layer =
      counts.routed_experts / static_cast<double>(std::max<std::int64_t>(l.ep * l.expert_tp(), 1));
  const std::int64_t expert_shards = plan.expert_dp();

  MemoryEstimate out;
  out.capacity_bytes = static_cast<double>(plan.cluster.gpu.memory_bytes);
  out.stages.reserve(static_cast<std::size_t>(l.pp));
  // The rank with the last chunk: the final norm, the LM head, the loss (and MTP); rank 0 in
  // DualPipeV's V, the last rank otherwise. DualPipe's two copies put an embedding and a head
  // on both end ranks (each starts one pipeline and ends the other).
  const bool two_copies = two_pipelines(l.schedule);
  const std::int64_t head_rank = rank_of_chunk(l.schedule, l.pp, l.pp * l.vpp - 1);
  auto holds_head = [&](std::int64_t r) { return r == head_rank || (two_copies && r == l.pp - 1); };
  auto holds_embedding = [&](std::int64_t r) { return r == 0 || (two_copies && r == l.pp - 1); };
  for (std::int64_t r = 0; r < l.pp; ++r) {
    StageMemory stage;
    stage.stage = r;
    std::int64_t moe_layers = 0;
    for (std::int64_t c = 0; c < l.vpp; ++c) {
      const auto g = static_cast<std::size_t>(global_chunk_of(l.schedule, l.pp, r, c));
      stage.layers += chunks[g];
      moe_layers += moe_chunks[g];
    }
    double params = static_cast<double>(stage.layers - moe_layers) * layer_params +
                    static_cast<double>(moe_layers) * moe_layer_params;
    double expert_params = static_cast<double>(moe_layers) * experts_per_gpu_per_layer;
    if (holds_embedding(r)) params += counts.word_embedding / t + counts.position_embedding;
    if (holds_head(r)) {
      params += counts.final_norm;
      // Megatron keeps a copy of tied word embeddings on the last stage when it is not the first.
      params += model.tied_embeddings ? (holds_embedding(r) ? 0.0 : counts.word_embedding / t) : counts.lm_head / t;
      // Megatron-Core places the MTP modules on the last pipeline stage.
      for (std::int64_t k = 0; k < model.mtp_modules; ++k) {
        const bool moe = model.is_moe_layer(model.layers + k);
        params += counts.mtp_extra.per_tp_rank(l.tp) + (moe ? moe_layer_params : layer_params);
        expert_params += moe ? experts_per_gpu_per_layer : 0.0;
      }
    }
    stage.parameters = params + expert_params;

    MemoryBreakdown mem = model_state_bytes(params, per_param, l.zero_stage, shards);
    if (expert_params > 0) {
      const MemoryBreakdown experts = model_state_bytes(expert_params, per_param, l.zero_stage, expert_shards);
      mem.weights_bytes += experts.weights_bytes;
      mem.gradients_bytes += experts.gradients_bytes;
      mem.optimizer_bytes += experts.optimizer_bytes;
    }
    if (tr.precision == Precision::fp8 && l.zero_stage < 3) {
      // Transformer Engine's fp8 copies of the layers' GEMM weights: a rowwise copy for the
      // forward and a columnwise one for the input gradient (Hopper transposes it physically,
      // MXFP8 scales it per column block; TE docs, "Performance Considerations", Handling
      // transposes), cast on the first micro-batch and kept for the rest (TE Linear.forward's
      // is_first_microbatch, which Megatron-Core's forward_step sets): 2 bytes per weight beside
      // the 16-bit one. The embedding and the LM head run in 16 bits. (ZeRO-3 gathers each layer
      // when it runs, so its copies come and go with the gathered layer.)
      const double gemm_params = static_cast<double>(stage.layers - moe_layers) * layer_params +
                                 static_cast<double>(moe_layers) * moe_layer_params + expert_params;
      mem.weights_bytes += 2.0 * gemm_params;
    }
    // This GPU's shard of the parameters, as ZeRO partitions optimizer states (zero_stage >= 1).
    const double shard_params = params / static_cast<double>(std::max<std::int64_t>(l.zero_stage >= 1 ? shards : 1, 1)) +
                                expert_params / static_cast<double>(std::max<std::int64_t>(l.zero_stage >= 1 ? expert_shards : 1, 1));
    if (l.offload_optimizer) {
      // ZeRO-Offload: master weights, states and fp32 gradients of the shard live on the host.
      // The GPU keeps its weights; with ZeRO >= 2 its gradient shard goes straight to the host
      // (DeepSpeed copies each reduced bucket into the pinned fp32 partition), leaving only the
      // reduction buckets (buffers below); ZeRO-1 keeps the full gradient buffer it reduces in.
      stage.host_bytes += shard_params * host_state_bytes_per_parameter(tr);
      mem.optimizer_bytes = 0;
      if (l.zero_stage >= 2) mem.gradients_bytes = 0;
    }
    if (l.offload_params) {
      // ZeRO-Infinity: the 16-bit parameter shard lives on the host; the GPU keeps the layers
      // gathered for use (the ZeRO-3 buffers below).
      stage.host_bytes += mem.weights_bytes;
      mem.weights_bytes = 0;
    }

    const double layer_equivalents = in_flight_layer_equivalents(plan, r, chunks);
    stage.in_flight_micro_batches = stage.layers > 0 ? layer_equivalents / static_cast<double>(stage.layers) : 0;
    if (moe_layers == 0) {
      mem.activations_bytes = act_per_layer * layer_equivalents;
    } else {
      const double moe_equivalents = in_flight_layer_equivalents(plan, r, moe_chunks);
      mem.activations_bytes =
          act_per_layer * (layer_equivalents - moe_equivalents) + act_per_moe_layer * moe_equivalents;
      mem.buffers_bytes += expert_all_to_all_buffer_bytes(plan);
    }
    if (l.offload_activations) {
      // Every layer's stored activations go to the host except kActivationLayersKeptOnGpu layers
      // (offload.h), counted at the larger of the dense and MoE layer terms.
      const double kept = std::min(layer_equivalents, kActivationLayersKeptOnGpu) * std::max(act_per_layer, act_per_moe_layer);
      const double offloaded = std::max(0.0, mem.activations_bytes - kept);
      stage.host_bytes += offloaded;
      mem.activations_bytes -= offloaded;
    }
    if (holds_embedding(r) && model.dropout) {
      // Embedding dropout mask, one byte per element, for each stored micro-batch of the chunk
      // that starts a pipeline here.
      const std::int64_t first_chunk = r == 0 ? 0 : 1;
      mem.activations_bytes += tokens * h / (sp ? t : 1.0) * in_flight_of_chunk(plan, r, first_chunk);
    }
    // A layer's backward works on its own gradients and, under full recomputation, on its
    // recomputed activations: both come after the head of that micro-batch is freed (the loss's
    // backward runs first, then the layers', in Megatron and in the probe), so on the head's
    // stage they share the head's bytes rather than adding to them. Measured by the probe: GPT-2
    // 124M, micro-batch 2 x 1,024, full recomputation, peak activations 489 MiB on a CPU (fp32)
    // and 245 MiB on an H200 (bf16), both the stored inputs plus the head, where recomputed
    // layer + head predicted 681 and 341 (bench/results/gpu-check-h200-2026-11-28-b).
    const double recomputed = l.recompute == Recompute::full ? full_layer_activation : 0.0;
    double working = stage.layers > 0 ? backward_working + recomputed : 0.0;
    if (holds_head(r)) {
      // The head's inputs, logits and softmax for each micro-batch awaiting its backward
      // (head_memory.h).
      const double waiting = l.schedule == PipelineSchedule::gpipe ? static_cast<double>(plan.micro_batches()) : 1.0;
      const HeadActivationBytes head =
          head_activation_bytes(tokens, e, h, static_cast<double>(vocab_padded), t, sp, tr.loss_in_place);
      const double head_per_micro_batch = head.stored;
      mem.activations_bytes += waiting * head_per_micro_batch;
      // Each MTP module (DeepSeek-V3 Sec. 2.2) stores its two norm inputs and the 2h-wide
      // projection input (4eh), its layer's activations and a second head's logits.
      for (std::int64_t k = 0; k < model.mtp_modules; ++k) {
        const double layer = model.is_moe_layer(model.layers + k) ? act_per_moe_layer : act_per_layer;
        mem.activations_bytes += waiting * (tokens * 4 * e * h / (sp ? t : 1.0) + layer + head_per_micro_batch);
      }
      // The head's own backward (head_memory.h); the layers' backward comes after the head of
      // that micro-batch is freed.
      working = std::max(head.working, working - head_per_micro_batch);
    }
    mem.activations_bytes += working;

    // Communication buffers.
    // Data-parallel gradient buckets: with ZeRO 0/1 they are views into the contiguous gradient
    // buffer, reduced in place (Megatron-LM's DistributedDataParallel grad buffer; the probe's
    // buckets too), so nothing extra. ZeRO-2 keeps only its gradient shard: the full gradients of
    // two buckets are extra, one being reduce-scattered while the backward fills the next
    // (DeepSpeed's double-buffered reduction buckets).
    // With the optimizer offloaded they stay even on one GPU: they stage the copy to the host.
    const bool staged = shards > 1 || l.offload_optimizer || l.offload_params;
    if (staged && l.zero_stage == 2) mem.buffers_bytes += 2 * tr.dp_bucket_bytes;
    if (l.zero_stage >= 3 && staged) {
      // ZeRO-3/FSDP: the layer in use, unsharded, plus one prefetched (TrainingSpec::zero3_prefetch;
      // FSDP's backward prefetch of one unit), and two layers' full gradients (one being
      // reduce-scattered while the next layer's backward fills the other).
      const double layers_held = tr.zero3_prefetch ? 2.0 : 1.0;
      // The unit gathered is a layer, or on the stages with the embedding or the head the word
      // embedding (tied or not) or the LM head, each one unit: at GPT-2's 50,304 x 768 it is 5.5
      // layers, and its two gradient buckets and gathered copy set the peak (368.45 MiB measured
      // by the probe on an H200 for GPT-2 124M, ZeRO-3 over DP 2, where a layer gives 67.6).
      double unit_params = layer_params;
      if (holds_embedding(r)) unit_params = std::max(unit_params, counts.word_embedding / t);
      if (holds_head(r)) unit_params = std::max(unit_params, (model.tied_embeddings ? counts.word_embedding : counts.lm_head) / t);
      // Gathered: the unit in use and, with prefetch, the next layer; gradients: two buckets.
      const double gathered = unit_params + (layers_held - 1.0) * layer_params;
      mem.buffers_bytes += gathered * per_param.weights + 2 * unit_params * per_param.gradients;
    }
    if (sp) mem.buffers_bytes += e * tokens * h;  // all-gather buffer of the sequence-parallel input
    // Pipeline receive buffer of the output gradient from the next stage, alive through the
    // chunk's backward (every rank has such chunks when interleaved; the last stage computes its
    // own). Megatron's sends read the tensor itself, and a received activation becomes the
    // chunk's stored input, counted with the layer's activations (Korthikanti's 2sbh of x).
    if (l.pp > 1 && (r < l.pp - 1 || l.vpp > 1)) mem.buffers_bytes += e * tokens * h / (sp ? t : 1.0);

    // Framework reserve: CUDA context and library workspaces (fixed), plus allocator
    // fragmentation as a fraction of everything else. Both are TrainingSpec settings.
    const double allocated = mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes +
                             mem.activations_bytes + mem.buffers_bytes;
    mem.reserve_bytes = tr.reserve_fixed_bytes + tr.fragmentation * allocated;

    stage.memory = mem;
    out.stages.push_back(stage);
  }
  for (const auto& s : out.stages) {
    if (s.memory.total_bytes() > out.stages[static_cast<std::size_t>(out.most_loaded_stage)].memory.total_bytes()) {
      out.most_loaded_stage = s.stage;
    }
  }
  out.peak = out.stages[static_cast<std::size_t>(out.most_loaded_stage)].memory;
  out.fits = out.peak.total_bytes() <= out.capacity_bytes;
  // A node's GPUs offload alike; the most offloading stage stands for all of them (a node holds
  // GPUs of one stage with the default placement, PP outermost).
  double host_per_gpu = 0;
  for (const auto& s : out.stages) host_per_gpu = std::max(host_per_gpu, s.host_bytes);
  out.host_bytes_per_node = host_per_gpu * gpus_per_node_used(plan.cluster);
  out.host_capacity_bytes = static_cast<double>(plan.cluster.host_memory_bytes);
  out.host_fits = out.host_capacity_bytes <= 0 || out.host_bytes_per_node <= out.host_capacity_bytes;
  return out;
}

}  // namespace plansight::estimator
