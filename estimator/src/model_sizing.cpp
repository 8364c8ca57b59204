// gpt_model_with_parameters(): d_model from the cube law of a 12 L d^2 transformer at
// d / L = 128 (Narayanan et al. 2021, eq. (2): P ~= 12 L h^2 (1 + 13/(12h) + (V + s)/(12 L h))),
// then the depth whose exact count (count_parameters) is nearest, trying the neighbouring widths.
#include "plansight/estimator/model_sizing.h"

#include <cmath>
#include <cstdio>

#include "plansight/estimator/parameters.h"
#include "plansight/estimator/presets.h"

namespace plansight::estimator {
namespace {

constexpr double kAspect = 128;      // d_model / n_layers of GPT-3 6.7B, 13B and 175B
constexpr std::int64_t kHeadDim = 128;
constexpr double kMaxParameters = 1e14;

ModelSpec shaped(const ModelSpec& base, std::int64_t hidden, std::int64_t layers) {
  ModelSpec m = base;
  m.hidden = hidden;
  m.heads = hidden / kHeadDim;
  m.kv_heads = m.heads;
  m.head_dim = 0;
  m.ffn_hidden = 4 * hidden;
  m.layers = layers;
  return m;
}

std::string count_text(double n) {
  char buf[32];
  if (n >= 1e12) std::snprintf(buf, sizeof buf, "%.2f T", n / 1e12);
  else if (n >= 1e9) std::snprintf(buf, sizeof buf, "%.2f B", n / 1e9);
  else std::snprintf(buf, sizeof buf, "%.2f M", n / 1e6);
  return buf;
}

}  // namespace

Result<ModelSpec> gpt_model_with_parameters(double parameters) {
  if (!std::isfinite(parameters) || parameters <= 0 || parameters > kMaxParameters) {
    return make_error("--params", "value " + std::to_string(parameters) + " is out of range; valid: a parameter count "
                                  "above 0 and at most 1e14, e.g. 1e9 or 7e9");
  }
  auto base = find_model("gpt3-175b");
  if (!base) return base.errors();
  const double smallest = count_parameters(shaped(*base, kHeadDim, 1)).total;
  if (parameters < smallest / 2) {
    return make_error("--params", "value " + count_text(parameters) + " is below what one layer and the embeddings "
                                  "of the 50,257-token GPT-2 vocabulary hold; valid: at least " +
                                  count_text(smallest) + " (or give --layers, --hidden and --vocab)");
  }
  const double ideal_hidden = std::cbrt(parameters * kAspect / 12.0);
  const auto centre = std::max<std::int64_t>(1, std::llround(ideal_hidden / kHeadDim));
  ModelSpec best;
  double best_error = INFINITY;
  for (std::int64_t k = std::max<std::int64_t>(1, centre - 1); k <= centre + 1; ++k) {
    const std::int64_t hidden = k * kHeadDim;
    // The count is linear in the depth: embeddings and final norm, plus a per-layer slope.
    const double one = count_parameters(shaped(*base, hidden, 1)).total;
    const double slope = count_parameters(shaped(*base, hidden, 2)).total - one;
    const double fixed = one - slope;
    const auto layers = std::max<std::int64_t>(1, std::llround((parameters - fixed) / slope));
    const ModelSpec m = shaped(*base, hidden, layers);
    const double error = std::fabs(count_parameters(m).total - parameters) / parameters;
    if (error < best_error - 1e-12) best = m, best_error = error;
  }
  char name[64];
  std::snprintf(name, sizeof name, "gpt-shaped %s", count_text(parameters).c_str());
  best.name = name;
  best.source = "GPT-3 family shape for " + count_text(parameters) + " parameters (plansight --params): d_model " +
                std::to_string(best.hidden) + " = " + std::to_string(best.heads) + " heads x 128, " +
                std::to_string(best.layers) + " layers (d_model / n_layers near 128 as GPT-3 6.7B-175B), d_ff = 4 d_model, "
                "vocabulary 50257, context 2048 (Brown et al. 2020, Table 2.1); " +
                count_text(count_parameters(best).total) + " parameters exactly";
  return best;
}

}  // namespace plansight::estimator
