// `plansight diff A.json B.json`: two plan files side by side — the fields that differ, then
// memory per GPU, the iteration's time breakdown and the training totals of each, with B - A and
// B / A (estimator/plan_diff.h). `diff` of two run ids compares measured timelines instead.
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plan_diff_command.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan_diff.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

std::string cell(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

std::string json_cell(const nlohmann::json& v) { return v.is_null() ? "-" : json_text(v, -1); }

}  // namespace

bool looks_like_plan_files(const std::vector<std::string>& positionals) {
  if (positionals.size() != 2) return false;
  for (const auto& p : positionals) {
    if (p.size() < 5 || p.compare(p.size() - 5, 5, ".json") != 0) return false;
  }
  return true;
}

Status run_plan_diff(const std::vector<std::string>& files, bool json, std::ostream& out, std::ostream& err) {
  std::vector<est::Plan> plans;
  std::vector<est::Estimate> estimates;
  for (const auto& path : files) {
    auto text = read_text_file(path, path);
    if (!text) return report_command_errors(text.errors(), json, out, err);
    auto plan = est::parse_plan(*text);
    if (!plan) {
      std::vector<Diagnostic> named;
      for (const auto& d : plan.errors()) named.push_back(make_error(path + ": " + d.field, d.message));
      return report_command_errors(named, json, out, err);
    }
    auto e = est::estimate(*plan);
    if (!e) {
      std::vector<Diagnostic> named;
      for (const auto& d : e.errors()) named.push_back(make_error(path + ": " + d.field, d.message));
      return report_command_errors(named, json, out, err);
    }
    plans.push_back(std::move(*plan));
    estimates.push_back(std::move(*e));
  }
  const auto changes = est::plan_field_changes(plans[0], plans[1]);
  const auto quantities = est::compare_estimates(estimates[0], estimates[1]);
  if (json) {
    nlohmann::json c = nlohmann::json::array(), q = nlohmann::json::array();
    for (const auto& ch : changes) c.push_back({{"field", ch.path}, {"a", ch.a}, {"b", ch.b}});
    for (const auto& x : quantities) {
      if (!x.available) continue;
      q.push_back({{"group", x.group}, {"name", x.name}, {"unit", x.unit}, {"a", x.a}, {"b", x.b}, {"delta", x.delta()},
                   {"ratio", std::isfinite(x.ratio()) ? nlohmann::json(x.ratio()) : nlohmann::json()}});
    }
    out << json_text(nlohmann::json{{"a", files[0]}, {"b", files[1]}, {"changed_fields", c}, {"quantities", q}}) << "\n";
    return Status::ok;
  }
  out << "A: " << files[0] << "\nB: " << files[1] << "\n\n";
  if (changes.empty()) out << "the plans are the same\n";
  else out << "changed fields (A -> B)\n";
  for (const auto& ch : changes) out << "  " << pad_right(ch.path, 36) << json_cell(ch.a) << " -> " << json_cell(ch.b) << "\n";
  std::string group;
  for (const auto& x : quantities) {
    if (!x.available) continue;
    if (x.group != group) {
      group = x.group;
      out << "\n" << pad_right(group, 26) << pad_left("A", 12) << pad_left("B", 12) << pad_left("B - A", 12)
          << pad_left("B / A", 9) << "\n";
    }
    const std::string name = x.unit.empty() ? x.name : x.name + " (" + x.unit + ")";
    out << "  " << pad_right(name, 24) << pad_left(cell(x.a), 12) << pad_left(cell(x.b), 12)
        << pad_left((x.delta() > 0 ? "+" : "") + cell(x.delta()), 12)
        << pad_left(std::isfinite(x.ratio()) ? format_fixed(x.ratio(), 2) + "x" : "-", 9) << "\n";
  }
  return Status::ok;
}

}  // namespace plansight::cli
