// `plansight search`: the best layouts of a model on a cluster for a global batch. It takes the
// same plan flags as estimate (plan_command_flags) and the same default plan; layout flags (--tp,
// --pp, --vpp, --dp, --cp, --zero, --recompute, --schedule, --micro-batch, --sequence-parallel)
// constrain that dimension instead of searching it all ("8", "2,4,8", "2..8", "..8"); framework
// rules (CP needs flash attention, no ZeRO-2/3 with PP) hold unless --no-framework-rules; the
// plan's --attention is the attention searched; a --plan file's layout is not a constraint; a given
// throughput (--mfu, --achieved-tflops) is noted as unused. Exit 0 with layouts, 1 when none fits
// (the summary names why), 2 on invalid input.
//
// --json keys (stable contract, tests/integration/search_cli_test.cpp):
//   request:    model, gpu, system, gpus, gpus_per_node, global_batch, seq_len, tokens, top, attention,
//               constraints (describe_constraints() text), framework_rules
//   search:     enumerated, evaluated, fitting, threads, closed_form_seconds, seconds,
//               layouts_per_s (enumerated / closed_form_seconds), simulated
//   rejections: [{reason, count, first: LAYOUT, detail, closest: LAYOUT|null, closest_bytes|null}]
//   layouts:    [{rank, layout: LAYOUT, micro_batches, tokens_per_s, iteration_s, mfu, hfu,
//                 achieved_tflops_per_gpu, closed_form_iteration_s, closed_form_tokens_per_s, simulated
//                 (false: the time is the closed form's, the schedule being over SearchOptions::max_simulated_ops),
//                 memory: {most_loaded_stage, weights_bytes, gradients_bytes, optimizer_bytes,
//                          activations_bytes, buffers_bytes, reserve_bytes, total_bytes, capacity_bytes},
//                 time: {compute_s, tp_comm_s, cp_comm_s, pp_comm_s, dp_comm_s, bubble_s,
//                        optimizer_s, bubble_fraction, bubble_fraction_max},
//                 training_days, gpu_hours, cost (null without --tokens; cost null without a price)}]
//   summary:    rejection_summary() text
//   LAYOUT:     {tp, pp, vpp, dp, cp, micro_batch, sequence_parallel, zero_stage, recompute, schedule}
#include <algorithm>
#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/layout_search.h"
#include "plansight/estimator/search_constraints.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;
using nlohmann::json;

Status report(const std::vector<Diagnostic>& errors, bool as_json, std::ostream& out, std::ostream& err) {
  return report_command_errors(errors, as_json, out, err);
}

// Search-only flags, and the layout flags, which search reads as constraints ("8", "2,4,8",
// "2..8"; estimator/search_constraints.h) rather than as the plan's single values.
struct ConstraintFlag {
  const char* flag;
  const char* dimension;
};
constexpr ConstraintFlag kConstraintFlags[] = {
    {"--tp", "tp"},         {"--pp", "pp"},
    {"--vpp", "vpp"},       {"--dp", "dp"},
    {"--cp", "cp"},         {"--zero", "zero_stage"},
    {"--micro-batch", "micro_batch"}, {"--recompute", "recompute"},
    {"--schedule", "schedule"}, {"--sequence-parallel", "sequence_parallel"},
    {"--precision", "precision"}, {"--offload", "offload"},
};

std::vector<FlagSpec> search_flags() {
  return plan_command_flags(
      {{"--top", true, "K"}, {"--threads", true, "N"}, {"--no-framework-rules", false, ""},
       {"--offload", true, "none,optimizer,optimizer+params,activations|any"}});
}

