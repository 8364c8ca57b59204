// `plansight sweep FIELD=VALUES --metric M[,M2...] [--csv | --json] [plan flags]`: one plan field
// over a range (estimator/sweep.h), one or more metrics per value (estimator/plan_metrics.h), as
// a table, CSV (for a spreadsheet or a plotting script) or JSON. The GUI's Sweep page draws the
// same data as a chart.
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/plan_metrics.h"
#include "plansight/estimator/sweep.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string cell(double v) {
  std::ostringstream s;
  s.precision(5);
  s << v;
  return s.str();
}

void print_table(std::ostream& out, const est::SweepResult& r) {
  const std::size_t width = 16;
  out << pad_left(r.field.name, 14);
  for (const auto& m : r.metrics) {
    const std::string unit(est::find_plan_metric(m)->unit);
    out << pad_left(unit.empty() ? m : m + " (" + unit + ")", std::max(width, m.size() + unit.size() + 5));
  }
  out << "\n";
  for (const auto& p : r.points) {
    out << pad_left(cell(p.value), 14);
    if (!p.error.empty()) {
      out << "  " << p.error << "\n";
      continue;
    }
    for (std::size_t i = 0; i < r.metrics.size(); ++i) {
      const std::string unit(est::find_plan_metric(r.metrics[i])->unit);
      out << pad_left(cell(p.metrics[i]), std::max(width, r.metrics[i].size() + unit.size() + 5));
    }
    out << "\n";
  }
}

}  // namespace

Status run_sweep(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, plan_command_flags({{"--metric", true, "M[,M2...]"}, {"--csv", false, ""}}));
  if (!args) return report_command_errors(args.errors(), json, out, err);
  std::string fields;
  for (auto name : est::sweep_field_names()) fields += (fields.empty() ? "" : "|") + std::string(name);
  if (args->positionals().size() != 1 || args->positionals()[0].find('=') == std::string::npos) {
    return report_command_errors({make_error("sweep", "give one FIELD=VALUES, e.g. micro_batches=4..32*2 or zero=0..3 (FIELD: " +
                                                          fields + " or a plan-file path)")},
                                 json, out, err);
  }
  const std::string& spec = args->positionals()[0];
  const auto eq = spec.find('=');
  auto field = est::sweep_field(spec.substr(0, eq));
  if (!field) return report_command_errors(field.errors(), json, out, err);
  auto values = est::parse_sweep_values(spec.substr(eq + 1));
  if (!values) return report_command_errors(values.errors(), json, out, err);
  if (!args->has("--metric")) {
    std::string valid;
    for (const auto& m : est::plan_metrics()) valid += (valid.empty() ? "" : ", ") + std::string(m.name);
    return report_command_errors({make_error("--metric", "give one or more metrics; valid: " + valid)}, json, out, err);
  }
  auto plan = plan_from_args(*args);
  if (!plan) return report_command_errors(plan.errors(), json, out, err);
  auto result = est::sweep(*plan, *field, *values, split_commas(*args->value("--metric")));
  if (!result) return report_command_errors(result.errors(), json, out, err);
  if (json) out << json_text(est::to_json(*result)) << "\n";
  else if (args->has("--csv")) out << est::to_csv(*result);
  else print_table(out, *result);
  return Status::ok;
}

}  // namespace plansight::cli
