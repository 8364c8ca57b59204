// JsonReader: reads typed fields out of a nlohmann::json object and collects one Diagnostic per
// bad field ("layout.tp: expected a positive integer, got \"two\""), so a malformed file lists
// every problem at once and never throws past this boundary.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plansight/estimator/diagnostic.h"
#include "plansight/estimator/enums.h"

namespace plansight::estimator {

class JsonReader {
 public:
  // `object` must outlive the reader; `path` prefixes field names in diagnostics ("layout").
  JsonReader(const nlohmann::json& object, std::string path, std::vector<Diagnostic>& errors);

  bool is_object() const { return object_.is_object(); }
  bool has(std::string_view key) const;
  const nlohmann::json* get(std::string_view key) const;  // nullptr when absent
  std::string field(std::string_view key) const;          // "layout.tp"

  // Each reads `key` into `out` when present and well-typed; leaves `out` untouched otherwise.
  void read(std::string_view key, std::string& out);
  void read(std::string_view key, bool& out);
  void read(std::string_view key, double& out, double min = -1e308, double max = 1e308);
  void read(std::string_view key, std::int64_t& out, std::int64_t min = INT64_MIN, std::int64_t max = INT64_MAX);
  void read(std::string_view key, std::vector<std::int64_t>& out, std::int64_t min = INT64_MIN);
  template <class E>
  void read_enum(std::string_view key, E& out);

  // A child object reader ("layout" -> "layout.x"); records an error if `key` is not an object.
  std::optional<JsonReader> child(std::string_view key);

  // Records an error for each key of the object that is not in `known` (catches typos such as
  // "micro_bacth", which would otherwise be silently ignored).
  void reject_unknown(std::initializer_list<std::string_view> known);

  void error(std::string_view key, std::string message);
  std::vector<Diagnostic>& errors() { return errors_; }

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::vector<Diagnostic>& errors_;
};

// Parses text into JSON, turning a syntax error into a Diagnostic with the byte offset.
Result<nlohmann::json> parse_json_text(std::string_view text, std::string_view what);

// Short rendering of a JSON value for messages: strings quoted, long values cut.
std::string describe_json(const nlohmann::json& value);

// Numbers in messages: the shortest text that reads back exactly ("0.99", "1e+308"), and a
// valid range whose open ends (+-1e308) read "at least X" / "at most X".
std::string describe_number(double value);
std::string describe_range(double min, double max);

}  // namespace plansight::estimator
