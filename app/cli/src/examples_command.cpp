// `plansight examples [NAME] [--row N --write-plan FILE.json] [--json]`: the worked examples of
// lectures and papers (estimator/examples.h), each row's value from our estimate beside the one
// the source publishes. --write-plan saves a row's plan, to edit or pass to estimate --plan.
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/estimator/examples.h"
#include "plansight/estimator/json_io.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

std::string signed_percent(double fraction) {
  return (fraction >= 0 ? "+" : "") + format_fixed(100 * fraction, 1) + " %";
}

// Significant digits, not a fixed count: a bubble of 0.094 and 651.92 GiB both read well.
std::string value_text(double v) {
  std::ostringstream s;
  s.precision(4);
  s << v;
  return s.str();
}

nlohmann::json result_json(const est::ExampleResult& r) {
  return {{"label", r.label},         {"metric", r.metric},       {"unit", r.unit},
          {"ours", r.ours},           {"published", r.published}, {"relative_error", r.relative_error()},
          {"tolerance", r.tolerance}, {"within_tolerance", r.within_tolerance()}};
}

void print_rows(std::ostream& out, const std::vector<est::ExampleResult>& rows) {
  out << "  " << pad_right("row", 40) << pad_left("ours", 10) << pad_left("published", 11) << pad_left("error", 10)
      << "  unit\n";
  for (const auto& r : rows) {
    out << "  " << pad_right(r.label, 40) << pad_left(value_text(r.ours), 10) << pad_left(value_text(r.published), 11)
        << pad_left(signed_percent(r.relative_error()), 10) << "  " << (r.unit.empty() ? "-" : r.unit)
        << (r.within_tolerance() ? "" : "  (outside " + format_fixed(100 * r.tolerance, 0) + " %)") << "\n";
  }
}

}  // namespace

Status run_examples(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, {{"--row", true, "N"}, {"--write-plan", true, "FILE.json"}, {"--json", false, ""}});
  if (!args) return report_command_errors(args.errors(), json, out, err);
  if (args->positionals().size() > 1) {
    return report_command_errors({make_error(args->positionals()[1], "unexpected argument; give at most one example name")},
                                 json, out, err);
  }
  if (args->has("--row") && !args->has("--write-plan")) {
    return report_command_errors(
        {make_error("--row", "chooses the row whose plan --write-plan writes; give --write-plan FILE.json too")}, json, out,
        err);
  }
  std::vector<est::Example> chosen;
  if (args->positionals().empty()) {
    if (args->has("--write-plan")) {
      return report_command_errors({make_error("--write-plan", "name the example whose plan to write")}, json, out, err);
    }
    chosen = est::examples();
  } else {
    auto example = est::find_example(args->positionals()[0]);
    if (!example) return report_command_errors(example.errors(), json, out, err);
    chosen.push_back(*example);
  }

  if (auto path = args->value("--write-plan")) {
    long long row = 1;
    if (args->has("--row")) {
      auto r = args->integer("--row");
      if (!r) return report_command_errors(r.errors(), json, out, err);
      row = *r;
    }
    const auto& rows = chosen.front().rows;
    if (row < 1 || row > static_cast<long long>(rows.size())) {
      return report_command_errors({make_error("--row", "value " + std::to_string(row) + " is out of range; valid: 1 to " +
                                                            std::to_string(rows.size()))},
                                   json, out, err);
    }
    auto plan = est::example_plan(chosen.front(), static_cast<std::size_t>(row - 1));
    if (!plan) return report_command_errors(plan.errors(), json, out, err, Status::failure);
    std::ofstream file(*path);
    file << json_text(est::to_json(*plan)) << "\n";
    if (!file) return report_command_errors({make_error("--write-plan", "cannot write \"" + *path + "\"")}, json, out, err, Status::failure);
    if (!json) out << "wrote the plan of \"" << rows[static_cast<std::size_t>(row - 1)].label << "\" to " << *path << "\n";
  }

  nlohmann::json list = nlohmann::json::array();
  for (const auto& example : chosen) {
    auto results = est::evaluate(example);
    if (!results) return report_command_errors(results.errors(), json, out, err, Status::failure);
    if (json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& r : *results) rows.push_back(result_json(r));
      list.push_back({{"name", example.name},
                      {"title", example.title},
                      {"source", example.source},
                      {"explanation", example.explanation},
                      {"rows", std::move(rows)}});
      continue;
    }
    out << example.name << ": " << example.title << "\n";
    print_rows(out, *results);
    if (chosen.size() == 1) {
      out << "\nsource: " << example.source << "\n" << example.explanation << "\n";
      out << "\nits plan: plansight examples " << example.name << " --row N --write-plan FILE.json\n";
    } else {
      out << "\n";
    }
  }
  if (json) out << json_text(nlohmann::json{{"examples", list}}) << "\n";
  return Status::ok;
}

}  // namespace plansight::cli
