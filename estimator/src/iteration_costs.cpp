// Per-chunk costs of one iteration: layers of each model chunk times the layer cost, plus the
// embedding on the first chunk and the LM head on the last; pipeline transfers; data-parallel
// reductions (all-reduce, or reduce-scatter under ZeRO) and ZeRO-3 gathers; optimizer steps.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "iteration_terms.h"
#include "moe_memory.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/offload.h"
#include "plansight/estimator/parameters.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/time_model.h"

namespace plansight::estimator {
namespace {

void add_segment(OpCost& op, Lane lane, double seconds, double flops = 0, double bytes = 0, std::int32_t label = -1) {
  if (seconds > 0) op.segments.push_back({lane, seconds, flops, bytes, label});
}

OpCost to_op(const PhaseCost& c) {
  OpCost op;
  // Its segments in one allocation (an estimate makes four ops a chunk).
  std::size_t segments = 0;
  for (const double s : {c.compute_s, c.offload_s, c.tp_comm_s, c.cp_comm_s, c.dp_comm_s, c.ep_comm_s, c.zero3_gather_hidden_s,
                         c.zero3_reduce_scatter_hidden_s, c.cp_hidden_s, c.ep_hidden_s, c.tp_hidden_s}) {
    segments += s > 0 ? 1 : 0;
  }
  op.segments.reserve(segments);
  add_segment(op, Lane::compute, c.compute_s, c.flops);
  // Exposed host-link transfers stall the compute stream (it waits for the fetched layer or the
  // freed buffer), so they take compute-lane time; the host link is not the NCCL lane.
  add_segment(op, Lane::compute, c.offload_s);
  // Each group's exposed collectives as their own span, named by comm_span_labels() (time_model.h).
  add_segment(op, Lane::communication, c.tp_comm_s, 0, c.tp_bytes, kTpLabel);
  add_segment(op, Lane::communication, c.cp_comm_s, 0, c.cp_bytes, kCpLabel);
  add_segment(op, Lane::communication, c.dp_comm_s, 0, c.dp_bytes, kDpLabel);
  add_segment(op, Lane::communication, c.ep_comm_s, 0, c.ep_bytes, kEpLabel);
  // What compute hides of the collectives, drawn beside it (OpSegment::overlapped). A group's
  // bytes are shared between its exposed and hidden spans by their time (one link, one size).
  const auto share = [](double bytes, double part_s, double total_s) { return total_s > 0 ? bytes * part_s / total_s : 0.0; };
  const double zero3_s = c.dp_comm_s + c.zero3_gather_hidden_s + c.zero3_reduce_scatter_hidden_s;
  for (auto [seconds, bytes, label] : {std::tuple{c.zero3_gather_hidden_s, share(c.dp_bytes, c.zero3_gather_hidden_s, zero3_s), kZero3GatherLabel},
                                       std::tuple{c.zero3_reduce_scatter_hidden_s,
                                                  share(c.dp_bytes, c.zero3_reduce_scatter_hidden_s, zero3_s), kZero3ReduceScatterLabel},
                                       std::tuple{c.cp_hidden_s, share(c.cp_bytes, c.cp_hidden_s, c.cp_hidden_s + c.cp_comm_s), kCpLabel},
                                       std::tuple{c.ep_hidden_s, share(c.ep_bytes, c.ep_hidden_s, c.ep_hidden_s + c.ep_comm_s), kEpLabel},
                                       std::tuple{c.tp_hidden_s, share(c.tp_bytes, c.tp_hidden_s, c.tp_hidden_s + c.tp_comm_s), kTpLabel}}) {
    if (seconds > 0) op.segments.push_back({Lane::communication, seconds, 0, bytes, label, true});
  }
  // The exposed spans keep the rest of their group's bytes.
  for (OpSegment& s : op.segments) {
    if (s.overlapped || s.lane != Lane::communication) continue;
    if (s.label == kDpLabel) s.bytes = share(c.dp_bytes, c.dp_comm_s, zero3_s);
    if (s.label == kCpLabel) s.bytes = share(c.cp_bytes, c.cp_comm_s, c.cp_hidden_s + c.cp_comm_s);
    if (s.label == kEpLabel) s.bytes = share(c.ep_bytes, c.ep_comm_s, c.ep_hidden_s + c.ep_comm_s);
    if (s.label == kTpLabel) s.bytes = share(c.tp_bytes, c.tp_comm_s, c.tp_hidden_s + c.tp_comm_s);
  }
  return op;
}

// What a chunk's ChunkCost is made of: chunks with equal keys get equal costs, built once.
struct ChunkKey {
  PhaseCost forward, backward_input, backward_weight, recompute;
  double send_activation_seconds = 0, send_gradient_seconds = 0, dp_reduce_seconds = 0, dp_reduce_bytes = 0;
  friend bool operator==(const ChunkKey&, const ChunkKey&) = default;
  ChunkCost cost() const {
    ChunkCost c;
    c.forward = to_op(forward);
    c.backward = to_op(backward_input);
    c.weight_grad = to_op(backward_weight);
    c.recompute = to_op(recompute);
    c.send_activation_seconds = send_activation_seconds;
    c.send_gradient_seconds = send_gradient_seconds;
    c.dp_reduce_seconds = dp_reduce_seconds;
    c.dp_reduce_bytes = dp_reduce_bytes;
    return c;
  }
};

// The chunk costs made so far, by key. A uniform model's chunks come in runs (the first chunk,
// then the middle ones, the last), so a key is looked for among the last few made only: a plan
// whose chunks differ everywhere (uneven stage_layers) makes one cost a chunk, as before, at a
// few comparisons each.
class DistinctChunks {
 public:
  // The index in `chunks` of the cost of `key`, made and appended if none of the last few has it.
  std::int32_t index_of(const ChunkKey& key, std::vector<ChunkCost>& chunks) {
    const std::size_t n = keys_.size(), looked = std::min<std::size_t>(n, kLooked);
    for (std::size_t k = n; k-- > n - looked;) {
      if (keys_[k].first == key) return keys_[k].second;
    }
    const auto index = static_cast<std::int32_t>(chunks.size());
    chunks.push_back(key.cost());
    keys_.emplace_back(key, index);
    return index;
  }

