// The layout search costed by the library (layout_search_moe.cpp), for what the dense search's
// lean per-(tp, cp) costs do not know: routed experts, and offloading (host memory, host-link
// transfers, the CPU's optimizer step). Every candidate is costed by the same functions
// estimate() uses (memory by stage, closed-form time of the iteration costs).
#pragma once

#include "plansight/estimator/layout_search.h"

namespace plansight::estimator {

Result<SearchResult> search_library_costed(const Plan& base, const SearchOptions& options);

}  // namespace plansight::estimator
