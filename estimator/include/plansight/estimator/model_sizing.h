// A GPT-shaped model of a given size, for "what does a 1 B model need?" without choosing a shape:
// the GPT-3 family's conventions (Brown et al. 2020, Table 2.1 and Sections 2.1-2.2: GPT-2
// architecture, vocabulary 50257, context 2048, d_ff = 4 d_model, heads of 128 dimensions) at
// the width-to-depth ratio its large members share, d_model / n_layers = 128 (6.7B: 4096/32,
// 13B: 5120/40, 175B: 12288/96). Kaplan et al. 2020 (Section 3.1, Figure 5) find the loss
// within a few percent over aspect ratios of about 20 to 200, so the ratio is a convention,
// not a claim about the best shape.
#pragma once

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/model_spec.h"

namespace plansight::estimator {

// The model closest to `parameters` (total, as count_parameters counts it) with d_model a
// multiple of 128 near 128 x n_layers. Errors name the field "--params": not a finite
// positive number, below what one layer and the embeddings of the vocabulary already hold,
// or above 100 T.
Result<ModelSpec> gpt_model_with_parameters(double parameters);

}  // namespace plansight::estimator
