// Runs the CLI as a library call and captures its status, stdout and stderr, for tests.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "plansight/cli/commands.h"

namespace plansight::testing {

struct CliRun {
  cli::Status status;
  std::string out, err;
};

inline CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const cli::Status status = cli::run(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace plansight::testing
