// describe_metric(): one rule per metric the probe and the trace import write (see
// metric_words.h); flags are words, counts whole numbers with thousands separators.
#include "plansight/store/metric_words.h"

#include <cmath>
#include <cstdio>

namespace plansight::store {
namespace {

std::string whole(double v) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(v));
  std::string raw = digits, out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && (raw.size() - i) % 3 == 0) out += ',';
    out += raw[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, unit);
  return buf;
}

std::string seconds(double s) {
  if (s < 1e-3) return fixed(s * 1e6, 1, " µs");
  if (s < 1) return fixed(s * 1e3, 1, " ms");
  return fixed(s, 2, " s");
}

}  // namespace

MetricText describe_metric(std::string_view name, double v) {
  if (!std::isfinite(v)) return {std::string(name), "unknown"};
  if (name == "stopped_early") return {"stopped early", v != 0 ? "yes" : "no"};
  if (name == "world_size") return {"ranks", whole(v)};
  if (name == "steps") return {"steps", whole(v)};
  if (name == "ranks") return {"ranks", whole(v)};
  if (name == "spans") return {"spans", whole(v)};
  if (name == "hardware_profile_id") return {"hardware profile", "#" + whole(v)};
  if (name == "tokens_per_s") return {"tokens/s", whole(v)};
  if (name == "window_s") return {"window", seconds(v)};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return {std::string(name), buf};
}

}  // namespace plansight::store
