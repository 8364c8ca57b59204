// install_nvtx_range_hooks (nvtx_ranges.h).
#include "plansight/runtime/cuda/nvtx_ranges.h"

#include <nvtx3/nvToolsExt.h>

#include "plansight/runtime/tracer.h"

namespace plansight::runtime::cuda {
namespace {

void push(const char* name) { nvtxRangePushA(name); }
void pop() { nvtxRangePop(); }

}  // namespace

void install_nvtx_range_hooks() { set_range_hooks(push, pop); }
void remove_range_hooks() { set_range_hooks(nullptr, nullptr); }

}  // namespace plansight::runtime::cuda
