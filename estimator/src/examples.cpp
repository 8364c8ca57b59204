// The example catalog (examples.h): parsed once from the embedded assets/examples/examples.json.
#include "plansight/estimator/examples.h"

#include <cmath>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"

namespace plansight::assets {
std::string_view embedded_file(std::string_view file_name);
}

namespace plansight::estimator {
namespace {

struct Catalog {
  std::vector<Example> examples;
  std::vector<Diagnostic> errors;
};

Catalog load() {
  Catalog c;
  constexpr std::string_view kFile = "examples.json";
  auto json = parse_json_text(assets::embedded_file(kFile), kFile);
  if (!json) {
    c.errors = json.errors();
    return c;
  }
  if (!json->is_object() || !json->contains("examples") || !(*json)["examples"].is_array()) {
    c.errors.push_back(make_error(std::string(kFile), "expected an object with an array \"examples\""));
    return c;
  }
  const auto& list = (*json)["examples"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string where = std::string(kFile) + ".examples[" + std::to_string(i) + "]";
    std::vector<Diagnostic> errors;
    JsonReader in(list[i], where, errors);
    in.reject_unknown({"name", "title", "source", "explanation", "plan", "rows"});
    Example e;
    in.read("name", e.name);
    in.read("title", e.title);
    in.read("source", e.source);
    in.read("explanation", e.explanation);
    if (list[i].contains("plan")) e.plan = list[i]["plan"];
    if (e.name.empty() || e.source.empty()) errors.push_back(make_error(where, "every example needs a name and a source"));
    const auto rows = list[i].value("rows", nlohmann::json::array());
    if (!rows.is_array() || rows.empty()) errors.push_back(make_error(where + ".rows", "expected a non-empty array"));
    for (std::size_t r = 0; rows.is_array() && r < rows.size(); ++r) {
      JsonReader row_in(rows[r], where + ".rows[" + std::to_string(r) + "]", errors);
      row_in.reject_unknown({"label", "plan", "metric", "published", "tolerance"});
      ExampleRow row;
      row_in.read("label", row.label);
      row_in.read("metric", row.metric);
      row_in.read("published", row.published, -1e308, 1e308);
      row_in.read("tolerance", row.tolerance, 0.0, 1.0);
      if (rows[r].contains("plan")) row.plan = rows[r]["plan"];
      e.rows.push_back(std::move(row));
    }
    // Every row's plan must be a valid plan and its metric known: checked here, once, so that a
    // broken example is a load error rather than a failure in front of a class.
    for (std::size_t r = 0; errors.empty() && r < e.rows.size(); ++r) {
      auto plan = example_plan(e, r);
      if (!plan) {
        for (const auto& d : plan.errors()) errors.push_back(make_error(where + ".rows[" + std::to_string(r) + "]", d.to_string()));
      }
      bool known = false;
      for (const auto& m : plan_metrics()) known = known || m.name == e.rows[r].metric;
      if (!known) errors.push_back(make_error(where + ".rows[" + std::to_string(r) + "].metric", "unknown metric \"" + e.rows[r].metric + "\""));
    }
    if (errors.empty()) c.examples.push_back(std::move(e));
    else c.errors.insert(c.errors.end(), errors.begin(), errors.end());
  }
  return c;
}

const Catalog& catalog() {
  static const Catalog instance = load();
  return instance;
}

}  // namespace

const std::vector<Example>& examples() { return catalog().examples; }
const std::vector<Diagnostic>& example_load_errors() { return catalog().errors; }

Result<Example> find_example(std::string_view name) {
  std::string valid;
  for (const auto& e : examples()) {
    if (e.name == name) return e;
    valid += (valid.empty() ? "" : ", ") + e.name;
  }
  return make_error("example", "unknown example \"" + std::string(name) + "\"; valid: " + valid);
}

Result<Plan> example_plan(const Example& example, std::size_t row) {
  nlohmann::json plan = example.plan;
  if (row < example.rows.size()) plan.merge_patch(example.rows[row].plan);
  return plan_from_json(plan);
}

bool ExampleResult::within_tolerance() const { return std::abs(relative_error()) <= tolerance; }

Result<std::vector<ExampleResult>> evaluate(const Example& example) {
  std::vector<ExampleResult> out;
  for (std::size_t r = 0; r < example.rows.size(); ++r) {
    const ExampleRow& row = example.rows[r];
    auto plan = example_plan(example, r);
    if (!plan) return plan.errors();
    auto e = estimate(*plan);
    if (!e) return e.errors();
    auto value = plan_metric(row.metric, *plan, *e);
    if (!value) return value.errors();
    std::string unit;
    for (const auto& m : plan_metrics()) if (m.name == row.metric) unit = std::string(m.unit);
    out.push_back({row.label, row.metric, unit, *value, row.published, row.tolerance});
  }
  return out;
}

}  // namespace plansight::estimator
