// Category names, byte formatting and the "does not fit" message (memory_fit.h).
#include "plansight/runtime/cuda/memory_fit.h"

#include <array>
#include <cstdio>

namespace plansight::runtime::cuda {

std::string_view category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::weights: return "weights";
    case MemoryCategory::gradients: return "gradients";
    case MemoryCategory::optimizer: return "optimizer";
    case MemoryCategory::activations: return "activations";
    case MemoryCategory::buffers: return "buffers";
  }
  return "unknown";
}

std::string format_bytes(std::int64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  const bool negative = bytes < 0;
  double value = negative ? -static_cast<double>(bytes) : static_cast<double>(bytes);
  if (value < 1024.0) return std::to_string(bytes) + " bytes";
  std::size_t unit = 0;
  value /= 1024.0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  // Three significant digits: 1.50, 12.0, 512.
  const char* format = value < 10.0 ? "%s%.2f %s" : (value < 100.0 ? "%s%.1f %s" : "%s%.0f %s");
  std::snprintf(text, sizeof(text), format, negative ? "-" : "", value, kUnits[unit]);
  return text;
}

Diagnostic does_not_fit(std::string_view what, MemoryCategory category, std::int64_t needed_bytes,
                        std::int64_t free_bytes, std::int64_t total_bytes, int device, const MemoryUsage& held) {
  std::string message = "does not fit: needed " + format_bytes(needed_bytes) + ", free " + format_bytes(free_bytes) +
                        " (of " + format_bytes(total_bytes) + " on device " + std::to_string(device) + ") for " +
                        std::string(category_name(category)) + " (" + std::string(what) + "); this rank holds ";
  for (std::size_t c = 0; c < kMemoryCategories; ++c) {
    if (c > 0) message += ", ";
    message += std::string(category_name(static_cast<MemoryCategory>(c))) + " " + format_bytes(held.bytes[c]);
  }
  return make_error("memory." + std::string(category_name(category)), message);
}

}  // namespace plansight::runtime::cuda
