// train(): run_probe() with what tests and tools need beyond a ProbeResult — the trained
// parameters gathered from every TP/PP/ZeRO shard into the serial model's tensors, so that any
// layout can be compared with the serial run element by element.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "plansight/probe/engine.h"
#include "plansight/probe/protocol/events.h"

namespace plansight::probe {

struct TrainOptions {
  bool collect_parameters = false;  // gather every tensor after the last step
  // AdamW's epsilon (Kingma & Ba 2015 default 1e-8). Comparisons of layouts set it large, so
  // that an update is proportional to its gradient and a wrong gradient scale shows (Adam's
  // g / sqrt(v) would hide it).
  float adam_eps = 1e-8f;
  // For tests of failure handling: world rank `fail_rank` throws at the start of step
  // `fail_step` (1-based), as a rank whose kernel or allocation failed would. -1: never.
  int fail_rank = -1;
  int fail_step = 1;
};

struct TrainOutput {
  ProbeResult result;
  // False in the processes of a launched run other than rank 0's, which writes the result; their
  // result and parameters are empty (they went to rank 0's process).
  bool writes_result = true;
  // By the serial model's names ("wte", "wpe", "h.0.attn.qkv.w", ..., "lnf.w"; "lm_head" when
  // untied) and shapes (row-major [rows, cols]; the vocabulary unpadded). Empty unless asked.
  std::map<std::string, std::vector<float>> parameters;
};

Result<TrainOutput> train(const ProbeRequest& request, const TrainOptions& options,
                          const ProgressCallback& progress = {}, const std::atomic<bool>* stop = nullptr);

// train(), whose errors say their kind (protocol/events.h) by where they arose: bad_request
// for what is refused before any rank starts (the configuration; a device, precision or
// placement this machine or launch cannot give), stopped when `stop` ended the run first,
// failed for a run that broke. plansight-probe's exit code comes from that kind.
std::variant<TrainOutput, ProbeError> train_or_error(const ProbeRequest& request, const TrainOptions& options,
                                                     const ProgressCallback& progress = {},
                                                     const std::atomic<bool>* stop = nullptr);

}  // namespace plansight::probe
