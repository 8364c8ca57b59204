// Number formatting for the GUI (see format.h). The C locale throughout: figures are compared
// with the CLI's and pasted into reports, so a decimal comma would only confuse.
#include "plansight/gui/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace plansight::gui {

QString format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return QString::fromLatin1(buf);
}

// Past 1024 GiB the figure reads in TiB (161,860 GiB is 158.07 TiB), as the CLI prints it.
QString format_gib(double bytes) {
  const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  return std::fabs(gib) >= 1024 ? format_fixed(gib / 1024, 2) + QStringLiteral(" TiB")
                                : format_fixed(gib, 2) + QStringLiteral(" GiB");
}

QString format_count(double n) {
  char digits[64];
  std::snprintf(digits, sizeof digits, "%.0f", std::fabs(n));
  const QString raw = QString::fromLatin1(digits);
  QString out;
  for (qsizetype i = 0; i < raw.size(); ++i) {
    if (i > 0 && (raw.size() - i) % 3 == 0) out += QLatin1Char(',');
    out += raw[i];
  }
  return n < 0 ? QStringLiteral("-") + out : out;
}

QString format_bytes_exact(double bytes) { return format_count(bytes) + QStringLiteral(" bytes"); }

// Short scale, two decimals: 124.44 M, 174.60 B, 10.34 T, as the CLI prints it.
QString format_large_count(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return format_fixed(n / 1e12, 2) + QStringLiteral(" T");
  if (a >= 1e9) return format_fixed(n / 1e9, 2) + QStringLiteral(" B");
  if (a >= 1e6) return format_fixed(n / 1e6, 2) + QStringLiteral(" M");
  return format_count(n);
}

QString format_seconds(double s) {
  if (!std::isfinite(s)) return QStringLiteral("—");
  if (s == 0) return QStringLiteral("0 s");
  if (s < 1e-3) return format_fixed(s * 1e6, 1) + QStringLiteral(" µs");
  if (s < 1) return format_fixed(s * 1e3, 1) + QStringLiteral(" ms");
  if (s < 120) return format_fixed(s, 3) + QStringLiteral(" s");
  if (s < 7200) return format_fixed(s / 60, 1) + QStringLiteral(" min");
  if (s < 2 * 86400) return format_fixed(s / 3600, 1) + QStringLiteral(" h");
  return format_fixed(s / 86400, 1) + QStringLiteral(" days");
}

QString format_duration_ns(std::int64_t ns) {
  const double a = std::fabs(static_cast<double>(ns));
  const double v = static_cast<double>(ns);
  if (a < 1e3) return QString::number(ns) + QStringLiteral(" ns");
  if (a < 1e6) return format_fixed(v / 1e3, 2) + QStringLiteral(" µs");
  if (a < 1e9) return format_fixed(v / 1e6, 2) + QStringLiteral(" ms");
  return format_fixed(v / 1e9, 3) + QStringLiteral(" s");
}

QString format_tick(std::int64_t t_ns, std::int64_t step_ns) {
  // The unit follows the step, and the decimals are just enough to tell neighbouring ticks apart.
  struct Unit {
    double ns;
    const char* name;
  };
  static const Unit units[] = {{1e9, " s"}, {1e6, " ms"}, {1e3, " µs"}, {1, " ns"}};
  const double step = static_cast<double>(std::max<std::int64_t>(step_ns, 1));
  for (const Unit& u : units) {
    if (step >= u.ns / 10 || u.ns == 1) {
      const int decimals = step >= u.ns ? 0 : 1;
      return format_fixed(static_cast<double>(t_ns) / u.ns, decimals) + QString::fromUtf8(u.name);
    }
  }
  return QString::number(t_ns) + QStringLiteral(" ns");
}

QString format_percent(double fraction) { return format_fixed(fraction * 100.0, 1) + QStringLiteral("%"); }

QString format_flops(double flops) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e FLOP", flops);
  return QString::fromLatin1(buf);
}

QString format_tflops(double tflops) { return format_fixed(tflops, 1) + QStringLiteral(" TFLOP/s"); }

QString format_money(double amount) { return format_count(std::round(amount)); }

}  // namespace plansight::gui
