// tensor_core_share(): sums of kernel durations by flag, phase and kernel class (the classifier's
// class of each kernel name), and the ten kernels with the most total time. compare_with_counters():
// the counters' verdict per launch and the name rules' per name, weighed with the same durations
// (the counters'), and tensor_core_share_from_counters() the step's share from them.
#include "tensor_core_share.h"

#include <algorithm>

#include "plansight/estimator/kernel_rules.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

static_assert(kCountersTensorActivePctThreshold == runtime::cuda::kTensorActivePctThreshold,
              "the probe's verdict on readings is the runtime's (tensor_metrics.h)");

void add(ShareOf& s, double seconds, bool tensor_core) {
  s.seconds += seconds;
  if (tensor_core) s.tensor_core_seconds += seconds;
}

nlohmann::json to_json(const ShareOf& s) {
  return {{"seconds", s.seconds}, {"tensor_core_seconds", s.tensor_core_seconds}, {"share", s.share()}};
}

}  // namespace

TensorCoreShare tensor_core_share(const est::Timeline& timeline) {
  TensorCoreShare out;
  const est::KernelClassifier classifier;
  std::map<std::string, KernelTime> kernels;
  for (const est::Track& track : timeline.tracks) {
    for (const est::Span& span : track.spans) {
      if (span.kind != est::SpanKind::kernel && span.kind != est::SpanKind::collective) continue;
      const double seconds = static_cast<double>(span.duration_ns) * 1e-9;
      const std::string& name = timeline.name_of(span);
      add(out.step, seconds, span.tensor_core);
      add(out.by_phase[std::string(est::to_string(span.phase))], seconds, span.tensor_core);
      add(out.by_kernel_class[std::string(est::to_string(classifier.classify(name)))], seconds, span.tensor_core);
      KernelTime& k = kernels[name];
      k.name = name;
      k.seconds += seconds;
      ++k.launches;
      k.tensor_core = k.tensor_core || span.tensor_core;
    }
  }
  for (auto& [name, k] : kernels) out.top_kernels.push_back(std::move(k));
  std::sort(out.top_kernels.begin(), out.top_kernels.end(), [](const KernelTime& a, const KernelTime& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
  });
  if (out.top_kernels.size() > 10) out.top_kernels.resize(10);
  return out;
}

CounterComparison compare_with_counters(const std::vector<CounterReading>& readings) {
  CounterComparison c;
  const est::KernelClassifier classifier;
  std::map<std::string, CounterKernel> kernels;
  std::map<std::string, double> active_sum;
  double weighted_active = 0, tensor_core_weighted_active = 0;
  for (const CounterReading& r : readings) {
    CounterKernel& k = kernels[r.name];
    if (k.profiled_launches == 0) {
      k.name = r.name;
      k.rules_tensor_core = !r.name.empty() && classifier.classify(r.name) == est::KernelClass::tensor_core_gemm;
    }
    const bool tensor_core = counters_tensor_core(r);
    ++k.profiled_launches;
    k.seconds += r.seconds;
    k.tensor_instructions += r.tensor_instructions;
    active_sum[r.name] += r.tensor_active_pct;
    if (tensor_core) ++k.tensor_core_launches;
    // The same duration under both classifiers: the counters judge each launch, the rules its name.
    add(c.by_counters, r.seconds, tensor_core);
    add(c.by_names, r.seconds, k.rules_tensor_core);
    if (r.name.empty()) c.unnamed_seconds += r.seconds;
    weighted_active += r.seconds * r.tensor_active_pct;
    if (tensor_core) tensor_core_weighted_active += r.seconds * r.tensor_active_pct;
  }
  if (c.by_counters.seconds > 0) c.tensor_active_pct = weighted_active / c.by_counters.seconds;
  if (c.by_counters.tensor_core_seconds > 0) {
    c.tensor_core_active_pct = tensor_core_weighted_active / c.by_counters.tensor_core_seconds;
  }
  for (auto& [name, k] : kernels) {
    k.mean_tensor_active_pct = active_sum[name] / static_cast<double>(k.profiled_launches);
    k.counters_tensor_core = k.tensor_core_launches > 0;
    c.kernels.push_back(std::move(k));
  }
  std::sort(c.kernels.begin(), c.kernels.end(), [](const CounterKernel& a, const CounterKernel& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
  });
  for (const CounterKernel& k : c.kernels) {
    if (k.disagrees()) c.disagreements.push_back(k.name);
  }
  return c;
}

