// The lean closed form of the layout search. Each function mirrors a library function term by
// term (named at each step) for plans with uniform chunks and no stage_layers, so that the
// search ranks exactly what estimate_memory() and closed_form_time(iteration_costs()) would
// compute; the communication terms are iteration_terms.h's and the iteration's formulas from the
// rank sums on are closed_form.h's, the same functions iteration_costs() and closed_form_time()
// call. layout_search_test checks the equality on a table of plans.
#include "layout_search_lean.h"

#include <algorithm>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/time_model.h"
#include "closed_form.h"
#include "head_memory.h"
#include "iteration_terms.h"

namespace plansight::estimator::search_detail {
namespace {

bool wide_precision(Precision p) { return p == Precision::fp32 || p == Precision::tf32; }

// One kind of model chunk for one micro-batch: its phases, parameters and DP seconds.
struct ChunkKind {
  PhaseCost forward, backward_input, backward_weight, recompute;
  double params = 0;
  double dp_s = 0;
};

// Per-rank sums of rank_sums() in time_model.cpp (closed_form::RankSums), and the rank's
// parameters for its optimizer step.
struct Sums : closed_form::RankSums {
  double params = 0;
  void add(const ChunkKind& k, double times) {
    RankSums::add(k.forward, k.backward_input, k.backward_weight, k.recompute, k.dp_s, times);
    params += times * k.params;
  }
};

// Forwards of chunk 0 in flight on rank 0 at its peak (memory.cpp, in_flight_of_chunk), and the
// layer-equivalents of a whole rank: with uniform chunks the per-chunk counts of the interleaved
// schedule add up to the n forwards run before the first backward.
struct InFlight {
  double chunk0_rank0 = 0;
  double rank_forwards = 0;  // summed over the rank's chunks
};
InFlight in_flight(const Candidate& c, std::int64_t m, std::int64_t r) {
  const std::int64_t p = c.pp, v = c.vpp;
  InFlight out;
  switch (c.schedule) {
    case PipelineSchedule::gpipe: out.chunk0_rank0 = out.rank_forwards = static_cast<double>(m); break;
    case PipelineSchedule::one_f_one_b:
    case PipelineSchedule::zb_h1:
      out.chunk0_rank0 = static_cast<double>(std::min(p, m));
      out.rank_forwards = static_cast<double>(std::min(p - r, m));
      break;
    case PipelineSchedule::dualpipev:  // memory.cpp: 2p - r of chunk 0 and r + 1 of chunk 1
      out.chunk0_rank0 = static_cast<double>(2 * p);
      out.rank_forwards = static_cast<double>(2 * p + 1);
      break;
    case PipelineSchedule::dualpipe:  // memory.cpp: p - h of one copy and h + 1 of the other
      out.chunk0_rank0 = static_cast<double>(p);
      out.rank_forwards = static_cast<double>(p + 1);
      break;
    case PipelineSchedule::interleaved: {
      auto forwards = [&](std::int64_t rank) { return std::min(2 * (p - rank - 1) + (v - 1) * p + 1, m * v); };
      const std::int64_t n0 = forwards(0);
      out.chunk0_rank0 = static_cast<double>((n0 / (p * v)) * p + std::clamp<std::int64_t>(n0 % (p * v), 0, p));
      out.rank_forwards = static_cast<double>(forwards(r));
      break;
    }
  }
  return out;
}

}  // namespace

SearchContext::SearchContext(const Plan& plan)
    : base(plan),
      efficiency(default_efficiency(plan.cluster.gpu)),
      device(plan.cluster.gpu, plan.training.precision, efficiency),
      per_param(state_bytes_per_parameter(plan.training)),
      optimizer_step_bytes(optimizer_bytes_per_parameter(plan.training)),
      element_bytes(wide_precision(plan.training.precision) ? 4.0 : 2.0) {}

std::int64_t micro_batches(const SearchContext& ctx, const Candidate& c) {
  return std::max<std::int64_t>(ctx.base.training.global_batch / (c.micro_batch * c.dp), 1);
}

KeyCosts key_costs(const SearchContext& ctx, std::int64_t tp, std::int64_t cp, bool sequence_parallel,
                   std::int64_t micro_batch, Recompute recompute) {
  Plan plan = ctx.base;
  plan.layout = LayoutSpec{};
  plan.layout.tp = tp;
  plan.layout.cp = cp;
  plan.layout.sequence_parallel = sequence_parallel;
  // The plan's TP overlap where the key allows it (validate_layout's rule: tp > 1 with sequence
  // parallelism), as apply_candidate() sets it.
  plan.layout.tp_overlap = ctx.base.layout.tp_overlap && tp > 1 && sequence_parallel;
  plan.layout.recompute = recompute;
  plan.training.micro_batch = micro_batch;
  // Layer, embedding and head costs use only the TP and CP links, which pp and dp do not move.
  const CommLinks links = plan_links(plan, ctx.device.efficiency());
  KeyCosts k;
  k.padded_vocab = padded_vocab(plan.model.vocab, tp, plan.training.vocab_divisible_by);
  k.layer = layer_cost(plan, ctx.device, links);
  k.embedding = embedding_cost(plan, ctx.device, links);
  k.head = lm_head_cost(plan, ctx.device, links, k.padded_vocab);
  k.layer_activation_bytes = layer_activation_bytes(plan, recompute);
  k.full_layer_activation_bytes = layer_activation_bytes(plan, Recompute::none);
  k.backward_working_bytes = backward_working_bytes(plan);
  k.tp_link = links.tp;
  k.counts = count_parameters(plan.model, k.padded_vocab);
  k.layer_params = k.counts.layer.per_tp_rank(tp);
  return k;
}

UnitLinks unit_links(const SearchContext& ctx, std::int64_t tp, std::int64_t cp, std::int64_t dp) {
  const auto& eff = ctx.device.efficiency();
  LayoutSpec layout;
  layout.tp = tp;
  layout.cp = cp;
  UnitLinks links;
  links.pp = group_link(ctx.base.cluster, layout, dp, Group::pp, eff.nvlink_fraction, eff.network_fraction);
  layout.cp = 1;  // gradients are reduced over DP x CP ranks (layer_costs.cpp, plan_links)
  links.dp = group_link(ctx.base.cluster, layout, dp * cp, Group::dp, eff.nvlink_fraction, eff.network_fraction);
  return links;
}

// memory.cpp, estimate_memory: stage 0 holds the embedding and the most micro-batches in flight,
// so no middle stage exceeds it in any component; the last stage holds the head and the logits.
LeanMemory lean_memory(const SearchContext& ctx, const KeyCosts& key, const Candidate& c) {
  const auto& tr = ctx.base.training;
  const auto& model = ctx.base.model;
  const double t = static_cast<double>(c.tp);
  const bool sp = c.sequence_parallel && c.tp > 1;
  const double e = ctx.element_bytes;
  const double h = static_cast<double>(model.hidden);
  const double tokens = static_cast<double>(tr.seq_len) / static_cast<double>(c.cp) * static_cast<double>(c.micro_batch);
  const std::int64_t shards = c.dp * c.cp;
  const std::int64_t m = micro_batches(ctx, c);
  const std::int64_t chunk_layers = model.layers / (c.pp * c.vpp);
  const std::int64_t stage_layers = chunk_layers * c.vpp;
  const auto& counts = key.counts;

  auto stage = [&](std::int64_t r) {
    double params = static_cast<double>(stage_layers) * key.layer_params;
    if (r == 0) params += counts.word_embedding / t + counts.position_embedding;
    if (r == c.pp - 1) {
      params += counts.final_norm;
      params += model.tied_embeddings ? (c.pp > 1 ? counts.word_embedding / t : 0.0) : counts.lm_head / t;
    }
    MemoryBreakdown mem = model_state_bytes(params, ctx.per_param, c.zero_stage, shards);
    // As estimate_memory(): Transformer Engine's two fp8 copies of every layer weight (not ZeRO-3).
    if (tr.precision == Precision::fp8 && c.zero_stage < 3) mem.weights_bytes += 2.0 * static_cast<double>(stage_layers) * key.layer_params;
    const InFlight flight = in_flight(c, m, r);
    mem.activations_bytes = key.layer_activation_bytes * (flight.rank_forwards * static_cast<double>(chunk_layers));
    if (r == 0 && model.dropout) mem.activations_bytes += tokens * h / (sp ? t : 1.0) * flight.chunk0_rank0;
    // As estimate_memory(): the recomputed layer is part of the layers' backward working set.
    const double recomputed = c.recompute == Recompute::full ? key.full_layer_activation_bytes : 0.0;
    double working = stage_layers > 0 ? key.backward_working_bytes + recomputed : 0.0;
    if (r == c.pp - 1) {  // as estimate_memory(): the head's stored logits and its working set
      const double waiting = c.schedule == PipelineSchedule::gpipe ? static_cast<double>(m) : 1.0;
      const HeadActivationBytes head =
          head_activation_bytes(tokens, e, h, static_cast<double>(key.padded_vocab), t, sp, tr.loss_in_place);
      mem.activations_bytes += waiting * head.stored;
      working = std::max(head.working, working - head.stored);
    }
    mem.activations_bytes += working;
    if (shards > 1 && c.zero_stage == 2) mem.buffers_bytes += 2 * tr.dp_bucket_bytes;  // as estimate_memory()
    if (c.zero_stage >= 3 && shards > 1) {
      const double layers_held = tr.zero3_prefetch ? 2.0 : 1.0;
      // As estimate_memory(): the largest unit gathered, a layer or the word embedding / LM head.
      double unit_params = key.layer_params;
      if (r == 0) unit_params = std::max(unit_params, counts.word_embedding / t);
      if (r == c.pp - 1) unit_params = std::max(unit_params, (model.tied_embeddings ? counts.word_embedding : counts.lm_head) / t);
      const double gathered = unit_params + (layers_held - 1.0) * key.layer_params;
      mem.buffers_bytes += gathered * ctx.per_param.weights + 2 * unit_params * ctx.per_param.gradients;
    }
    if (sp) mem.buffers_bytes += e * tokens * h;
    if (c.pp > 1 && (r < c.pp - 1 || c.vpp > 1)) mem.buffers_bytes += e * tokens * h / (sp ? t : 1.0);  // as estimate_memory()
    const double allocated =
        mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes + mem.activations_bytes + mem.buffers_bytes;
    mem.reserve_bytes = tr.reserve_fixed_bytes + tr.fragmentation * allocated;
    return mem;
  };

  LeanMemory out;
  out.peak = stage(0);
  out.total_bytes = out.peak.total_bytes();
  if (c.pp > 1) {
    const MemoryBreakdown last = stage(c.pp - 1);
    if (last.total_bytes() > out.total_bytes) {
      out.peak = last;
      out.total_bytes = last.total_bytes();
      out.stage = c.pp - 1;
    }
  }
  return out;
}

// iteration_costs() then closed_form_time() (time_model.cpp), with rank sums taken per kind of
// chunk: rank 0 = first + (v - 1) middle, rank p-1 = (v - 1) middle + last, others v middle.
double lean_iteration_s(const SearchContext& ctx, const KeyCosts& key, const UnitLinks& links, const Candidate& c,
                        TimeBreakdown* breakdown) {
  const auto& model = ctx.base.model;
  const std::int64_t p = c.pp;
  const double v = static_cast<double>(c.vpp);
  const double t = static_cast<double>(c.tp);
  const std::int64_t shards = c.dp * c.cp;
  const double m = static_cast<double>(micro_batches(ctx, c));
  const double n = static_cast<double>(model.layers / (p * c.vpp));
  const auto& counts = key.counts;

  ChunkKind mid;
  mid.forward = key.layer.forward * n;
  mid.backward_input = key.layer.backward_input * n;
  mid.backward_weight = key.layer.backward_weight * n;
  mid.recompute = key.layer.recompute * n;
  mid.params = n * key.layer_params;
  auto with_embedding = [&](ChunkKind k) {
    k.forward += key.embedding.forward;
    k.backward_input += key.embedding.backward_input;
    k.backward_weight += key.embedding.backward_weight;
    k.params += counts.word_embedding / t + counts.position_embedding;
    return k;
  };
  auto with_head = [&](ChunkKind k) {
    k.forward += key.head.forward;
    k.backward_input += key.head.backward_input;
    k.backward_weight += key.head.backward_weight;
    k.params += counts.final_norm +
                (model.tied_embeddings ? (p > 1 ? counts.word_embedding / t : 0.0) : counts.lm_head / t);
    return k;
  };
  // iteration_costs(): ZeRO-3 communicates per micro-batch inside the phases; ZeRO-0/1/2 reduce
  // gradients once per iteration.
  auto dp_seconds = [&](ChunkKind& k) {
    const double grad_bytes = k.params * ctx.per_param.gradients;
    if (c.zero_stage >= 3) {
      const auto units = static_cast<std::int64_t>(n);
      add_zero3_communication(k.forward, k.backward_input, k.backward_weight,
                              per_layer_collective_seconds(Collective::all_gather, k.params * ctx.per_param.weights, units, shards, links.dp),
                              per_layer_collective_seconds(Collective::reduce_scatter, grad_bytes, units, shards, links.dp),
                              ctx.base.training.zero3_prefetch);
      return 0.0;
    }
    return terms::gradient_reduction_seconds(c.zero_stage, grad_bytes, shards, links.dp);
  };
  // ZeRO-1/2 gather the updated weights after the step (Megatron's distributed optimizer).
  auto optimizer_gather = [&](double params) {
    return terms::optimizer_gather_seconds(c.zero_stage, params * ctx.per_param.weights, shards, links.dp);
  };
  auto optimizer_seconds = [&](double params) {
    const double shard = c.zero_stage >= 1 ? params / static_cast<double>(shards) : params;
    return ctx.device.optimizer_seconds(shard * ctx.optimizer_step_bytes) + optimizer_gather(params);
  };

  Sums r0, last, middle;
  ChunkKind first;
  if (p == 1) {
    first = with_head(with_embedding(mid));
    first.dp_s = dp_seconds(first);
    r0.add(first, 1);
  } else {
    first = with_embedding(mid);
    first.dp_s = dp_seconds(first);
    ChunkKind end = with_head(mid);
    end.dp_s = dp_seconds(end);
    mid.dp_s = dp_seconds(mid);
    r0.add(first, 1);
    r0.add(mid, v - 1);
    last.add(mid, v - 1);
    last.add(end, 1);
    middle.add(mid, v);
  }

  closed_form::Pipeline pipeline;
  pipeline.add_rank(r0);
  double optimizer = optimizer_seconds(r0.params);
  if (p > 1) {
    pipeline.add_rank(last);
    optimizer = std::max(optimizer, optimizer_seconds(last.params));
    if (p > 2) {
      pipeline.add_rank(middle, static_cast<double>(p - 2));
      optimizer = std::max(optimizer, optimizer_seconds(middle.params));
    }
  }
  const double pipe = closed_form::pipeline_seconds(c.schedule, m, static_cast<double>(p), v, pipeline);
  // iteration_costs(): Megatron's scatter/gather of activations between stages.
  double p2p = 0;
  if (p > 1) {
    const double tokens = static_cast<double>(c.micro_batch) * static_cast<double>(ctx.base.training.seq_len) /
                          static_cast<double>(c.cp);
    const double bytes = tokens * static_cast<double>(model.hidden) * ctx.element_bytes;
    p2p = terms::pipeline_transfer_seconds(bytes, c.tp, c.sequence_parallel, links.pp, key.tp_link);
  }
  const double transfers = closed_form::transfer_seconds(c.schedule, m, static_cast<double>(p), v, p2p, pipeline);
  const double dp_exposed = closed_form::exposed_dp_seconds(
      ctx.base.layout.dp_overlap, kDpBucketsPerChunk, v, static_cast<double>(p), r0.dp, first.dp_s,
      first.backward_input.total_s() + first.backward_weight.total_s());
  const double iteration = pipe + transfers + dp_exposed + optimizer;
  if (breakdown) {
    const double sends = closed_form::exposed_sends_seconds(c.schedule, m, static_cast<double>(p), p2p, r0, pipeline);
    closed_form::fill_breakdown(*breakdown, m, r0, pipe, transfers, sends, dp_exposed, optimizer, optimizer_gather(r0.params), 0);
  }
  return iteration;
}

}  // namespace plansight::estimator::search_detail
