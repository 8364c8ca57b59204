// hold_stream (hold.h): a one-thread kernel that waits on the GPU's global nanosecond timer.
#include "common.cuh"
#include "plansight/kernels/cuda/hold.h"

namespace plansight::kernels::cuda {
namespace {

// PTX ISA, "Special Registers: %globaltimer": a 64-bit nanosecond timer, the same on every SM.
__device__ inline std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void hold_kernel(std::uint64_t ns) {
  const std::uint64_t start = global_timer_ns();
  // A microsecond's sleep between reads: the hold's end is late by at most that, and the SM it
  // occupies is idle rather than spinning (the batch behind it has not started anyway).
  while (global_timer_ns() - start < ns) __nanosleep(1000);
}

}  // namespace

Status hold_stream(std::int64_t ns, cudaStream_t stream) {
  if (ns <= 0) return {};
  hold_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(ns));
  return detail::launch_status("hold_kernel");
}

}  // namespace plansight::kernels::cuda
