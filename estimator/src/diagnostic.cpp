// Rendering of diagnostics.
#include "plansight/estimator/diagnostic.h"

namespace plansight {

std::string Diagnostic::to_string() const {
  std::string out = severity == Severity::error ? "error: " : "warning: ";
  if (!field.empty()) {
    out += field;
    out += ": ";
  }
  out += message;
  return out;
}

bool has_errors(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::error) return true;
  }
  return false;
}

std::string join_messages(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const auto& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}

}  // namespace plansight
