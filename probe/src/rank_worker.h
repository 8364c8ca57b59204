// The body of one rank thread: connect to the groups, build this rank's model chunks, run the
// steps (schedule, gradient reduction, optimizer) and report each step to the run's shared
// state. A failure aborts the whole world, so every other rank's wait ends with an error.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "plansight/probe/protocol/result.h"
#include "plansight/probe/run_device.h"
#include "plansight/runtime/communicator.h"
#include "plansight/runtime/tracer.h"
#include "probe_config.h"

namespace plansight::probe {

struct RunState {
  RunState(const ProbeConfig& config, bool collect, std::unique_ptr<RunDevice> run_device)
      : cfg(config), device(std::move(run_device)), collect_parameters(collect) {
    memory.resize(static_cast<std::size_t>(config.world()));
    parameters.resize(static_cast<std::size_t>(config.world()));
  }

  const ProbeConfig& cfg;
  std::unique_ptr<RunDevice> device;  // the ranks' backends and communicators
  std::unique_ptr<runtime::Tracer> tracer;  // null: no trace
  const std::atomic<bool>* stop = nullptr;
  bool collect_parameters = false;
  float adam_eps = 1e-8f;
  int fail_rank = -1, fail_step = 1;  // TrainOptions' failure injection

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<StepResult> steps;  // appended by rank 0
  bool stopped_early = false;
  int ranks_done = 0;
  std::vector<std::string> errors;  // first failure of each failed rank

  std::vector<RankMemory> memory;  // by world rank, after the last step
  std::vector<std::map<std::string, std::vector<float>>> parameters;  // by world rank
};

void rank_main(RunState& state, int world_rank);

}  // namespace plansight::probe
