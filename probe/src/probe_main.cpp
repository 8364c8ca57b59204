// plansight-probe: runs one probe request and writes JSON lines on stdout (protocol in
// probe/README.md). It is the only place that turns probe errors into exit codes: 0 done,
// 1 the run failed, 2 a bad request, 130 stopped by SIGINT/SIGTERM (what was measured is still
// written). The app starts it as a child process, so a crash here never takes the app down.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>

#include <unistd.h>

#include "plansight/estimator/json_io.h"
#include "plansight/probe/calibration.h"
#include "plansight/probe/engine.h"
#ifdef PLANSIGHT_PROBE_HAS_CUDA
#include "plansight/probe/cuda/cuda_device.h"
#include "plansight/probe/cuda/gpu_calibration.h"
#endif

namespace {

namespace est = plansight::estimator;
namespace pr = plansight::probe;
using plansight::Diagnostic;
using plansight::make_error;

constexpr int kExitFailed = 1, kExitBadRequest = 2, kExitStopped = 130;

// Set by SIGINT/SIGTERM; a lock-free atomic store is async-signal-safe.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

std::mutex g_out_mutex;
// One event per line, flushed at once so the parent sees progress live. A closed pipe (the
// parent went away) stops the run instead of killing the process with SIGPIPE.
void emit(const nlohmann::json& event) {
  std::lock_guard lock(g_out_mutex);
  std::cout << event.dump() << '\n' << std::flush;
  if (!std::cout) g_stop.store(true);
}

int emit_errors(const std::vector<Diagnostic>& errors, int code) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : errors) list.push_back({{"field", e.field}, {"message", e.message}});
  emit({{"event", "error"}, {"errors", list}, {"exit_code", code}});
  for (const auto& e : errors) std::cerr << "plansight-probe: " << e.to_string() << "\n";
  return code;
}

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

const char* kUsage =
    "usage: plansight-probe [REQUEST.json | -] [--device cpu|cuda|auto] [--calibration quick|full]\n"
    "Runs the probe request (a file, or stdin when absent or \"-\") and writes JSON lines on stdout:\n"
    "started, progress..., result, done; or error. See probe/README.md.\n";

struct Options {
  std::string request_path = "-";
  std::string device;  // empty: as the request says
  pr::CalibrationLevel calibration = pr::CalibrationLevel::full;
};

plansight::Result<Options> parse_args(int argc, char** argv) {
  Options o;
  bool path_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* flag) -> plansight::Result<std::string> {
      if (i + 1 >= argc) return make_error(flag, "needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--device") {
      auto v = value("--device");
      if (!v) return v.errors();
      if (*v != "cpu" && *v != "cuda" && *v != "auto") return make_error("--device", "unknown value \"" + *v + "\"; valid: cpu, cuda, auto");
      o.device = *v;
    } else if (a == "--calibration") {
      auto v = value("--calibration");
      if (!v) return v.errors();
      if (*v != "quick" && *v != "full") return make_error("--calibration", "unknown value \"" + *v + "\"; valid: quick, full");
      o.calibration = *v == "quick" ? pr::CalibrationLevel::quick : pr::CalibrationLevel::full;
    } else if (!path_given && (a == "-" || a.rfind("--", 0) != 0)) {
      o.request_path = a;
      path_given = true;
    } else {
      return make_error(a, "unknown argument; valid: REQUEST.json, -, --device, --calibration, --help");
    }
  }
  return o;
}

plansight::Result<std::string> read_request_text(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("request", "cannot read \"" + path + "\"");
  text << in.rdbuf();
  return text.str();
}

