// run_probe(): executes a ProbeRequest — builds the ranks (threads), partitions the model by
// TP/PP/DP/ZeRO, runs the steps with the same ScheduleTable the estimator simulates, traces
// them, and returns the measurements. Progress is reported through a callback; a stop token
// ends the run cleanly after the current step.
#pragma once

#include <atomic>
#include <functional>

#include "plansight/estimator/diagnostic.h"
#include "plansight/probe/protocol/request.h"
#include "plansight/probe/protocol/result.h"

namespace plansight::probe {

struct Progress {
  std::int64_t step = 0;   // steps done
  std::int64_t steps = 0;  // steps requested
  double loss = 0;
  double elapsed_s = 0;
  double eta_s = 0;
};

using ProgressCallback = std::function<void(const Progress&)>;

// The request as this process runs it: cores 0 ("all this process may run on") becomes that
// number, so that the started event and the stored run say how many cores the ranks shared.
// train() and calibrate() apply it themselves; plansight-probe applies it before it reports.
ProbeRequest resolved_for_this_process(ProbeRequest request);

Result<ProbeResult> run_probe(const ProbeRequest& request, const ProgressCallback& progress,
                              const std::atomic<bool>* stop = nullptr);

}  // namespace plansight::probe
