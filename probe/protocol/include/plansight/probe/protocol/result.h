// ProbeResult: what a probe run measured — loss and time per step, the measured Timeline of
// one traced step, memory per rank by category (comparable field by field with the estimator's
// MemoryBreakdown), and the HardwareProfile when calibration ran. The body of the protocol's
// result event (events.h): written by plansight-probe, read back by the app with
// probe_result_from_json, exactly (floats round-trip bit for bit).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/hardware_profile.h"
#include "plansight/estimator/timeline.h"

namespace plansight::probe {

struct StepResult {
  std::int64_t step = 0;
  double loss = 0;     // mean cross-entropy over the global batch; NaN when it diverged
  double seconds = 0;  // wall time of the whole step (all ranks)
  // fp16's dynamic loss scaling: the scale the step's loss gradient was multiplied by, and
  // whether its update was skipped (inf/NaN gradients). Scale 0: no loss scaling.
  double loss_scale = 0;
  bool skipped = false;
};

struct RankMemory {
  std::int32_t rank = 0;
  estimator::MemoryBreakdown current;  // at the end of the step
  estimator::MemoryBreakdown peak;     // per category, the maximum over the step
  double peak_total_bytes = 0;         // the maximum of the sum (not the sum of maxima)
};

struct ProbeResult {
  std::string device;        // "cpu: <model name> (<n> threads)" or the GPU name
  bool ranks_share_device = false;
  std::vector<StepResult> steps;
  double step_time_s = 0;    // median over timed steps
  estimator::Timeline timeline;  // measured, of the last step (empty when not traced)
  std::vector<RankMemory> memory;
  std::optional<estimator::HardwareProfile> profile;
  bool stopped_early = false;    // cancelled (Ctrl-C): what was measured so far is kept
  // What the run device reports beside the timeline (a GPU: compute capability, precision,
  // tensor-core use, tracer statistics; a launched run: launch and clock). Open by design: each
  // device adds its own keys. An empty object on a single CPU process.
  nlohmann::json device_report = nlohmann::json::object();
};

nlohmann::json to_json(const ProbeResult& result);
// Errors name the field ("memory[1].peak.weights_bytes"); unknown keys are skipped.
Result<ProbeResult> probe_result_from_json(const nlohmann::json& json);

// The whole-step figure of a result: step_time_s, or when the run stopped before its timed
// steps the median of the steps it made (0 with none).
double step_seconds(const ProbeResult& result);

}  // namespace plansight::probe
