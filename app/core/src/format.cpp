// Unit-carrying number formatting for the CLI's tables.
#include "plansight/core/format.h"

#include <cmath>
#include <cstdio>

namespace plansight::core {

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

// Past 1024 GiB the figure reads in TiB (161,860 GiB is 158.07 TiB), as people say it.
std::string format_gib(double bytes) {
  const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  return std::fabs(gib) >= 1024 ? format_fixed(gib / 1024, 2) + " TiB" : format_fixed(gib, 2) + " GiB";
}

std::string format_count(double n) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(n));
  std::string raw = digits, out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (i > 0 && (raw.size() - i) % 3 == 0) out += ',';
    out += raw[i];
  }
  return n < 0 ? "-" + out : out;
}

// Short scale, two decimals: 124.44 M, 174.60 B, 10.34 T (not 10,340.69 B).
std::string format_large_count(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return format_fixed(n / 1e12, 2) + " T";
  if (a >= 1e9) return format_fixed(n / 1e9, 2) + " B";
  if (a >= 1e6) return format_fixed(n / 1e6, 2) + " M";
  return format_count(n);
}

std::string format_flops(double flops) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e FLOP", flops);
  return buf;
}

std::string format_seconds(double s) {
  if (s < 1e-3) return format_fixed(s * 1e6, 1) + " µs";
  if (s < 1) return format_fixed(s * 1e3, 1) + " ms";
  if (s < 120) return format_fixed(s, 2) + " s";
  if (s < 7200) return format_fixed(s / 60, 1) + " min";
  if (s < 2 * 86400) return format_fixed(s / 3600, 1) + " h";
  return format_fixed(s / 86400, 1) + " days";
}

std::string pad_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string pad_right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace plansight::core
