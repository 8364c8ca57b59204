// Args: the command line after the subcommand, as flags with values, switches and positionals.
// Unknown flags and missing values are errors naming the flag and listing the valid ones.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plansight/estimator/diagnostic.h"

namespace plansight::cli {

struct FlagSpec {
  std::string name;      // "--tp"
  bool takes_value = true;
  std::string help;      // "N", "NAME|config.json", ...
};

class Args {
 public:
  static Result<Args> parse(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::optional<std::string> value(const std::string& flag) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // Parses the flag's value; errors name the flag and the text.
  Result<long long> integer(const std::string& flag) const;
  Result<double> number(const std::string& flag) const;
  // The same arguments less `flags`: a command that reads some flags its own way (search's
  // "--tp 2..8") hands the rest to the shared plan parser.
  Args without(const std::vector<std::string>& flags) const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> positionals_;
};

}  // namespace plansight::cli
