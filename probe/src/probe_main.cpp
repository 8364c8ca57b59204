// plansight-probe: runs one probe request and writes JSON lines on stdout (the protocol's events,
// plansight/probe/protocol/events.h; probe/README.md). It is the only place that turns probe
// errors into exit codes, each from its error kind: 0 done, 1 the run failed, 2 a bad request,
// 130 stopped by SIGINT/SIGTERM (what was measured is still written). The app starts it as a child process, so a crash here never takes the app down.
// Started by mpirun or srun with several processes, each process is one rank of the run (MPI
// between them, probe/src/mpi): rank 0 reads the request and hands it to the others, and only
// rank 0 writes the JSON lines; a failed run ends every process of the job.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <sstream>

#include <chrono>
#include <thread>

#include <unistd.h>

#include "plansight/estimator/json_io.h"
#include "plansight/probe/calibration.h"
#include "plansight/probe/engine.h"
#include "plansight/probe/protocol/events.h"
#include "plansight/probe/trainer.h"
#include "plansight/runtime/launch.h"
#ifdef PLANSIGHT_PROBE_HAS_MPI
#include "plansight/probe/mpi/mpi_probe.h"
#endif
#ifdef PLANSIGHT_PROBE_HAS_CUDA
#include "plansight/probe/cuda/cuda_device.h"
#include "plansight/probe/cuda/gpu_calibration.h"
#endif

namespace {

namespace est = plansight::estimator;
namespace pr = plansight::probe;
using plansight::Diagnostic;
using plansight::make_error;
using pr::ErrorKind;

// Set by SIGINT/SIGTERM; a lock-free atomic store is async-signal-safe.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

std::mutex g_out_mutex;
// Whether this process writes the JSON lines: the only process, or rank 0 of a launched run
// (the launcher merges every process's stdout into one stream).
bool g_writer = true;
// One event per line, flushed at once so the parent sees progress live. A closed pipe (the
// parent went away) stops the run instead of killing the process with SIGPIPE.
void emit(const pr::Event& event) {
  if (!g_writer) return;
  std::lock_guard lock(g_out_mutex);
  std::cout << pr::write_event(event) << '\n' << std::flush;
  if (!std::cout) g_stop.store(true);
}

// The error event; returns the kind's exit code.
int emit_errors(const std::vector<Diagnostic>& errors, ErrorKind kind) {
  emit(pr::ErrorEvent{kind, errors});
  if (g_writer) for (const auto& e : errors) std::cerr << "plansight-probe: " << e.to_string() << "\n";
  return pr::exit_code(kind);
}

const char* kUsage =
    "usage: plansight-probe [REQUEST.json | -] [--device cpu|cuda|auto] [--calibration quick|full]\n"
    "                       [--inject-failure RANK:STEP]\n"
    "Runs the probe request (a file, or stdin when absent or \"-\") and writes JSON lines on stdout:\n"
    "started, progress..., result, done; or error. See probe/README.md.\n"
    "Under mpirun -np N or srun -n N each process runs one of the N ranks (MPI between them).\n"
    "--inject-failure RANK:STEP makes world rank RANK fail at the start of step STEP (1-based):\n"
    "a check of how a run ends when one rank fails.\n";

struct Options {
  std::string request_path = "-";
  std::string device;  // empty: as the request says
  pr::CalibrationLevel calibration = pr::CalibrationLevel::full;
  int fail_rank = -1, fail_step = 1;
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
    } else if (a == "--inject-failure") {
      auto v = value("--inject-failure");
      if (!v) return v.errors();
      int rank = -1, step = 0;
      char tail = 0;
      if (std::sscanf(v->c_str(), "%d:%d%c", &rank, &step, &tail) != 2 || rank < 0 || step < 1) {
        return make_error("--inject-failure", "value \"" + *v + "\"; valid: RANK:STEP with RANK >= 0 and STEP >= 1, e.g. 1:2");
      }
      o.fail_rank = rank;
      o.fail_step = step;
    } else if (!path_given && (a == "-" || a.rfind("--", 0) != 0)) {
      o.request_path = a;
      path_given = true;
    } else {
      return make_error(a, "unknown argument; valid: REQUEST.json, -, --device, --calibration, --inject-failure, --help");
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

}  // namespace

// The processes of a launched run (mpirun/srun with several processes); empty otherwise.
struct Processes {
  plansight::runtime::LaunchInfo launch;
#ifdef PLANSIGHT_PROBE_HAS_MPI
  std::unique_ptr<plansight::runtime::mpi::MpiWorld> mpi;
#endif
  bool several() const { return launch.launched() && launch.size > 1; }
};

// How a process ends after its run failed with `code`. Alone: return it. In a launched run,
// rank 0 has written the error; it ends every process of the job (MPI_Abort), since requests of
// collectives that a failed peer never joined keep MPI_Finalize from returning. The others give
// rank 0 time to write, then end the job themselves in case rank 0 is gone.
int end_failed(Processes& processes, int code) {
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi) {
    if (!g_writer) std::this_thread::sleep_for(std::chrono::seconds(10));
    std::cout << std::flush;
    processes.mpi->abort_job(code);
  }
#else
  (void)processes;
#endif
  return code;
}

