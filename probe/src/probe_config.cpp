// make_config(): the request's model and layout as the probe runs them. The request reader
// already applied the estimator's validate(); these are the probe's own limits (kernels' model,
// no split-backward schedule) and the derived sizes. The device is the engine's choice.
#include "probe_config.h"

#include <string>

#include "plansight/estimator/memory.h"
#include "plansight/estimator/parameters.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

Result<ProbeConfig> make_config(const ProbeRequest& r) {
  std::vector<Diagnostic> errors;
  auto fail = [&](std::string field, std::string message) { errors.push_back(make_error(std::move(field), std::move(message))); };
  const auto& m = r.model;
  const auto& l = r.layout;
  ProbeConfig c;
  c.request = r;
  c.tp = static_cast<int>(l.tp);
  c.pp = static_cast<int>(l.pp);
  c.vpp = static_cast<int>(l.vpp);
  c.dp = static_cast<int>(l.dp > 0 ? l.dp : 1);
  c.zero_stage = static_cast<int>(l.zero_stage);
  c.recompute = l.recompute;

  if (l.tp < 1 || l.pp < 1 || l.vpp < 1 || l.dp < 0) fail("layout", "tp, pp, vpp must be >= 1 and dp >= 0");
  if (l.cp != 1) fail("layout.cp", "value " + str(l.cp) + ": the probe does not run context parallelism; valid: 1");
  if (l.sequence_parallel && l.tp > 1) fail("layout.sequence_parallel", "the CPU probe runs plain Megatron TP; valid: false");
  if (l.zero_stage < 0 || l.zero_stage > 3) fail("layout.zero_stage", "value " + str(l.zero_stage) + "; valid: 0..3");
  if (l.schedule == est::PipelineSchedule::zb_h1 || l.schedule == est::PipelineSchedule::dualpipev ||
      l.schedule == est::PipelineSchedule::dualpipe) {
    fail("layout.schedule", std::string(est::to_string(l.schedule)) +
                                " splits the backward, which the probe's kernels do not; valid: gpipe, 1f1b, interleaved");
  }
  if (m.gated_mlp || !m.norm_bias || m.norms_per_layer != 2 || m.norm != est::NormKind::layer_norm || m.position != est::PositionKind::learned || m.kv_heads != m.heads) {
    fail("model", "the probe's kernels run a GPT-2 decoder (two LayerNorms with bias per layer, GeLU MLP, learned positions, multi-head attention)");
  }
  if (m.layers < 1 || m.hidden < 1 || m.heads < 1 || m.vocab < 1 || m.ffn_hidden < 1) fail("model", "layers, hidden, heads, vocab and ffn_hidden must be >= 1");
  if (m.effective_head_dim() * m.heads != m.hidden) fail("model.head_dim", "heads * head_dim must equal hidden " + str(m.hidden));
  if (r.seq_len < 1 || r.seq_len > m.max_seq_len) fail("seq_len", "value " + str(r.seq_len) + "; valid: 1.." + str(m.max_seq_len) + " (model.max_seq_len)");
  if (l.tp >= 1 && (m.heads % l.tp != 0 || m.ffn_hidden % l.tp != 0)) {
    fail("layout.tp", "value " + str(l.tp) + " must divide model.heads " + str(m.heads) + " and model.ffn_hidden " + str(m.ffn_hidden));
  }
  if (r.data == DataSource::corpus && m.vocab < 256) fail("model.vocab", "value " + str(m.vocab) + ": the corpus is read byte by byte; valid: >= 256");
  if (!errors.empty()) return errors;

  const std::int64_t per_step = r.micro_batch * c.dp;
  if (r.global_batch % per_step != 0) {
    return make_error("global_batch", "value " + str(r.global_batch) + " is not a multiple of micro_batch * dp = " + str(per_step));
  }
  c.micro_batches = static_cast<int>(r.global_batch / per_step);
  auto table = est::make_schedule(l, c.micro_batches);
  if (!table) return table.errors();
  c.schedule = std::move(*table);
  auto transfers = plan_transfers(c.schedule);
  if (!transfers) return transfers.errors();
  c.transfers = std::move(*transfers);

  est::Plan plan;
  plan.model = m;
  plan.layout = l;
  for (auto n : est::chunk_layers(plan)) c.chunk_layers.push_back(static_cast<int>(n));
  int first = 0;
  for (std::size_t g = 0; g < c.chunk_layers.size(); ++g) {
    if (c.chunk_layers[g] < 1) {
      return make_error("layout.vpp", "model chunk " + str(static_cast<std::int64_t>(g)) + " would hold no layer: pp * vpp = " +
                                          str(c.chunks()) + " exceeds model.layers " + str(m.layers));
    }
    c.chunk_first_layer.push_back(first);
    first += c.chunk_layers[g];
  }

  Dims& d = c.dims;
  d.B = static_cast<int>(r.micro_batch);
  d.T = static_cast<int>(r.seq_len);
  d.C = static_cast<int>(m.hidden);
  d.NH = static_cast<int>(m.heads);
  d.F = static_cast<int>(m.ffn_hidden);
  d.V = static_cast<int>(m.vocab);
  // Padded as the estimator pads it (training.vocab_divisible_by, Megatron-LM's 128, x TP), so
  // that the LM head's GEMMs have leading dimensions tensor cores take (GPT-2's 50257 is odd and
  // keeps cuBLASLt off Hopper's TMA kernels) and compare predicts the shapes this run trains.
  // Padded rows never win a softmax (the vocabulary-parallel loss masks them).
  d.Vp = static_cast<int>(estimator::padded_vocab(m.vocab, l.tp));
  d.maxT = static_cast<int>(m.max_seq_len);
  d.tp = c.tp;
  d.qkv_bias = m.qkv_bias;
  d.proj_bias = m.attention_out_bias;
  d.mlp_bias = m.mlp_bias;
  d.tied = m.tied_embeddings;
  return c;
}

}  // namespace plansight::probe
