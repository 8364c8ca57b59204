// libFuzzer target: plan JSON parsing and validation must turn any text into a Plan or a list
// of diagnostics, never a crash; the diagnostics are also written as JSON, as `plansight estimate
// --plan FILE --json` does, so a message that is not UTF-8 (nlohmann throws) is found here too.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/json_io.h"
#include "plansight/estimator/plan.h"

namespace est = plansight::estimator;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto plan = est::parse_plan(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::vector<plansight::Diagnostic> diagnostics = plan ? est::validate(*plan) : plan.errors();
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : diagnostics) list.push_back(est::to_json(d));
  (void)nlohmann::json{{"errors", list}}.dump(2);
  return 0;
}
