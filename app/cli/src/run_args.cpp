// The run commands' arguments (see run_args.h).
#include "plansight/cli/run_args.h"

#include <cstdlib>

namespace plansight::cli {

Result<std::int64_t> run_id_at(const std::vector<std::string>& positionals, std::size_t index) {
  if (positionals.size() <= index) return make_error("run id", "missing; give a run id (see plansight runs)");
  const std::string& text = positionals[index];
  char* end = nullptr;
  const long long id = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || id <= 0) return make_error("run id", "\"" + text + "\" is not a run id; valid: a positive whole number (see plansight runs)");
  return static_cast<std::int64_t>(id);
}

Status report_cli_errors(const std::vector<Diagnostic>& errors, std::ostream& err) {
  for (const auto& e : errors) err << e.to_string() << "\n";
  return Status::invalid_input;
}

Result<store::Store> open_store(const Args& args, store::Access access) {
  return store::Store::open_default(args.value("--db").value_or(""), access);
}

Result<core::LoadedRun> load_run_timeline(store::Store& store, const std::vector<std::string>& positionals, std::size_t index) {
  auto id = run_id_at(positionals, index);
  if (!id) return id.errors();
  return core::load_best_timeline(store, *id);
}

Result<core::LoadedRunTimelines> load_all_run_timelines(store::Store& store, const std::vector<std::string>& positionals) {
  auto id = run_id_at(positionals, 0);
  if (!id) return id.errors();
  return core::load_all_timelines(store, *id);
}

}  // namespace plansight::cli
