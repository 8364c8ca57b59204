// The plan's editable fields, described once: each with its plan-file path (the JSON key a plan
// file sets), its command-line flag, its kind, unit, the range an editor offers, its label, one
// line of help, and its accessors into a Plan. The CLI's flags and their --help text and the
// desktop app's Plan form (its labels, ranges, tooltips, and the values it shows and edits) are
// made from this table; the plan-file reader and validate() own the rules, so a flag, a form
// field and a plan file always mean the same plan (tests/unit/plan_fields_test.cpp,
// tests/integration/plan_fields_cli_test.cpp and the Plan page's test set every field each way).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/plan.h"

namespace plansight::estimator {

enum class FieldKind {
  integer,     // a whole number
  number,      // a real number
  choice,      // one name of `choices`
  text,        // free text (a currency code, a rank order)
  toggle,      // a flag without a value: sets true
  toggle_off,  // a flag without a value: sets false (--no-dp-overlap)
};

struct PlanField {
  std::string_view path;     // plan-file path: "layout.tp", "model.moe.top_k"
  std::string_view flag;     // "--tp"
  FieldKind kind = FieldKind::integer;
  std::string_view label;    // the form's label: "Tensor parallel (TP)"
  std::string_view unit;     // "GPUs", "tokens", "GB/s", "" for a plain count
  std::string_view help;     // one line: what it is, its default rule
  double min = 0, max = 0;   // what an editor offers (integer/number); validate() has the rules
  std::string_view choices;  // choice: valid names, "|"-separated, as the reader accepts them
  std::string_view example;  // a valid value other than the default plan's, as JSON text (tests)
  // The field in a Plan, in the plan file's unit (GB/s, GiB): its value, and setting it; set
  // returns false, leaving the plan as it was, for a value of the wrong type or an unknown name.
  nlohmann::json (*get)(const Plan&) = nullptr;
  bool (*set)(Plan&, const nlohmann::json&) = nullptr;

  std::string_view section() const;  // "layout" ("model" for "model.moe.top_k")
  std::string_view key() const;      // "tp", "top_k"
  // The JSON value path below the plan object: {"layout", "tp"} / {"model", "moe", "top_k"}.
  std::vector<std::string> path_parts() const;
  std::string value_hint() const;    // "N", "X", "none|selective|full", "" for toggles
};

// Every field, grouped model, cluster, layout, training, in the order the app shows them.
const std::vector<PlanField>& plan_fields();
const PlanField* find_plan_field(std::string_view path_or_flag);

// The value at the field's path in a plan-file JSON object (null when absent).
nlohmann::json field_value(const nlohmann::json& plan_json, const PlanField& field);
// Sets the value at the field's path, creating the objects on the way.
void set_field_value(nlohmann::json& plan_json, const PlanField& field, nlohmann::json value);

// The plan options as --help prints them: one line per field, flag, value hint, help.
std::string plan_fields_help();

}  // namespace plansight::estimator
