// `plansight runs`: list the run database, show one run, delete one. Reads only what the store
// keeps (records, summaries, timeline rows), so it works for probe runs, imports and saved plans.
#include <cmath>

#include "command_util.h"
#include "plansight/cli/format.h"
#include "plansight/store/metric_words.h"

namespace plansight::cli {
namespace {

nlohmann::json record_json(const store::RunRecord& r) {
  nlohmann::json j = {{"id", r.id},
                      {"kind", store::to_string(r.kind)},
                      {"name", r.name},
                      {"created_at", r.created_at},
                      {"finished_at", r.finished_at},
                      {"device", r.device},
                      {"status", store::to_string(r.status)},
                      {"notes", r.notes}};
  if (r.summary) j["summary"] = store::to_json(*r.summary);
  return j;
}

nlohmann::json timeline_info_json(const store::TimelineInfo& t) {
  return {{"source", estimator::to_string(t.source)}, {"title", t.title},     {"ranks", t.rank_count},
          {"tracks", t.track_count},                   {"spans", t.span_count}, {"begin_ns", t.begin_ns},
          {"end_ns", t.end_ns},                        {"encoded_bytes", t.encoded_bytes}};
}

Status list_runs(store::Store& db, bool json, std::ostream& out, std::ostream& err) {
  auto runs = db.list_runs();
  if (!runs) return report_command_errors(runs.errors(), json, out, err, Status::failure);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& r : *runs) list.push_back(record_json(r));
    out << json_text(nlohmann::json{{"db", db.path().string()}, {"runs", list}}) << "\n";
    return Status::ok;
  }
  if (runs->empty()) {
    out << "no runs in " << db.path().string() << "\n";
    return Status::ok;
  }
  out << pad_left("id", 5) << "  " << pad_right("kind", 7) << pad_right("status", 10) << pad_right("created (UTC)", 25)
      << pad_left("step", 10) << "  name\n";
  for (const auto& r : *runs) {
    const std::string step = r.summary && r.summary->step_time_s ? format_seconds(*r.summary->step_time_s) : "-";
    out << pad_left(std::to_string(r.id), 5) << "  " << pad_right(std::string(store::to_string(r.kind)), 7)
        << pad_right(std::string(store::to_string(r.status)), 10) << pad_right(r.created_at, 25) << pad_left(step, 10)
        << "  " << r.name << "\n";
  }
  return Status::ok;
}

Status show_run(store::Store& db, std::int64_t id, bool json, std::ostream& out, std::ostream& err) {
  auto run = db.get_run(id);
  if (!run) return report_command_errors(run.errors(), json, out, err);
  auto timelines = db.list_timelines(id);
  if (!timelines) return report_command_errors(timelines.errors(), json, out, err, Status::failure);
  if (json) {
    nlohmann::json j = record_json(*run);
    if (run->plan) j["plan"] = *run->plan;
    j["timelines"] = nlohmann::json::array();
    for (const auto& t : *timelines) j["timelines"].push_back(timeline_info_json(t));
    out << json_text(j) << "\n";
    return Status::ok;
  }
  out << "run " << run->id << ": " << run->name << "\n";
  out << "  kind " << store::to_string(run->kind) << ", status " << store::to_string(run->status) << ", device "
      << (run->device.empty() ? "-" : run->device) << "\n";
  out << "  created " << run->created_at << (run->finished_at.empty() ? "" : ", finished " + run->finished_at) << "\n";
  if (run->summary) {
    const auto& s = *run->summary;
    if (s.step_time_s) out << "  step time " << format_seconds(*s.step_time_s) << "\n";
    if (!s.loss_per_step.empty()) {
      out << "  loss per step";
      for (double l : s.loss_per_step) out << " " << (std::isfinite(l) ? format_fixed(l, 4) : "nan");
      out << "\n";
    }
    for (const auto& [category, bytes] : s.memory_bytes) {
      out << "  memory " << pad_right(category, 12) << format_fixed(static_cast<double>(bytes) / (1 << 20), 2) << " MiB\n";
    }
    for (const auto& [name, value] : s.metrics) {
      const auto m = store::describe_metric(name, value);
      out << "  " << pad_right(m.label, 20) << m.value << "\n";
    }
  }
  for (const auto& t : *timelines) {
    out << "  timeline " << estimator::to_string(t.source) << ": " << t.span_count << " spans on " << t.track_count
        << " tracks, " << format_seconds(static_cast<double>(t.end_ns - t.begin_ns) * 1e-9) << "\n";
  }
  if (!run->notes.empty()) out << "  notes: " << run->notes << "\n";
  return Status::ok;
}

}  // namespace

Status run_runs(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  bool json = false;
  for (const auto& a : argv) json = json || a == "--json";
  auto args = Args::parse(argv, {{"--db", true, "PATH"}, {"--json", false, ""}});
  if (!args) return report_command_errors(args.errors(), json, out, err);
  const auto& words = args->positionals();
  const std::string action = words.empty() ? "list" : words[0];
  if (action != "list" && action != "show" && action != "delete") {
    return report_command_errors({make_error(action, "unknown action; valid: runs [list], runs show ID, runs delete ID")}, json, out, err);
  }
  const std::size_t expected = action == "list" ? 1 : 2;
  if (words.size() > expected || (action != "list" && words.size() != 2)) {
    return report_command_errors({make_error("runs " + action, action == "list" ? "takes no further arguments" : "needs exactly one run id")},
                                 json, out, err);
  }
  Result<std::int64_t> id = std::int64_t{0};
  if (action != "list") {
    id = parse_run_id(words[1], "runs " + action);
    if (!id) return report_command_errors(id.errors(), json, out, err);
  }
  // list and show only read: a mistyped --db creates nothing, a read-only database still lists;
  // delete writes to the database that holds the run, and creates none either.
  auto db = open_run_store(*args, action == "delete" ? store::Access::modify : store::Access::read_only);
  if (!db) return report_command_errors(db.errors(), json, out, err, Status::failure);
  if (action == "list") return list_runs(*db, json, out, err);
  if (action == "show") return show_run(*db, *id, json, out, err);
  if (auto gone = db->delete_run(*id); !gone) return report_command_errors(gone.errors(), json, out, err);
  if (json) out << json_text(nlohmann::json{{"deleted", *id}}) << "\n";
  else out << "deleted run " << *id << "\n";
  return Status::ok;
}

}  // namespace plansight::cli
