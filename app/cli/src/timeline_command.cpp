// `plansight timeline`: the predicted timeline of one iteration of a plan (the plan flags of
// estimate), written as Plansight timeline JSON (--out FILE.json, or stdout with --json) and/or
// drawn in the terminal (--ascii, one row per pipeline rank: F forward, B backward, W weight
// gradient, R recompute, O optimizer, '.' idle). --per-layer lays every op out layer by layer, each
// collective its own span (timeline_layers.h). --format perfetto writes --out as Chrome
// trace-event JSON for ui.perfetto.dev or chrome://tracing instead (as `export RUN` does for a
// stored run). With --json, errors are {"errors": [...]} on stdout as well, as for estimate.
#include <fstream>

#include <nlohmann/json.hpp>

#include "command_util.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/format.h"
#include "plansight/cli/plan_args.h"
#include "plansight/estimator/estimator.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/schedule_metrics.h"
#include "plansight/estimator/time_model.h"
#include "plansight/estimator/timeline_json.h"
#include "plansight/estimator/timeline_layers.h"
#include "plansight/interop/perfetto_exporter.h"

namespace plansight::cli {

namespace est = plansight::estimator;

Status run_timeline(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool as_json = false;
  for (const auto& a : argv) as_json |= a == "--json";
  auto args = Args::parse(argv, plan_command_flags({{"--out", true, "FILE.json"},
                                                    {"--ascii", false, ""},
                                                    {"--per-layer", false, ""},
                                                    {"--format", true, "plansight|perfetto"},
                                                    {"--width", true, "COLUMNS"}}));
  auto fail = [&](const std::vector<Diagnostic>& errors) { return report_command_errors(errors, as_json, out, err); };
  if (!args) return fail(args.errors());
  if (!args->positionals().empty()) return fail({make_error(args->positionals().front(), "unexpected argument")});
  if (as_json && args->has("--ascii")) {
    return fail({make_error("--ascii", "draws text; with --json the timeline is written as JSON; give one of them")});
  }
  const std::string format = args->value("--format").value_or("plansight");
  if (format != "plansight" && format != "perfetto") {
    return fail({make_error("--format", "value \"" + format + "\" is invalid; valid: plansight (timeline JSON), perfetto "
                                        "(Chrome trace-event JSON, with --out)")});
  }
  if (format == "perfetto" && !args->has("--out")) {
    return fail({make_error("--format", "perfetto writes a file; give --out FILE.json")});
  }
  long long width = 100;
  if (args->has("--width")) {
    auto w = args->integer("--width");
    if (!w) return fail(w.errors());
    if (*w < 10 || *w > 1000) return fail({make_error("--width", "value " + std::to_string(*w) + " is invalid; valid: 10 to 1000")});
    width = *w;
  }
  std::vector<Diagnostic> adjustments;
  auto plan = plan_from_args(*args, &adjustments);
  if (!plan) return fail(plan.errors());
  print_adjustments(adjustments, err);
  // The estimate validates the plan and keeps its simulated iteration: one simulation in all.
  if (auto problems = est::validate(*plan); has_errors(problems)) return fail(problems);
  if (auto too_long = est::timeline_size_errors(*plan); !too_long.empty()) return fail(too_long);
  // A given throughput (training.achieved_tflops or mfu) sets the estimate's time; the timeline is
  // the time model's all the same.
  est::TimePrediction prediction;
  auto estimate = est::estimate_with_prediction(*plan, nullptr, prediction);
  if (!estimate) return fail(estimate.errors());
  const est::TimePrediction* predicted = &prediction;
  if (args->has("--per-layer")) {
    auto layered = est::layer_timeline(*plan, estimate->padded_vocab, prediction.timeline);
    if (!layered) return fail(layered.errors());
    prediction.timeline = std::move(layered->timeline);
    if (!as_json) {
      err << "laid out " << layered->ops_laid_out << " ops layer by layer";
      if (layered->ops_kept > 0) err << "; " << layered->ops_kept << " kept whole (other work shares their window on the lane)";
      err << "\n";
    }
  }

  // The timeline's JSON with its plan, streamed (for a long schedule a built document was most
  // of the command's time and memory).
  const nlohmann::json plan_member = {{"plan", est::to_json(*plan)}};
  std::size_t spans = 0;
  for (const auto& t : predicted->timeline.tracks) spans += t.spans.size();
  if (auto path = args->value("--out")) {
    if (format == "perfetto") {
      auto bytes = interop::write_chrome_trace_file(*path, {&predicted->timeline});
      if (!bytes) return fail(bytes.errors());
    } else {
      std::ofstream file(*path, std::ios::binary | std::ios::trunc);
      if (!file) return fail({make_error("--out", "cannot write \"" + *path + "\"")});
      est::write_json(file, predicted->timeline, plan_member);
      file << "\n";
      if (!file) return fail({make_error("--out", "writing \"" + *path + "\" failed")});
    }
    if (as_json) {
      out << json_text(nlohmann::json{{"out", *path}, {"spans", spans}, {"tracks", predicted->timeline.tracks.size()}}) << "\n";
    } else {
      out << "wrote " << spans << " spans on " << predicted->timeline.tracks.size() << " tracks to " << *path << "\n";
    }
  } else if (as_json) {
    est::write_json(out, predicted->timeline, plan_member);
    out << "\n";
  }
  if (args->has("--ascii") || (!args->has("--out") && !as_json)) {
    out << est::render_ascii(predicted->timeline, static_cast<int>(width));
    const auto& b = predicted->breakdown;
    out << "iteration " << format_seconds(predicted->iteration_s) << ": compute " << format_seconds(b.compute_s)
        << ", bubble " << format_seconds(b.bubble_s) << " (bubble fraction " << format_fixed(predicted->bubble_fraction * 100, 1)
        << "% mean over stages, " << format_fixed(predicted->bubble_fraction_max * 100, 1) << "% worst), exposed comm. TP " << format_seconds(b.tp_comm_s) << " PP " << format_seconds(b.pp_comm_s)
        << " DP " << format_seconds(b.dp_comm_s) << ", optimizer " << format_seconds(b.optimizer_s) << "\n";
    out << "F forward, B backward, W weight gradient, R recompute, O optimizer, . idle\n";
  }
  return Status::ok;
}

}  // namespace plansight::cli