// Layout flags become constraints of the search space; errors name the flag.
Result<est::SearchOptions> search_options(const Args& args) {
  std::vector<Diagnostic> errors;
  est::SearchOptions o;
  for (const auto& c : kConstraintFlags) {
    if (!args.has(c.flag)) continue;
    // --sequence-parallel is a switch for estimate; here it fixes sequence parallelism on.
    const std::string text = std::string(c.flag) == "--sequence-parallel" ? "on" : *args.value(c.flag);
    auto e = est::set_search_constraint(o.space, c.dimension, text, c.flag);
    errors.insert(errors.end(), e.begin(), e.end());
  }
  // MoE: --ep/--etp fix the expert parallel sizes (single values).
  for (const auto& [flag, into] : {std::pair<const char*, std::vector<std::int64_t>*>{"--ep", &o.space.ep},
                                   std::pair<const char*, std::vector<std::int64_t>*>{"--etp", &o.space.etp}}) {
    if (!args.has(flag)) continue;
    auto v = args.integer(flag);
    if (!v) {
      errors.insert(errors.end(), v.errors().begin(), v.errors().end());
    } else if (*v < 1 || *v > (1 << 20)) {
      errors.push_back(make_error(flag, "value " + std::to_string(*v) + " is invalid; valid: 1 to 1048576"));
    } else {
      *into = {*v};
    }
  }
  o.space.framework_rules = !args.has("--no-framework-rules");
  for (const char* flag : {"--top", "--threads"}) {
    if (!args.has(flag)) continue;
    auto v = args.integer(flag);
    if (!v) {
      errors.insert(errors.end(), v.errors().begin(), v.errors().end());
      continue;
    }
    if (*v < 1 || *v > 1000) {
      errors.push_back(make_error(flag, "value " + std::to_string(*v) + " is invalid; valid: 1 to 1000"));
      continue;
    }
    if (std::string(flag) == "--top")
      o.top = static_cast<std::size_t>(*v);
    else
      o.threads = static_cast<unsigned>(*v);
  }
  if (!errors.empty()) return errors;
  return o;
}

// The plan flags search takes but cannot use: a given throughput would rank every layout alike,
// so the search predicts each layout's time instead (layout_search: plan_for_candidate).
void note_unused_flags(const Args& args, std::ostream& err) {
  for (const char* flag : {"--achieved-tflops", "--mfu"}) {
    if (args.has(flag)) {
      err << make_warning(flag, "not used: the search ranks layouts by their predicted time").to_string() << "\n";
    }
  }
}

json layout_json(const est::Candidate& c) {
  json out = {{"tp", c.tp},
          {"pp", c.pp},
          {"vpp", c.vpp},
          {"dp", c.dp},
          {"cp", c.cp},
          {"micro_batch", c.micro_batch},
          {"sequence_parallel", c.sequence_parallel},
          {"zero_stage", c.zero_stage},
          {"recompute", est::to_string(c.recompute)},
          {"schedule", est::to_string(c.schedule)}};
  if (c.ep > 1 || c.etp > 0) {  // MoE layouts only, as in the plan JSON
    out["ep"] = c.ep;
    out["etp"] = c.etp > 0 ? c.etp : c.tp;
  }
  return out;
}