// Errors of run_probe that name a request field ("layout.tp") are the request's fault (exit 2);
// anything else ("rank 3", "calibration", "grad_sync") is a failed run (exit 1). The fields are
// the request's own keys, as to_json writes them, so a new field can never be missed here.
bool names_request_field(const std::vector<Diagnostic>& errors) {
  static const nlohmann::json kRequest = pr::to_json(pr::ProbeRequest{});
  for (const auto& e : errors) {
    for (const auto& [field, value] : kRequest.items()) {
      if (e.field == field || e.field.rfind(field + ".", 0) == 0) return true;
    }
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << kUsage;
      return 0;
    }
  }
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  auto options = parse_args(argc, argv);
  if (!options) return emit_errors(options.errors(), kExitBadRequest);
  auto text = read_request_text(options->request_path);
  if (!text) return emit_errors(text.errors(), kExitBadRequest);
  auto json = est::parse_json_text(*text, "request");
  if (!json) return emit_errors(json.errors(), kExitBadRequest);
  if (!options->device.empty()) (*json)["device"] = options->device;
  auto request = pr::probe_request_from_json(*json);
  if (!request) return emit_errors(request.errors(), kExitBadRequest);

#ifdef PLANSIGHT_PROBE_HAS_CUDA
  plansight::probe::cuda::register_cuda_probe_device();  // device cuda, or auto with a GPU present
#else
  if (request->device == pr::Device::cuda) {
    return emit_errors({make_error("device", "cuda was asked for, but this plansight-probe was built without CUDA "
                                             "(PLANSIGHT_ENABLE_CUDA=OFF) and cannot use a GPU; use --device cpu or auto")},
                       kExitFailed);
  }
  if (request->device == pr::Device::automatic) request->device = pr::Device::cpu;  // no GPU build: the CPU
#endif

  // The name the store files this run and its hardware profile under; a GPU run's result names
  // the GPU itself, and its profile takes that name.
  std::string device_name = request->device == pr::Device::cpu ? pr::cpu_device_name()
                            : request->device == pr::Device::cuda ? "cuda" : "auto";
  const auto& l = request->layout;
  emit({{"event", "started"},
        {"protocol", 1},
        {"pid", static_cast<long long>(getpid())},
        {"device", device_name},
        {"world_size", l.tp * l.pp * l.dp},
        {"request", pr::to_json(*request)}});

  auto result = pr::run_probe(
      *request,
      [](const pr::Progress& p) {
        emit({{"event", "progress"}, {"step", p.step}, {"steps", p.steps}, {"loss", number_or_null(p.loss)},
              {"elapsed_s", p.elapsed_s}, {"eta_s", p.eta_s}});
      },
      &g_stop);
  if (!result) {
    return emit_errors(result.errors(), g_stop.load() ? kExitStopped
                                                      : (names_request_field(result.errors()) ? kExitBadRequest : kExitFailed));
  }
  if (g_stop.load()) result->stopped_early = true;

  const bool on_gpu = result->device.rfind("cuda", 0) == 0;
  device_name = on_gpu ? result->device : pr::cpu_device_name();
  if (request->calibrate && !result->profile && !result->stopped_early) {
    emit({{"event", "calibrating"}, {"level", options->calibration == pr::CalibrationLevel::quick ? "quick" : "full"}});
    plansight::Result<est::HardwareProfile> profile = make_error("calibration", "no calibration ran");
#ifdef PLANSIGHT_PROBE_HAS_CUDA
    if (on_gpu) {
      // GPU runs are predicted with the GPU's own numbers (cuBLASLt GEMMs at the run's shapes,
      // copies, attention, AdamW, collectives among virtual ranks).
      plansight::probe::cuda::GpuCalibrationOptions gpu_options;
      gpu_options.level = options->calibration;
      gpu_options.stop = &g_stop;
      auto gpu = plansight::probe::cuda::calibrate_gpu(*request, gpu_options);
      if (gpu) profile = std::move(gpu->profile);
      else profile = gpu.errors();
    } else
#endif
    {
      profile = pr::calibrate(*request, {options->calibration, &g_stop});
    }
    if (profile) {
      profile->device = device_name;  // one name per device in the store
      result->profile = std::move(*profile);
    } else if (!g_stop.load()) {
      return emit_errors(profile.errors(), kExitFailed);
    } else {
      result->stopped_early = true;
    }
  }

  nlohmann::json event = pr::to_json(*result);
  event["event"] = "result";
  emit(event);
  const int code = result->stopped_early ? kExitStopped : 0;
  emit({{"event", "done"}, {"exit_code", code}, {"stopped_early", result->stopped_early}});
  return code;
}
