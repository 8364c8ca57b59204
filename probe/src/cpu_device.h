// The CPU run device: rank threads with the in-process communicator and the CPU backend.
#pragma once

#include <memory>

#include "plansight/probe/run_device.h"

namespace plansight::probe {

std::unique_ptr<RunDevice> make_cpu_device(int world_size);

// The CPU computes in fp32 only: an error on "precision" for any other.
Result<bool> check_cpu_precision(const ProbeRequest& request);

// The factory register_cuda_device() was given (empty when none).
RunDeviceFactory registered_cuda_factory();
// The factory register_process_device() was given (empty when none).
RunDeviceFactory registered_process_factory();

}  // namespace plansight::probe
