// Memory in the estimator's messages as people read it: GiB, TiB from 1024 GiB on (the CLI's and
// the app's format_gib say it the same way), two decimals.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

namespace plansight::estimator::detail {

inline std::string gib_text(double bytes) {
  const double gib = bytes / (1024.0 * 1024.0 * 1024.0);
  char buf[48];
  if (std::fabs(gib) >= 1024) {
    std::snprintf(buf, sizeof buf, "%.2f TiB", gib / 1024);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", gib);
  }
  return buf;
}

}  // namespace plansight::estimator::detail
