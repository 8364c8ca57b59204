// An imported trace in the run store (see trace_import_store.h).
#include "plansight/core/trace_import_store.h"

#include "plansight/interop/trace_import.h"

namespace plansight::core {

namespace est = plansight::estimator;

std::string import_run_name(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  while (p.has_relative_path() && p.filename().empty()) p = p.parent_path();  // "dir/" has an empty filename
  const std::string name = p.filename().string();
  return name.empty() ? path.string() : name;
}

nlohmann::json collectives_to_json(const std::vector<est::CollectiveCall>& calls) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : calls) {
    out.push_back({c.rank, std::string(est::to_string(c.kind)), c.start_ns, c.duration_ns, c.bytes, c.group_size, c.name,
                   c.process_group, c.dtype});
  }
  return out;
}

std::vector<est::CollectiveCall> collectives_from_json(const nlohmann::json& list) {
  std::vector<est::CollectiveCall> out;
  if (!list.is_array()) return out;
  for (const auto& a : list) {
    if (!a.is_array() || a.size() != 9) continue;
    const bool typed = a[0].is_number_integer() && a[1].is_string() && a[2].is_number_integer() &&
                       a[3].is_number_integer() && a[4].is_number() && a[5].is_number_integer() && a[6].is_string() &&
                       a[7].is_string() && a[8].is_string();
    if (!typed) continue;
    est::CollectiveCall c;
    c.rank = a[0].get<std::int32_t>();
    const std::string kind = a[1].get<std::string>();
    for (auto k : {est::CollectiveKind::all_reduce, est::CollectiveKind::all_gather, est::CollectiveKind::reduce_scatter,
                   est::CollectiveKind::broadcast, est::CollectiveKind::reduce, est::CollectiveKind::all_to_all,
                   est::CollectiveKind::send_recv, est::CollectiveKind::send, est::CollectiveKind::recv}) {
      if (est::to_string(k) == kind) c.kind = k;
    }
    c.start_ns = a[2].get<std::int64_t>();
    c.duration_ns = a[3].get<std::int64_t>();
    c.bytes = a[4].get<double>();
    c.group_size = a[5].get<std::int32_t>();
    c.name = a[6].get<std::string>();
    c.process_group = a[7].get<std::string>();
    c.dtype = a[8].get<std::string>();
    out.push_back(std::move(c));
  }
  return out;
}

Result<StoredImport> store_imported_trace(store::Store& db, const interop::ImportedTrace& trace,
                                          const std::filesystem::path& path, const std::string& name) {
  StoredImport out;
  out.name = name.empty() ? import_run_name(path) : name;
  out.device = trace.ranks.empty() ? "" : trace.ranks.front().device_name;
  out.ranks = nlohmann::json::array();
  for (const auto& r : trace.ranks) {
    out.ranks.push_back({{"rank", r.rank}, {"world_size", r.world_size}, {"source", r.source}, {"device", r.device_name},
                         {"events", r.events_read}, {"spans", r.spans_kept}});
  }
  const nlohmann::json description = {
      {"trace", {{"path", std::filesystem::absolute(path).string()},
                 {"format", std::string(interop::to_string(interop::detect_trace_format(path)))},
                 {"ranks", out.ranks},
                 {"collectives", collectives_to_json(trace.collectives)}}}};
  for (const auto& t : trace.timeline.tracks) out.spans += t.spans.size();
  out.window_s = static_cast<double>(trace.timeline.end_ns() - trace.timeline.begin_ns()) * 1e-9;
  store::RunSummary summary;
  summary.metrics["spans"] = static_cast<double>(out.spans);
  summary.metrics["ranks"] = static_cast<double>(trace.ranks.size());
  summary.metrics["window_s"] = out.window_s;

  auto tx = db.transaction();
  if (!tx) return tx.errors();
  store::NewRun run;
  run.kind = store::RunKind::import;
  run.name = out.name;
  run.device = out.device;
  run.status = store::RunStatus::complete;
  run.plan = description;
  auto id = db.create_run(run);
  if (!id) return id.errors();
  if (auto s = db.append_timeline(*id, trace.timeline); !s) return s.errors();
  if (auto s = db.update_summary(*id, summary); !s) return s.errors();
  if (auto s = tx->commit(); !s) return s.errors();
  out.run_id = *id;
  return out;
}

std::vector<est::CollectiveCall> stored_collectives(const store::RunRecord& run) {
  if (run.kind != store::RunKind::import || !run.plan || !run.plan->is_object()) return {};
  const auto trace = run.plan->find("trace");
  if (trace == run.plan->end() || !trace->is_object()) return {};
  const auto calls = trace->find("collectives");
  return calls == trace->end() ? std::vector<est::CollectiveCall>{} : collectives_from_json(*calls);
}

}  // namespace plansight::core
