// Sweeps: one plan field over a list of values, one or more metrics (plan_metrics.h) per value,
// for "what if" questions (more micro-batches, ZeRO-3 instead of DDP, TP across nodes) and for
// charts. A value at which the plan is invalid is a point with that error, not a failed sweep.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/plan.h"

namespace plansight::estimator {

// A field by its short name (tp, pp, vpp, dp, cp, ep, etp, zero, gpus, micro_batch, global_batch,
// micro_batches, seq_len, tokens) or its plan-file path ("layout.pp", "training.seq_len").
// micro_batches is the number of micro-batches per pipeline: it sets training.global_batch to
// value x micro_batch x dp of the plan.
struct SweepField {
  std::string name;  // as given
  std::string path;  // "layout.pp"; "micro_batches" for the derived field
};
Result<SweepField> sweep_field(std::string_view name);
std::vector<std::string_view> sweep_field_names();

// "1..16" every integer; "1..64*2" geometric (1, 2, 4, ..., 64); "1,2,4,8" a list. At most
// 1000 values; numbers as plan files write them (decimal, 3e11 allowed).
Result<std::vector<double>> parse_sweep_values(std::string_view text);

struct SweepPoint {
  double value = 0;
  std::vector<double> metrics;  // one per SweepResult::metrics when error is empty
  std::string error;            // why the plan or a metric failed at this value
};

struct SweepResult {
  SweepField field;
  std::vector<std::string> metrics;
  std::vector<SweepPoint> points;
};

// Sweeps `field` of `plan` over `values`; unknown metrics are an error before anything runs.
Result<SweepResult> sweep(const Plan& plan, const SweepField& field, const std::vector<double>& values,
                          const std::vector<std::string>& metrics);

// "field,metric1,metric2\n" then a row per point; an invalid point has empty metric cells and
// its error in a last "error" column.
std::string to_csv(const SweepResult& result);
nlohmann::json to_json(const SweepResult& result);

}  // namespace plansight::estimator
