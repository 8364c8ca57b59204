// The probe protocol's events <-> JSON lines (see events.h). Every key is written and read
// here only; readers go through JsonReader, so a bad field is named ("progress.step: ...").
#include "plansight/probe/protocol/events.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plansight/estimator/json_reader.h"

namespace plansight::probe {
namespace {

namespace est = plansight::estimator;

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

// A diverged loss is NaN or inf; JSON has neither, so it is written as null.
nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

// A loss: a number, or null (JsonReader treats it as absent) for a diverged step: NaN.
void read_loss(est::JsonReader& in, std::string_view key, double& out) {
  out = std::numeric_limits<double>::quiet_NaN();
  in.read(key, out);
}

void require(est::JsonReader& in, std::initializer_list<std::string_view> keys) {
  for (auto key : keys) {
    if (!in.has(key)) in.error(key, "missing");
  }
}

nlohmann::json launch_json(const LaunchReport& l) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& p : l.ranks) ranks.push_back({{"rank", p.rank}, {"host", p.host}, {"pid", p.pid}});
  nlohmann::json j = {{"launcher", l.launcher}, {"processes", l.processes}, {"ranks", std::move(ranks)}};
  if (!l.communicator.empty()) j["communicator"] = l.communicator;
  return j;
}

LaunchReport read_launch(est::JsonReader& in) {
  LaunchReport l;
  require(in, {"launcher", "processes"});
  in.read("launcher", l.launcher);
  in.read("processes", l.processes, 1);
  in.read("communicator", l.communicator);
  if (const auto* ranks = in.get("ranks")) {
    if (!ranks->is_array()) {
      in.error("ranks", "expected an array of {rank, host, pid}, got " + est::describe_json(*ranks));
      return l;
    }
    for (std::size_t i = 0; i < ranks->size(); ++i) {
      est::JsonReader p((*ranks)[i], in.field("ranks") + "[" + std::to_string(i) + "]", in.errors());
      LaunchedProcess process;
      p.read("rank", process.rank, 0);
      p.read("host", process.host);
      p.read("pid", process.pid, 0);
      l.ranks.push_back(std::move(process));
    }
  }
  return l;
}

ErrorKind kind_of_exit_code(std::int64_t code) {
  return code == 2 ? ErrorKind::bad_request : code == 130 ? ErrorKind::stopped : ErrorKind::failed;
}

Result<Event> read_started(const nlohmann::json& j) {
  std::vector<Diagnostic> errors;
  est::JsonReader in(j, "started", errors);
  StartedEvent e;
  require(in, {"protocol", "device", "world_size", "request"});
  in.read("protocol", e.protocol, 1);
  if (e.protocol > kProtocolVersion) {
    in.error("protocol", "version " + std::to_string(e.protocol) + " is newer than this reader's " +
                             std::to_string(kProtocolVersion) + "; update Plansight to read this plansight-probe");
  }
  in.read("pid", e.pid, 0);
  in.read("device", e.device);
  in.read("world_size", e.world_size, 1);
  if (const auto* request = in.get("request")) {
    auto r = probe_request_from_json(*request);
    if (r) {
      e.request = std::move(*r);
    } else {
      for (auto d : r.errors()) {
        d.field = "started.request" + (d.field.empty() ? std::string() : "." + d.field);
        errors.push_back(std::move(d));
      }
    }
  }
  if (in.has("launch") && !in.get("launch")->is_null()) {
    if (auto launch = in.child("launch")) e.launch = read_launch(*launch);
  }
  if (!errors.empty()) return errors;
  return Event(std::move(e));
}

Result<Event> read_progress(const nlohmann::json& j) {
  std::vector<Diagnostic> errors;
  est::JsonReader in(j, "progress", errors);
  ProgressEvent e;
  require(in, {"step", "steps"});
  in.read("step", e.step, 0);
  in.read("steps", e.steps, 0);
  read_loss(in, "loss", e.loss);
  in.read("elapsed_s", e.elapsed_s, 0.0);
  in.read("eta_s", e.eta_s, 0.0);
  if (!errors.empty()) return errors;
  return Event(e);
}

Result<Event> read_calibrating(const nlohmann::json& j) {
  std::vector<Diagnostic> errors;
  est::JsonReader in(j, "calibrating", errors);
  CalibratingEvent e;
  in.read("level", e.level);
  if (!errors.empty()) return errors;
  return Event(std::move(e));
}

Result<Event> read_result(const nlohmann::json& j) {
  auto r = probe_result_from_json(j);
  if (!r) {
    std::vector<Diagnostic> errors;
    for (auto d : r.errors()) {
      d.field = "result" + (d.field.empty() ? std::string() : "." + d.field);
      errors.push_back(std::move(d));
    }
    return errors;
  }
  return Event(ResultEvent{std::move(*r)});
}

Result<Event> read_done(const nlohmann::json& j) {
  std::vector<Diagnostic> errors;
  est::JsonReader in(j, "done", errors);
  DoneEvent e;
  require(in, {"exit_code"});
  in.read("exit_code", e.exit_code);
  in.read("stopped_early", e.stopped_early);
  if (!errors.empty()) return errors;
  return Event(e);
}