json result_json(const est::Plan& base, const est::SearchOptions& o, const est::SearchResult& r) {
  const auto& t = base.training;
  json j;
  j["request"] = {{"model", base.model.name},
                  {"gpu", base.cluster.gpu.name},
                  {"system", base.cluster.name},
                  {"gpus", base.cluster.gpus},
                  {"gpus_per_node", base.cluster.gpus_per_node},
                  {"global_batch", t.global_batch},
                  {"seq_len", t.seq_len},
                  {"tokens", t.tokens},
                  {"top", o.top},
                  {"attention", est::to_string(t.attention)},
                  {"constraints", est::describe_constraints(o.space)},
                  {"offload", {{"optimizer", base.layout.offload_optimizer},
                               {"params", base.layout.offload_params},
                               {"activations", base.layout.offload_activations}}},
                  {"framework_rules", o.space.framework_rules}};
  j["search"] = {
      {"enumerated", r.enumerated},
      {"evaluated", r.evaluated},
      {"fitting", r.fitting},
      {"threads", r.threads},
      {"closed_form_seconds", r.closed_form_seconds},
      {"seconds", r.seconds},
      {"layouts_per_s", r.closed_form_seconds > 0 ? static_cast<double>(r.enumerated) / r.closed_form_seconds : 0.0},
      {"simulated", r.simulated},
      {"skipped_precisions", [&] {
         json names = json::array();
         for (auto p : r.skipped_precisions) names.push_back(est::to_string(p));
         return names;
       }()}};
  json rejections = json::array();
  for (const auto& rej : r.rejections) {
    const bool memory = rej.reason == est::RejectReason::memory;
    rejections.push_back({{"reason", est::to_string(rej.reason)},
                          {"count", rej.count},
                          {"first", layout_json(rej.first)},
                          {"detail", rej.detail},
                          {"closest", memory ? layout_json(rej.closest) : json(nullptr)},
                          {"closest_bytes", memory ? json(rej.closest_bytes) : json(nullptr)}});
  }
  j["rejections"] = std::move(rejections);
  json layouts = json::array();
  for (std::size_t i = 0; i < r.layouts.size(); ++i) {
    const auto& l = r.layouts[i];
    const auto& e = l.estimate;
    const auto& b = e.time.breakdown;
    json memory = est::to_json(e.memory.peak);
    memory["most_loaded_stage"] = e.memory.most_loaded_stage;
    memory["capacity_bytes"] = e.memory.capacity_bytes;
    const bool budget = t.tokens > 0;
    layouts.push_back({{"rank", i + 1},
                       {"layout", layout_json(l.candidate)},
                       {"precision", est::to_string(l.plan.training.precision)},
                       {"offload", {{"optimizer", l.plan.layout.offload_optimizer},
                                    {"params", l.plan.layout.offload_params},
                                    {"activations", l.plan.layout.offload_activations}}},
                       {"micro_batches", e.micro_batches},
                       {"tokens_per_s", e.time.tokens_per_s},
                       {"iteration_s", e.time.iteration_s},
                       {"mfu", e.time.mfu},
                       {"hfu", e.time.hfu},
                       {"achieved_tflops_per_gpu", e.time.achieved_tflops_per_gpu},
                       {"closed_form_iteration_s", l.closed_form_iteration_s},
                       {"closed_form_tokens_per_s", l.closed_form_tokens_per_s},
                       {"simulated", e.time.simulated},
                       {"memory", std::move(memory)},
                       {"time",
                        {{"compute_s", b.compute_s},
                         {"tp_comm_s", b.tp_comm_s},
                         {"cp_comm_s", b.cp_comm_s},
                         {"pp_comm_s", b.pp_comm_s},
                         {"dp_comm_s", b.dp_comm_s},
                         {"bubble_s", b.bubble_s},
                         {"optimizer_s", b.optimizer_s},
                         {"bubble_fraction", e.time.bubble_fraction},
                         {"bubble_fraction_max", e.time.bubble_fraction_max}}},
                       {"training_days", budget ? json(e.time.training_days) : json(nullptr)},
                       {"gpu_hours", budget ? json(e.time.gpu_hours) : json(nullptr)},
                       {"cost", budget && base.cluster.price_per_gpu_hour > 0 ? json(e.time.cost) : json(nullptr)},
                       {"currency", base.cluster.currency}});
  }
  j["layouts"] = std::move(layouts);
  j["summary"] = est::rejection_summary(r);
  return j;
}

std::string gib(double bytes) { return format_fixed(bytes / (1024.0 * 1024.0 * 1024.0), 2); }

