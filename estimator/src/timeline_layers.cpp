// layer_timeline(): each op of a predicted timeline laid out layer by layer (timeline_layers.h).
#include "plansight/estimator/timeline_layers.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <unordered_map>

#include "plansight/estimator/comm_model.h"
#include "plansight/estimator/device_model.h"
#include "plansight/estimator/layer_costs.h"
#include "plansight/estimator/memory.h"
#include "plansight/estimator/operator_costs.h"
#include "plansight/estimator/pipeline_schedule.h"
#include "plansight/estimator/time_model.h"
#include "layer_dims.h"
#include "operator_emitter.h"
#include "tp_overlap.h"

namespace plansight::estimator {
namespace {

// The groups whose time an op's communication segments carry (iteration_costs.cpp's to_op()).
enum SpanGroup : std::uint8_t { kCompute, kTp, kCp, kDp, kEp, kGroups };

// One piece of an op: its group, its share of that group's time in the op (any unit: the shares
// of a group are scaled to the group's span), and what it is.
struct Piece {
  SpanGroup group;
  double weight;      // of the op's exposed time of its group
  std::int32_t name;  // index into Anatomy::names
  double hidden_weight;  // of the op's hidden time of its group; 0: compute never hides it
};

// Compute seconds of one layer's attention block (norm to residual) and MLP block, per pass.
struct Blocks {
  double attention = 0, mlp = 0;
};

// Sums a dense layer's operators of one pass into attention and MLP blocks by their step; their
// linear GEMMs (the matmuls outside the attention core that are split over TP, hides_tp) also
// apart, behind which layout.tp_overlap hides each block's TP collectives (tp_overlap.h).
class BlockSum final : public OperatorSink {
 public:
  void add(const OperatorCost& op) override {
    const bool attention = op.step < operators::step::kNormMlp;
    Blocks& b = all_[index(op.pass)];
    (attention ? b.attention : b.mlp) += op.seconds;
    if (hides_tp(op)) {
      Blocks& l = linear_[index(op.pass)];
      (attention ? l.attention : l.mlp) += op.seconds;
    }
  }
  const Blocks& all(OperatorPass pass) const { return all_[index(pass)]; }
  const Blocks& linear(OperatorPass pass) const { return linear_[index(pass)]; }