// Launch detection and, with several processes, MPI. Errors are the launch's, with exit codes.
int start_processes(Processes& processes, int& argc, char**& argv) {
  auto launch = plansight::runtime::detect_launch();
  if (!launch) return emit_errors(launch.errors(), ErrorKind::bad_request);
  processes.launch = *launch;
  g_writer = launch->rank == 0;
  if (!processes.several()) return 0;
#ifdef PLANSIGHT_PROBE_HAS_MPI
  auto mpi = plansight::runtime::mpi::MpiWorld::initialize(argc, argv);
  if (!mpi) return emit_errors(mpi.errors(), ErrorKind::failed);
  processes.mpi = std::move(*mpi);
  return 0;
#else
  (void)argc, (void)argv;
  return emit_errors({make_error("launch", launch->launcher + " started this process as rank " + std::to_string(launch->rank) +
                                               " of " + std::to_string(launch->size) +
                                               ", but this plansight-probe was built without MPI (PLANSIGHT_ENABLE_MPI=OFF); "
                                               "install Open MPI (scripts/install-deps) and rebuild, or run it without a launcher")},
                     ErrorKind::failed);
#endif
}

// The request's text: read here, or by rank 0 and handed to every process of a launched run
// (mpirun forwards stdin to rank 0 only). A failure to read is every process's error.
plansight::Result<std::string> request_text(Processes& processes, const std::string& path) {
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi) {
    nlohmann::json envelope;
    if (processes.mpi->rank() == 0) {
      auto text = read_request_text(path);
      envelope = text ? nlohmann::json{{"text", *text}} : nlohmann::json{{"error", text.error_text()}};
    }
    std::string wire = processes.mpi->rank() == 0 ? envelope.dump() : std::string();
    if (auto s = processes.mpi->broadcast_text(wire); !s) return s.errors();
    envelope = nlohmann::json::parse(wire);
    if (envelope.contains("error")) return make_error("request", envelope["error"].get<std::string>());
    return envelope["text"].get<std::string>();
  }
#else
  (void)processes;
#endif
  return read_request_text(path);
}

// Where the run's processes are, for the started event: launcher, count, host and pid of each.
std::optional<pr::LaunchReport> launch_report(const Processes& processes) {
  if (!processes.several()) return std::nullopt;
  pr::LaunchReport report;
  report.launcher = processes.launch.launcher;
  report.processes = processes.launch.size;
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi) {
    for (const auto& p : processes.mpi->processes()) report.ranks.push_back({p.rank, p.host, p.pid});
    report.communicator = "mpi: " + processes.mpi->library();
  }
#endif
  return report;
}

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
  // mpirun and srun forward SIGUSR1 to every process (they end the job on SIGINT), so a launched
  // run is stopped with SIGUSR1 and still reports what it measured.
  sigaction(SIGUSR1, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Processes processes;
  if (const int code = start_processes(processes, argc, argv); code != 0) return code;
  auto options = parse_args(argc, argv);
  if (!options) return emit_errors(options.errors(), ErrorKind::bad_request);
  auto text = request_text(processes, options->request_path);
  if (!text) return emit_errors(text.errors(), ErrorKind::bad_request);
  auto json = est::parse_json_text(*text, "request");
  if (!json) return emit_errors(json.errors(), ErrorKind::bad_request);
  if (!options->device.empty()) (*json)["device"] = options->device;
#ifdef PLANSIGHT_PROBE_HAS_MPI
  // Launched processes share the CPUs the launcher gave them together (one core each under
  // mpirun's default binding): the run's cores, and where rank 0 calibrates.
  std::vector<int> launched_cpus;
  if (processes.mpi) {
    auto cpus = pr::mpi::host_cpus(*processes.mpi);
    if (!cpus) return end_failed(processes, emit_errors(cpus.errors(), ErrorKind::failed));
    launched_cpus = *cpus;
    // A request without cores (absent, or 0 as the app's writer puts it) runs on those CPUs.
    const bool cores_given = json->is_object() && json->contains("cores") && (*json)["cores"] != 0;
    if (json->is_object() && !cores_given && !launched_cpus.empty()) {
      (*json)["cores"] = static_cast<long long>(launched_cpus.size());
    }
  }
#endif
  auto request = pr::probe_request_from_json(*json);
  if (!request) return emit_errors(request.errors(), ErrorKind::bad_request);
  *request = pr::resolved_for_this_process(std::move(*request));

#ifdef PLANSIGHT_PROBE_HAS_CUDA
  plansight::probe::cuda::register_cuda_probe_device();  // device cuda, or auto with a GPU present
#else
  if (request->device == pr::Device::cuda) {
    return emit_errors({make_error("device", "cuda was asked for, but this plansight-probe was built without CUDA "
                                             "(PLANSIGHT_ENABLE_CUDA=OFF) and cannot use a GPU; use --device cpu or auto")},
                       ErrorKind::bad_request);
  }
  if (request->device == pr::Device::automatic) request->device = pr::Device::cpu;  // no GPU build: the CPU
#endif
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi) {
    // Launched on GPUs: one GPU per process, NCCL between them, its id handed out through MPI.
    pr::ProcessGpu gpu;
#ifdef PLANSIGHT_PROBE_HAS_CUDA
    gpu.make_device = pr::cuda::make_cuda_process_device;
    gpu.make_bootstrap = pr::cuda::make_nccl_bootstrap;
#endif
    if (auto s = pr::mpi::register_mpi_probe_device(*processes.mpi, processes.launch, gpu); !s) {
      return end_failed(processes, emit_errors(s.errors(), ErrorKind::failed));
    }
  }
