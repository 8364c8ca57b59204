// `plansight probe`: runs the probe as a child process (never in-process: DESIGN §1), shows its
// progress, and stores the run, its measured timeline, summary and hardware profile. The run
// row is created when the probe reports "started", so a run that crashes later is still listed
// (as failed) and a reader sees it while it is running. The records are probe_run_store.h's,
// shared with the desktop app's Probe page. The request is read with the probe protocol's own
// reader before anything starts, so a bad flag is refused here with the probe's own message.
#include <atomic>
#include <csignal>
#include <string>

#include "command_util.h"
#include "plansight/core/child_process.h"
#include "plansight/cli/format.h"
#include "plansight/core/launcher.h"
#include "plansight/core/probe_events.h"
#include "plansight/core/probe_run_store.h"

namespace plansight::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted.store(true); }

// Installs the Ctrl-C handler for the duration of a run: the terminal sends SIGINT to the probe
// too, and the CLI must live on to store what the probe measured before it stopped.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted.store(false);
    struct sigaction a {};
    a.sa_handler = on_interrupt;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_RESTART;
    sigaction(SIGINT, &a, &old_int_);
    sigaction(SIGTERM, &a, &old_term_);
  }
  ~InterruptGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

const std::vector<FlagSpec>& probe_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--model", true, "tiny|small|gpt2-124m"}, {"--tp", true, "N"}, {"--pp", true, "N"}, {"--vpp", true, "N"},
      {"--dp", true, "N"}, {"--zero", true, "0..3"}, {"--recompute", true, "none|selective|full"},
      {"--schedule", true, "gpipe|1f1b|interleaved"}, {"--sequence-parallel", false, ""},
      {"--micro-batch", true, "N"}, {"--global-batch", true, "N"}, {"--seq-len", true, "N"}, {"--steps", true, "N"},
      {"--warmup-steps", true, "N"}, {"--learning-rate", true, "LR"}, {"--lr-warmup-steps", true, "N"},
      {"--weight-decay", true, "X"}, {"--seed", true, "N"}, {"--data", true, "synthetic|corpus"},
      {"--device", true, "cpu|cuda|auto"}, {"--launcher", true, "\"mpirun -np N\"|\"srun -n N\""},
      {"--precision", true, "fp32|tf32|bf16|fp16"}, {"--calibrate", false, ""},
      {"--name", true, "TEXT"}, {"--db", true, "PATH"}, {"--json", false, ""}};
  return flags;
}

// The request the flags describe, as JSON: probe::probe_request_from_json checks it (one place
// owns the rules), its errors naming the request field.
Result<nlohmann::json> request_from_args(const Args& args) {
  std::vector<Diagnostic> errors;
  nlohmann::json request = {{"model", args.value("--model").value_or("small")}, {"layout", nlohmann::json::object()}};
  auto integer = [&](const char* flag, nlohmann::json& target, const char* key) {
    if (!args.has(flag)) return;
    auto v = args.integer(flag);
    if (v) target[key] = *v;
    else errors.insert(errors.end(), v.errors().begin(), v.errors().end());
  };
  auto& layout = request["layout"];
  integer("--tp", layout, "tp");
  integer("--pp", layout, "pp");
  integer("--vpp", layout, "vpp");
  integer("--dp", layout, "dp");
  integer("--zero", layout, "zero_stage");
  if (auto v = args.value("--recompute")) layout["recompute"] = *v;
  if (auto v = args.value("--schedule")) layout["schedule"] = *v;
  if (args.has("--sequence-parallel")) layout["sequence_parallel"] = true;
  // As in `estimate`: --vpp N > 1 means the interleaved schedule unless one is named.
  if (layout.contains("vpp") && layout["vpp"].get<long long>() > 1 && !layout.contains("schedule")) layout["schedule"] = "interleaved";
  integer("--micro-batch", request, "micro_batch");
  integer("--global-batch", request, "global_batch");
  integer("--seq-len", request, "seq_len");
  integer("--steps", request, "steps");
  integer("--warmup-steps", request, "warmup_steps");
  integer("--lr-warmup-steps", request, "lr_warmup_steps");
  integer("--seed", request, "seed");
  for (const auto& [flag, key] : {std::pair{"--learning-rate", "learning_rate"}, std::pair{"--weight-decay", "weight_decay"}}) {
    if (!args.has(flag)) continue;
    auto v = args.number(flag);
    if (v) request[key] = *v;
    else errors.insert(errors.end(), v.errors().begin(), v.errors().end());
  }
  if (auto v = args.value("--data")) request["data"] = *v;
  if (auto v = args.value("--device")) request["device"] = *v;
  if (auto v = args.value("--precision")) request["precision"] = *v;
  // Every stored run gets the profile of the machine it ran on, so `compare` predicts with this
  // machine's numbers; --calibrate asks for the full sweep instead of the quick one.
  request["calibrate"] = true;
  if (!errors.empty()) return errors;
  return request;
}