 private:
  static constexpr std::size_t kLooked = 4;
  std::vector<std::pair<ChunkKey, std::int32_t>> keys_;
};

// "in a node" or "across nodes": the link a group's collectives use.
std::string link_words(const Link& link) { return link.crosses_nodes ? "across nodes" : "in a node"; }

}  // namespace

std::vector<std::string> comm_span_labels(const Plan& plan, const CommLinks& links) {
  const auto& l = plan.layout;
  const std::string shards = std::to_string(plan.dp() * l.cp);
  return {
      std::string(l.sequence_parallel ? "TP all-gather/reduce-scatter" : "TP all-reduce") + " · tp " + std::to_string(l.tp) +
          " · " + link_words(links.tp),
      "CP ring exchange · cp " + std::to_string(l.cp) + " · " + link_words(links.cp),
      "ZeRO-3 gather/reduce-scatter · dp x cp " + shards + " · " + link_words(links.dp),
      "EP all-to-all · ep " + std::to_string(l.ep) + (l.expert_tp() > 1 ? ", etp " + std::to_string(l.expert_tp()) : ""),
      std::string(l.zero_stage == 0 ? "DP all-reduce" : "DP reduce-scatter") + " · dp x cp " + shards + " · " +
          link_words(links.dp),
      "pp " + std::to_string(l.pp) + " · " + link_words(links.pp),
      "ZeRO-" + std::to_string(l.zero_stage) + " parameter all-gather · dp x cp " + shards + " · " + link_words(links.dp),
      "ZeRO-3 all-gather · dp x cp " + shards + " · " + link_words(links.dp),
      "ZeRO-3 reduce-scatter · dp x cp " + shards + " · " + link_words(links.dp),
  };
}

namespace {

// Host-link time of one micro-batch's chunk pass, per direction, overlapped with the layers'
// compute of that pass (ZeRO-Offload Sec. 4.2 and ZeRO-Infinity Sec. 6 overlap transfers with
// compute; PCIe is full duplex, so each direction is its own pipe): the excess is exposed.
double exposed_transfer_seconds(const ClusterSpec& cluster, double h2d_bytes, double d2h_bytes, double compute_s) {
  const double link_s = std::max(host_link_seconds(cluster, h2d_bytes), host_link_seconds(cluster, d2h_bytes));
  return std::max(0.0, link_s - compute_s);
}

}  // namespace

// Bytes one Adam(W) step moves per parameter: read master weights, gradient and states, write
// master and states, write the compute-precision weights; plus the gradient-norm pass (read)
// and zeroing (write) of the gradients.
double optimizer_bytes_per_parameter(const TrainingSpec& t) {
  const StateBytesPerParameter b = state_bytes_per_parameter(t);
  const bool separate_master = b.optimizer > 0 && t.master_precision == MasterPrecision::fp32 &&
                               !(t.precision == Precision::fp32 || t.precision == Precision::tf32);
  const double master = separate_master ? 4.0 : 0.0;
  const double states = b.optimizer - master;
  return 2 * (master + states) + b.gradients + (separate_master ? b.weights : b.weights * 2) + 2 * b.gradients;
}

IterationCosts iteration_costs(const Plan& plan, const DeviceModel& device, const CommLinks& links,
                               std::int64_t padded_vocab) {
  const auto& l = plan.layout;
  const std::int64_t p = l.pp, v = l.vpp, chunks_total = p * v;
  const std::int64_t shards = plan.dp() * l.cp;
  const double t = static_cast<double>(l.tp);

  const PassCost layer = layer_cost(plan, device, links);
  const PassCost embedding = embedding_cost(plan, device, links);
  const PassCost head = lm_head_cost(plan, device, links, padded_vocab);
  const std::vector<std::int64_t> layers = chunk_layers(plan);
  const ParameterCounts counts = count_parameters(plan.model, padded_vocab);
  const StateBytesPerParameter per_param = state_bytes_per_parameter(plan.training);

  IterationCosts out;
  for (auto* list : {&out.chunk_forward, &out.chunk_backward_input, &out.chunk_backward_weight, &out.chunk_recompute}) {
    list->reserve(static_cast<std::size_t>(chunks_total));
  }
  for (auto* list : {&out.chunk_dp_seconds, &out.chunk_dp_bytes}) list->reserve(static_cast<std::size_t>(chunks_total));
  out.chunk_of.reserve(static_cast<std::size_t>(chunks_total));
  DistinctChunks distinct;
  // Through each chunk: DualPipe's two pipelines take half the micro-batches each.
  out.micro_batches = plan.micro_batches() / (two_pipelines(l.schedule) ? 2 : 1);
  const double tokens = static_cast<double>(plan.training.micro_batch) * static_cast<double>(plan.training.seq_len) /
                        static_cast<double>(l.cp);
  const double e = plan.training.precision == Precision::fp32 || plan.training.precision == Precision::tf32 ? 4.0 : 2.0;
  // Megatron's scatter/gather optimisation (Narayanan et al. 2021, Sec. 4.1): each TP rank sends
  // 1/t of the activation between stages, then the receivers all-gather it over NVLink.
  if (p > 1) {
    const double bytes = tokens * static_cast<double>(plan.model.hidden) * e;
    out.p2p_seconds = terms::pipeline_transfer_seconds(bytes, l.tp, l.sequence_parallel, links.pp, links.tp);
    out.p2p_bytes = sent_bytes(Collective::send_recv, bytes / t, 2);  // the gather after it is the TP group's
  }

  // MoE models: MoE layers cost moe_layer_cost(); routed experts (split over ep x etp) reduce
  // their gradients over the expert-data-parallel group; MTP modules run on the last chunk.
  const bool moe = plan.model.moe.enabled();
  const PassCost moe_layer = moe ? moe_layer_cost(plan, device, links) : PassCost{};
  const std::vector<std::int64_t> moe_layers = chunk_moe_layers(plan, layers);
  const double experts_per_layer =
      counts.routed_experts / static_cast<double>(std::max<std::int64_t>(l.ep * l.expert_tp(), 1));
  const std::int64_t expert_shards = plan.expert_dp();
  std::vector<double> rank_expert_params(static_cast<std::size_t>(p), 0.0);

  std::vector<double> rank_params(static_cast<std::size_t>(p), 0.0);
  // Stored activations per layer and micro-batch, for activation offloading.
  const bool kinds = needs_layer_kinds(plan.model);
  const double act_per_layer = kinds ? layer_activation_bytes_by_kind(plan, l.recompute, false) : layer_activation_bytes(plan);
  const double act_per_moe_layer = kinds && moe ? layer_activation_bytes_by_kind(plan, l.recompute, true) : 0.0;
  for (std::int64_t g = 0; g < chunks_total; ++g) {
    const double n = static_cast<double>(layers[static_cast<std::size_t>(g)]);
    PhaseCost f = layer.forward * n, bi = layer.backward_input * n, bw = layer.backward_weight * n, r = layer.recompute * n;
    double params = n * counts.layer.per_tp_rank(l.tp);
    double expert_params = 0;
    if (const double nm = static_cast<double>(moe_layers[static_cast<std::size_t>(g)]); nm > 0) {
      f = layer.forward * (n - nm);
      f += moe_layer.forward * nm;
      bi = layer.backward_input * (n - nm);
      bi += moe_layer.backward_input * nm;
      bw = layer.backward_weight * (n - nm);
      bw += moe_layer.backward_weight * nm;
      r = layer.recompute * (n - nm);
      r += moe_layer.recompute * nm;
      params = (n - nm) * counts.layer.per_tp_rank(l.tp) + nm * counts.moe_layer.per_tp_rank(l.tp);
      expert_params = nm * experts_per_layer;
    }
    // The layers' own compute, which the offload transfers of this chunk overlap.
    const double layers_forward_s = f.compute_s;
    const double layers_backward_s = bi.compute_s + bw.compute_s + r.compute_s;
    if (starts_pipeline(l.schedule, p, g)) {
      f += embedding.forward;
      bi += embedding.backward_input;
      bw += embedding.backward_weight;
      params += counts.word_embedding / t + counts.position_embedding;
    }
    if (ends_pipeline(l.schedule, p, v, g)) {
      f += head.forward;
      bi += head.backward_input;
      bw += head.backward_weight;
      // A tied embedding is copied onto the head's rank unless a first chunk is there too
      // (DualPipeV's rank 0; both of DualPipe's head ranks start the other copy's pipeline).
      const std::int64_t head_rank = rank_of_chunk(l.schedule, p, g);
      const bool head_with_embedding = head_rank == 0 || (two_pipelines(l.schedule) && head_rank == p - 1);
      params += counts.final_norm +
                (plan.model.tied_embeddings ? (head_with_embedding ? 0.0 : counts.word_embedding / t) : counts.lm_head / t);
      // MTP module k: its layer and a second pass through the shared head (the 2h -> h
      // projection, under 1% of a layer, is left out).
      for (std::int64_t k = 0; k < plan.model.mtp_modules; ++k) {
        const bool moe_mtp = plan.model.is_moe_layer(plan.model.layers + k);
        const PassCost& extra = moe_mtp ? moe_layer : layer;
        for (auto [phase, of, of_head] : {std::tuple{&f, &extra.forward, &head.forward},
                                          std::tuple{&bi, &extra.backward_input, &head.backward_input},
                                          std::tuple{&bw, &extra.backward_weight, &head.backward_weight}}) {
          *phase += *of;
          *phase += *of_head;
        }
        r += extra.recompute;
        params += counts.mtp_extra.per_tp_rank(l.tp) +
                  (moe_mtp ? counts.moe_layer.per_tp_rank(l.tp) : counts.layer.per_tp_rank(l.tp));
        expert_params += moe_mtp ? experts_per_layer : 0.0;
      }
    }
    if (l.offloads()) {
      // Per micro-batch, for this GPU: ZeRO-Infinity fetches its parameter shard (H2D) in the
      // forward and again in the backward; activation offloading writes the stored activations
      // out in the forward and reads them back in the backward; ZeRO-Offload with ZeRO >= 2
      // copies each reduced gradient shard to the host during the backward (DeepSpeed
      // accumulates micro-batches on the host).
      const double shard = params / static_cast<double>(shards) + expert_params / static_cast<double>(expert_shards);
      const double fetch = l.offload_params ? shard * per_param.weights : 0.0;
      const double nm = static_cast<double>(moe_layers[static_cast<std::size_t>(g)]);
      const double stored = l.offload_activations ? (n - nm) * act_per_layer + nm * act_per_moe_layer : 0.0;
      const double grads = l.offload_optimizer && l.zero_stage >= 2 ? shard * per_param.gradients : 0.0;
      f.offload_s += exposed_transfer_seconds(plan.cluster, fetch, stored, layers_forward_s);
      bi.offload_s += exposed_transfer_seconds(plan.cluster, fetch + stored, grads, layers_backward_s);
    }
    const auto rank = static_cast<std::size_t>(rank_of_chunk(l.schedule, p, g));
    rank_params[rank] += params;
    rank_expert_params[rank] += expert_params;
    const double grad_bytes = params * per_param.gradients;
    if (l.zero_stage >= 3) {
      const auto units = layers[static_cast<std::size_t>(g)];
      add_zero3_communication(f, bi, bw,
                              per_layer_collective_seconds(Collective::all_gather, params * per_param.weights, units, shards, links.dp),
                              per_layer_collective_seconds(Collective::reduce_scatter, grad_bytes, units, shards, links.dp),
                              plan.training.zero3_prefetch);
      // Per micro-batch: gather before the forward and again before the backward, reduce-scatter
      // after it: 3 x the parameters' bytes against DP's 2 (Rajbhandari et al. 2020, Sec. 7.2.2).
      const double gather_bytes = sent_bytes(Collective::all_gather, params * per_param.weights, shards);
      f.dp_bytes += gather_bytes;
      bi.dp_bytes += gather_bytes + sent_bytes(Collective::reduce_scatter, grad_bytes, shards);
    }

    ChunkKey c;
    c.send_activation_seconds = !ends_pipeline(l.schedule, p, v, g) ? out.p2p_seconds : 0.0;
    c.send_gradient_seconds = !starts_pipeline(l.schedule, p, g) ? out.p2p_seconds : 0.0;
    // ZeRO-3 communicates per micro-batch (inside the phases above); otherwise gradients are
    // reduced once per iteration: all-reduce, or reduce-scatter under ZeRO-1/2.
    double dp_bytes = 0;
    c.dp_reduce_seconds = terms::gradient_reduction_seconds(l.zero_stage, grad_bytes, shards, links.dp);
    if (l.zero_stage < 3) dp_bytes = sent_bytes(terms::gradient_reduction(l.zero_stage), grad_bytes, shards);
    if (expert_params > 0) {
      // Expert gradients: all-reduce (ZeRO 0) or reduce-scatter (distributed optimizer) over
      // the expert-data-parallel group.
      const Collective op = terms::gradient_reduction(l.zero_stage);
      c.dp_reduce_seconds += collective_seconds(op, expert_params * per_param.gradients, expert_shards, links.edp);
      dp_bytes += sent_bytes(op, expert_params * per_param.gradients, expert_shards);
    }
    if (two_pipelines(l.schedule)) {
      // DualPipe keeps two copies of the model (DeepSeek-V3 report, Sec. 3.2.1): this chunk's
      // layers also sit on rank p-1-r, and the two sum their gradients before the step, an
      // all-reduce between the pair over the pipeline's link of what this GPU updates (its
      // shard under ZeRO).
      const double own = grad_bytes / static_cast<double>(l.zero_stage >= 1 ? shards : 1) +
                         expert_params * per_param.gradients / static_cast<double>(l.zero_stage >= 1 ? expert_shards : 1);
      c.dp_reduce_seconds += collective_seconds(Collective::all_reduce, own, 2, links.pp);
      dp_bytes += sent_bytes(Collective::all_reduce, own, 2);
    }
    out.chunk_dp_seconds.push_back(c.dp_reduce_seconds);
    out.chunk_dp_bytes.push_back(dp_bytes);
    c.dp_reduce_bytes = dp_bytes;
    c.forward = f, c.backward_input = bi, c.backward_weight = bw, c.recompute = r;
    out.chunk_forward.push_back(f);
    out.chunk_backward_input.push_back(bi);
    out.chunk_backward_weight.push_back(bw);
    out.chunk_recompute.push_back(r);
    out.chunk_of.push_back(distinct.index_of(c, out.chunks));
  }

  const double step_bytes = optimizer_bytes_per_parameter(plan.training);
  // ZeRO-Offload's step (offload.h): the CPU updates the shard, then the updated 16-bit weights
  // go back to the GPU (on the critical path: the next forward needs them), unless ZeRO-Infinity
  // keeps them on the host; ZeRO-1 copies its reduced gradient shard out first, after the
  // reduction. The all-gather of ZeRO-1/2 follows as without offloading.
  auto step_seconds = [&](double shard_params, double& transfer_s) {
    transfer_s = 0;
    if (!l.offload_optimizer) return device.optimizer_seconds(shard_params * step_bytes);
    if (!l.offload_params) transfer_s += host_link_seconds(plan.cluster, shard_params * per_param.weights);
    if (l.zero_stage == 1) transfer_s += host_link_seconds(plan.cluster, shard_params * per_param.gradients);
    return cpu_optimizer_seconds(plan, shard_params) + transfer_s;
  };
  for (std::int64_t r = 0; r < p; ++r) {
    const double params = rank_params[static_cast<std::size_t>(r)];
    const double shard = l.zero_stage >= 1 ? params / static_cast<double>(shards) : params;
    double gather = 0, gather_bytes = 0;
    // ZeRO-1/2 (Megatron's distributed optimizer): each rank updates its shard, then all ranks
    // all-gather the updated weights.
    if (terms::gathers_after_step(l.zero_stage)) {
      gather = terms::optimizer_gather_seconds(l.zero_stage, params * per_param.weights, shards, links.dp);
      gather_bytes = sent_bytes(Collective::all_gather, params * per_param.weights, shards);
    }
    const double experts = rank_expert_params[static_cast<std::size_t>(r)];
    if (experts > 0) {
      const double expert_shard = l.zero_stage >= 1 ? experts / static_cast<double>(expert_shards) : experts;
      if (terms::gathers_after_step(l.zero_stage)) {
        gather += terms::optimizer_gather_seconds(l.zero_stage, experts * per_param.weights, expert_shards, links.edp);
        gather_bytes += sent_bytes(Collective::all_gather, experts * per_param.weights, expert_shards);
      }
      double transfer = 0;
      out.optimizer_seconds.push_back(step_seconds(shard + expert_shard, transfer) + gather);
      out.optimizer_dp_seconds.push_back(gather);
      out.optimizer_dp_bytes.push_back(gather_bytes);
      out.optimizer_offload_seconds.push_back(transfer);
      continue;
    }
    double transfer = 0;
    out.optimizer_seconds.push_back(step_seconds(shard, transfer) + gather);
    out.optimizer_dp_seconds.push_back(gather);
    out.optimizer_dp_bytes.push_back(gather_bytes);
    out.optimizer_offload_seconds.push_back(transfer);
  }
  return out;
}

}  // namespace plansight::estimator