#endif

  // The name the store files this run and its hardware profile under; a GPU run's result names
  // the GPU itself, and its profile takes that name.
  std::string device_name = request->device == pr::Device::cpu ? pr::cpu_device_name()
                            : request->device == pr::Device::cuda ? "cuda" : "auto";
  const auto& l = request->layout;
  pr::StartedEvent started;
  started.pid = static_cast<std::int64_t>(getpid());
  started.device = device_name;
  started.world_size = l.tp * l.pp * l.dp;
  started.request = *request;
  started.launch = launch_report(processes);
  emit(started);

  pr::TrainOptions train_options;
  train_options.fail_rank = options->fail_rank;
  train_options.fail_step = options->fail_step;
  auto outcome = pr::train_or_error(
      *request, train_options,
      [](const pr::Progress& p) { emit(pr::ProgressEvent{p.step, p.steps, p.loss, p.elapsed_s, p.eta_s}); }, &g_stop);
  if (const auto* error = std::get_if<pr::ProbeError>(&outcome)) {
    return end_failed(processes, emit_errors(error->errors, error->kind));
  }
  pr::TrainOutput* trained = &std::get<pr::TrainOutput>(outcome);
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi && !trained->writes_result) {
    // Rank 0 may calibrate the collectives between the processes: take part until it is done.
    if (auto s = pr::mpi::serve_calibration(*processes.mpi, &g_stop); !s) return end_failed(processes, pr::exit_code(ErrorKind::failed));
    return 0;
  }
#endif
  pr::ProbeResult* result = &trained->result;
  if (g_stop.load()) result->stopped_early = true;

  const bool on_gpu = result->device.rfind("cuda", 0) == 0;
  device_name = on_gpu ? result->device : pr::cpu_device_name();
  if (request->calibrate && !result->profile && !result->stopped_early) {
    emit(pr::CalibratingEvent{options->calibration == pr::CalibrationLevel::quick ? "quick" : "full"});
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
      pr::CalibrationOptions calibration{options->calibration, &g_stop, {}};
#ifdef PLANSIGHT_PROBE_HAS_MPI
      // Collectives are measured between the launched processes, through MPI; the compute
      // measurements on the CPUs those processes had.
      if (processes.mpi) {
        calibration.collectives = pr::mpi::mpi_collective_sweep(*processes.mpi);
        pr::mpi::run_on(launched_cpus);
      }
#endif
      profile = pr::calibrate(*request, calibration);
    }
    if (profile) {
      profile->device = device_name;  // one name per device in the store
      result->profile = std::move(*profile);
    } else if (!g_stop.load()) {
      return end_failed(processes, emit_errors(profile.errors(), ErrorKind::failed));
    } else {
      result->stopped_early = true;
    }
  }
#ifdef PLANSIGHT_PROBE_HAS_MPI
  if (processes.mpi) {
    if (auto s = pr::mpi::end_calibration(*processes.mpi); !s) return end_failed(processes, emit_errors(s.errors(), ErrorKind::failed));
  }
#endif

  const bool stopped = result->stopped_early;
  emit(pr::ResultEvent{std::move(*result)});
  const int code = stopped ? pr::exit_code(ErrorKind::stopped) : 0;
  emit(pr::DoneEvent{code, stopped});
  return code;
}
