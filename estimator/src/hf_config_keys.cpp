// Shared helpers of the Hugging Face config.json readers (see hf_config_keys.h).
#include "hf_config_keys.h"

#include <vector>

namespace plansight::estimator::hf {

// A required size or count: "missing" when absent, JsonReader's message when mistyped.
void read_required(JsonReader& r, std::string_view key, std::int64_t& out) {
  if (!r.has(key)) {
    r.error(key, "missing; expected a whole number from 1 to " + std::to_string(kMaxSize));
    return;
  }
  r.read(key, out, 1, kMaxSize);
}

void read_optional(JsonReader& r, std::string_view key, std::int64_t& out) { r.read(key, out, 1, kMaxSize); }

bool read_flag(JsonReader& r, std::string_view key, bool fallback) {
  bool value = fallback;
  r.read(key, value);
  return value;
}

// True when any of the dropout probabilities (each defaulting as given) is above zero.
bool any_dropout(JsonReader& r, std::initializer_list<std::pair<std::string_view, double>> keys) {
  bool any = false;
  for (const auto& [key, fallback] : keys) {
    double p = fallback;
    r.read(key, p, 0.0, 1.0);
    any = any || p > 0.0;
  }
  return any;
}

// `key` when present, else `legacy` when that is present (older Falcon configs spell n_layer).
std::string_view pick(const JsonReader& r, std::string_view key, std::string_view legacy) {
  return !r.has(key) && r.has(legacy) ? legacy : key;
}

std::string divisors_of(std::int64_t n) {
  std::vector<std::int64_t> small, large;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.insert(large.begin(), n / d);
  }
  small.insert(small.end(), large.begin(), large.end());
  std::string out;
  for (std::size_t i = 0; i < small.size() && i < 16; ++i) out += (i ? ", " : "") + std::to_string(small[i]);
  if (small.size() > 16) out += ", ...";
  return out;
}

// Cross-key consistency; sizes already reported as bad (still 0) are skipped.
void check_shape(JsonReader& r, const ModelSpec& m, const ShapeKeys& keys) {
  if (m.hidden <= 0 || m.heads <= 0) return;
  if (m.head_dim == 0 && m.hidden % m.heads != 0) {
    r.error(keys.heads, "value " + std::to_string(m.heads) + " does not divide " + std::string(keys.hidden) + " " +
                            std::to_string(m.hidden) + "; valid: a divisor of " + std::to_string(m.hidden) + " (" +
                            divisors_of(m.hidden) + ")" + (keys.head_dim_key ? ", or give head_dim" : ""));
  }
  if (!keys.kv_heads.empty() && m.kv_heads > 0 && m.heads % m.kv_heads != 0) {
    const std::string note = r.has(keys.kv_heads) ? "" : " (transformers' default; the key is absent)";
    r.error(keys.kv_heads, "value " + std::to_string(m.kv_heads) + note + " does not divide " +
                               std::string(keys.heads) + " " + std::to_string(m.heads) + "; valid: " +
                               divisors_of(m.heads));
  }
}

void read_nullable(JsonReader& r, const nlohmann::json& config, std::string_view key, std::int64_t if_null,
                   std::int64_t& out) {
  const auto it = config.find(std::string(key));
  if (it != config.end() && it->is_null()) {
    out = if_null;
    return;
  }
  read_optional(r, key, out);
}

}  // namespace plansight::estimator::hf
