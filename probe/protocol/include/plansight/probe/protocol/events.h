// The plansight-probe protocol: the JSON lines a probe run writes on stdout, one event per line
// (probe/README.md, "Protocol"). plansight-probe writes them with write_event(), the CLI and the
// GUI read them with read_event_line(): one typed schema on both sides, so that a field can be
// neither misspelt by the writer nor misread by a reader.
//
// Compatibility: a reader skips event kinds and keys it does not know (an older app reads a
// newer probe); a known event with a missing or mistyped field is a protocol error naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/probe/protocol/request.h"
#include "plansight/probe/protocol/result.h"

namespace plansight::probe {

// The version in the started event; a reader refuses a newer major version by name.
inline constexpr std::int64_t kProtocolVersion = 1;

// Why a run ended without a result, and the exit code of each kind (the only place that maps
// them): bad_request 2 (the request is invalid, or asks for what this machine or launch cannot
// give: a GPU, a precision, a placement), failed 1 (it was valid and the run broke: a rank, a
// collective, calibration), stopped 130 (SIGINT/SIGTERM/SIGUSR1, 128 + SIGINT as shells do).
enum class ErrorKind { bad_request, failed, stopped };
int exit_code(ErrorKind kind);
const char* to_string(ErrorKind kind);

// Errors of one kind: what a failing phase of plansight-probe hands to main().
struct ProbeError {
  ErrorKind kind = ErrorKind::failed;
  std::vector<Diagnostic> errors;
};

// One launched process of a run under mpirun/srun.
struct LaunchedProcess {
  std::int64_t rank = 0;
  std::string host;
  std::int64_t pid = 0;
};
struct LaunchReport {
  std::string launcher;          // "mpirun", "srun"
  std::int64_t processes = 0;
  std::vector<LaunchedProcess> ranks;
  std::string communicator;      // "mpi: Open MPI v4.1.4"; empty when MPI is absent
};

struct StartedEvent {
  std::int64_t protocol = kProtocolVersion;
  std::int64_t pid = 0;
  std::string device;            // "cpu: <model> (<n> threads)", "cuda" or "auto" before the run picks
  std::int64_t world_size = 0;   // tp x pp x dp
  ProbeRequest request;          // normalised: every default filled in
  std::optional<LaunchReport> launch;  // several launched processes only
};

struct ProgressEvent {
  std::int64_t step = 0, steps = 0;
  double loss = 0;               // NaN for a diverged step (null on the wire)
  double elapsed_s = 0, eta_s = 0;
};

struct CalibratingEvent {
  std::string level;             // "quick" or "full"
};

struct ResultEvent {
  ProbeResult result;
};

struct DoneEvent {
  std::int64_t exit_code = 0;
  bool stopped_early = false;
};

struct ErrorEvent {
  ErrorKind kind = ErrorKind::failed;
  std::vector<Diagnostic> errors;
};

using Event = std::variant<StartedEvent, ProgressEvent, CalibratingEvent, ResultEvent, DoneEvent, ErrorEvent>;

// The event's name on the wire: "started", "progress", "calibrating", "result", "done", "error".
const char* event_name(const Event& event);

nlohmann::json to_json(const Event& event);
// One line of the protocol, without its newline.
std::string write_event(const Event& event);

// What one line of a probe's stdout was.
struct EventLine {
  enum class Kind {
    event,          // a known event, in `event`
    unknown_event,  // a JSON object with an "event" name this reader does not know (skipped)
    malformed,      // a known event whose fields break the schema: `errors` name them
    not_an_event,   // not a JSON object with an "event" name: a stray line (a library's warning)
  };
  Kind kind = Kind::not_an_event;
  std::string name;               // the event's name, when it has one
  std::optional<Event> event;
  std::vector<Diagnostic> errors;
};
EventLine read_event_line(std::string_view line);

// The event read back from its JSON (`json` is one event object with its "event" key).
Result<Event> event_from_json(const nlohmann::json& json);

}  // namespace plansight::probe
