// Launchers' environment variables: Open MPI's mpirun (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/
// LOCAL_SIZE, Open MPI FAQ "What environment variables are available to my MPI processes?"),
// Slurm's srun (SLURM_PROCID, SLURM_STEP_NUM_TASKS or SLURM_NTASKS, SLURM_LOCALID,
// SLURM_STEP_ID; srun(1) "OUTPUT ENVIRONMENT VARIABLES"), and PMI launchers (PMI_RANK, PMI_SIZE;
// MPICH's Hydra sets MPI_LOCALRANKID and MPI_LOCALNRANKS for the host).
#include "plansight/runtime/launch.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

namespace plansight::runtime {
namespace {

// The variable's value as an integer >= minimum; nullopt when unset.
Result<std::optional<int>> integer(const EnvironmentLookup& env, const char* name, int minimum) {
  const char* text = env(name);
  if (!text) return std::optional<int>{};
  const std::string_view s(text);
  int value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || value < minimum) {
    return make_error(name, "value \"" + std::string(s) + "\" is not an integer >= " + std::to_string(minimum) +
                                "; the launcher that set it is misconfigured");
  }
  return std::optional<int>(value);
}

struct Names {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* size_fallback;  // may be null
  const char* local_rank;
  const char* local_size;     // may be null
  const char* present;        // set only inside a real launch (null: rank's presence suffices)
};

Result<std::optional<LaunchInfo>> read(const EnvironmentLookup& env, const Names& n) {
  if (!env(n.rank) || (n.present && !env(n.present))) return std::optional<LaunchInfo>{};
  auto rank = integer(env, n.rank, 0);
  if (!rank) return rank.errors();
  auto size = integer(env, n.size, 1);
  if (!size) return size.errors();
  const char* size_name = n.size;
  if (!*size && n.size_fallback) {
    size = integer(env, n.size_fallback, 1);
    if (!size) return size.errors();
    size_name = n.size_fallback;
  }
  if (!*size) return make_error(n.size, std::string("is not set although ") + n.rank + " is; cannot tell how many processes were launched");
  if (**rank >= **size) {
    return make_error(n.rank, "value " + std::to_string(**rank) + " is not below " + size_name + " = " + std::to_string(**size));
  }
  LaunchInfo info;
  info.launcher = n.launcher;
  info.rank = **rank;
  info.size = **size;
  auto local_rank = integer(env, n.local_rank, 0);
  if (!local_rank) return local_rank.errors();
  info.local_rank = local_rank->value_or(0);
  if (n.local_size) {
    auto local_size = integer(env, n.local_size, 1);
    if (!local_size) return local_size.errors();
    info.local_size = local_size->value_or(1);
  }
  if (info.local_rank >= info.local_size) info.local_size = info.local_rank + 1;  // Slurm gives no local count
  return std::optional<LaunchInfo>(info);
}

}  // namespace

Result<LaunchInfo> detect_launch(const EnvironmentLookup& env) {
  static const Names kLaunchers[] = {
      {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", nullptr, "OMPI_COMM_WORLD_LOCAL_RANK",
       "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr},
      {"srun", "SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_LOCALID", nullptr, "SLURM_STEP_ID"},
      {"pmi", "PMI_RANK", "PMI_SIZE", nullptr, "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr},
  };
  for (const Names& n : kLaunchers) {
    auto info = read(env, n);
    if (!info) return info.errors();
    if (*info) return **info;
  }
  return LaunchInfo{};
}

Result<LaunchInfo> detect_launch() {
  return detect_launch([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace plansight::runtime
