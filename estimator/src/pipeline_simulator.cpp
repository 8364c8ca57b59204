// The simulator's entry points: they choose the processor model (dedicated processors,
// dedicated_run.h; processors shared by more rank threads than cores,
// shared_processor_simulator.h) and DualPipe's mirrored lower half.
#include "plansight/estimator/pipeline_simulator.h"

#include <optional>

#include "dedicated_run.h"
#include "schedule_rows.h"
#include "shared_processor_simulator.h"

namespace plansight::estimator {

namespace {

// DualPipe's costs as its lower half's V (simulation_costs.h): chunk g of the V is DualPipe's
// chunk g on the way down and p + g on the way back up. None when the two pipelines differ.
std::optional<NsCosts> mirrored_costs(NsCosts costs, std::size_t p) {
  if (costs.chunks() != 2 * p) return std::nullopt;
  for (std::size_t s = 0; s < p; ++s) {
    if (costs.of[s] != costs.of[p + s] && !(costs[s] == costs[p + s])) return std::nullopt;
  }
  std::vector<std::uint32_t> of(p);
  for (std::size_t g = 0; g < p; ++g) of[g] = costs.of[g < p / 2 ? g : p + g];
  costs.of = std::move(of);
  return costs;
}

// DualPipe's costs as its lower half's V, when the half may stand for every rank.
std::optional<NsCosts> lower_half_costs(const SimulationInput& input, std::int64_t p) {
  if (input.keep_timeline || p < 2 || p % 2 != 0 || shares_processors(input, p)) return std::nullopt;
  auto costs = to_ns_costs(input, 2 * static_cast<std::size_t>(p));
  if (!costs.ok()) return std::nullopt;
  return mirrored_costs(std::move(costs).value(), static_cast<std::size_t>(p));
}

// `generated`: the table comes from make_schedule(), whose generators run every (rank, chunk,
// kind)'s micro-batches in order (pipeline_schedule_test checks each), so the steady state's
// search need not walk the table to check it.
// `rows`: the table's ops as the run reads them (null: its lists). A sparse table's ops are only in
// its rows, which the shared processor model does not read.
Result<SimulationResult> run_simulation(const ScheduleTable& table, const ScheduleRows* rows, const SimulationInput& input,
                                        bool generated, SteadyPeriods* periods = nullptr) {
  auto costs = to_ns_costs(input, static_cast<std::size_t>(table.stages()));
  if (!costs.ok()) return costs.errors();
  if (shares_processors(input, table.p)) {
    if (rows != nullptr && rows->sparse()) {
      return make_error("simulation.shared_processors", "a table made for a dedicated-processor run (sparse) cannot run on "
                                                        "shared processors; make it with make_schedule");
    }
    return simulate_shared(table, input, std::move(costs).value());
  }
  return DedicatedRun(table, rows, input, std::move(costs).value(), generated, periods).run();
}

Result<SimulationResult> lower_half(const ScheduleTable& half, const ScheduleRows* rows, const SimulationInput& input,
                                    SteadyPeriods* periods) {
  auto costs = half.kind == PipelineSchedule::dualpipev ? lower_half_costs(input, 2 * std::int64_t{half.p}) : std::nullopt;
  if (!costs) {
    return make_error("simulation.chunks",
                      "DualPipe's lower half does not stand for all its ranks here: its two pipelines differ in "
                      "cost, a timeline is asked for, or the ranks share processors; simulate the whole table");
  }
  return DedicatedRun(half, rows, input, std::move(*costs), true, periods, half.p - 1).run();
}

}  // namespace

Result<SimulationResult> simulate(const ScheduleTable& table, const SimulationInput& input) {
  if (auto errors = check_schedule(table); !errors.empty()) return errors;
  return run_simulation(table, nullptr, input, false);
}

Result<SimulationResult> simulate_well_formed(const ScheduleTable& table, const SimulationInput& input,
                                              SteadyPeriods* periods) {
  return run_simulation(table, nullptr, input, true, periods);
}

Result<SimulationResult> simulate_well_formed(const SimulationTable& table, const SimulationInput& input,
                                              SteadyPeriods* periods) {
  return run_simulation(table.table, &table.rows, input, true, periods);
}

bool shares_processors(const SimulationInput& input, std::int64_t ranks) {
  return input.shared_processors > 0 && input.threads_per_rank * ranks > input.shared_processors;
}

bool dualpipe_mirrors(const SimulationInput& input, std::int64_t p) { return lower_half_costs(input, p).has_value(); }

Result<SimulationResult> simulate_dualpipe_lower_half(const ScheduleTable& half, const SimulationInput& input,
                                                      SteadyPeriods* periods) {
  return lower_half(half, nullptr, input, periods);
}

Result<SimulationResult> simulate_dualpipe_lower_half(const SimulationTable& half, const SimulationInput& input,
                                                      SteadyPeriods* periods) {
  return lower_half(half.table, &half.rows, input, periods);
}

}  // namespace plansight::estimator