 private:
  static int index(OperatorPass pass) {
    return pass == OperatorPass::forward ? 0 : pass == OperatorPass::backward_input ? 1 : pass == OperatorPass::backward_weight ? 2 : 3;
  }
  Blocks all_[4], linear_[4];
};

// The passes an op runs: forward (F), backward (B: input gradients, with the weight gradients
// unless the schedule runs them as W ops) and recomputation (R).
enum Pass : std::uint8_t { kForward, kBackward, kRecompute, kPasses };

// What each op of a plan is made of, and the names of its pieces.
class Anatomy {
 public:
  Anatomy(const Plan& plan, std::int64_t padded_vocab, const HardwareProfile* profile) : plan_(plan) {
    const DeviceModel device(plan.cluster.gpu, plan.training.precision, default_efficiency(plan.cluster.gpu), profile);
    const CommLinks links = plan_links(plan, device.efficiency());
    const PassCost dense = layer_cost(plan, device, links);
    BlockSum blocks;
    for_each_layer_operator(plan, device, blocks);
    // A B op's compute span that its collectives follow is the input-gradient part: without W
    // ops the weight gradients run after them as a span of their own (iteration_costs.cpp).
    dense_[kForward] = blocks.all(OperatorPass::forward);
    dense_[kBackward] = blocks.all(OperatorPass::backward_input);
    // Full recomputation re-runs the forward; selective only the attention core.
    const bool full = plan.layout.recompute == Recompute::full;
    dense_[kRecompute] = full ? blocks.all(OperatorPass::forward) : Blocks{dense.recompute.compute_s, 0};
    // The share of each block's TP time each pass leaves exposed: all of it, or with
    // layout.tp_overlap what the block's linear GEMMs do not hide (tp_overlap.h, as layer_cost()).
    const bool overlap = plan.layout.tp_overlap && layer_dims(plan).sp;
    const auto set_exposed = [&](int kind, const PassCost& cost, const BlockSum& gemms) {
      const PhaseCost* phase[kPasses] = {&cost.forward, &cost.backward_input, &cost.recompute};
      const OperatorPass gemm_pass[kPasses] = {OperatorPass::forward, OperatorPass::backward_input, OperatorPass::forward};
      for (int p = 0; p < kPasses; ++p) {
        const double pass_tp = phase[p]->tp_comm_s + phase[p]->tp_hidden_s;
        const Blocks& linear = gemms.linear(gemm_pass[p]);
        for (int block = 0; block < kTpBlocks; ++block) {
          const double hidden = overlap && pass_tp > 0 ? tp_block_hidden_s(pass_tp, block == 0 ? linear.attention : linear.mlp) : 0;
          tp_exposed_[kind][p][block] = pass_tp > 0 ? 1 - hidden / (pass_tp / kTpBlocks) : 1.0;
        }
      }
    };
    set_exposed(0, dense, blocks);
    if (plan.model.moe.enabled()) {
      // A MoE layer: the dense layer's attention; the rest of its compute (shared and routed
      // experts, router, permutation) is its MLP block. Its TP collectives hide behind its dense
      // part's GEMMs (the attention, shared experts if any), as moe_layer_cost() has them.
      const PassCost moe = moe_layer_cost(plan, device, links);
      BlockSum dense_part;
      for_each_layer_operator(moe_dense_part(plan), device, dense_part);
      set_exposed(1, moe, dense_part);
      const double moe_total[kPasses] = {moe.forward.compute_s, moe.backward_input.compute_s, moe.recompute.compute_s};
      for (int p = 0; p < kPasses; ++p) {
        moe_[p].attention = std::min(dense_[p].attention, moe_total[p]);
        moe_[p].mlp = moe_total[p] - moe_[p].attention;
      }
    }
    const PassCost embedding = embedding_cost(plan, device, links);
    const PassCost head = lm_head_cost(plan, device, links, padded_vocab);
    embedding_[kForward] = embedding.forward.compute_s;
    embedding_[kBackward] = embedding.backward_input.compute_s;
    head_[kForward] = head.forward.compute_s;
    head_[kBackward] = head.backward_input.compute_s;

    // The collectives' relative costs: an all-reduce of the layer's [T, h] activation, or with
    // sequence parallelism an all-gather and a reduce-scatter of it (layer_costs.cpp).
    const LayerDims d = layer_dims(plan);
    const double activation_bytes = d.T * d.h * d.e;
    const std::int64_t tp = plan.layout.tp;
    sp_ = d.sp;
    all_reduce_ = collective_seconds(Collective::all_reduce, activation_bytes, tp, links.tp);
    all_gather_ = collective_seconds(Collective::all_gather, activation_bytes, tp, links.tp);
    reduce_scatter_ = collective_seconds(Collective::reduce_scatter, activation_bytes, tp, links.tp);

    const std::vector<std::string> labels = comm_span_labels(plan, links);
    label_[kTp] = labels[static_cast<std::size_t>(kTpLabel)];
    label_[kCp] = labels[static_cast<std::size_t>(kCpLabel)];
    label_[kDp] = labels[static_cast<std::size_t>(kDpLabel)];
    label_[kEp] = labels[static_cast<std::size_t>(kEpLabel)];
    // The hidden parts of TP's (layout.tp_overlap), CP's and EP's collectives carry their group's
    // label; ZeRO-3's its own.
    hidden_label_[kTp] = label_[kTp];
    hidden_label_[kCp] = label_[kCp];
    hidden_label_[kEp] = label_[kEp];
    zero3_gather_ = labels[static_cast<std::size_t>(kZero3GatherLabel)];
    zero3_reduce_scatter_ = labels[static_cast<std::size_t>(kZero3ReduceScatterLabel)];
    layers_ = chunk_layers(plan);
    made_.resize(layers_.size() * kPasses);
  }

  // The label of each group's aggregated span, as the simulation names it.
  const std::string& label(SpanGroup g) const { return label_[g]; }
  std::vector<std::string>& names() { return names_; }
  std::int32_t chunks() const { return static_cast<std::int32_t>(layers_.size()); }

  // The id of `text` among names(), added when new.
  std::int32_t name(const std::string& text) {
    auto [it, fresh] = ids_.try_emplace(text, static_cast<std::int32_t>(names_.size()));
    if (fresh) names_.push_back(text);
    return it->second;
  }
  // Where a piece named names()[id] runs: "layer 17", "MTP 1", "embedding", "head".
  const std::string& where(std::int32_t id) const { return where_[static_cast<std::size_t>(id)]; }
  // The group of the hidden collectives labelled `text` (comm_span_labels()), kCompute for none.
  SpanGroup hidden_group(const std::string& text) const {
    for (int g = kTp; g < kGroups; ++g) {
      if (text == hidden_label_[g]) return static_cast<SpanGroup>(g);
    }
    return text == zero3_gather_ || text == zero3_reduce_scatter_ ? kDp : kCompute;
  }

  // The pieces of chunk g's pass, in the order they run; their names in names(). Made once per
  // chunk and pass: every micro-batch's op of it has the same.
  const std::vector<Piece>& pieces(std::int32_t g, Pass pass) {
    std::vector<Piece>& out = made_[static_cast<std::size_t>(g) * kPasses + pass];
    if (out.empty()) make_pieces(g, pass, out);
    return out;
  }

