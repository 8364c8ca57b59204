// libFuzzer target: plan JSON parsing and validation must turn any text into a Plan or a list
// of diagnostics, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plansight/estimator/json_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto plan = plansight::estimator::parse_plan(std::string_view(reinterpret_cast<const char*>(data), size));
  (void)plan.ok();
  return 0;
}
