// The words of device-memory accounting: category names, byte counts for people (GiB = 2^30
// bytes), and the "does not fit" diagnostic an allocation failure becomes. Plain C++, so the
// messages are tested without a GPU; the allocator (device_allocator.h) uses them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "plansight/estimator/diagnostic.h"
#include "plansight/runtime/memory_tracker.h"

namespace plansight::runtime::cuda {

// "weights", "gradients", "optimizer", "activations", "buffers".
std::string_view category_name(MemoryCategory category);

// "512 bytes", "12.0 KiB", "3.25 MiB", "1.50 GiB" (binary units, three significant digits).
std::string format_bytes(std::int64_t bytes);

// What an allocation that the device cannot hold becomes:
//   "does not fit: needed 1.50 GiB, free 0.75 GiB (of 79.2 GiB on device 0) for activations
//    (block 3 qkv); this rank holds weights 2.00 GiB, gradients 2.00 GiB, ..."
// `what` names the buffer; `held` is what the rank has allocated so far.
Diagnostic does_not_fit(std::string_view what, MemoryCategory category, std::int64_t needed_bytes,
                        std::int64_t free_bytes, std::int64_t total_bytes, int device, const MemoryUsage& held);

}  // namespace plansight::runtime::cuda
