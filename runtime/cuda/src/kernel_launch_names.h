// The names of the kernels launched on one context, in launch order, from CUPTI's callback API.
// CUPTI's auto ranges are numbered, not named: "In Range profiler, for Auto range mode the range
// name will be numeric value assigned to the kernel based on execution order"
// (cupti_profiler_host.h, cuptiProfilerHostGetRangeName), and NVIDIA's answer for tying ranges to
// kernels is the callback API's launch sequence (the CUPTI callback_profiling sample; NVIDIA
// developer forum, "Associating Kernel Names with Range ID"). Kernel replay serialises the
// kernels, so with one thread launching, launch order is execution order.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

class KernelLaunchNames {
 public:
  // Subscribes (cuptiSubscribe_v2) and enables the kernel-launch callbacks of the runtime and the
  // driver. Only one CUPTI subscriber may exist in a process (Nsight Systems, Nsight Compute and
  // cuda-gdb are one): then, or when a callback cannot be enabled, an error naming the call (and
  // the other subscriber), which the caller reports as "kernel names unknown".
  static Result<std::unique_ptr<KernelLaunchNames>> start(CUcontext context);
  ~KernelLaunchNames();  // unsubscribes
  KernelLaunchNames(const KernelLaunchNames&) = delete;
  KernelLaunchNames& operator=(const KernelLaunchNames&) = delete;

  // The display names (kernel_names.h) of the launches that succeeded so far, in launch order.
  std::vector<std::string> names() const;
  // Launches that succeeded so far, including any beyond what names() may hold.
  std::size_t launches() const;

  struct Shared;  // the names; the callback reaches them through a process-lifetime gate (.cpp)

 private:
  KernelLaunchNames() = default;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::unique_ptr<Shared> shared_;
};

}  // namespace plansight::runtime::cuda
