// tensor_core_share(): sums of kernel durations by flag, phase and kernel class (the classifier's
// class of each kernel name), and the ten kernels with the most total time.
#include "tensor_core_share.h"

#include <algorithm>

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
  if (!s.counters_note.empty()) out["counters"] = s.counters_note;
  if (s.counter_share) out["counter_share"] = *s.counter_share;
  return out;
}

}  // namespace plansight::probe
