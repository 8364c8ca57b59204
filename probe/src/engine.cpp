// run_probe() / train(): validates the request, picks the run device (the CPU, or a GPU when a
// GPU build registered one and the request asks for cuda or auto, or the launched processes
// under mpirun/srun), starts one thread per rank this process runs (all TP x PP x DP of them, or
// its one rank when ranks are processes; each with a gradient thread), reports progress from
// the calling thread as rank 0 finishes steps, and assembles the result (gathering the other
// processes' parts to rank 0's). CPU ranks share the processor, so OpenBLAS
// is set to threads_per_rank before any rank starts (kernels/README.md, "Threads").
#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <thread>

#include "plansight/kernels/blas_threads.h"
#include "plansight/probe/trainer.h"
#include "cpu_affinity.h"
#include "cpu_device.h"
#include "probe_config.h"
#include "process_parts.h"
#include "rank_worker.h"

namespace plansight::probe {
namespace {

// The GPU for `cuda`; for `auto` the GPU when one answers, else the CPU.
Result<std::unique_ptr<RunDevice>> pick_device(const ProbeRequest& request, int world_size) {
  // Launched processes: their device decides between the CPU and the GPUs, as all agree.
  if (const RunDeviceFactory processes = registered_process_factory()) return processes(request, world_size);
  auto cpu = [&]() -> Result<std::unique_ptr<RunDevice>> {
    if (auto p = check_cpu_precision(request); !p) return p.errors();
    return make_cpu_device(world_size);
  };
  if (request.device == Device::cpu) return cpu();
  const RunDeviceFactory factory = registered_cuda_factory();
  if (!factory) {
    if (request.device == Device::automatic) return cpu();
    return make_error("device", "cuda was asked for, but this plansight-probe was built without CUDA "
                                "(PLANSIGHT_ENABLE_CUDA=OFF) and cannot use a GPU; valid: cpu, auto");
  }
  auto gpu = factory(request, world_size);
  if (!gpu && request.device == Device::automatic) return cpu();
  return gpu;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// The first failure is the cause; the other ranks' "aborted: ..." errors are its echoes. When
// every error here is an echo (the failure was in another process), the cause is what follows
// the echo's "aborted: ".
std::string root_cause(const std::vector<std::string>& errors) {
  for (const auto& e : errors) if (e.find("aborted: ") == std::string::npos) return e;
  const std::string& echo = errors.front();
  return echo.substr(echo.find("aborted: ") + 9);
}

}  // namespace

ProbeRequest resolved_for_this_process(ProbeRequest request) {
  if (request.cores <= 0) request.cores = available_cores();
  return request;
}

Result<TrainOutput> train(const ProbeRequest& request, const TrainOptions& options, const ProgressCallback& progress,
                          const std::atomic<bool>* stop) {
  auto out = train_or_error(request, options, progress, stop);
  if (auto* error = std::get_if<ProbeError>(&out)) return std::move(error->errors);
  return std::move(std::get<TrainOutput>(out));
}

std::variant<TrainOutput, ProbeError> train_or_error(const ProbeRequest& asked, const TrainOptions& options,
                                                     const ProgressCallback& progress, const std::atomic<bool>* stop) {
  const ProbeRequest request = resolved_for_this_process(asked);
  auto config = make_config(request);
  if (!config) return ProbeError{ErrorKind::bad_request, config.errors()};
  const ProbeConfig& cfg = *config;
  auto device = pick_device(request, cfg.world());
  if (!device) return ProbeError{ErrorKind::bad_request, device.errors()};
  kernels::cpu::set_blas_threads(static_cast<int>(request.threads_per_rank));

  RunState state(cfg, options.collect_parameters, std::move(*device));
  if (request.trace) state.tracer = std::make_unique<runtime::Tracer>(cfg.world());
  // Fewer cores than this process may use: the rank threads are confined to the first `cores`
  // of them (the estimator predicts the run on that many processors).
  const std::vector<int> cpus = cpus_for(request.cores);
  state.stop = stop;
  state.adam_eps = options.adam_eps;
  state.fail_rank = options.fail_rank;
  state.fail_step = options.fail_step;
  const auto start = std::chrono::steady_clock::now();
  // Under a launcher each process runs its own ranks (one each); otherwise this one runs all.
  const std::vector<int> local = state.device->local_ranks(cfg.world());
  const int local_count = static_cast<int>(local.size());
  std::vector<std::thread> threads;
  for (int r : local) {
    threads.emplace_back([&state, &cpus, r] {
      confine_to(cpus);
      rank_main(state, r);
    });
  }

  // Progress from the calling thread, so the callback never runs on a rank thread.
  std::size_t reported = 0;
  for (;;) {
    std::unique_lock lock(state.mutex);
    state.changed.wait(lock, [&] { return state.steps.size() > reported || state.ranks_done == local_count; });
    std::vector<StepResult> fresh(state.steps.begin() + static_cast<std::ptrdiff_t>(reported), state.steps.end());
    reported = state.steps.size();
    const bool done = state.ranks_done == local_count;
    lock.unlock();
    for (const auto& s : fresh) {
      if (!progress) continue;
      Progress p;
      p.step = s.step;
      p.steps = request.steps;
      p.loss = s.loss;
      p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      p.eta_s = p.elapsed_s / static_cast<double>(s.step) * static_cast<double>(request.steps - s.step);
      progress(p);
    }
    if (done) break;
  }
  for (auto& t : threads) t.join();
  if (!state.errors.empty()) {
    return ProbeError{stop && stop->load() ? ErrorKind::stopped : ErrorKind::failed, {make_error("probe", root_cause(state.errors))}};
  }

  TrainOutput out;
  ProbeResult& r = out.result;
  // A device that measures its own timeline (a GPU: CUPTI) gives this process's ranks' part; the
  // host tracer's spans otherwise.
  std::optional<estimator::Timeline> device_timeline;
  if (state.tracer) {
    if (auto measured = state.device->device_timeline(*state.tracer)) {
      if (!*measured) {
        state.device->abort("rank " + std::to_string(local.front()) + ": " + measured->error_text());
        return ProbeError{ErrorKind::failed, measured->errors()};
      }
      device_timeline = std::move(**measured);
    }
  }
  if (local_count < cfg.world()) {
    // Every process hands its ranks' memory, parameters and timeline to the one that writes the result.
    auto parts = state.device->gather_parts(encode_process_part(state, local, device_timeline ? &*device_timeline : nullptr));
    if (!parts) return ProbeError{ErrorKind::failed, parts.errors()};
    if (!state.device->writes_result()) {
      out.writes_result = false;
      return out;
    }
    for (std::size_t p = 1; p < parts->size(); ++p) {  // part 0 is this process's: its ranks are in place
      auto merged = merge_process_part(state, (*parts)[p], state.device->clock_offset_ns(static_cast<int>(p)),
                                       device_timeline ? &*device_timeline : nullptr);
      if (!merged) return ProbeError{ErrorKind::failed, merged.errors()};
    }
  }
  r.device = state.device->name();
  r.ranks_share_device = state.device->ranks_share_device();
  r.steps = state.steps;
  r.stopped_early = state.stopped_early;
  // Steps after the warm-up are timed; a run shorter than its warm-up times all of them.
  std::vector<double> timed;
  for (const auto& s : r.steps) if (s.step > request.warmup_steps) timed.push_back(s.seconds);
  if (timed.empty()) for (const auto& s : r.steps) timed.push_back(s.seconds);
  r.step_time_s = median(timed);
  r.memory = state.memory;
  if (state.tracer) {
    r.timeline = device_timeline ? std::move(*device_timeline)
                                 : state.tracer->timeline("probe " + cfg.request.model.name + ", last step");
    const std::int64_t origin = r.timeline.begin_ns();
    for (auto& track : r.timeline.tracks) for (auto& span : track.spans) span.start_ns -= origin;
  }
  // After the timeline: a GPU's report has the tensor-core share of the timeline it measured.
  r.device_report = state.device->report();
  for (auto& rank_parameters : state.parameters) {
    for (auto& [name, values] : rank_parameters) {
      auto& dst = out.parameters[name];
      if (dst.empty()) dst.assign(values.size(), std::nanf(""));
      for (std::size_t i = 0; i < values.size(); ++i) if (!std::isnan(values[i])) dst[i] = values[i];
    }
  }
  return out;
}

Result<ProbeResult> run_probe(const ProbeRequest& request, const ProgressCallback& progress, const std::atomic<bool>* stop) {
  auto out = train(request, TrainOptions{}, progress, stop);
  if (!out) return out.errors();
  return std::move(out->result);
}

}  // namespace plansight::probe
