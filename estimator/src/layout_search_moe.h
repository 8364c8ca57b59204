// The layout search for models with routed experts (layout_search_moe.cpp): the dense search's
// lean per-(tp, cp) costs do not know experts, so every MoE candidate is costed by the same
// functions estimate() uses (memory by stage, closed-form time of the iteration costs).
#pragma once

#include "plansight/estimator/layout_search.h"

namespace plansight::estimator {

Result<SearchResult> search_moe_layouts(const Plan& base, const SearchOptions& options);

}  // namespace plansight::estimator
