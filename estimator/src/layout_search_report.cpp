// The words of the layout search: candidates as plans and as text, why one was rejected, the
// summary that names the constraint which removed everything, and the closed-form figures of
// one plan for tests. Strings are built here, once per reason, never in the search loop.
#include <cstdio>

#include "layout_search_lean.h"
#include "plansight/estimator/memory.h"
#include "bytes_text.h"

namespace plansight::estimator {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

std::string gib(double bytes) { return detail::gib_text(bytes); }

std::string thousands(std::int64_t n) {
  std::string raw = std::to_string(n), out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && (raw.size() - i) % 3 == 0) out += ',';
    out += raw[i];
  }
  return out;
}

}  // namespace

std::string_view to_string(RejectReason reason) {
  switch (reason) {
    case RejectReason::tp_heads: return "tp does not divide heads";
    case RejectReason::tp_ffn: return "tp does not divide ffn_hidden";
    case RejectReason::cp_sequence: return "seq_len not divisible by 2*cp";
    case RejectReason::layer_split: return "pp*vpp does not divide layers";
    case RejectReason::global_batch: return "global batch not divisible";
    case RejectReason::interleaved_micro_batches: return "interleaved needs micro-batches divisible by pp";
    case RejectReason::cp_attention: return "context parallelism needs flash attention";
    case RejectReason::zero_pipeline: return "ZeRO-2/3 with pipeline parallelism";
    case RejectReason::expert_layout: return "expert layout does not divide";
    case RejectReason::memory: return "does not fit in memory";
  }
  return "unknown";
}

Plan apply_candidate(const Plan& base, const Candidate& c) {
  Plan plan = base;
  const bool dp_overlap = base.layout.dp_overlap;
  plan.layout = LayoutSpec{};
  plan.layout.tp = c.tp;
  plan.layout.pp = c.pp;
  plan.layout.vpp = c.vpp;
  plan.layout.dp = c.dp;
  plan.layout.cp = c.cp;
  plan.layout.sequence_parallel = c.sequence_parallel;
  plan.layout.zero_stage = c.zero_stage;
  plan.layout.recompute = c.recompute;
  plan.layout.schedule = c.schedule;
  plan.layout.ep = c.ep;
  plan.layout.etp = c.etp;
  plan.layout.dp_overlap = dp_overlap;
  // Offloading is the plan's choice, searched with it (search_library_costed).
  plan.layout.offload_optimizer = base.layout.offload_optimizer;
  plan.layout.offload_params = base.layout.offload_params;
  plan.layout.offload_activations = base.layout.offload_activations;
  // The plan's expert all-to-all overlap where the candidate allows it (validate_expert_layout's
  // rules: ep > 1, and virtual stages with pipeline parallelism); elsewhere it runs exposed.
  plan.layout.ep_overlap = base.layout.ep_overlap && c.ep > 1 && (c.pp == 1 || c.vpp > 1);
  // The plan's TP communication overlap likewise where the candidate allows it (tp > 1 with
  // sequence parallelism, validate_layout's rule).
  plan.layout.tp_overlap = base.layout.tp_overlap && c.tp > 1 && c.sequence_parallel;
  const std::int64_t chunks = c.pp * c.vpp;
  if (base.model.moe.enabled() && chunks > 0 && base.model.layers % chunks != 0 && base.model.layers >= chunks) {
    // MoE models (DeepSeek-V3's 61 layers) rarely divide evenly: the earliest chunks take one
    // layer more, as Megatron's --decoder-first/last-pipeline-num-layers let users set.
    plan.layout.stage_layers.assign(static_cast<std::size_t>(chunks), base.model.layers / chunks);
    for (std::int64_t i = 0; i < base.model.layers % chunks; ++i) ++plan.layout.stage_layers[static_cast<std::size_t>(i)];
  }
  plan.training.micro_batch = c.micro_batch;
  // The search ranks by predicted time; a given throughput would make every layout alike.
  plan.training.achieved_tflops = 0;
  plan.training.mfu = 0;
  return plan;
}

std::string describe(const Candidate& c) {
  std::string out = "tp " + str(c.tp) + ", pp " + str(c.pp);
  if (c.vpp > 1) out += " (vpp " + str(c.vpp) + ")";
  out += ", dp " + str(c.dp) + ", cp " + str(c.cp);
  if (c.ep > 1 || c.etp > 0) out += ", ep " + str(c.ep) + ", etp " + str(c.etp > 0 ? c.etp : c.tp);
  out += ", micro-batch " + str(c.micro_batch);
  if (c.sequence_parallel) out += ", sequence parallel";
  out += ", zero " + str(c.zero_stage) + ", recompute " + std::string(to_string(c.recompute)) + ", " +
         std::string(to_string(c.schedule));
  return out;
}

