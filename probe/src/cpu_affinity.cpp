// CPU affinity of the rank threads (cpu_affinity.h), through sched_getaffinity and
// pthread_setaffinity_np.
#include "cpu_affinity.h"

#include <algorithm>
#include <thread>

#include <pthread.h>
#include <sched.h>

namespace plansight::probe {
namespace {

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

}  // namespace

int available_cores() {
  const auto cpus = allowed_cpus();
  if (!cpus.empty()) return static_cast<int>(cpus.size());
  return static_cast<int>(std::max(std::thread::hardware_concurrency(), 1u));
}

std::vector<int> cpus_for(std::int64_t cores) {
  auto cpus = allowed_cpus();
  if (cores <= 0 || cores >= static_cast<std::int64_t>(cpus.size())) return {};
  cpus.resize(static_cast<std::size_t>(cores));
  return cpus;
}

void confine_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace plansight::probe
