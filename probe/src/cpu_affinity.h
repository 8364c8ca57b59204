// The CPU cores a probe run uses. Ranks are threads; with more rank threads than cores the OS
// shares the cores out (its wake-up preemption keeps tensor-parallel peers close to the fluid
// processor sharing the estimator simulates), and a request may ask for fewer cores than the
// machine has, to see a run as a smaller machine would run it.
#pragma once

#include <cstdint>
#include <vector>

namespace plansight::probe {

// The cores this process may run on (its affinity mask; at least 1).
int available_cores();

// The first `cores` CPUs of this process's affinity mask; empty when that is all of them (no
// confinement needed).
std::vector<int> cpus_for(std::int64_t cores);

// Restricts the calling thread to `cpus` (empty: unchanged). Best effort: a failure leaves the
// thread where it was.
void confine_to(const std::vector<int>& cpus);

}  // namespace plansight::probe