std::string search_detail::rejection_detail(const Plan& base, RejectReason reason, const Candidate& c) {
  const auto& m = base.model;
  switch (reason) {
    case RejectReason::tp_heads:
      return "tp " + str(c.tp) + " does not divide heads (" + str(m.heads) + ") or kv_heads (" + str(m.kv_heads) + ")";
    case RejectReason::tp_ffn: return "tp " + str(c.tp) + " does not divide ffn_hidden (" + str(m.ffn_hidden) + ")";
    case RejectReason::cp_sequence:
      return "seq_len " + str(base.training.seq_len) + " is not divisible by 2*cp = " + str(2 * c.cp);
    case RejectReason::layer_split:
      if (m.moe.enabled()) {  // MoE searches split unevenly (apply_candidate); only too few layers reject
        return "pp*vpp = " + str(c.pp * c.vpp) + " exceeds layers (" + str(m.layers) + ")";
      }
      return "pp*vpp = " + str(c.pp * c.vpp) + " does not divide layers (" + str(m.layers) + ")";
    case RejectReason::global_batch:
      return "global batch " + str(base.training.global_batch) + " is not divisible by micro_batch*dp = " +
             str(c.micro_batch * c.dp);
    case RejectReason::interleaved_micro_batches:
      return str(base.training.global_batch / (c.micro_batch * c.dp)) + " micro-batches per pipeline, not divisible by pp " +
             str(c.pp);
    case RejectReason::cp_attention:
      return "cp " + str(c.cp) + " with " + std::string(to_string(base.training.attention)) +
             " attention: context parallelism runs on flash attention kernels (framework rules; attention flash "
             "or rules off to search it)";
    case RejectReason::zero_pipeline:
      return "zero " + str(c.zero_stage) + " with pp " + str(c.pp) +
             ": DeepSpeed and Megatron-LM do not combine ZeRO-2/3 with pipeline parallelism (framework rules)";
    case RejectReason::expert_layout:
      return "ep " + str(c.ep) + " x etp " + str(c.etp > 0 ? c.etp : c.tp) + " against " + str(m.moe.experts) +
             " experts of width " + str(m.moe.expert_ffn_hidden) + " and tp*cp*dp = " + str(c.tp * c.cp * c.dp);
    case RejectReason::memory: {
      const Plan plan = apply_candidate(base, c);
      const MemoryEstimate mem = estimate_memory(plan, padded_vocab(m.vocab, c.tp, plan.training.vocab_divisible_by));
      return "stage " + str(mem.most_loaded_stage) + " needs " + gib(mem.peak.total_bytes()) + " of " +
             gib(mem.capacity_bytes);
    }
  }
  return {};
}

std::string rejection_summary(const SearchResult& r) {
  std::string out;
  if (r.layouts.empty()) {
    if (r.enumerated == 0) {
      out += "no layout fits: nothing was enumerated\n";
    } else if (r.evaluated > 0) {
      // Memory is the last check: everything that passed the integer checks failed it.
      out += "no layout fits: all " + thousands(r.evaluated) + " of " + thousands(r.enumerated) +
             " candidates that pass the divisibility checks do not fit in memory\n";
    } else {
      const Rejection& top = r.rejections.front();
      out += "no layout fits: no candidate passes the divisibility checks; most rejected: " +
             std::string(to_string(top.reason)) + " (" + thousands(top.count) + " of " + thousands(r.enumerated) + ")\n";
    }
  }
  for (const auto& rej : r.rejections) {
    out += "  " + std::string(to_string(rej.reason)) + ": " + thousands(rej.count) + " (first: " + describe(rej.first) +
           ": " + rej.detail + ")\n";
    if (rej.reason == RejectReason::memory) {
      out += "    closest to fitting: " + describe(rej.closest) + " needs " + gib(rej.closest_bytes) + "\n";
    }
  }
  return out;
}

ClosedFormFigures search_closed_form(const Plan& plan) {
  using namespace search_detail;
  const SearchContext ctx(plan);
  const auto& l = plan.layout;
  Candidate c;
  c.tp = l.tp, c.pp = l.pp, c.vpp = l.vpp, c.dp = plan.dp(), c.cp = l.cp;
  c.micro_batch = plan.training.micro_batch;
  c.zero_stage = l.zero_stage, c.recompute = l.recompute, c.schedule = l.schedule;
  c.sequence_parallel = l.sequence_parallel;
  const KeyCosts key = key_costs(ctx, c.tp, c.cp, c.sequence_parallel, c.micro_batch, c.recompute);
  const UnitLinks links = unit_links(ctx, c.tp, c.cp, c.dp);
  ClosedFormFigures out;
  out.iteration_s = lean_iteration_s(ctx, key, links, c, &out.breakdown);
  const LeanMemory mem = lean_memory(ctx, key, c);
  out.peak = mem.peak;
  out.most_loaded_stage = mem.stage;
  out.fits = mem.total_bytes <= static_cast<double>(plan.cluster.gpu.memory_bytes);
  return out;
}

}  // namespace plansight::estimator