 private:
  void make_pieces(std::int32_t g, Pass pass, std::vector<Piece>& out) {
    const auto& l = plan_.layout;
    const bool first = pass != kRecompute && starts_pipeline(l.schedule, l.pp, g);
    const bool last = pass != kRecompute && ends_pipeline(l.schedule, l.pp, l.vpp, g);
    const std::int64_t n = layers_[static_cast<std::size_t>(g)];
    // The chunk's first layer in the model (DualPipe's second copy starts again at layer 0).
    const std::int64_t copy_start = two_pipelines(l.schedule) && g >= l.pp ? l.pp : 0;
    std::int64_t first_layer = 0;
    for (std::int64_t c = copy_start; c < g; ++c) first_layer += layers_[static_cast<std::size_t>(c)];
    // Which of them are MoE layers is the model's rule (ModelSpec::is_moe_layer), as for
    // chunk_moe_layers().
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = first_layer + i;
    const std::int64_t mtp = last ? plan_.model.mtp_modules : 0;
    if (pass == kForward || pass == kRecompute) {
      if (first) embedding_pieces(pass, out);
      for (const std::int64_t i : order) layer_pieces(i, pass, out);
      if (last) head_pieces(pass, out);
      for (std::int64_t k = 0; k < mtp; ++k) {
        layer_pieces(plan_.model.layers + k, pass, out);
        head_pieces(pass, out);
      }
    } else {
      for (std::int64_t k = mtp; k-- > 0;) {
        head_pieces(pass, out);
        layer_pieces(plan_.model.layers + k, pass, out);
      }
      if (last) head_pieces(pass, out);
      for (auto it = order.rbegin(); it != order.rend(); ++it) layer_pieces(*it, pass, out);
      if (first) embedding_pieces(pass, out);
    }
  }

  // "TP all-reduce · tp 8 · in a node" for the label "TP all-gather/reduce-scatter · tp 8 · in a
  // node" and the collective "all-reduce": the group's label with this collective's name.
  std::string collective(SpanGroup g, const char* what) const {
    const std::string& text = label_[g];
    const auto dot = text.find(" · ");
    return std::string(g == kTp ? "TP " : g == kEp ? "EP " : g == kCp ? "CP " : "ZeRO-3 ") + what +
           (dot == std::string::npos ? "" : text.substr(dot));
  }
  void add(std::vector<Piece>& out, SpanGroup g, double weight, const std::string& text) {
    add(out, g, weight, text, weight);
  }
  void add(std::vector<Piece>& out, SpanGroup g, double weight, const std::string& text, double hidden_weight) {
    out.push_back({g, weight, name(text), hidden_weight});
    where_.resize(names_.size());
    // Every piece's name is where it runs, then what it is.
    const std::string& w = where_[static_cast<std::size_t>(out.back().name)];
    if (w.empty()) where_[static_cast<std::size_t>(out.back().name)] = text.substr(0, place_end(text));
  }
  // The end of the "layer 17" / "MTP 1" / "embedding" / "head" that starts a piece's name.
  static std::size_t place_end(const std::string& text) {
    const bool numbered = text.rfind("layer ", 0) == 0 || text.rfind("MTP ", 0) == 0;
    const std::size_t space = text.find(' ', numbered ? text.find(' ') + 1 : 0);
    return space == std::string::npos ? text.size() : space;
  }
  // A tensor-parallel collective: without sequence parallelism an all-reduce; with it an
  // all-gather (`gather`) or a reduce-scatter. A layer's (`exposed` the share of its block's TP
  // time that layout.tp_overlap leaves exposed, 1 without it) weighs that share of the op's
  // exposed TP time and the rest in the hidden; the embedding's and the head's run exposed.
  void tp(std::vector<Piece>& out, bool gather, const std::string& where, double exposed = -1) {
    const double seconds = !sp_ ? all_reduce_ : gather ? all_gather_ : reduce_scatter_;
    const char* what = !sp_ ? "all-reduce" : gather ? "all-gather" : "reduce-scatter";
    const bool layer = exposed >= 0;
    add(out, kTp, seconds * (layer ? exposed : 1.0), where + " " + collective(kTp, what), layer ? seconds * (1 - exposed) : 0.0);
  }