Result<Event> read_error(const nlohmann::json& j) {
  std::vector<Diagnostic> errors;
  est::JsonReader in(j, "error", errors);
  ErrorEvent e;
  std::int64_t code = 1;
  in.read("exit_code", code);
  // Probes before "kind" said it only by their exit code.
  e.kind = kind_of_exit_code(code);
  if (in.has("kind")) {
    std::string kind;
    in.read("kind", kind);
    if (kind == "bad_request") e.kind = ErrorKind::bad_request;
    else if (kind == "failed") e.kind = ErrorKind::failed;
    else if (kind == "stopped") e.kind = ErrorKind::stopped;
    else if (!kind.empty()) in.error("kind", "unknown value \"" + kind + "\"; valid: bad_request, failed, stopped");
  }
  const auto* list = in.get("errors");
  if (!list || !list->is_array()) {
    in.error("errors", "expected an array of {field, message}, got " + (list ? est::describe_json(*list) : std::string("nothing")));
  } else {
    for (std::size_t i = 0; i < list->size(); ++i) {
      est::JsonReader d((*list)[i], in.field("errors") + "[" + std::to_string(i) + "]", errors);
      if (!d.is_object()) {
        errors.push_back(make_error(in.field("errors") + "[" + std::to_string(i) + "]",
                                    "expected {field, message}, got " + est::describe_json((*list)[i])));
        continue;
      }
      std::string field = "probe", message;
      d.read("field", field);
      d.read("message", message);
      e.errors.push_back(make_error(std::move(field), std::move(message)));
    }
  }
  if (!errors.empty()) return errors;
  return Event(std::move(e));
}

}  // namespace

int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_request: return 2;
    case ErrorKind::failed: return 1;
    case ErrorKind::stopped: return 130;
  }
  return 1;
}

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::bad_request: return "bad_request";
    case ErrorKind::failed: return "failed";
    case ErrorKind::stopped: return "stopped";
  }
  return "failed";
}

const char* event_name(const Event& event) {
  return std::visit(Overload{[](const StartedEvent&) { return "started"; },
                             [](const ProgressEvent&) { return "progress"; },
                             [](const CalibratingEvent&) { return "calibrating"; },
                             [](const ResultEvent&) { return "result"; },
                             [](const DoneEvent&) { return "done"; },
                             [](const ErrorEvent&) { return "error"; }},
                    event);
}

nlohmann::json to_json(const Event& event) {
  nlohmann::json j = std::visit(
      Overload{[](const StartedEvent& e) {
                 nlohmann::json s = {{"protocol", e.protocol}, {"pid", e.pid},           {"device", e.device},
                                     {"world_size", e.world_size}, {"request", to_json(e.request)}};
                 if (e.launch) s["launch"] = launch_json(*e.launch);
                 return s;
               },
               [](const ProgressEvent& e) {
                 return nlohmann::json{{"step", e.step},           {"steps", e.steps}, {"loss", number_or_null(e.loss)},
                                       {"elapsed_s", e.elapsed_s}, {"eta_s", e.eta_s}};
               },
               [](const CalibratingEvent& e) { return nlohmann::json{{"level", e.level}}; },
               [](const ResultEvent& e) { return to_json(e.result); },
               [](const DoneEvent& e) { return nlohmann::json{{"exit_code", e.exit_code}, {"stopped_early", e.stopped_early}}; },
               [](const ErrorEvent& e) {
                 nlohmann::json list = nlohmann::json::array();
                 for (const auto& d : e.errors) list.push_back({{"field", d.field}, {"message", d.message}});
                 return nlohmann::json{{"kind", to_string(e.kind)}, {"errors", std::move(list)}, {"exit_code", exit_code(e.kind)}};
               }},
      event);
  j["event"] = event_name(event);
  return j;
}

std::string write_event(const Event& event) { return to_json(event).dump(); }

Result<Event> event_from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("event") || !json["event"].is_string()) {
    return make_error("event", "expected an object with an \"event\" name, got " + est::describe_json(json));
  }
  const std::string name = json["event"].get<std::string>();
  if (name == "started") return read_started(json);
  if (name == "progress") return read_progress(json);
  if (name == "calibrating") return read_calibrating(json);
  if (name == "result") return read_result(json);
  if (name == "done") return read_done(json);
  if (name == "error") return read_error(json);
  return make_error("event", "unknown value \"" + name + "\"; valid: started, progress, calibrating, result, done, error");
}

EventLine read_event_line(std::string_view line) {
  EventLine out;
  const nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("event") || !j["event"].is_string()) return out;
  out.name = j["event"].get<std::string>();
  static constexpr std::string_view kKnown[] = {"started", "progress", "calibrating", "result", "done", "error"};
  if (std::find(std::begin(kKnown), std::end(kKnown), out.name) == std::end(kKnown)) {
    out.kind = EventLine::Kind::unknown_event;
    return out;
  }
  auto event = event_from_json(j);
  if (!event) {
    out.kind = EventLine::Kind::malformed;
    out.errors = event.errors();
    return out;
  }
  out.kind = EventLine::Kind::event;
  out.event = std::move(*event);
  return out;
}

}  // namespace plansight::probe