TensorCoreShare tensor_core_share_from_counters(CounterComparison c) {
  TensorCoreShare out;
  const est::KernelClassifier classifier;
  out.step = c.by_names;
  for (const CounterKernel& k : c.kernels) {
    if (k.name.empty()) continue;  // no name, no class
    add(out.by_kernel_class[std::string(est::to_string(classifier.classify(k.name)))], k.seconds, k.rules_tensor_core);
    out.top_kernels.push_back({k.name, k.seconds, k.profiled_launches, k.rules_tensor_core});
  }
  if (out.top_kernels.size() > 10) out.top_kernels.resize(10);  // c.kernels is sorted by duration
  out.source = "kernel-name rules and hardware counters on the same kernels: CUPTI range profiler, kernel replay of step " +
               std::to_string(c.profiled_step) + ", kernel durations from the counters (gpu__time_duration.sum); no "
               "traced timeline";
  out.counters = std::move(c);
  return out;
}

namespace {

nlohmann::json to_json(const CounterKernel& k) {
  return {{"name", k.name.empty() ? std::string("(no name)") : k.name},
          {"seconds", k.seconds},
          {"rules_tensor_core", k.rules_tensor_core},
          {"counters_tensor_core", k.counters_tensor_core},
          {"profiled_launches", k.profiled_launches},
          {"tensor_core_launches", k.tensor_core_launches},
          {"tensor_instructions", k.tensor_instructions},
          {"tensor_active_pct", k.mean_tensor_active_pct}};
}

nlohmann::json to_json(const CounterComparison& c) {
  nlohmann::json kernels = nlohmann::json::array(), disagreements = nlohmann::json::array();
  for (const CounterKernel& k : c.kernels) {
    kernels.push_back(to_json(k));
    if (k.disagrees()) disagreements.push_back(to_json(k));
  }
  nlohmann::json out = {{"used", true},
                        {"chip", c.chip},
                        {"profiled_step", c.profiled_step},
                        {"ranges", c.ranges},
                        {"dropped_ranges", c.dropped_ranges},
                        {"passes", c.passes},
                        {"verdict", "a launch is on tensor cores by counters when its tensor pipe was active (> 0 % of "
                                    "peak); MMA instruction counts are information only"},
                        {"durations", "gpu__time_duration.sum of each launch under kernel replay"},
                        {"share", c.by_counters.share()},
                        {"seconds", c.by_counters.seconds},
                        {"tensor_core_seconds", c.by_counters.tensor_core_seconds},
                        {"names_share", c.by_names.share()},
                        {"names_tensor_core_seconds", c.by_names.tensor_core_seconds},
                        {"unnamed_seconds", c.unnamed_seconds},
                        {"tensor_active_pct", c.tensor_active_pct},
                        {"tensor_core_active_pct", c.tensor_core_active_pct},
                        {"kernels", std::move(kernels)},
                        {"disagreements", std::move(disagreements)}};
  if (!c.names_note.empty()) out["names_note"] = c.names_note;
  if (!c.note.empty()) out["note"] = c.note;
  return out;
}

}  // namespace

nlohmann::json to_json(const TensorCoreShare& s) {
  nlohmann::json phases = nlohmann::json::object(), classes = nlohmann::json::object(), top = nlohmann::json::array();
  for (const auto& [k, v] : s.by_phase) phases[k] = to_json(v);
  for (const auto& [k, v] : s.by_kernel_class) classes[k] = to_json(v);
  for (const auto& k : s.top_kernels) {
    top.push_back({{"name", k.name}, {"seconds", k.seconds}, {"launches", k.launches}, {"tensor_core", k.tensor_core}});
  }
  nlohmann::json out = {{"source", s.source},
                        {"step", to_json(s.step)},
                        {"by_phase", std::move(phases)},
                        {"by_kernel_class", std::move(classes)},
                        {"top_kernels", std::move(top)}};
  if (s.counters) {
    out["counters"] = to_json(*s.counters);
    out["counter_share"] = s.counters->by_counters.share();  // beside step.share, for readers of both figures
  } else if (!s.counters_note.empty()) {
    out["counters"] = {{"used", false}, {"note", s.counters_note}};
  }
  return out;
}

}  // namespace plansight::probe
