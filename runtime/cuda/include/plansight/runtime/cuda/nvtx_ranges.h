// NVTX ranges from the probe's spans: installs nvtxRangePushA / nvtxRangePop as the runtime's
// range hooks (runtime/tracer.h), so every ScopedSpan of the CPU tracer also opens an NVTX range
// that Nsight Systems and the CUPTI activity tracer (activity_tracer.h) see. NVTX v3 is
// header-only and costs one branch per call when no tool is attached.
#pragma once

namespace plansight::runtime::cuda {

void install_nvtx_range_hooks();
void remove_range_hooks();

}  // namespace plansight::runtime::cuda
