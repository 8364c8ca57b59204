// libFuzzer target: Hugging Face config.json import (model_from_hf_config, the parser behind
// `plansight import-model` and `--model config.json`), followed by what those commands do with
// its answer: diagnostics rendered as JSON (import-model --json); an accepted model counted,
// written as JSON, read back as a plan's model (the --model overlay) and estimated. A crash, a
// sanitizer report, an exception, or a read-back model that differs from the import is a bug:
// the two commands must describe the same model.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plansight/estimator/estimator.h"
#include "plansight/estimator/hf_config.h"
#include "plansight/estimator/json_io.h"
#include "plansight/estimator/parameters.h"

namespace est = plansight::estimator;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto model = est::model_from_hf_config(text, "fuzz");
  if (!model) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& e : model.errors()) list.push_back(est::to_json(e));
    (void)nlohmann::json{{"errors", list}}.dump(2);  // throws on text that is not UTF-8
    return 0;
  }

  // Every accepted model has at least one layer of width at least one.
  const double params = est::count_parameters(*model).total;
  if (!std::isfinite(params) || params <= 0) std::abort();

  const nlohmann::json written = est::to_json(*model);
  (void)written.dump(2);
  auto plan = est::plan_from_json(nlohmann::json{{"model", written}});
  if (!plan || est::to_json(plan->model) != written) std::abort();

  auto estimate = est::estimate(*plan);
  if (estimate) (void)est::to_json(*estimate).dump(2);
  return 0;
}
