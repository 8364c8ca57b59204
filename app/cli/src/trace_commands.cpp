// Traces of real runs: `plansight import FILE|DIR` (PyTorch profiler/Kineto JSON, plain or gzip,
// a directory of per-rank files, or an Nsight Systems SQLite export) into the run store;
// `analyze RUN` (per-rank breakdown and overlap, ours beside Holistic Trace Analysis's,
// pipeline bubbles, collective bus bandwidth, cross-rank alignment); `export RUN --format
// perfetto`; `diff RUN_A RUN_B`. An import is stored in one transaction or not at all
// (trace_import_store.h, shared with the desktop app's Runs page).
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "plan_diff_command.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/format.h"
#include "plansight/cli/run_args.h"
#include "plansight/core/trace_import_store.h"
#include "plansight/estimator/collective_bandwidth.h"
#include "plansight/estimator/hta_metrics.h"
#include "plansight/estimator/timeline_align.h"
#include "plansight/estimator/timeline_diff.h"
#include "plansight/estimator/timeline_metrics.h"
#include "plansight/interop/perfetto_exporter.h"
#include "plansight/interop/trace_import.h"

namespace plansight::cli {
namespace {

namespace est = plansight::estimator;

double to_s(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json breakdown_json(const est::Timeline& tl, const est::KernelClassifier& classifier) {
  nlohmann::json ranks = nlohmann::json::array();
  const auto ours = est::rank_breakdown(tl, classifier);
  const auto hta = est::hta_temporal_breakdown(tl);
  const auto hta_overlap = est::hta_comm_comp_overlap(tl);
  for (std::size_t i = 0; i < ours.size(); ++i) {
    const auto& r = ours[i];
    nlohmann::json j = {{"rank", r.rank},
                        {"window_s", to_s(r.window_ns)},
                        {"busy_s", to_s(r.busy_ns)},
                        {"idle_s", to_s(r.idle_ns)},
                        {"compute_s", to_s(r.compute_ns)},
                        {"tensor_core_s", to_s(r.tensor_core_ns)},
                        {"communication_s", to_s(r.communication_ns)},
                        {"exposed_communication_s", to_s(r.exposed_communication_ns)},
                        {"waiting_s", to_s(r.waiting_ns)},
                        {"memory_s", to_s(r.memory_ns)},
                        {"overlap", number_or_null(r.overlap_ratio)}};
    for (const auto& h : hta) {
      if (h.rank != r.rank) continue;
      j["hta"] = {{"idle_s", to_s(h.idle_ns)}, {"compute_s", to_s(h.compute_ns)}, {"non_compute_s", to_s(h.non_compute_ns)},
                  {"kernel_s", to_s(h.kernel_ns)}};
    }
    for (const auto& h : hta_overlap) {
      if (h.rank == r.rank) j["hta"]["overlap"] = number_or_null(h.ratio);
    }
    ranks.push_back(std::move(j));
  }
  return ranks;
}

// A probe run names its collectives after their process group ("tp.all_reduce",
// "dp.reduce_scatter"), and its stored request holds the group sizes: with them, bus bandwidth
// uses the real n of nccl-tests' factors instead of an unknown (0) group.
void fill_probe_group_sizes(const store::RunRecord& run, std::vector<est::CollectiveCall>& calls) {
  if (run.kind != store::RunKind::probe || !run.plan || !run.plan->is_object()) return;
  const auto layout = run.plan->find("layout");
  if (layout == run.plan->end() || !layout->is_object()) return;
  for (auto& c : calls) {
    const std::string group = c.name.substr(0, c.name.find('.'));
    if (group == c.name || (group != "tp" && group != "dp" && group != "cp")) continue;
    const auto size = layout->find(group);
    if (size != layout->end() && size->is_number_integer()) c.group_size = size->get<std::int32_t>();
  }
}

}  // namespace

Status run_import(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = Args::parse(argv, {{"--name", true, "NAME"}, {"--db", true, "PATH"}, {"--json", false, ""},
                                 {"--drop-last-step", false, ""}});
  if (!args) return report_cli_errors(args.errors(), err);
  if (args->positionals().size() != 1) return report_cli_errors({make_error("FILE|DIR", "give one trace file or directory")}, err);
  const std::filesystem::path path = args->positionals().front();
  interop::TraceImportOptions options;
  // Holistic Trace Analysis's load-time filter (KinetoImportOptions::drop_last_profiler_step),
  // so that analyze's breakdown and overlap are HTA's figures for the same trace.
  options.kineto.drop_last_profiler_step = args->has("--drop-last-step");
  auto trace = interop::import_trace(path, options);
  if (!trace) return report_cli_errors(trace.errors(), err);  // nothing stored
  // An empty trace ({} or a profiler run that recorded nothing) is refused, not stored as a run
  // with nothing to show or compare.
  std::size_t events = 0;
  for (const auto& track : trace->timeline.tracks) events += track.spans.size();
  if (events == 0) {
    return report_cli_errors({make_error(path.string(), "the trace holds no events (no kernels, operators or "
                                                        "annotations): nothing was stored; valid: a profiler trace of at "
                                                        "least one step")},
                             err);
  }
  auto store = open_store(*args);
  if (!store) return report_cli_errors(store.errors(), err);

  auto stored = core::store_imported_trace(*store, *trace, path, args->value("--name").value_or(""));
  if (!stored) return report_cli_errors(stored.errors(), err);
  const std::size_t spans = stored->spans;
  const std::string& device = stored->device;

  if (args->has("--json")) {
    nlohmann::json warnings = nlohmann::json::array();
    for (const auto& w : trace->warnings) warnings.push_back(w.to_string());
    out << json_text(nlohmann::json{{"run_id", stored->run_id}, {"spans", spans}, {"ranks", stored->ranks}, {"collectives", trace->collectives.size()},
                          {"warnings", warnings}, {"breakdown", breakdown_json(trace->timeline, est::KernelClassifier())}})
        << "\n";
  } else {
    out << "imported run " << stored->run_id << ": " << trace->ranks.size() << " rank(s), " << format_count(static_cast<double>(spans))
        << " spans, " << trace->collectives.size() << " collectives, window "
        << format_seconds(stored->window_s) << (device.empty() ? "" : ", " + device) << "\n";
    for (const auto& w : trace->warnings) out << "  " << w.to_string() << "\n";
  }
  return Status::ok;
}

Status run_analyze(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = Args::parse(argv, {{"--rules", true, "FILE"}, {"--align", true, "shared|collective-end"},
                                 {"--db", true, "PATH"}, {"--json", false, ""}});
  if (!args) return report_cli_errors(args.errors(), err);
  auto store = open_store(*args, store::Access::read_only);
  if (!store) return report_cli_errors(store.errors(), err);
  auto loaded = load_run_timeline(*store, args->positionals(), 0);
  if (!loaded) return report_cli_errors(loaded.errors(), err);
  est::KernelRules rules = est::default_kernel_rules();
  if (auto path = args->value("--rules")) {
    auto r = est::load_kernel_rules_file(*path);
    if (!r) return report_cli_errors(r.errors(), err);
    rules = *r;
  }
  const est::KernelClassifier classifier(rules);
  est::AlignOptions align;
  const std::string mode = args->value("--align").value_or("shared");
  if (mode == "collective-end") align.mode = est::AlignMode::collective_end;
  else if (mode != "shared") return report_cli_errors({make_error("--align", "unknown mode \"" + mode + "\"; valid: shared|collective-end")}, err);
  auto timeline = loaded->timeline;
  const auto alignment = est::compute_alignment(timeline, align, classifier);
  est::apply_alignment(timeline, alignment);

  // An imported run keeps its collective calls (with group sizes the timeline lacks); any other
  // run (a probe's measured timeline) has them only as spans.
  std::vector<est::CollectiveCall> calls = core::stored_collectives(loaded->run);
  if (calls.empty()) {
    calls = est::collectives_from_timeline(timeline, 0);
    fill_probe_group_sizes(loaded->run, calls);
  }
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : est::summarize_collectives(calls)) {
    // A call without its group size has no bus bandwidth (nccl-tests' factor needs n): null, not 0.
    const bool known = c.group_size > 0;
    collectives.push_back({{"kind", est::to_string(c.kind)}, {"group_size", known ? nlohmann::json(c.group_size) : nlohmann::json()},
                           {"count", c.count}, {"bytes", c.bytes}, {"seconds", to_s(c.duration_ns)},
                           {"algbw_gb_per_s", c.algbw_bytes_per_s / 1e9},
                           {"busbw_gb_per_s", known ? nlohmann::json(c.busbw_bytes_per_s / 1e9) : nlohmann::json()}});
  }
  const bool pipelined = est::is_pipelined(timeline);
  nlohmann::json bubbles = nlohmann::json::array();
  for (const auto& b : est::pipeline_bubbles(timeline, {}, classifier)) {
    bubbles.push_back({{"stage", b.stage}, {"rank", b.rank}, {"bubble_s", to_s(b.bubble_ns)}, {"gaps", b.gaps},
                       {"fraction", b.fraction}, {"from_annotations", b.from_annotations}});
  }
  nlohmann::json offsets = nlohmann::json::array();
  for (const auto& o : alignment.offsets) offsets.push_back({{"rank", o.rank}, {"offset_ns", o.offset_ns}, {"anchored", o.anchored}});
  const nlohmann::json ranks = breakdown_json(timeline, classifier);

