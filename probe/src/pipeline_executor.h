// Executes one pipeline rank's row of the ScheduleTable for one step: F and B ops on its model
// chunks, activations sent to the next global chunk and gradients to the previous one by
// point-to-point groups (pipeline_transfers.h), so the same table the estimator simulates runs
// here for real (GPipe, 1F1B and interleaved 1F1B alike), on every communicator NCCL included.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data_loader.h"
#include "model_chunk.h"

namespace plansight::probe {

// Runs the step's schedule. The last stage adds each micro-batch's mean loss to its backend's
// loss accumulator (Backend::take_loss).
void run_schedule(RankContext& ctx, std::vector<std::unique_ptr<ModelChunk>>& chunks, const DataLoader& data,
                    std::int64_t step);

}  // namespace plansight::probe
