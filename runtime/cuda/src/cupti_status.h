// CUPTI return values as errors that name the call, with cuptiGetResultString's text.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "plansight/estimator/diagnostic.h"

namespace plansight::runtime::cuda {

inline Diagnostic cupti_failure(CUptiResult result, std::string_view call) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) text = "unknown CUPTI result";
  return make_error("cupti", std::string(call) + ": " + text + " (" + std::to_string(static_cast<int>(result)) + ")");
}

inline Result<bool> cupti_check(CUptiResult result, std::string_view call) {
  if (result == CUPTI_SUCCESS) return true;
  return cupti_failure(result, call);
}

// A CUPTI parameter struct, zeroed, with its structSize (the API's versioning rule).
template <class P>
P cupti_params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}

}  // namespace plansight::runtime::cuda