  // One layer: forward [SP gather] attention [CP] (all-reduce | SP scatter) [SP gather]
  // [dispatch] MLP [combine] (all-reduce | SP scatter); the backward in reverse, where each
  // block's input collective (f's all-reduce, or the backward of the SP gather: a
  // reduce-scatter) follows the block's backward and the backward of its output scatter (a
  // gather) precedes it. ZeRO-3's gather of the layer's parameters first in the forward, its
  // gather and gradient reduce-scatter around the layer's backward (counted as one share).
  void layer_pieces(std::int64_t i, Pass pass, std::vector<Piece>& out) {
    const bool moe = plan_.model.is_moe_layer(i);
    const Blocks& b = (moe ? moe_ : dense_)[pass];
    const double* exposed = tp_exposed_[moe ? 1 : 0][pass];  // per block (tp_overlap.h)
    const std::string where = i >= plan_.model.layers ? "MTP " + std::to_string(i - plan_.model.layers + 1)
                                                      : "layer " + std::to_string(i);
    const double attention = exposed[0], mlp = exposed[1];
    if (pass != kBackward) {
      add(out, kDp, 1, where + " " + collective(kDp, "gather"));
      if (sp_) tp(out, true, where, attention);
      add(out, kCompute, b.attention, where + " attention");
      add(out, kCp, 1, where + " " + collective(kCp, "ring exchange"));
      tp(out, false, where, attention);
      if (sp_) tp(out, true, where, mlp);
      if (moe) add(out, kEp, 1, where + " " + collective(kEp, "all-to-all dispatch"));
      add(out, kCompute, b.mlp, where + (moe ? " experts" : " MLP"));
      if (moe) add(out, kEp, 1, where + " " + collective(kEp, "all-to-all combine"));
      tp(out, false, where, mlp);
    } else {
      if (sp_) tp(out, true, where, mlp);
      if (moe) add(out, kEp, 1, where + " " + collective(kEp, "all-to-all combine"));
      add(out, kCompute, b.mlp, where + (moe ? " experts" : " MLP"));
      if (moe) add(out, kEp, 1, where + " " + collective(kEp, "all-to-all dispatch"));
      tp(out, !sp_, where, mlp);  // without SP: f's all-reduce; with: the gather's reduce-scatter
      if (sp_) tp(out, true, where, attention);
      add(out, kCompute, b.attention, where + " attention");
      add(out, kCp, 1, where + " " + collective(kCp, "ring exchange"));
      tp(out, !sp_, where, attention);
      add(out, kDp, 1, where + " " + collective(kDp, "gather/reduce-scatter"));
    }
  }
  // The vocabulary-parallel embedding: the lookup, then the all-reduce of the partial lookups
  // (with SP a reduce-scatter); its backward needs no collective.
  void embedding_pieces(Pass pass, std::vector<Piece>& out) {
    add(out, kCompute, embedding_[pass], "embedding");
    if (pass == kForward && plan_.layout.tp > 1) tp(out, false, "embedding");
  }
  // The LM head: with SP, the all-gather of its input (forward) and the reduce-scatter of its
  // input gradient (backward).
  void head_pieces(Pass pass, std::vector<Piece>& out) {
    if (pass == kForward && sp_) tp(out, true, "head");
    add(out, kCompute, head_[pass], "head");
    if (pass == kBackward && sp_) tp(out, false, "head");
  }

  const Plan& plan_;
  Blocks dense_[kPasses], moe_[kPasses];
  double embedding_[kPasses] = {}, head_[kPasses] = {};
  bool sp_ = false;
  double all_reduce_ = 0, all_gather_ = 0, reduce_scatter_ = 0;
  // Per dense and MoE layer, pass and block (tp_overlap.h): the share of the TP time left exposed.
  double tp_exposed_[2][kPasses][kTpBlocks] = {{{1, 1}, {1, 1}, {1, 1}}, {{1, 1}, {1, 1}, {1, 1}}};
  std::string label_[kGroups], hidden_label_[kGroups];
  std::string zero3_gather_, zero3_reduce_scatter_;
  std::vector<std::string> where_;  // per name id
  std::vector<std::int64_t> layers_;
  std::vector<std::vector<Piece>> made_;  // per chunk and pass, once made
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::int32_t> ids_;
};

bool is_transfer(const Span& s) { return s.kind == SpanKind::send || s.kind == SpanKind::recv; }

Pass pass_of(Phase phase) {
  return phase == Phase::forward ? kForward : phase == Phase::recompute ? kRecompute : kBackward;
}

// Where the pieces of weight `done` (of `weight` in all) end within `total_ns`, rounded so that
// the pieces add up to it exactly.
std::int64_t share_until(std::int64_t total_ns, double done, double weight) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(total_ns) * std::min(done / weight, 1.0)));
}

