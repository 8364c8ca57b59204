// The two tensor-core measurements of tensor_core_counters.h on one RangeProfilerSession
// (range_profiler_session.h): measure_tensor_cores with a user range and user replay (the
// workload once per pass until CUPTI says every pass was submitted), and the per-kernel session
// with auto ranges and kernel replay (CUPTI Range Profiling API: "Ranges are auto defined around
// each kernel in a profiling session" and kernel replay "is done around kernel implicitly by
// CUPTI", cupti_profiler_target.h), whose ranges get their kernels' names from the launch
// sequence (kernel_launch_names.h). The context comes from the driver through
// cudaGetDriverEntryPointByVersion, so this library never links libcuda directly.
#include "plansight/runtime/cuda/tensor_core_counters.h"

#include <cuda_runtime.h>

#include <charconv>
#include <optional>
#include <string>

#include "cuda_status.h"
#include "kernel_launch_names.h"
#include "range_profiler_session.h"
#include "plansight/runtime/cuda/tensor_metrics.h"

namespace plansight::runtime::cuda {
namespace {

constexpr const char* kFallbackTail = "; tensor-core use comes from kernel names";

// nullopt: the step succeeded, go on; else what the measurement returns now: the step's error,
// or the session's refusal as a fallback measurement.
template <class M>
std::optional<Result<M>> halt(const Result<bool>& step, const RangeProfilerSession& session, M& m) {
  if (!step) return Result<M>(step.errors());
  if (*step) return std::nullopt;
  m.chip = session.chip();
  m.metrics = session.metrics();
  m.fallback_reason = session.refusal() + kFallbackTail;
  return Result<M>(std::move(m));
}

// The number an auto range's name holds ("0", "1", ...), or nullopt for any other name.
std::optional<std::size_t> range_number(const std::string& name) {
  std::size_t n = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data(), end, n);
  if (name.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return n;
}

}  // namespace

double KernelTensorCores::tensor_instructions() const {
  double sum = 0;
  for (std::size_t i = 1; i < values.size(); ++i) sum += values[i];
  return sum;
}

bool KernelTensorCores::uses_tensor_cores() const { return tensor_pipe_active(tensor_active_pct()); }

Result<TensorCoreMeasurement> measure_tensor_cores(int device, const std::function<Result<bool>()>& workload) {
  TensorCoreMeasurement m;
  RangeProfilerSession session;
  if (auto out = halt(session.open(device, 1), session, m)) return std::move(*out);
  m.chip = session.chip();
  m.metrics = session.metrics();
  if (auto out = halt(session.configure(CUPTI_UserRange, CUPTI_UserReplay, 1), session, m)) return std::move(*out);
  // One replay pass per iteration, until Stop reports every pass submitted (CUPTI keeps the pass
  // state between Start and Stop); bounded by the host configuration's pass count in case it never does.
  const std::size_t max_passes = session.config_passes() + 2;
  for (bool done = false; !done;) {
    if (m.passes >= max_passes) {
      return make_error("cupti", "the range profiler wanted more than " + std::to_string(max_passes) + " passes");
    }
    if (auto out = halt(session.start(), session, m)) return std::move(*out);
    if (auto out = halt(session.push_range("workload"), session, m)) return std::move(*out);
    if (auto w = workload(); !w) return w.errors();
    if (auto out = halt(session.pop_range(), session, m)) return std::move(*out);
    if (auto out = halt(session.stop(done), session, m)) return std::move(*out);
    ++m.passes;
  }
  std::size_t dropped = 0;
  if (auto out = halt(session.decode(dropped), session, m)) return std::move(*out);
  // A dropped range reads as zeros: an error, not a measurement of no tensor-core use.
  if (dropped != 0) {
    return make_error("cupti", "cuptiRangeProfilerDecodeData dropped " + std::to_string(dropped) +
                                   " range(s) of the workload; no counter values to read");
  }
  auto values = session.evaluate(0);
  if (!values) return values.errors();
  m.values = std::move(*values);
  m.from_counters = true;
  return m;
}

// Members are destroyed in reverse order: the launch names (unsubscribed) before the profiler
// session (stopped, disabled, deinitialised), so no launch callback is counted for a profiler
// that is being torn down.
struct KernelCounterSession::State {
  RangeProfilerSession session;
  std::unique_ptr<KernelLaunchNames> names;
  PerKernelTensorCores result;
  std::size_t max_kernels = 0;
  bool refused = false;   // counters refused at start: finish() returns the fallback
  bool finished = false;
};

KernelCounterSession::~KernelCounterSession() {
  // A session abandoned between start() and finish() (the workload failed): the workload's kernels
  // may still be queued or under replay, and cuptiRangeProfilerStop/Disable (the session's
  // destructor) with kernel replay in progress would tear the profiler down under CUPTI's own
  // save/restore of their memory. Wait for them first; the result cannot be acted on here.
  if (state_ && !state_->finished && !state_->refused) cudaDeviceSynchronize();
}

Result<std::unique_ptr<KernelCounterSession>> KernelCounterSession::start(int device, std::size_t max_kernels) {
  if (max_kernels == 0) return make_error("max_kernels", "value 0: at least one kernel must fit in the counter data");
  std::unique_ptr<KernelCounterSession> out(new KernelCounterSession());
  out->state_ = std::make_unique<State>();
  State& s = *out->state_;
  s.max_kernels = max_kernels;
  PerKernelTensorCores& m = s.result;
  const auto step = [&](const Result<bool>& r) -> std::optional<Result<std::unique_ptr<KernelCounterSession>>> {
    if (auto stop = halt(r, s.session, m)) {
      if (!*stop) return Result<std::unique_ptr<KernelCounterSession>>(stop->errors());
      m = std::move(**stop);
      s.refused = true;
      return Result<std::unique_ptr<KernelCounterSession>>(std::move(out));
    }
    return std::nullopt;
  };
  // Each kernel's duration comes with its counters, so that a run without the activity tracer
  // (the probe never runs both, probe/README.md) can weigh kernels by time.
  if (auto r = step(s.session.open(device, max_kernels, {kKernelDurationMetric}))) return std::move(*r);
  m.chip = s.session.chip();
  m.metrics = s.session.metrics();
  m.duration_metric = kKernelDurationMetric;
  m.passes = s.session.config_passes();
  // maxRangesPerPass = max_kernels: with kernel replay every kernel is a range of the same
  // pass set, and the image was sized for as many (GetCounterDataSize's maxNumOfRanges).
  if (auto r = step(s.session.configure(CUPTI_AutoRange, CUPTI_KernelReplay, max_kernels))) return std::move(*r);
  // The names come first: a launch between Start and the subscription would shift every name.
  if (auto names = KernelLaunchNames::start(s.session.context())) {
    s.names = std::move(*names);
  } else {
    m.names_note = "kernel names unknown: " + names.error_text();
  }
  if (auto r = step(s.session.start())) return std::move(*r);
  return out;
}

Result<PerKernelTensorCores> KernelCounterSession::finish() {
  State& s = *state_;
  if (s.finished) return make_error("counters", "KernelCounterSession::finish called twice");
  s.finished = true;
  PerKernelTensorCores& m = s.result;
  if (s.refused) return std::move(m);
  // Every kernel of the workload ran before Stop (kernel replay runs them at launch, but a
  // workload may not have synchronised all its streams).
  if (auto sync = cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before counters stop)"); !sync) {
    return sync.errors();
  }
  if (s.names) {
    m.launches = s.names->launches();
    const auto names = s.names->names();
    s.names.reset();  // unsubscribe before the host API's work
    m.kernels.reserve(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) m.kernels.push_back({i, names[i], {}});
  }
  bool all_passes = false;
  if (auto out = halt(s.session.stop(all_passes), s.session, m)) return std::move(*out);
  if (!all_passes) {
    return make_error("cupti", "cuptiRangeProfilerStop: kernel replay left passes unsubmitted (isAllPassSubmitted 0)");
  }
  std::size_t dropped = 0;
  if (auto out = halt(s.session.decode(dropped), s.session, m)) return std::move(*out);
  auto ranges = s.session.range_count();
  if (!ranges) return ranges.errors();
  m.ranges = *ranges;
  m.dropped_ranges = dropped;
  if (m.launches > m.ranges + dropped) m.dropped_ranges = m.launches - m.ranges;  // launches past the image

