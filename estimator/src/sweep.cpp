// Sweeps (sweep.h): the plan as JSON, the field's path set to each value, read back through
// plan_from_json and estimated, so that a sweep means exactly what the same plan file would.
#include "plansight/estimator/sweep.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/json_reader.h"
#include "plansight/estimator/plan_metrics.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

constexpr std::size_t kMaxValues = 1000;

struct Alias {
  std::string_view name, path;
};
constexpr Alias kAliases[] = {
    {"tp", "layout.tp"},
    {"pp", "layout.pp"},
    {"vpp", "layout.vpp"},
    {"dp", "layout.dp"},
    {"cp", "layout.cp"},
    {"ep", "layout.ep"},
    {"etp", "layout.etp"},
    {"zero", "layout.zero_stage"},
    {"gpus", "cluster.gpus"},
    {"gpus_per_node", "cluster.gpus_per_node"},
    {"micro_batch", "training.micro_batch"},
    {"global_batch", "training.global_batch"},
    {"micro_batches", "micro_batches"},
    {"seq_len", "training.seq_len"},
    {"tokens", "training.tokens"},
};

std::optional<double> number(std::string_view text) {
  double v = 0;
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || !std::isfinite(v)) return std::nullopt;
  return v;
}

nlohmann::json json_number(double v) {
  if (v == std::floor(v) && std::abs(v) < 9e15) return static_cast<std::int64_t>(v);
  return v;
}

}  // namespace

std::vector<std::string_view> sweep_field_names() {
  std::vector<std::string_view> out;
  for (const auto& a : kAliases) out.push_back(a.name);
  return out;
}

Result<SweepField> sweep_field(std::string_view name) {
  for (const auto& a : kAliases) {
    if (a.name == name) return SweepField{std::string(name), std::string(a.path)};
  }
  // A plan-file path to a number: checked against the default plan's JSON.
  const auto plan = to_json(default_plan());
  const auto dot = name.find('.');
  if (dot != std::string_view::npos) {
    const std::string section(name.substr(0, dot)), key(name.substr(dot + 1));
    if (plan.contains(section) && plan[section].is_object() && plan[section].contains(key) &&
        plan[section][key].is_number()) {
      return SweepField{std::string(name), std::string(name)};
    }
  }
  std::string valid;
  for (const auto& a : kAliases) valid += (valid.empty() ? "" : ", ") + std::string(a.name);
  return make_error("field", "\"" + std::string(name) + "\" is not a numeric plan field; valid: " + valid +
                                 ", or a plan-file path such as layout.pp or training.seq_len");
}

Result<std::vector<double>> parse_sweep_values(std::string_view text) {
  std::vector<double> values;
  auto fail = [&](const std::string& why) -> Result<std::vector<double>> {
    return make_error("values", "\"" + std::string(text) + "\": " + why +
                                    "; valid: A..B (every integer), A..B*F (geometric), or a list a,b,c");
  };
  if (const auto range = text.find(".."); range != std::string_view::npos) {
    std::string_view rest = text.substr(range + 2);
    double factor = 0;
    if (const auto star = rest.find('*'); star != std::string_view::npos) {
      auto f = number(rest.substr(star + 1));
      if (!f || *f <= 1) return fail("the factor after * must be a number above 1");
      factor = *f;
      rest = rest.substr(0, star);
    }
    auto a = number(text.substr(0, range)), b = number(rest);
    if (!a || !b) return fail("the range needs two numbers");
    if (*a > *b) return fail("the range must not run backwards");
    if (factor > 0) {
      if (*a <= 0) return fail("a geometric range must start above 0");
      for (double v = *a; v <= *b * (1 + 1e-12) && values.size() <= kMaxValues; v *= factor) values.push_back(v);
    } else {
      if (*a != std::floor(*a) || *b != std::floor(*b)) return fail("A..B steps by 1 between whole numbers");
      if (*b - *a + 1 > static_cast<double>(kMaxValues)) return fail("more than 1000 values");
      for (double v = *a; v <= *b; v += 1) values.push_back(v);
    }
  } else {
    std::size_t start = 0;
    while (start <= text.size()) {
      const auto comma = text.find(',', start);
      const auto item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
      auto v = number(item);
      if (!v) return fail("\"" + std::string(item) + "\" is not a number");
      values.push_back(*v);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  if (values.empty()) return fail("no values");
  if (values.size() > kMaxValues) return fail("more than 1000 values");
  return values;
}

Result<SweepResult> sweep(const Plan& plan, const SweepField& field, const std::vector<double>& values,
                          const std::vector<std::string>& metrics) {
  if (metrics.empty()) return make_error("metric", "give at least one metric");
  for (const auto& m : metrics) {
    if (!find_plan_metric(m)) return plan_metric(m, plan, Estimate{}).errors();  // the "valid: ..." message
  }
  SweepResult out{field, metrics, {}};
  const nlohmann::json base = to_json(plan);
  for (double v : values) {
    SweepPoint point;
    point.value = v;
    nlohmann::json j = base;
    if (field.path == "micro_batches") {
      // m micro-batches of micro_batch sequences on each of the dp pipelines.
      j["training"]["global_batch"] = json_number(v * static_cast<double>(plan.training.micro_batch) *
                                                  static_cast<double>(plan.dp()));
    } else {
      const auto dot = field.path.find('.');
      j[field.path.substr(0, dot)][field.path.substr(dot + 1)] = json_number(v);
    }
    auto p = plan_from_json(j);
    auto e = p ? estimate(*p) : Result<Estimate>(p.errors());
    if (!e) {
      // The first error, not a warning that came before it (with tp 1, "sequence_parallel has no
      // effect" comes before "tp_overlap needs tp > 1").
      const auto& all = e.errors();
      const auto first = std::find_if(all.begin(), all.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
      const Diagnostic& d = first != all.end() ? *first : all.front();
      point.error = d.field + ": " + d.message;
    } else {
      for (const auto& m : metrics) {
        auto value = plan_metric(m, *p, *e);
        if (!value) {
          point.error = value.error_text();
          point.metrics.clear();
          break;
        }
        point.metrics.push_back(*value);
      }
    }
    out.points.push_back(std::move(point));
  }
  return out;
}

std::string to_csv(const SweepResult& r) {
  std::ostringstream s;
  s.precision(10);
  s << r.field.name;
  for (const auto& m : r.metrics) s << "," << m;
  s << ",error\n";
  for (const auto& p : r.points) {
    s << p.value;
    for (std::size_t i = 0; i < r.metrics.size(); ++i) {
      s << ",";
      if (i < p.metrics.size()) s << p.metrics[i];
    }
    std::string error = p.error;
    for (char& c : error) if (c == '"') c = '\'';
    s << "," << (error.empty() ? "" : "\"" + error + "\"") << "\n";
  }
  return s.str();
}

nlohmann::json to_json(const SweepResult& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points) {
    nlohmann::json point = {{"value", p.value}};
    if (p.error.empty()) {
      for (std::size_t i = 0; i < r.metrics.size(); ++i) point[r.metrics[i]] = p.metrics[i];
    } else {
      point["error"] = p.error;
    }
    points.push_back(std::move(point));
  }
  nlohmann::json units = nlohmann::json::object();
  for (const auto& m : r.metrics) units[m] = std::string(find_plan_metric(m)->unit);
  return {{"field", r.field.name}, {"path", r.field.path}, {"metrics", r.metrics}, {"units", units}, {"points", points}};
}

}  // namespace plansight::estimator
