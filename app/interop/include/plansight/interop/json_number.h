// JSON number text to exact integers. Trace timestamps are microseconds with up to three
// fractional digits (nanoseconds) and epoch values near 1.7e15 µs, beyond what a double holds to
// the nanosecond, so they are converted digit by digit instead of through floating point.
#pragma once

#include <cstdint>
#include <string_view>

namespace plansight::interop {

// RFC 8259 §6 number grammar.
bool valid_number(std::string_view text);

// Microseconds (integer or fractional, exponent allowed) to nanoseconds, rounding half away from
// zero; false when the text is not a number or the value does not fit in int64 nanoseconds.
bool microseconds_text_to_ns(std::string_view number, std::int64_t& ns);

// Integer value ("7", "7.0", "7e2"); false when not a whole number in int64 range.
bool number_text_to_int64(std::string_view number, std::int64_t& value);

}  // namespace plansight::interop
