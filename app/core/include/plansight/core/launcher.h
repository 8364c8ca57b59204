// Launching the probe under mpirun or srun: `plansight probe --launcher "mpirun -np 4"` and the
// desktop app's launcher field run `<launcher words> plansight-probe <args>`, one probe process
// per rank. A launcher ends its job on SIGINT but forwards SIGUSR1 to every process, so a
// launched run is stopped with SIGUSR1 (the probe treats it like SIGINT: it ends after its
// step and reports).
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::core {

// The launcher's words, split on white space with '…' and "…" quoting (no expansions): the
// program and its options. An empty command or an unterminated quote is an error naming --launcher.
Result<std::vector<std::string>> launcher_words(const std::string& command);

// `program` as posix_spawn needs it: unchanged when it has a '/', else the first executable of
// that name on $PATH; an error names it and the PATH searched.
Result<std::string> find_program(const std::string& program);

// The signal that stops a probe run: SIGINT for the probe itself, SIGUSR1 under a launcher.
inline int stop_signal(bool launched) { return launched ? SIGUSR1 : SIGINT; }

}  // namespace plansight::core