  if (args->has("--json")) {
    out << json_text(nlohmann::json{{"run_id", loaded->run.id}, {"source", est::to_string(timeline.source)}, {"rules_version", rules.version},
                          {"ranks", ranks}, {"pipelined", pipelined}, {"pipeline_bubbles", bubbles}, {"collectives", collectives},
                          {"alignment", {{"mode", mode}, {"offsets", offsets}}}})
        << "\n";
    return Status::ok;
  }
  out << "run " << loaded->run.id << " (" << loaded->run.name << "), " << est::to_string(timeline.source) << " timeline\n\n";
  out << "rank    window      busy      idle   compute   TC GEMM     comm.   exposed   waiting  overlap  HTA overlap\n";
  for (const auto& r : ranks) {
    auto col = [](const nlohmann::json& v) { return pad_left(v.is_number() ? format_seconds(v.get<double>()) : "-", 10); };
    auto pct = [](const nlohmann::json& v) { return pad_left(v.is_number() ? format_fixed(v.get<double>() * 100, 1) + "%" : "-", 9); };
    out << pad_left(std::to_string(r["rank"].get<int>()), 4) << col(r["window_s"]) << col(r["busy_s"]) << col(r["idle_s"])
        << col(r["compute_s"]) << col(r["tensor_core_s"]) << col(r["communication_s"]) << col(r["exposed_communication_s"])
        << col(r["waiting_s"]) << pct(r["overlap"]) << pct(r.contains("hta") ? r["hta"].value("overlap", nlohmann::json()) : nlohmann::json()) << "\n";
  }
  if (!pipelined) {
    out << "\npipeline bubbles: none, no pipeline parallelism in this run (no stage tags or point-to-point transfers)\n";
  } else if (!bubbles.empty()) {
    out << "\npipeline bubbles (" << (bubbles[0]["from_annotations"].get<bool>() ? "from stage annotations" : "inferred from compute kernels") << ")\n";
    for (const auto& b : bubbles) {
      out << "  stage " << b["stage"].get<int>() << " (rank " << b["rank"].get<int>() << "): " << format_seconds(b["bubble_s"].get<double>())
          << ", " << format_fixed(b["fraction"].get<double>() * 100, 1) << "% of its work in the pipeline window\n";
    }
    // The table counts every communication kernel as busy; the bubble counts a stage waiting inside
    // a point-to-point transfer as waiting, as a predicted timeline does (schedule_metrics.h).
    out << "  (the pipeline's fill, drain and waits, point-to-point transfers included, which the table above "
           "counts as communication)\n";
  }
  if (!collectives.empty()) {
    out << "\ncollectives (nccl-tests bus bandwidth)\n";
    for (const auto& c : collectives) {
      const bool known = c["group_size"].is_number();
      out << "  " << pad_right(c["kind"].get<std::string>(), 16) << " n="
          << pad_right(known ? std::to_string(c["group_size"].get<int>()) : "?", 4)
          << pad_left(std::to_string(c["count"].get<long long>()), 6) << " calls  " << pad_left(format_seconds(c["seconds"].get<double>()), 10)
          << "  busbw "
          << (known ? format_fixed(c["busbw_gb_per_s"].get<double>(), 1) + " GB/s" : "unknown (group size not in the trace)")
          << "\n";
    }
  }
  for (const auto& w : alignment.warnings) out << "  " << w.to_string() << "\n";
  return Status::ok;
}

Status run_export(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = Args::parse(argv, {{"--format", true, "perfetto"}, {"--out", true, "FILE.json"}, {"--db", true, "PATH"}});
  if (!args) return report_cli_errors(args.errors(), err);
  const std::string format = args->value("--format").value_or("perfetto");
  if (format != "perfetto" && format != "chrome") {
    return report_cli_errors({make_error("--format", "unknown format \"" + format + "\"; valid: perfetto (Chrome trace-event JSON)")}, err);
  }
  if (!args->has("--out")) return report_cli_errors({make_error("--out", "give the output file")}, err);
  auto store = open_store(*args, store::Access::read_only);
  if (!store) return report_cli_errors(store.errors(), err);
  auto all = load_all_run_timelines(*store, args->positionals());
  if (!all) return report_cli_errors(all.errors(), err);
  std::vector<const est::Timeline*> timelines;
  for (const auto& t : all->timelines) timelines.push_back(&t);
  auto bytes = interop::write_chrome_trace_file(*args->value("--out"), timelines);
  if (!bytes) return report_cli_errors(bytes.errors(), err);
  out << "wrote " << format_count(static_cast<double>(*bytes)) << " bytes (" << timelines.size() << " timeline(s)) to "
      << *args->value("--out") << "; open it in ui.perfetto.dev or chrome://tracing\n";
  return Status::ok;
}

Status run_diff(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  auto args = Args::parse(argv, {{"--db", true, "PATH"}, {"--json", false, ""}});
  if (!args) return report_cli_errors(args.errors(), err);
  if (looks_like_plan_files(args->positionals())) return run_plan_diff(args->positionals(), args->has("--json"), out, err);
  if (args->positionals().size() != 2) {
    return report_cli_errors({make_error("diff", "give two run ids, or two plan files (A.json B.json)")}, err);
  }
  auto store = open_store(*args, store::Access::read_only);
  if (!store) return report_cli_errors(store.errors(), err);
  auto a = load_run_timeline(*store, args->positionals(), 0);
  if (!a) return report_cli_errors(a.errors(), err);
  auto b = load_run_timeline(*store, args->positionals(), 1);
  if (!b) return report_cli_errors(b.errors(), err);
  const auto d = est::diff_timelines(a->timeline, b->timeline);
  auto row_json = [](const est::DiffRow& r) {
    return nlohmann::json{{"key", r.key}, {"a_s", to_s(r.a_ns)}, {"b_s", to_s(r.b_ns)}, {"delta_s", to_s(r.delta_ns)},
                          {"ratio", number_or_null(r.ratio)}};
  };
  if (args->has("--json")) {
    nlohmann::json phases = nlohmann::json::array(), classes = nlohmann::json::array();
    for (const auto& r : d.by_phase) phases.push_back(row_json(r));
    for (const auto& r : d.by_kernel_class) classes.push_back(row_json(r));
    out << json_text(nlohmann::json{{"a", a->run.id}, {"b", b->run.id}, {"makespan", row_json(d.makespan)}, {"phases", phases},
                          {"kernel_classes", classes}}) << "\n";
    return Status::ok;
  }
  auto line = [&](const est::DiffRow& r) {
    out << "  " << pad_right(r.key, 18) << pad_left(format_seconds(to_s(r.a_ns)), 12) << pad_left(format_seconds(to_s(r.b_ns)), 12)
        << pad_left((r.delta_ns >= 0 ? "+" : "-") + format_seconds(to_s(std::abs(r.delta_ns))), 13)
        << pad_left(std::isfinite(r.ratio) ? format_fixed(r.ratio, 2) + "x" : "-", 9) << "\n";
  };
  out << "run " << a->run.id << " (" << a->run.name << ") vs run " << b->run.id << " (" << b->run.name << ")\n";
  out << "  " << pad_right("", 18) << pad_left("A", 12) << pad_left("B", 12) << pad_left("B - A", 13) << pad_left("B / A", 9) << "\n";
  line(d.makespan);
  out << " by phase\n";
  for (const auto& r : d.by_phase) if (r.a_ns || r.b_ns) line(r);
  out << " by kernel class\n";
  for (const auto& r : d.by_kernel_class) if (r.a_ns || r.b_ns) line(r);
  return Status::ok;
}

}  // namespace plansight::cli
