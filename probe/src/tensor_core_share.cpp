// tensor_core_share(): sums of kernel durations by flag, phase and kernel class (the classifier's
// class of each kernel name), and the ten kernels with the most total time. compare_with_counters():
// the counters' verdict per kernel name, weighed with the traced step's kernel times.
#include "tensor_core_share.h"

#include <algorithm>
#include <set>

#include "plansight/estimator/kernel_rules.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

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

CounterComparison compare_with_counters(const est::Timeline& timeline, const std::vector<CounterReading>& readings) {
  CounterComparison c;
  std::map<std::string, CounterKernel> kernels;
  std::set<std::string> traced;
  for (const est::Track& track : timeline.tracks) {
    for (const est::Span& span : track.spans) {
      if (span.kind != est::SpanKind::kernel && span.kind != est::SpanKind::collective) continue;
      const std::string& name = timeline.name_of(span);
      CounterKernel& k = kernels[name];
      k.name = name;
      k.seconds += static_cast<double>(span.duration_ns) * 1e-9;
      k.rules_tensor_core = k.rules_tensor_core || span.tensor_core;
      traced.insert(name);
    }
  }
  const est::KernelClassifier classifier;
  std::map<std::string, double> active_sum;
  for (const CounterReading& r : readings) {
    if (r.name.empty()) continue;
    CounterKernel& k = kernels[r.name];
    if (k.name.empty()) {  // not in the traced step: the rules' verdict from its name
      k.name = r.name;
      k.rules_tensor_core = classifier.classify(r.name) == est::KernelClass::tensor_core_gemm;
    }
    ++k.profiled_launches;
    if (r.tensor_instructions > 0) ++k.tensor_core_launches;
    k.tensor_instructions += r.tensor_instructions;
    active_sum[r.name] += r.tensor_active_pct;
  }
  double profiled_seconds = 0, weighted_active = 0;
  for (auto& [name, k] : kernels) {
    c.step.seconds += k.seconds;
    if (k.profiled_launches == 0) {
      c.unprofiled_seconds += k.seconds;
      continue;
    }
    k.mean_tensor_active_pct = active_sum[name] / static_cast<double>(k.profiled_launches);
    k.counters_tensor_core = k.tensor_core_launches > 0;
    if (k.counters_tensor_core) c.step.tensor_core_seconds += k.seconds;
    profiled_seconds += k.seconds;
    weighted_active += k.seconds * k.mean_tensor_active_pct;
  }
  if (profiled_seconds > 0) c.tensor_active_pct = weighted_active / profiled_seconds;
  for (auto& [name, k] : kernels) c.kernels.push_back(std::move(k));
  std::sort(c.kernels.begin(), c.kernels.end(), [](const CounterKernel& a, const CounterKernel& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
  });
  for (const CounterKernel& k : c.kernels) {
    if (k.disagrees()) c.disagreements.push_back(k.name);
  }
  return c;
}

namespace {

nlohmann::json to_json(const CounterKernel& k) {
  return {{"name", k.name},
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
                        {"share", c.step.share()},
                        {"seconds", c.step.seconds},
                        {"tensor_core_seconds", c.step.tensor_core_seconds},
                        {"unprofiled_seconds", c.unprofiled_seconds},
                        {"tensor_active_pct", c.tensor_active_pct},
                        {"kernels", std::move(kernels)},
                        {"disagreements", std::move(disagreements)}};
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
    out["counter_share"] = s.counters->step.share();  // beside step.share, for readers of both figures
  } else if (!s.counters_note.empty()) {
    out["counters"] = {{"used", false}, {"note", s.counters_note}};
  }
  return out;
}

}  // namespace plansight::probe