void print_result(std::ostream& out, const est::Plan& base, const est::SearchOptions& o, const est::SearchResult& r) {
  const auto& t = base.training;
  out << "Search: " << base.model.name << " on " << base.cluster.gpus << " x " << base.cluster.gpu.name;
  if (!base.cluster.name.empty() && base.cluster.name != "custom") out << " (" << base.cluster.name << ")";
  out << ", global batch " << t.global_batch << " x " << t.seq_len << " tokens\n";
  out << "  " << est::to_string(t.attention) << " attention";
  if (base.layout.offloads()) {
    out << "; offloading " << (base.layout.offload_optimizer ? "optimizer " : "") << (base.layout.offload_params ? "parameters " : "")
        << (base.layout.offload_activations ? "activations " : "") << "(every layout, costed as estimate costs it)";
  }
  out << "; constraints: " << est::describe_constraints(o.space)
      << "; framework rules " << (o.space.framework_rules ? "on (--no-framework-rules to lift them)" : "off") << "\n";
  out << "  " << format_count(static_cast<double>(r.enumerated)) << " layouts in "
      << format_seconds(r.closed_form_seconds) << " on " << r.threads << " threads ("
      << format_count(r.closed_form_seconds > 0 ? static_cast<double>(r.enumerated) / r.closed_form_seconds : 0)
      << " layouts/s); " << format_count(static_cast<double>(r.fitting)) << " fit; best re-ranked by simulation";
  const auto closed_form = std::count_if(r.layouts.begin(), r.layouts.end(),
                                         [](const est::RankedLayout& l) { return !l.estimate.time.simulated; });
  if (closed_form > 0) {
    out << " (" << closed_form << " shown by the closed form: more than "
        << format_count(static_cast<double>(o.max_simulated_ops)) << " schedule ops to simulate)";
  }
  out << ", " << format_seconds(r.seconds) << " in all\n";
  for (auto p : r.skipped_precisions) {
    out << "  precision " << est::to_string(p) << " not searched: the " << base.cluster.gpu.name << " has no "
        << est::to_string(p) << " peak\n";
  }
  out << est::rejection_summary(r);
  for (std::size_t i = 0; i < r.layouts.size(); ++i) {
    const auto& l = r.layouts[i];
    const auto& e = l.estimate;
    const auto& m = e.memory.peak;
    const auto& b = e.time.breakdown;
    out << "\n#" << i + 1 << "  " << est::describe(l.candidate);
    if (!o.space.precision.empty()) out << ", " << est::to_string(l.plan.training.precision);
    if (!o.space.offload.empty()) {
      const auto& x = l.plan.layout;
      out << (x.offloads() ? ", offload" : ", no offload") << (x.offload_optimizer ? " optimizer" : "")
          << (x.offload_params ? " params" : "") << (x.offload_activations ? " activations" : "");
    }
    out << "\n";
    out << "    " << format_count(e.time.tokens_per_s) << " tokens/s, iteration " << format_seconds(e.time.iteration_s)
        << " (" << e.micro_batches << " micro-batches), MFU " << format_fixed(e.time.mfu * 100, 1) << "%, HFU "
        << format_fixed(e.time.hfu * 100, 1) << "%, " << format_fixed(e.time.achieved_tflops_per_gpu, 1)
        << " TFLOP/s per GPU; "
        << (e.time.simulated ? "closed form " + format_seconds(l.closed_form_iteration_s)
                             : std::string("closed form only (not simulated)"))
        << "\n";
    out << "    memory, stage " << e.memory.most_loaded_stage << " (GiB): weights " << gib(m.weights_bytes)
        << ", gradients " << gib(m.gradients_bytes) << ", optimizer " << gib(m.optimizer_bytes) << ", activations "
        << gib(m.activations_bytes) << ", buffers " << gib(m.buffers_bytes) << ", reserve " << gib(m.reserve_bytes)
        << "; total " << gib(m.total_bytes()) << " of " << gib(e.memory.capacity_bytes) << "\n";
    out << "    time per iteration: compute " << format_seconds(b.compute_s) << ", tp " << format_seconds(b.tp_comm_s)
        << ", cp " << format_seconds(b.cp_comm_s) << ", pp " << format_seconds(b.pp_comm_s) << ", dp "
        << format_seconds(b.dp_comm_s) << ", bubble " << format_seconds(b.bubble_s) << ", optimizer "
        << format_seconds(b.optimizer_s);
    if (b.ep_comm_s > 0) out << ", expert all-to-all " << format_seconds(b.ep_comm_s);
    out << "\n";
    if (t.tokens > 0) {
      out << "    " << format_large_count(t.tokens) << " tokens: " << format_fixed(e.time.training_days, 1) << " days, "
          << format_count(e.time.gpu_hours) << " GPU-hours";
      if (base.cluster.price_per_gpu_hour > 0) out << ", " << format_count(e.time.cost) << " " << base.cluster.currency;
      out << "\n";
    }
  }
}

}  // namespace

Status run_search(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool as_json = false;
  for (const auto& a : argv) as_json |= a == "--json";
  auto args = Args::parse(argv, search_flags());
  if (!args) return report(args.errors(), as_json, out, err);
  if (!args->positionals().empty()) {
    return report({make_error(args->positionals().front(), "unexpected argument; see plansight --help")}, as_json, out,
                  err);
  }
  auto options = search_options(*args);
  if (!options) return report(options.errors(), as_json, out, err);
  note_unused_flags(*args, err);
  std::vector<std::string> constraint_flags;
  for (const auto& c : kConstraintFlags) constraint_flags.emplace_back(c.flag);
  std::vector<Diagnostic> adjustments;
  auto base = plan_from_args(args->without(constraint_flags), &adjustments);
  if (!base) return report(base.errors(), as_json, out, err);
  print_adjustments(adjustments, err);
  auto result = est::search_layouts(*base, *options);
  if (!result) return report(result.errors(), as_json, out, err);
  if (as_json) {
    out << json_text(result_json(*base, *options, *result)) << "\n";
  } else {
    print_result(out, *base, *options, *result);
  }
  if (result->layouts.empty()) {
    if (as_json) err << est::rejection_summary(*result);
    return Status::failure;
  }
  return Status::ok;
}

}  // namespace plansight::cli
