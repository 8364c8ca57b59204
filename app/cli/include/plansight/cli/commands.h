// The CLI's subcommands as library functions (tests call them directly). Each writes its
// report to `out`, diagnostics to `err`, and returns a status that main() maps to an exit code.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace plansight::cli {

enum class Status { ok, invalid_input, failure };  // exit codes 0, 2, 1

int exit_code(Status status);

Status run_estimate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_list_models(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_list_gpus(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_list_systems(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_timeline(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_import(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_analyze(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_export(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_import_model(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// Probe runs (child process plansight-probe) and the run database (--db, $PLANSIGHT_DB, default).
Status run_probe_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_runs(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_compare(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_search(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_placement(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// One layer's and the LM head's operators on one GPU: shapes, FLOPs, bytes, intensity, time, bound.
Status run_operators(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
Status run_examples(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The whole CLI: argv without the program name.
Status run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace plansight::cli
