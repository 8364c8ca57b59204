// compare_operators(): the operator model's per-GPU costs (layer_operators, lm_head_operators)
// multiplied out to the whole step, beside the traced step's spans of the same operators.
#include "plansight/core/operator_comparison.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "plansight/estimator/device_model.h"
#include "plansight/estimator/operator_costs.h"

namespace plansight::core {
namespace {

namespace est = plansight::estimator;

// The probe's span names (probe/src/transformer_block.cpp, embedding_head.cpp) and the operator
// model's rows each stands for (operator_costs.cpp). The probe's "attention" is its fused causal
// attention kernel: every operator of the model's attention core. Its two "residual" spans a
// layer are the two residual adds. A backward span holds the input and the weight gradients.
struct ProbeOperator {
  const char* probe_name;
  std::vector<std::string_view> model_names;  // empty: the attention core
  bool head = false;
};

const std::vector<ProbeOperator>& probe_operators() {
  static const std::vector<ProbeOperator> table = {
      {"ln1", {"norm (attention)"}},
      {"qkv", {"QKV"}},
      {"attention", {}},
      {"proj", {"attention output"}},
      {"residual", {"residual (attention)", "residual (MLP)"}},
      {"ln2", {"norm (MLP)"}},
      {"fc1", {"MLP up"}},
      {"gelu", {"activation (GeLU)"}},
      {"fc2", {"MLP down"}},
      {"lnf", {"final norm"}, true},
      {"lm_head", {"logits"}, true},
      {"cross_entropy", {"cross-entropy"}, true},
  };
  return table;
}

bool stands_for(const ProbeOperator& p, const est::OperatorCost& op) {
  if (p.model_names.empty()) return op.attention_core;
  return std::find(p.model_names.begin(), p.model_names.end(), op.name) != p.model_names.end();
}

est::Phase phase_of(est::OperatorPass pass) {
  switch (pass) {
    case est::OperatorPass::forward: return est::Phase::forward;
    case est::OperatorPass::recompute: return est::Phase::recompute;
    default: return est::Phase::backward;  // input and weight gradients: one probe span
  }
}

// "QKV", or the model's operators a probe operator stands for joined by " + ".
std::string joined(const ProbeOperator& p, const std::vector<est::OperatorCost>& ops) {
  std::vector<std::string_view> names = p.model_names;
  if (names.empty()) {
    for (const auto& op : ops) {
      if (stands_for(p, op) && std::find(names.begin(), names.end(), op.name) == names.end()) names.push_back(op.name);
    }
  }
  std::string out;
  for (auto name : names) out += (out.empty() ? "" : " + ") + std::string(name);
  return out;
}

}  // namespace

OperatorComparisons compare_operators(const est::Plan& plan, const est::HardwareProfile* profile, std::int64_t padded_vocab,
                                      const est::Timeline& measured) {
  const est::DeviceModel device(plan.cluster.gpu, plan.training.precision, est::default_efficiency(plan.cluster.gpu), profile);
  const std::vector<est::OperatorCost> layer = est::layer_operators(plan, device);
  const std::vector<est::OperatorCost> head = est::lm_head_operators(plan, device, padded_vocab);

  // Every rank of the step: each micro-batch of each data-parallel replica passes every layer
  // once and the head once, each on its tensor- and context-parallel ranks, which each run the
  // operator's per-GPU cost (its shard).
  // Over the data-parallel replicas: the global batch's micro-batches.
  const double ranks_per_pass = static_cast<double>(std::max<std::int64_t>(plan.layout.tp, 1) * std::max<std::int64_t>(plan.layout.cp, 1));
  const double micro_batches =
      static_cast<double>(plan.training.global_batch) / static_cast<double>(std::max<std::int64_t>(plan.training.micro_batch, 1));
  const double per_head_op = micro_batches * ranks_per_pass;
  const double per_layer_op = static_cast<double>(plan.model.layers) * per_head_op;

  OperatorComparisons out;
  // Rows keyed by (probe operator, phase), in the order of the table and then of the phases.
  std::map<std::pair<std::size_t, est::Phase>, OperatorComparison> rows;
  const auto& table = probe_operators();
  for (std::size_t i = 0; i < table.size(); ++i) {
    const ProbeOperator& p = table[i];
    const auto& ops = p.head ? head : layer;
    const std::string operators = joined(p, ops);
    for (const auto& op : ops) {
      if (!stands_for(p, op)) continue;
      OperatorComparison& row = rows[{i, phase_of(op.pass)}];
      row.probe_name = p.probe_name;
      row.operators = operators;
      row.phase = phase_of(op.pass);
      row.predicted_s += op.seconds * (p.head ? per_head_op : per_layer_op);
    }
  }
  for (const auto& track : measured.tracks) {
    if (track.lane != est::Lane::compute) continue;
    for (const auto& s : track.spans) {
      // The CPU probe's kernels are named after their operator; a GPU run's kernels, copies and
      // memsets carry it (Span::operator_id, from the NVTX range that launched them).
      const bool device_work = s.operator_id >= 0 && (s.kind == est::SpanKind::memset || s.kind == est::SpanKind::memcpy);
      if ((s.kind != est::SpanKind::kernel && !device_work) || s.duration_ns <= 0) continue;
      const double seconds = static_cast<double>(s.cpu_ns >= 0 ? s.cpu_ns : s.duration_ns) * 1e-9;
      out.measured_cpu_time = out.measured_cpu_time || s.cpu_ns >= 0;
      const std::string& name = measured.operator_of(s);
      auto it = std::find_if(table.begin(), table.end(), [&](const ProbeOperator& p) { return name == p.probe_name; });
      const est::Phase phase = s.phase == est::Phase::weight_grad ? est::Phase::backward : s.phase;
      auto row = it == table.end() ? rows.end() : rows.find({static_cast<std::size_t>(it - table.begin()), phase});
      if (row == rows.end()) {
        out.unmatched_measured_s += seconds;
        ++out.unmatched_spans;
        continue;
      }
      row->second.measured_s += seconds;
      ++row->second.measured_calls;
      out.measured_device_work = out.measured_device_work || s.operator_id >= 0;
    }
  }
  // The order a step runs them: the layer's forward, its recomputation, its backward (the
  // layer's operators in reverse), then the head's.
  auto rank = [&](const std::pair<std::size_t, est::Phase>& key) {
    const bool is_head = table[key.first].head;
    const int phase = key.second == est::Phase::forward ? 0 : key.second == est::Phase::recompute ? 1 : 2;
    const auto position = static_cast<int>(key.first);
    return std::make_tuple(is_head ? 1 : 0, phase, phase == 2 ? -position : position);
  };
  std::vector<std::pair<std::size_t, est::Phase>> keys;
  for (const auto& [key, row] : rows) keys.push_back(key);
  std::sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& key : keys) out.rows.push_back(rows[key]);
  return out;
}

bool OperatorComparisons::matched() const {
  return std::any_of(rows.begin(), rows.end(), [](const OperatorComparison& r) { return r.measured_calls > 0; });
}

std::string OperatorComparisons::measured_basis() const {
  if (measured_device_work) {
    return "GPU time: the durations of the kernels, copies and memsets each operator's NVTX range launched "
           "(virtual ranks sharing a GPU run theirs side by side, so their sum may exceed the step)";
  }
  return measured_cpu_time ? "processor time: each span's thread CPU clock" : "processor time: each span's duration";
}

}  // namespace plansight::core
