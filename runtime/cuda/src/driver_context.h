// The calling thread's CUDA driver context, looked up through cudaGetDriverEntryPointByVersion so
// that nothing links libcuda (the app and CLI must start on a machine without a driver). CUPTI's
// range profiler and stream-id query take a CUcontext.
#pragma once

#include <cuda.h>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

Result<CUcontext> current_context();

}  // namespace plansight::runtime::cuda
