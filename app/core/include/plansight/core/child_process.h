// Running plansight-probe as a child process (DESIGN §1: the app talks to the probe only this
// way, so a crash or hang in the probe never takes the app down). posix_spawn with three pipes:
// the request goes to its stdin, its stdout is handed over line by line, its stderr is kept.
#pragma once

#include <atomic>
#include <csignal>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::core {

struct ChildExit {
  int exit_code = -1;    // the child's exit status; -1 when it was killed by a signal
  int term_signal = 0;   // the signal that killed it, 0 when it exited
  std::string stderr_text;
};

struct ChildOptions {
  // The child gets a process group of its own, so the terminal's Ctrl-C reaches only this
  // process, which forwards it as `interrupt_signal` (a launcher needs SIGUSR1, launcher.h).
  bool own_process_group = false;
  int interrupt_signal = SIGINT;
};

// Starts `program` with `args`, writes `input` to its stdin and closes it, calls `on_line` for
// every line of its stdout (without the newline) until it closes, then waits for it. When
// `interrupt` becomes true, the child gets one SIGINT (the probe then ends after its current
// step and still reports), or options.interrupt_signal. Errors only when the child cannot be started.
Result<ChildExit> run_child(const std::string& program, const std::vector<std::string>& args, const std::string& input,
                            const std::function<void(std::string_view line)>& on_line,
                            const std::atomic<bool>* interrupt = nullptr, const ChildOptions& options = {});

// Where plansight-probe is: $PLANSIGHT_PROBE, else next to the running program, else the build
// tree's probe folder. The error says where it looked.
Result<std::string> find_probe_executable();

}  // namespace plansight::core