  // Kernel names by launch order: range i is launch i when CUPTI numbers the range i (its auto
  // range name), provided the launches and the ranges agree in number (or the ranges stopped at
  // the image's capacity); otherwise no range gets a name, rather than a wrong one.
  std::vector<KernelTensorCores> launched = std::move(m.kernels);
  m.kernels.clear();
  const bool names_usable = !launched.empty() && (launched.size() == m.ranges ||
                                                  (launched.size() > m.ranges && m.ranges == s.max_kernels));
  for (std::size_t i = 0; i < m.ranges; ++i) {
    KernelTensorCores k;
    k.range = i;
    auto name = s.session.range_name(i);
    if (!name) return name.errors();
    const auto number = range_number(*name);
    if (number && *number < launched.size() && names_usable) {
      k.kernel = launched[*number].kernel;
    } else if (!number && !name->empty()) {
      k.kernel = *name;  // a CUPTI that names auto ranges after their kernels
    }
    if (number && *number != i && m.names_note.empty()) {
      m.names_note = "CUPTI numbered range " + std::to_string(i) + " as " + *name + "; names follow its numbers";
    }
    auto values = s.session.evaluate(i);
    if (!values) return values.errors();
    // The tensor metrics, then the duration (the session's extra metric, last).
    if (values->size() != m.metrics.size() + 1) {
      return make_error("cupti", "range " + std::to_string(i) + ": " + std::to_string(values->size()) +
                                     " metric values for " + std::to_string(m.metrics.size() + 1) + " metrics");
    }
    k.duration_ns = values->back();
    values->pop_back();
    k.values = std::move(*values);
    m.kernels.push_back(std::move(k));
  }
  if (m.names_note.empty() && !names_usable && m.ranges > 0) {
    m.names_note = "kernel names unknown: " + std::to_string(launched.size()) + " kernel launches seen for " +
                   std::to_string(m.ranges) + " ranges";
  }
  m.from_counters = true;
  return std::move(m);
}

Result<PerKernelTensorCores> measure_tensor_cores_per_kernel(int device, const std::function<Result<bool>()>& workload,
                                                            std::size_t max_kernels) {
  auto session = KernelCounterSession::start(device, max_kernels);
  if (!session) return session.errors();
  if (auto w = workload(); !w) return w.errors();  // the session's destructor stops the profiler
  return (*session)->finish();
}

}  // namespace plansight::runtime::cuda
