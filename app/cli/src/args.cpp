// Command-line parsing: "--flag value", "--flag=value", switches, and positionals. Numbers are
// decimal only (3e11 allowed for whole counts); hexadecimal, blanks, inf and nan are errors.
#include "plansight/cli/args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace plansight::cli {
namespace {

// A decimal number as people type it: [+-] digits [. digits] [e [+-] digits]. strtoll/strtod
// alone also take leading blanks, hexadecimal ("0x10" read as 16), "inf" and "nan".
bool is_decimal(const std::string& text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i > start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  bool mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa = digits() || mantissa;
  }
  if (!mantissa) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

}  // namespace

Result<Args> Args::parse(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags) {
  Args args;
  std::vector<Diagnostic> errors;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word.size() < 3 || word.rfind("--", 0) != 0) {
      args.positionals_.push_back(word);
      continue;
    }
    std::string name = word;
    std::optional<std::string> inline_value;
    if (auto eq = word.find('='); eq != std::string::npos) {
      name = word.substr(0, eq);
      inline_value = word.substr(eq + 1);
    }
    auto spec = std::find_if(flags.begin(), flags.end(), [&](const FlagSpec& f) { return f.name == name; });
    if (spec == flags.end()) {
      std::string valid;
      for (const auto& f : flags) valid += (valid.empty() ? "" : " ") + f.name;
      errors.push_back(make_error(name, "unknown option; valid: " + valid));
      continue;
    }
    if (!spec->takes_value) {
      if (inline_value) errors.push_back(make_error(name, "takes no value"));
      args.values_[name] = "true";
      continue;
    }
    if (inline_value) {
      args.values_[name] = *inline_value;
    } else if (i + 1 < argv.size()) {
      args.values_[name] = argv[++i];
    } else {
      errors.push_back(make_error(name, "needs a value (" + spec->help + ")"));
    }
  }
  if (!errors.empty()) return errors;
  return args;
}

std::optional<std::string> Args::value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

Result<long long> Args::integer(const std::string& flag) const {
  const std::string text = value(flag).value_or("");
  if (!is_decimal(text)) return make_error(flag, "expected a whole number, got \"" + text + "\"");
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno != 0 || *end != '\0') {
    // Accept whole numbers written in scientific notation (--tokens 3e11 style) where exact.
    const double d = std::strtod(text.c_str(), &end);
    if (!text.empty() && *end == '\0' && std::isfinite(d) && std::nearbyint(d) == d && std::fabs(d) < 9e15) {
      return static_cast<long long>(d);
    }
    return make_error(flag, "expected a whole number, got \"" + text + "\"");
  }
  return v;
}

Result<double> Args::number(const std::string& flag) const {
  const std::string text = value(flag).value_or("");
  if (!is_decimal(text)) return make_error(flag, "expected a decimal number, got \"" + text + "\"");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v)) {
    return make_error(flag, "expected a number, got \"" + text + "\"");
  }
  return v;
}

Args Args::without(const std::vector<std::string>& flags) const {
  Args out = *this;
  for (const auto& f : flags) out.values_.erase(f);
  return out;
}

}  // namespace plansight::cli
