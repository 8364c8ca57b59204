// Search constraints as people type them, shared by `plansight search` and the app's Search
// page so that both accept the same words: "any" (or nothing) searches a dimension, "8" fixes
// it, "2,4,8" lists values and "2..8", "..8", "4.." bound it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/layout_search.h"

namespace plansight::estimator {

// The dimensions a constraint names, as the plan file spells its fields.
inline constexpr const char* kSearchDimensions[] = {"tp",        "pp",       "vpp",      "dp",
                                                    "cp",        "micro_batch", "zero_stage", "recompute",
                                                    "schedule",  "sequence_parallel", "precision", "offload"};

// Sets `dimension` of `space` from `text`. Errors are reported under `field` (a flag such as
// "--tp" or a form label), naming the text and what is valid; the space is unchanged then.
std::vector<Diagnostic> set_search_constraint(SearchSpace& space, std::string_view dimension, std::string_view text,
                                              const std::string& field);

// "tp 2..8, zero 0,1, framework rules off" — what narrows the search, or "none".
std::string describe_constraints(const SearchSpace& space);

}  // namespace plansight::estimator