std::string progress_bar(const probe::ProgressEvent& p) {
  constexpr int kWidth = 30;
  const double done = p.steps > 0 ? static_cast<double>(p.step) / static_cast<double>(p.steps) : 0;
  const int filled = static_cast<int>(done * kWidth + 0.5);
  std::string bar = "\r[" + std::string(static_cast<std::size_t>(filled), '#') +
                    std::string(static_cast<std::size_t>(kWidth - filled), '.') + "] step " + std::to_string(p.step) +
                    "/" + std::to_string(p.steps);
  if (std::isfinite(p.loss)) bar += "  loss " + format_fixed(p.loss, 4);
  bar += "  " + format_seconds(p.elapsed_s) + " elapsed, eta " + format_seconds(p.eta_s) + "   ";
  return bar;
}

// "tensor cores  71.8 % of kernel time (kernel-name rules); forward 80.1 %, backward 75.0 %, ..."
// from a GPU run's device report; nothing for CPU runs.
void print_tensor_cores(std::ostream& out, const nlohmann::json& device) {
  const auto tc = device.value("tensor_cores", nlohmann::json::object());
  if (!tc.contains("step")) return;
  auto percent = [](const nlohmann::json& share) { return format_fixed(100.0 * share.value("share", 0.0), 1) + " %"; };
  out << "  tensor cores  " << percent(tc["step"]) << " of kernel time (" << tc.value("source", std::string("?")) << ")";
  std::string phases;
  const auto by_phase = tc.value("by_phase", nlohmann::json::object());  // items() must not outlive it
  for (const auto& [phase, share] : by_phase.items()) {
    if (phase == "none") continue;
    phases += (phases.empty() ? "" : ", ") + phase + " " + percent(share);
  }
  if (!phases.empty()) out << "; " << phases;
  out << "\n";
}

// "launched      mpirun, 4 processes on a (2), b (2); mpi: Open MPI v4.1.4; clocks aligned within 4.7 us, drift 0.3 us"
// for runs whose ranks were processes; nothing for rank threads.
void print_launch(std::ostream& out, const nlohmann::json& device) {
  const auto launch = device.value("launch", nlohmann::json::object());
  if (launch.empty()) return;
  std::string hosts;
  for (const auto& h : launch.value("hosts", nlohmann::json::array())) {
    hosts += (hosts.empty() ? "" : ", ") + h.value("host", std::string("?")) + " (" +
             std::to_string(h.value("ranks", nlohmann::json::array()).size()) + ")";
  }
  out << "  launched      " << launch.value("launcher", std::string("?")) << ", " << launch.value("processes", 0)
      << " processes on " << hosts << "; " << launch.value("communicator", std::string("?"));
  const auto clock = device.value("clock", nlohmann::json::object());
  if (launch.value("hosts", nlohmann::json::array()).size() == 1) {
    out << "; one host, one clock";
  } else if (clock.contains("error_bound_ns")) {
    out << "; clocks aligned within " << format_fixed(clock["error_bound_ns"].get<double>() / 1e3, 1) << " us, drift "
        << format_fixed(clock.value("max_drift_ns", 0.0) / 1e3, 1) << " us";
  }
  out << "\n";
}

void print_summary(std::ostream& out, std::int64_t run_id, const std::string& device, const nlohmann::json& request,
                   const store::RunSummary& s, bool stopped) {
  const auto& l = request["layout"];
  out << "run " << run_id << (stopped ? " (stopped early)" : "") << " on " << device << "\n";
  out << "  layout        tp " << l.value("tp", 1) << ", pp " << l.value("pp", 1) << ", vpp " << l.value("vpp", 1) << ", dp "
      << l.value("dp", 1) << ", zero " << l.value("zero_stage", 0) << ", " << l.value("schedule", std::string()) << ", recompute "
      << l.value("recompute", std::string()) << "\n";
  out << "  batch         micro " << request.value("micro_batch", 1) << ", global " << request.value("global_batch", 1)
      << ", seq " << request.value("seq_len", 0) << "\n";
  out << "  precision     " << request.value("precision", std::string("fp32")) << "\n";
  out << "  steps         " << s.loss_per_step.size() << "\n";
  if (s.step_time_s) out << "  step time     " << format_seconds(*s.step_time_s) << " (median)\n";
  if (!s.loss_per_step.empty()) {
    out << "  loss          " << format_fixed(s.loss_per_step.front(), 4) << " -> " << format_fixed(s.loss_per_step.back(), 4) << "\n";
  }
  print_tensor_cores(out, s.device);
  print_launch(out, s.device);
  out << "  memory (largest rank peak per category)\n";
  for (const auto& category : core::memory_categories()) {
    auto it = s.memory_bytes.find(category);
    const double bytes = it == s.memory_bytes.end() ? 0.0 : static_cast<double>(it->second);
    out << "    " << pad_right(category, 12) << pad_left(format_fixed(bytes / (1 << 20), 2), 10) << " MiB\n";
  }
}

}  // namespace

