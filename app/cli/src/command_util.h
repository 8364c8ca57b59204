// Helpers shared by the store-backed commands (probe, runs, compare): error reporting in the
// CLI's convention and opening the run database named by --db, $PLANSIGHT_DB or the default.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/cli/args.h"
#include "plansight/cli/commands.h"
#include "plansight/cli/format.h"
#include "plansight/estimator/json_io.h"
#include "plansight/store/store.h"

namespace plansight::cli {

// Every error on stderr and, with --json, {"errors": [...]} on stdout; returns `status`.
inline Status report_command_errors(const std::vector<Diagnostic>& errors, bool json, std::ostream& out,
                                    std::ostream& err, Status status = Status::invalid_input) {
  for (const auto& e : errors) err << e.to_string() << "\n";
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& e : errors) list.push_back(estimator::to_json(e));
    out << json_text(nlohmann::json{{"errors", list}}) << "\n";
  }
  return status;
}

// Commands that only read runs pass Access::read_only: a mistyped --db is an error naming the
// path, never a new empty database (store.h).
inline Result<store::Store> open_run_store(const Args& args, store::Access access = store::Access::read_write) {
  return store::Store::open_default(args.value("--db").value_or(""), access);
}

// A run id from the command line; the error names `what` and the text.
inline Result<std::int64_t> parse_run_id(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  long long id = 0;
  try {
    id = std::stoll(text, &used);
  } catch (...) {
    used = 0;
  }
  if (used != text.size() || id < 1) return make_error(what, "\"" + text + "\" is not a run id; valid: a positive whole number (see plansight runs)");
  return static_cast<std::int64_t>(id);
}

}  // namespace plansight::cli
