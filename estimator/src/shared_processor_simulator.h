// Private to the pipeline simulator: the iteration simulated with processor sharing, used by
// simulate() when SimulationInput::shared_processors is set and the ranks' threads outnumber
// the processors (shared_processor_simulator.cpp).
#pragma once

#include <vector>

#include "simulation_costs.h"

namespace plansight::estimator {

Result<SimulationResult> simulate_shared(const ScheduleTable& table, const SimulationInput& input,
                                         NsCosts costs);

}  // namespace plansight::estimator