Status run_probe_command(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, probe_flags());
  if (!args) return report_command_errors(args.errors(), json, out, err);
  if (!args->positionals().empty()) {
    return report_command_errors({make_error(args->positionals().front(), "unexpected argument; see plansight --help")}, json, out, err);
  }
  auto asked = request_from_args(*args);
  if (!asked) return report_command_errors(asked.errors(), json, out, err);
  auto request = probe::probe_request_from_json(*asked);
  if (!request) return report_command_errors(request.errors(), json, out, err);
  auto probe = core::find_probe_executable();
  if (!probe) return report_command_errors(probe.errors(), json, out, err, Status::failure);
  // Under a launcher: `<launcher words> plansight-probe ...`, one probe process per rank.
  std::vector<std::string> launcher;
  if (auto command = args->value("--launcher")) {
    auto words = core::launcher_words(*command);
    if (!words) return report_command_errors(words.errors(), json, out, err);
    auto program = core::find_program(words->front());
    if (!program) return report_command_errors(program.errors(), json, out, err, Status::failure);
    launcher = std::move(*words);
    launcher.front() = *program;
  }
  auto db = open_run_store(*args);
  if (!db) return report_command_errors(db.errors(), json, out, err, Status::failure);

  core::ProbeEvents events;
  std::int64_t run_id = 0;
  std::string device;
  std::vector<Diagnostic> store_errors;
  std::vector<std::string> child_args = {"-", "--calibration", args->has("--calibrate") ? "full" : "quick"};
  std::string program = *probe;
  core::ChildOptions child_options;
  if (!launcher.empty()) {
    child_args.insert(child_args.begin(), *probe);
    child_args.insert(child_args.begin(), launcher.begin() + 1, launcher.end());
    program = launcher.front();
    child_options.own_process_group = true;
    child_options.interrupt_signal = core::stop_signal(true);
  }
  InterruptGuard guard;
  auto child = core::run_child(program, child_args, probe::to_json(*request).dump(), [&](std::string_view line) {
    const std::string kind = core::accept_probe_line(events, line);
    if (kind == "started" && run_id == 0) {
      device = events.started->device;
      auto id = db->create_run(core::started_probe_run(*events.started, args->value("--name").value_or("")));
      if (id) run_id = *id;
      else store_errors = id.errors();
    } else if (kind == "progress" && !json) {
      err << progress_bar(*events.last_progress) << std::flush;
    } else if (kind == "calibrating" && !json) {
      err << "\rcalibrating (GEMMs, memory bandwidth, collectives)...                              " << std::flush;
    }
  }, &g_interrupted, child_options);
  if (!json && events.last_progress) err << "\n";
  if (!child) return report_command_errors(child.errors(), json, out, err, Status::failure);
  if (!store_errors.empty()) return report_command_errors(store_errors, json, out, err, Status::failure);

  if (!events.result) {
    const std::vector<Diagnostic> errors = core::probe_failure(events, core::describe_child_exit(*child), child->stderr_text);
    if (run_id > 0) (void)core::mark_probe_run_unfinished(*db, run_id, errors, g_interrupted.load());
    const bool bad_request = events.error && events.error->kind == probe::ErrorKind::bad_request;
    return report_command_errors(errors, json, out, err, bad_request ? Status::invalid_input : Status::failure);
  }
  const probe::ProbeRequest& used = events.started ? events.started->request : *request;
  auto stored = core::store_probe_result(*db, run_id, *events.result, used, device);
  if (!stored) return report_command_errors(stored.errors(), json, out, err, Status::failure);
  const store::RunSummary summary = core::summary_of(*events.result, used);
  const bool stopped = events.result->stopped_early;
  const nlohmann::json request_used = probe::to_json(used);
  if (json) {
    nlohmann::json loss = nlohmann::json::array();
    for (double l : summary.loss_per_step) loss.push_back(std::isfinite(l) ? nlohmann::json(l) : nlohmann::json());
    out << json_text(nlohmann::json{{"run_id", run_id},
                          {"db", db->path().string()},
                          {"device", device},
                          {"model", request_used["model"]},
                          {"layout", request_used["layout"]},
                          {"micro_batch", request_used.value("micro_batch", 1)},
                          {"global_batch", request_used.value("global_batch", 1)},
                          {"seq_len", request_used.value("seq_len", 0)},
                          {"steps", summary.loss_per_step.size()},
                          {"step_time_s", summary.step_time_s.value_or(0.0)},
                          {"loss", loss},
                          {"precision", request_used.value("precision", std::string("fp32"))},
                          {"memory", summary.memory_bytes},
                          {"device_report", summary.device},
                          {"stopped_early", stopped}})
        << "\n";
  } else {
    print_summary(out, run_id, device, request_used, summary, stopped);
  }
  return stopped ? Status::failure : Status::ok;
}

}  // namespace plansight::cli
