// Worked examples for teaching (assets/examples/examples.json, embedded): each is a plan and rows;
// a row overlays the plan (JSON merge patch), names a metric of the estimate, and gives the value
// a paper or lecture publishes for it with the source. evaluate() sets our value beside the
// published one, so a lecturer can reproduce a slide and then change the plan.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/estimate.h"
#include "plansight/estimator/plan.h"
#include "plansight/estimator/plan_metrics.h"

namespace plansight::estimator {

struct ExampleRow {
  std::string label;
  nlohmann::json plan = nlohmann::json::object();  // merge patch over the example's plan
  std::string metric;                              // one of plan_metrics() (plan_metrics.h)
  double published = 0;
  double tolerance = 0;  // relative: |ours / published - 1| within it, for the reason the example states
};

struct Example {
  std::string name, title, source, explanation;
  nlohmann::json plan = nlohmann::json::object();  // a plan file's JSON (default_plan() under it)
  std::vector<ExampleRow> rows;
};

// Every example, in the file's order; malformed entries are build defects, reported by
// example_load_errors() (tested) and left out.
const std::vector<Example>& examples();
const std::vector<Diagnostic>& example_load_errors();
Result<Example> find_example(std::string_view name);

// The plan of a row: default_plan() <- example.plan <- row.plan.
Result<Plan> example_plan(const Example& example, std::size_t row);

struct ExampleResult {
  std::string label, metric, unit;
  double ours = 0, published = 0, tolerance = 0;
  double relative_error() const { return published != 0 ? ours / published - 1 : 0; }
  bool within_tolerance() const;
};
Result<std::vector<ExampleResult>> evaluate(const Example& example);

}  // namespace plansight::estimator
