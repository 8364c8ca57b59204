// Shared by the probe's integration tests: a model small enough that a 3-step run of any layout
// takes milliseconds on two cores (8 layers so that pp = 4 with 2 virtual stages still has a
// layer per chunk), and the comparison of gathered parameters.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "plansight/estimator/plan.h"
#include "plansight/probe/trainer.h"

namespace plansight::probe::testing {

// The estimator's plan of a probe request as the probe runs it: fp32 weights and gradients,
// Adam, standard (materialised) attention.
inline estimator::Plan fp32_plan_of(const ProbeRequest& r) {
  estimator::Plan plan;
  plan.model = r.model;
  plan.layout = r.layout;
  plan.training.micro_batch = r.micro_batch;
  plan.training.global_batch = r.global_batch;
  plan.training.seq_len = r.seq_len;
  plan.training.precision = estimator::Precision::fp32;
  plan.training.grad_precision = estimator::Precision::fp32;
  plan.training.optimizer = estimator::Optimizer::adam;
  plan.training.attention = estimator::AttentionKernel::standard;
  plan.training.loss_in_place = true;  // the probe's head (embedding_head.cpp)
  return plan;
}

inline ProbeRequest matrix_request() {
  ProbeRequest r;
  auto& m = r.model;
  m.name = "matrix";
  m.layers = 8;
  m.hidden = 32;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 128;
  m.vocab = 64;
  m.max_seq_len = 16;
  m.dropout = false;
  r.seq_len = 16;
  r.micro_batch = 1;
  r.global_batch = 8;
  r.steps = 3;
  r.learning_rate = 0.1;  // with comparison_options()' epsilon: SGD-like steps of ~0.1 * g
  r.weight_decay = 0.1;
  r.trace = false;
  r.layout.dp = 1;
  return r;
}

// AdamW with epsilon 1: the update lr * m / (sqrt(v) + 1) is nearly proportional to the
// gradient, so a layout whose gradients are off by any factor (a missing 1/dp, a doubled tied
// gradient) changes the parameters, where Adam's scale invariance would hide it.
inline TrainOptions comparison_options() {
  TrainOptions o;
  o.collect_parameters = true;
  o.adam_eps = 1.0f;
  return o;
}

struct Difference {
  double max_abs = 0;
  std::string where;
  bool same_tensors = true;
};

inline Difference compare(const std::map<std::string, std::vector<float>>& a, const std::map<std::string, std::vector<float>>& b) {
  Difference d;
  d.same_tensors = a.size() == b.size();
  for (const auto& [name, values] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.size() != values.size()) {
      d.same_tensors = false;
      d.where = name;
      continue;
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double diff = std::fabs(static_cast<double>(values[i]) - it->second[i]);
      if (!(diff <= d.max_abs)) {  // NaN (an element no rank exported) counts as the worst
        d.max_abs = std::isnan(diff) ? INFINITY : diff;
        d.where = name + "[" + std::to_string(i) + "]";
      }
    }
  }
  return d;
}

}  // namespace plansight::probe::testing
