// Exact decimal-to-integer conversion for JSON numbers (see json_number.h).
#include "plansight/interop/json_number.h"

#include <string>

namespace plansight::interop {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The common case, without allocation: no exponent, at most 15 integer digits (so the scaled
// value fits), at most `scale` + 1 fraction digits looked at. Returns false to defer to the
// general path, which also reports malformed text.
bool fast_scaled_integer(std::string_view s, int scale, std::int64_t& out, bool require_exact) {
  std::size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) ++i;
  const std::size_t int_begin = i;
  std::int64_t v = 0;
  while (i < s.size() && is_digit(s[i])) {
    if (i - int_begin == 15) return false;  // 16+ digits: the general path checks the range
    v = v * 10 + (s[i++] - '0');
  }
  const std::size_t int_digits = i - int_begin;
  if (int_digits == 0 || int_digits > 15 || (int_digits > 1 && s[int_begin] == '0')) return false;
  int frac_taken = 0;
  bool round_up = false, inexact = false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t frac_begin = i;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      if (frac_taken < scale) {
        v = v * 10 + (s[i] - '0');
        ++frac_taken;
      } else {
        if (i == frac_begin + static_cast<std::size_t>(scale)) round_up = s[i] >= '5';
        inexact = inexact || s[i] != '0';
      }
    }
    if (i == frac_begin) return false;
  }
  if (i != s.size()) return false;  // exponent or junk: general path
  for (; frac_taken < scale; ++frac_taken) v *= 10;
  if (require_exact && inexact) return false;
  if (round_up) ++v;
  out = negative ? -v : v;
  return true;
}

// value = number x 10^scale, rounded half away from zero; exact integer arithmetic.
bool scaled_integer(std::string_view s, int scale, std::int64_t& out, bool require_exact) {
  if (fast_scaled_integer(s, scale, out, require_exact)) return true;
  if (!valid_number(s)) return false;
  bool negative = false;
  std::size_t i = 0;
  if (s[i] == '-') negative = true, ++i;
  std::string digits;
  int exp10 = scale;
  for (; i < s.size() && s[i] != 'e' && s[i] != 'E'; ++i) {
    if (s[i] == '.') continue;
    digits.push_back(s[i]);
  }
  const std::size_t dot = s.find('.');
  if (dot != std::string_view::npos) {
    const std::size_t exp_at = s.find_first_of("eE");
    exp10 -= static_cast<int>((exp_at == std::string_view::npos ? s.size() : exp_at) - dot - 1);
  }
  if (i < s.size()) {  // exponent
    long e = 0;
    std::size_t j = i + 1;
    bool eneg = false;
    if (s[j] == '+' || s[j] == '-') eneg = s[j] == '-', ++j;
    for (; j < s.size(); ++j) {
      e = e * 10 + (s[j] - '0');
      if (e > 100000) return false;
    }
    exp10 += static_cast<int>(eneg ? -e : e);
  }
  std::size_t lead = digits.find_first_not_of('0');
  if (lead == std::string::npos) {
    out = 0;
    return true;
  }
  digits.erase(0, lead);
  // Keep the integer part; the first dropped digit decides rounding.
  long keep = static_cast<long>(digits.size()) + exp10;
  if (keep > 19) return false;
  // At most 19 digits: below 2^64, so unsigned arithmetic cannot overflow here.
  std::uint64_t v = 0;
  bool round_up = false, inexact = false;
  for (long k = 0; k < keep; ++k) {
    v = v * 10 + static_cast<std::uint64_t>(k < static_cast<long>(digits.size()) ? digits[static_cast<std::size_t>(k)] - '0' : 0);
  }
  if (keep < static_cast<long>(digits.size())) {
    const std::size_t first_dropped = keep < 0 ? 0 : static_cast<std::size_t>(keep);
    round_up = keep >= 0 && digits[first_dropped] >= '5';
    inexact = digits.find_first_not_of('0', first_dropped) != std::string::npos;
  }
  if (require_exact && inexact) return false;
  if (round_up) ++v;
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  if (v > limit) return false;
  out = negative ? static_cast<std::int64_t>(0 - v) : static_cast<std::int64_t>(v);
  return true;
}

}  // namespace

// RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool valid_number(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size()) return false;
  if (s[i] == '0') {
    ++i;
  } else if (is_digit(s[i])) {
    while (i < s.size() && is_digit(s[i])) ++i;
  } else {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (i >= s.size() || !is_digit(s[i])) return false;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  return i == s.size();
}

bool microseconds_text_to_ns(std::string_view number, std::int64_t& ns) { return scaled_integer(number, 3, ns, false); }
bool number_text_to_int64(std::string_view number, std::int64_t& value) { return scaled_integer(number, 0, value, true); }

}  // namespace plansight::interop