// Lays chunk `c.stage`'s pass out over the window of its compute span `c` and the collectives
// `chain` that follow it back to back: each group's pieces share its time (rounded so that they
// add up to it exactly) and its bytes by weight; the compute's pieces its time and FLOPs.
// Appends to `compute` and `comm`; false (and nothing appended) when a piece of some group has
// no time to take, or no span has pieces.
bool lay_out(const Span& c, const std::vector<const Span*>& chain, const std::vector<SpanGroup>& groups,
             const std::vector<Piece>& pieces, const std::vector<std::int32_t>& name_ids, std::vector<Span>& compute,
             std::vector<Span>& comm) {
  std::int64_t group_ns[kGroups] = {c.duration_ns, 0, 0, 0, 0};
  double group_bytes[kGroups] = {}, weight[kGroups] = {};
  for (std::size_t j = 0; j < chain.size(); ++j) {
    group_ns[groups[j]] += chain[j]->duration_ns;
    group_bytes[groups[j]] += chain[j]->bytes;
  }
  for (const Piece& p : pieces) weight[p.group] += group_ns[p.group] > 0 ? p.weight : 0;
  for (int g = 0; g < kGroups; ++g) {
    if (group_ns[g] > 0 && weight[g] <= 0) return false;
  }
  double done[kGroups] = {};
  std::int64_t placed[kGroups] = {};
  std::int64_t t = c.start_ns;
  for (const Piece& p : pieces) {
    if (group_ns[p.group] <= 0 || p.weight <= 0) continue;
    done[p.group] += p.weight;
    const std::int64_t until = share_until(group_ns[p.group], done[p.group], weight[p.group]);
    const std::int64_t ns = until - placed[p.group];
    placed[p.group] = until;
    if (ns <= 0) continue;
    Span s;
    s.start_ns = t;
    s.duration_ns = ns;
    s.stage = c.stage;
    s.micro_batch = c.micro_batch;
    s.name_id = name_ids[static_cast<std::size_t>(p.name)];
    if (p.group == kCompute) {
      s.kind = SpanKind::kernel;
      s.phase = c.phase;
      s.tensor_core = c.tensor_core;
      s.flops = c.flops * static_cast<double>(ns) / static_cast<double>(c.duration_ns);
      compute.push_back(s);
    } else {
      s.kind = SpanKind::collective;
      s.phase = Phase::communication;
      s.bytes = group_bytes[p.group] * p.weight / weight[p.group];
      comm.push_back(s);
    }
    t += ns;
  }
  return true;
}

// The hidden collective `s` of a predicted timeline shared out over the layers of its op, as
// layer_timeline() describes, into `parts`; false (parts unusable) when its op or its layers are
// not found or its time does not fit the op's compute after `cursor`.
template <class Sync>
bool pour_hidden(const Span& s, const Timeline& predicted, const Track& compute, const Track& laid_compute,
                 const std::vector<std::string>& laid_names, Anatomy& anatomy, const std::vector<std::int32_t>& name_ids,
                 const Sync& sync_names, std::int64_t cursor, std::vector<Span>& parts) {
  const std::string& label = s.name_id >= 0 && static_cast<std::size_t>(s.name_id) < predicted.names.size()
                                 ? predicted.names[static_cast<std::size_t>(s.name_id)]
                                 : std::string();
  const SpanGroup group = anatomy.hidden_group(label);
  if (group == kCompute || s.stage < 0 || s.stage >= anatomy.chunks() || s.duration_ns <= 0) return false;
  // The op it was drawn in: the rank's last compute span of its chunk and micro-batch that starts
  // by then (an op's compute starts with it).
  const auto by_start = [](std::int64_t t, const Span& c) { return t < c.start_ns; };
  auto it = std::upper_bound(compute.spans.begin(), compute.spans.end(), s.start_ns, by_start);
  const Span* op = nullptr;
  for (int look = 0; look < 8 && it != compute.spans.begin(); ++look) {
    --it;
    if (it->stage == s.stage && it->micro_batch == s.micro_batch) {
      op = &*it;
      break;
    }
  }
  if (op == nullptr) return false;
  // The op's compute pieces, laid out (or the op's own span when it was left whole): from the
  // first of its chunk and micro-batch at or after the op's start, while they are the op's (of its
  // phase: the next op of the same chunk and micro-batch, R after F, B after R, W after B, is
  // not; a fused backward's weight-gradient span is a backward's).
  std::vector<const Span*> pieces_of_op;
  auto first = std::lower_bound(laid_compute.spans.begin(), laid_compute.spans.end(), op->start_ns,
                                [](const Span& c, std::int64_t t) { return c.start_ns < t; });
  for (auto c = first; c != laid_compute.spans.end() && c->stage == s.stage && c->micro_batch == s.micro_batch &&
                       c->phase == op->phase;
       ++c) {
    pieces_of_op.push_back(&*c);
  }
  // A B op's recomputation draws its own collectives under its own compute (the engine's
  // draw_overlapped), so the compute a collective starts in names its pass.
  const std::vector<Piece>& pieces = anatomy.pieces(s.stage, pass_of(op->phase));
  double weight = 0;
  for (const Piece& p : pieces) weight += p.group == group ? p.hidden_weight : 0;
  if (weight <= 0 || pieces_of_op.empty()) return false;
  // Compute time of the op's pieces from piece k on: a layer's pieces move to its compute only
  // while the rest still fits after it.
  std::vector<std::int64_t> after(pieces_of_op.size() + 1, 0);
  for (std::size_t k = pieces_of_op.size(); k-- > 0;) after[k] = after[k + 1] + pieces_of_op[k]->duration_ns;
  const bool zero3 = group == kDp;
  double done = 0;
  std::int64_t placed = 0, t = std::max(cursor, s.start_ns);
  std::size_t at = 0;  // the compute piece being filled
  for (const Piece& piece : pieces) {
    if (piece.group != group || piece.hidden_weight <= 0) continue;
    done += piece.hidden_weight;
    const std::int64_t until = share_until(s.duration_ns, done, weight);
    std::int64_t ns = until - placed;
    placed = until;
    if (ns <= 0) continue;
    // From the layer's first compute piece of the op, when the track is free by then.
    const std::string& where = anatomy.where(piece.name);
    for (std::size_t k = at; k < pieces_of_op.size(); ++k) {
      const std::string& text = laid_names[static_cast<std::size_t>(pieces_of_op[k]->name_id)];
      if (text.size() > where.size() && text.compare(0, where.size(), where) == 0 && text[where.size()] == ' ') {
        if (pieces_of_op[k]->start_ns >= t && after[k] >= s.duration_ns - placed + ns) at = k, t = pieces_of_op[k]->start_ns;
        break;
      }
    }
    const std::int32_t id = zero3 ? anatomy.name(where + " " + label) : piece.name;
    sync_names();
    const double bytes_per_ns = s.bytes * piece.hidden_weight / weight / static_cast<double>(ns);
    // Poured into the compute pieces from t on, one span per piece it meets.
    while (ns > 0) {
      while (at < pieces_of_op.size() && pieces_of_op[at]->end_ns() <= t) ++at;
      if (at == pieces_of_op.size()) return false;
      const Span& c = *pieces_of_op[at];
      t = std::max(t, c.start_ns);
      const std::int64_t take = std::min(ns, c.end_ns() - t);
      Span part = s;
      part.start_ns = t;
      part.duration_ns = take;
      part.bytes = bytes_per_ns * static_cast<double>(take);
      part.name_id = name_ids[static_cast<std::size_t>(id)];
      parts.push_back(part);
      t += take;
      ns -= take;
    }
  }
  return !parts.empty();
}

}  // namespace

