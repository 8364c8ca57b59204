// `plansight placement [plan flags] [--nodes N] [--json]`: which GPU of which node holds which
// TP/CP/DP/PP coordinate under layout.placement, and the link each kind of group crosses
// (estimator/placement.h). The app's Placement page draws the same map.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/placement.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

std::string coordinates(const est::RankPlace& r, const est::Plan& p) {
  std::string s = "t" + std::to_string(r.tp);
  if (p.layout.cp > 1) s += " c" + std::to_string(r.cp);
  return s + " d" + std::to_string(r.dp) + " p" + std::to_string(r.pp);
}

std::string link_text(const est::GroupLink& g) {
  if (g.size <= 1) return "no communication";
  return std::string(g.crosses_nodes ? "across nodes" : "inside a node") + ", " +
         format_fixed(g.bandwidth_bytes_per_s / 1e9, 0) + " GB/s";
}

}  // namespace

Status run_placement(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, plan_command_flags({{"--nodes", true, "N"}}));
  if (!args) return report_command_errors(args.errors(), json, out, err);
  if (!args->positionals().empty()) {
    return report_command_errors({make_error(args->positionals()[0], "unexpected argument; see plansight --help")}, json, out, err);
  }
  auto plan = plan_from_args(*args);
  if (!plan) return report_command_errors(plan.errors(), json, out, err);
  // The map needs a valid layout, not the estimate: no iteration is simulated here.
  if (auto problems = est::validate(*plan); has_errors(problems)) {
    std::erase_if(problems, [](const Diagnostic& d) { return d.severity != Severity::error; });
    return report_command_errors(problems, json, out, err);
  }
  long long nodes_shown = 4;
  if (args->has("--nodes")) {
    auto n = args->integer("--nodes");
    if (!n) return report_command_errors(n.errors(), json, out, err);
    if (*n < 1) return report_command_errors({make_error("--nodes", "value " + std::to_string(*n) + " is invalid; valid: at least 1")}, json, out, err);
    nodes_shown = *n;
  }
  const auto ranks = est::place_ranks(*plan);
  const auto links = est::group_links(*plan);
  const std::int64_t per_node = plan->cluster.gpus_per_node;
  const std::int64_t nodes = (static_cast<std::int64_t>(ranks.size()) + per_node - 1) / per_node;
  if (json) {
    nlohmann::json groups = nlohmann::json::array(), list = nlohmann::json::array();
    for (const auto& g : links) {
      groups.push_back({{"group", est::group_name(g.group)}, {"size", g.size}, {"stride", g.stride},
                        {"crosses_nodes", g.crosses_nodes}, {"bandwidth_bytes_per_s", g.bandwidth_bytes_per_s}});
    }
    for (const auto& r : ranks) {
      list.push_back({{"rank", r.rank}, {"node", r.node}, {"local", r.local}, {"tp", r.tp}, {"cp", r.cp}, {"dp", r.dp}, {"pp", r.pp}});
    }
    out << json_text(nlohmann::json{{"placement", est::to_string(plan->layout.placement)}, {"gpus_per_node", per_node},
                                    {"groups", groups}, {"ranks", list}})
        << "\n";
    return Status::ok;
  }
  out << "placement " << est::to_string(plan->layout.placement) << " (innermost first) on " << ranks.size() << " GPUs, "
      << nodes << " node" << (nodes == 1 ? "" : "s") << " of " << per_node << "\n";
  for (const auto& g : links) {
    out << "  " << pad_right(std::string(est::group_name(g.group)), 3) << pad_left(std::to_string(g.size), 5)
        << (g.size == 1 ? " rank,  stride " : " ranks, stride ") << pad_right(std::to_string(g.stride), 6) << link_text(g) << "\n";
  }
  out << "each GPU: t = TP rank, " << (plan->layout.cp > 1 ? "c = CP rank, " : "") << "d = DP rank, p = pipeline stage\n";
  for (std::int64_t n = 0; n < std::min<std::int64_t>(nodes, nodes_shown); ++n) {
    out << "node " << n << ":";
    for (std::int64_t l = 0; l < per_node; ++l) {
      const std::size_t r = static_cast<std::size_t>(n * per_node + l);
      if (r < ranks.size()) out << (l == 0 ? " " : " | ") << "gpu" << l << " " << coordinates(ranks[r], *plan);
    }
    out << "\n";
  }
  if (nodes > nodes_shown) {
    out << "... " << nodes - nodes_shown << " more node" << (nodes - nodes_shown == 1 ? "" : "s")
        << " (--nodes N shows more, --json lists every rank)\n";
  }
  return Status::ok;
}

}  // namespace plansight::cli
