// Status: the Result of a store operation that yields nothing but may fail. The estimator has
// Result<T> only; `Done` is the empty value so that every store call returns a Result and never
// throws or exits.
#pragma once

#include "plansight/estimator/diagnostic.h"

namespace plansight::store {

struct Done {};
using Status = Result<Done>;

}  // namespace plansight::store