Result<LayerTimeline> layer_timeline(const Plan& plan, std::int64_t padded_vocab, const Timeline& predicted,
                                     const LayerTimelineOptions& options) {
  if (predicted.source != TimelineSource::predicted) {
    return make_error("timeline", "a layer timeline is made from a predicted timeline, not a " +
                                      std::string(to_string(predicted.source)) + " one");
  }
  Anatomy anatomy(plan, padded_vocab, options.profile);
  // The name ids of the groups' aggregated spans.
  std::int32_t group_name[kGroups] = {-1, -1, -1, -1, -1};
  for (std::size_t i = 0; i < predicted.names.size(); ++i) {
    for (int g = kTp; g < kGroups; ++g) {
      if (predicted.names[i] == anatomy.label(static_cast<SpanGroup>(g))) group_name[g] = static_cast<std::int32_t>(i);
    }
  }
  const auto group_of = [&](const Span& s) -> int {
    if (s.kind != SpanKind::collective || s.phase != Phase::communication) return -1;
    for (int g = kTp; g < kGroups; ++g) {
      if (group_name[g] >= 0 && s.name_id == group_name[g]) return g;
    }
    return -1;
  };

  LayerTimeline out;
  Timeline& tl = out.timeline;
  tl.source = predicted.source;
  tl.title = predicted.title;
  tl.names = predicted.names;
  // The pieces' names, interned into the new timeline as they are first used.
  std::vector<std::int32_t> name_ids;
  const auto sync_names = [&] {
    while (name_ids.size() < anatomy.names().size()) {
      name_ids.push_back(static_cast<std::int32_t>(tl.names.size()));
      tl.names.push_back(anatomy.names()[name_ids.size() - 1]);
    }
  };
  std::int32_t weight_gradients = -1;
  const auto weight_gradients_name = [&] {
    if (weight_gradients < 0) {
      weight_gradients = static_cast<std::int32_t>(tl.names.size());
      tl.names.emplace_back("weight gradients of the chunk's layers");
    }
    return weight_gradients;
  };

  std::size_t spans_total = 0;
  std::vector<const Span*> chain;
  std::vector<SpanGroup> groups;
  std::vector<Span> op_compute, op_comm;
  for (const Track& compute : predicted.tracks) {
    if (compute.lane != Lane::compute) continue;
    const Track* comm_track = nullptr;
    for (const Track& c : predicted.tracks) {
      if (c.rank == compute.rank && c.lane == Lane::communication && c.stream < 0) comm_track = &c;
    }
    if (comm_track == nullptr) {
      return make_error("timeline", "rank " + std::to_string(compute.rank) + " has no communication track");
    }
    const auto& comm = comm_track->spans;
    Track new_compute{compute.rank, compute.lane, compute.stream, compute.label, {}};
    Track new_comm{comm_track->rank, comm_track->lane, comm_track->stream, comm_track->label, {}};
    new_compute.spans.reserve(compute.spans.size());
    new_comm.spans.reserve(comm.size());
    std::vector<char> replaced(comm.size(), 0);
    // The last backward laid out: without W ops its weight gradients follow it as a span of their
    // own (iteration_costs.cpp's fused backward), named as such here.
    const Span* last_backward = nullptr;
    std::int64_t last_backward_end = -1;
    for (std::size_t i = 0; i < compute.spans.size(); ++i) {
      const Span& c = compute.spans[i];
      const bool pass = c.kind == SpanKind::kernel && c.stage >= 0 && c.micro_batch >= 0 &&
                        (c.phase == Phase::forward || c.phase == Phase::backward || c.phase == Phase::recompute);
      if (pass && c.stage >= anatomy.chunks()) {
        return make_error("timeline", "span of chunk " + std::to_string(c.stage) + " in a plan of " +
                                          std::to_string(anatomy.chunks()) + " chunks: not this plan's timeline");
      }
      // The op's collectives: the communication spans of its chunk and micro-batch from its
      // compute's end, each starting where the one before ended.
      chain.clear();
      groups.clear();
      const auto first = static_cast<std::size_t>(
          std::lower_bound(comm.begin(), comm.end(), c.end_ns(), [](const Span& s, std::int64_t t) { return s.start_ns < t; }) -
          comm.begin());
      std::int64_t at = c.end_ns();
      for (std::size_t j = first; pass && j < comm.size() && chain.size() < kGroups - 1; ++j) {
        const int g = group_of(comm[j]);
        if (comm[j].start_ns != at || g < 0 || comm[j].stage != c.stage || comm[j].micro_batch != c.micro_batch) break;
        chain.push_back(&comm[j]);
        groups.push_back(static_cast<SpanGroup>(g));
        at = comm[j].end_ns();
      }
      op_compute.clear();
      op_comm.clear();
      bool laid = false;
      // Without W ops a backward's weight gradients follow its input gradients (and their
      // collectives) as a span of their own: named as such below, not laid out.
      const bool weight_part = last_backward != nullptr && chain.empty() && c.phase == Phase::backward &&
                                    c.start_ns == last_backward_end && c.stage == last_backward->stage &&
                                    c.micro_batch == last_backward->micro_batch;
      // An op with no exposed collective (all hidden, or none at all) is laid out as its compute
      // pieces; an offload segment runs on the compute lane right after the compute, so with
      // offloading such ops stay whole.
      const bool layable = pass && !weight_part && (!chain.empty() || !plan.layout.offloads());
      if (layable && (i + 1 == compute.spans.size() || compute.spans[i + 1].start_ns >= at)) {
        const std::vector<Piece>& pieces = anatomy.pieces(c.stage, pass_of(c.phase));
        sync_names();
        laid = lay_out(c, chain, groups, pieces, name_ids, op_compute, op_comm);
        // What else the lane ran inside the window (a gradient bucket or a gather placed while
        // the op computed) must not meet a piece. Sends go to a track of their own.
        for (std::size_t j = first; laid && j-- > 0 && comm[j].end_ns() > c.start_ns;) {
          if (is_transfer(comm[j])) continue;
          for (const Span& piece : op_comm) {
            laid = laid && (piece.end_ns() <= comm[j].start_ns || piece.start_ns >= comm[j].end_ns());
          }
        }
      }
      if (laid) {
        ++out.ops_laid_out;
        new_compute.spans.insert(new_compute.spans.end(), op_compute.begin(), op_compute.end());
        new_comm.spans.insert(new_comm.spans.end(), op_comm.begin(), op_comm.end());
        for (std::size_t j = 0; j < chain.size(); ++j) replaced[first + j] = 1;
        last_backward = c.phase == Phase::backward ? &c : nullptr;
        last_backward_end = at;
      } else {
        out.ops_kept += chain.empty() ? 0 : 1;
        new_compute.spans.push_back(c);
        if (weight_part) new_compute.spans.back().name_id = weight_gradients_name();
        last_backward = nullptr;
      }
      spans_total += laid ? op_compute.size() + op_comm.size() : 1;
      if (spans_total > options.max_spans) {
        return make_error("timeline.layers", "laid out layer by layer the timeline would hold more than the " +
                                                 std::to_string(options.max_spans) +
                                                 " spans allowed; use fewer micro-batches or pipeline stages");
      }
    }
    // The pipeline's sends on a track of their own: they overlap the next op's first
    // collectives (Megatron-LM's point-to-point transfers run on their own stream; the time
    // model books them on the one lane, and its op-level timing is what the pieces keep).
    Track transfers{comm_track->rank, comm_track->lane, 1, comm_track->label + " p2p", {}};
    for (std::size_t j = 0; j < comm.size(); ++j) {
      if (replaced[j]) continue;
      (is_transfer(comm[j]) ? transfers : new_comm).spans.push_back(comm[j]);
    }
    spans_total += new_comm.spans.size() + transfers.spans.size();
    tl.tracks.push_back(std::move(new_compute));
    tl.tracks.push_back(std::move(new_comm));
    if (!transfers.spans.empty()) tl.tracks.push_back(std::move(transfers));
  }
  // The collectives compute hides (the simulation's overlapped tracks: one span per op and
  // collective, from the op's start), shared out over the layers that run them as the exposed
  // ones are (ZeRO-3's gather and reduce-scatter per layer, CP's ring exchange per attention,
  // EP's dispatch and combine per MoE layer) and poured into the op's compute pieces, each
  // layer's from its first compute piece on: hidden, they run beside compute, never beside the
  // op's exposed collectives.
  for (const Track& hidden : predicted.tracks) {
    if (hidden.lane != Lane::communication || hidden.stream < 0) continue;
    const Track* compute = nullptr;
    const Track* laid_compute = nullptr;
    for (const Track& c : predicted.tracks) {
      if (c.rank == hidden.rank && c.lane == Lane::compute) compute = &c;
    }
    for (const Track& c : tl.tracks) {
      if (c.rank == hidden.rank && c.lane == Lane::compute) laid_compute = &c;
    }
    Track laid{hidden.rank, hidden.lane, hidden.stream, hidden.label, {}};
    laid.spans.reserve(hidden.spans.size());
    std::vector<Span> parts;
    std::int64_t cursor = INT64_MIN;  // the end of the track's last span
    // Which pass a piece of a hidden collective ran under: its chunk and micro-batch have one F,
    // one B (its recomputation R first, the weight gradients in it) and in split schedules one W.
    const auto op_kind = [&](const Span& x) {
      if (compute == nullptr) return Phase::none;
      auto it = std::upper_bound(compute->spans.begin(), compute->spans.end(), x.start_ns,
                                 [](std::int64_t t, const Span& c) { return t < c.start_ns; });
      return it == compute->spans.begin() ? Phase::none : std::prev(it)->phase;
    };
    for (std::size_t i = 0; i < hidden.spans.size();) {
      // One collective of one op, which the simulation poured into the op's compute spans.
      std::size_t j = i + 1;
      Span whole = hidden.spans[i];
      const Phase kind = op_kind(whole);
      for (; j < hidden.spans.size(); ++j) {
        const Span& x = hidden.spans[j];
        if (x.name_id != whole.name_id || x.stage != whole.stage || x.micro_batch != whole.micro_batch ||
            op_kind(x) != kind) {
          break;
        }
        whole.duration_ns += x.duration_ns;
        whole.bytes += x.bytes;
      }
      parts.clear();
      if (compute != nullptr && laid_compute != nullptr &&
          pour_hidden(whole, predicted, *compute, *laid_compute, tl.names, anatomy, name_ids, sync_names, cursor, parts)) {
        laid.spans.insert(laid.spans.end(), parts.begin(), parts.end());
      } else {
        laid.spans.insert(laid.spans.end(), hidden.spans.begin() + static_cast<std::ptrdiff_t>(i),
                          hidden.spans.begin() + static_cast<std::ptrdiff_t>(j));
      }
      cursor = laid.spans.back().end_ns();
      i = j;
    }
    spans_total += laid.spans.size();
    if (spans_total > options.max_spans) break;
    tl.tracks.push_back(std::move(laid));
  }
  if (spans_total > options.max_spans) {
    return make_error("timeline.layers", "laid out layer by layer the timeline would hold " + std::to_string(spans_total) +
                                             " spans, more than the " + std::to_string(options.max_spans) +
                                             " allowed; use fewer micro-batches or pipeline stages");
  }
  // The predicted timeline's other tracks (none today), then every track in time order.
  for (const Track& t : predicted.tracks) {
    if (t.lane != Lane::compute && t.lane != Lane::communication) tl.tracks.push_back(t);
  }
  tl.sort_spans();
  return out;
}

}  // namespace plansight::estimator
