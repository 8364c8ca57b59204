// A measuring aid, not a twin of a CPU kernel: holds a stream for a while so that the host can
// enqueue a whole batch of work behind it before the GPU starts on the first item. Timed between
// events recorded after the hold, the batch then runs back to back at the GPU's own pace, not at
// the pace the host enqueues it (NVBench's "blocking kernel" does this for the same reason:
// a kernel of a few microseconds is otherwise timed at the host's launch rate).
#pragma once

#include <cstdint>

#include "plansight/kernels/cuda/status.h"

namespace plansight::kernels::cuda {

// One thread that waits `ns` nanoseconds by the GPU's global timer (PTX %globaltimer), sleeping
// between reads (__nanosleep), then ends. ns <= 0 launches nothing.
Status hold_stream(std::int64_t ns, cudaStream_t stream);

}  // namespace plansight::kernels::cuda
