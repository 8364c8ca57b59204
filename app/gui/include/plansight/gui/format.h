// Unit-carrying number formatting for everything the GUI displays. One place, so that the pages,
// the tooltips and the tests that compare displayed text with estimate() agree to the digit.
// Memory in GiB (2^30 bytes, as DESIGN.md's units section asks), time adaptively ns..days.
#pragma once

#include <QString>
#include <cstdint>

namespace plansight::gui {

QString format_gib(double bytes);             // "73.21 GiB"
QString format_bytes_exact(double bytes);     // "78,604,522,496 bytes"
QString format_count(double n);               // "174,600,000,000"
QString format_large_count(double n);            // "174.60 B"
QString format_seconds(double s);             // "12.3 ms", "1.84 s", "32.7 days"
QString format_duration_ns(std::int64_t ns);  // "850 ns", "12.40 µs", "3.21 ms", "1.234 s"
// A ruler label for time t on ticks step_ns apart: "11.5 s", "250 ms".
QString format_tick(std::int64_t t_ns, std::int64_t step_ns);
QString format_percent(double fraction);  // 0.123 -> "12.3%"
QString format_flops(double flops);       // "3.15e+23 FLOP"
QString format_tflops(double tflops);     // "148.5 TFLOP/s"
QString format_money(double amount);      // "1,234,567"
QString format_fixed(double value, int decimals);

}  // namespace plansight::gui
